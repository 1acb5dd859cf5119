// Package invocation holds how a run was asked for: the raw part
// invocation.json of a bundle (bundle.InvocationFile), with the system
// under test's configuration and the GB/T plan's inputs, which package
// bundle does not know.
package invocation

import (
	"encoding/json"
	"fmt"
	"io"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/sut"
)

// Invocation is how a run was asked for (invocation.json). Bundles written
// before aimeter kept it have none (Of returns nil). Nothing in
// it is secret: URLs are stored without user information, keys and tokens
// only by the name of the variable that held them, and the command line
// with the values of secret-looking options replaced.
type Invocation struct {
	// CommandLine is the command that ran the test (argv without the
	// program's path); nil for a run started from Go code.
	CommandLine []string `json:"command_line,omitempty"`
	// SUT is the system under test and its sample library.
	SUT sut.Config `json:"sut"`
	// Settings says where the settings came from. The settings
	// themselves, as requested, are in settings.json.
	Settings bundle.SettingsInput `json:"settings"`
	// GBT is the GB/T 45087 plan of an inference test; nil for an MLPerf
	// run.
	GBT *gbt.PlanInput `json:"gbt,omitempty"`
	// Control holds the run's bounds, which are not LoadGen settings.
	Control bundle.Control `json:"control"`
	// Client holds the network client's own figures, measured during the
	// run; nil for an in-process SUT.
	Client *bundle.ClientStats `json:"client,omitempty"`
	// Warmup is the warm-up run before the measured run, whose results
	// are in no file; nil when there was none.
	Warmup *bundle.Warmup `json:"warmup,omitempty"`
	// Replay is the trace a replay run took its schedule and prompts
	// from; nil for a run with a generated schedule.
	Replay *bundle.ReplayInput `json:"replay,omitempty"`
	// Sessions is the multi-turn workload of a sessions run; nil for
	// other runs.
	Sessions *bundle.SessionsInput `json:"sessions,omitempty"`
	// SLO is the per-request service-level objective the run's goodput is
	// measured against (aimeter run --slo, or a sweep's --slo); nil for
	// none.
	SLO *bundle.SLO `json:"slo,omitempty"`
}

// Part is invocation.json as a part of a bundle.
var Part = bundle.PartType[*Invocation]{Name: bundle.InvocationFile, Read: Read, Write: Write}

// Of returns how b's run was asked for; nil for a bundle without
// invocation.json (one written before aimeter kept it) or with a malformed
// one (derived.Read reports that).
func Of(b *bundle.Bundle) *Invocation { return Part.Value(b) }

// Set records inv as how b's run was asked for; nil removes it.
func Set(b *bundle.Bundle, inv *Invocation) {
	if inv == nil {
		Part.Remove(b)
		return
	}
	Part.Set(b, inv)
}

// Write writes invocation.json.
func Write(w io.Writer, inv *Invocation) error { return bundle.WriteJSON(w, inv) }

// Read reads invocation.json; an unknown field is an error.
func Read(r io.Reader) (*Invocation, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var inv Invocation
	if err := dec.Decode(&inv); err != nil {
		return nil, fmt.Errorf("%s: %w", bundle.InvocationFile, err)
	}
	return &inv, nil
}
