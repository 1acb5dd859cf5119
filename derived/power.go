package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/telemetry"
)

// PowerFigures are result.json's "power": the run's telemetry over the
// MLPerf power window of the reported pass (LoadGen's power_begin to
// power_end: from the pass's start to its last completion).
type PowerFigures struct {
	telemetry.Summary
	// Efficiency is MLPerf Power's figure for the scenario: samples per
	// joule (Offline, Server) or millijoules per query (SingleStream,
	// MultiStream), over the successful samples and their queries; nil
	// without an energy figure.
	Efficiency *telemetry.Efficiency `json:"efficiency,omitempty"`
	// WorkEnergy is the window's energy per successful sample and per
	// output token.
	WorkEnergy
	// Gaps counts the gaps of the telemetry: the reads that gave nothing,
	// and the stretches of a series left out (a counter step that is no
	// wrap, a reading above its source's ceiling).
	Gaps int `json:"gaps"`
	// GapList is every gap of the telemetry (telemetry.json's gaps): when,
	// which source and device, why, and how long.
	GapList []telemetry.Gap `json:"gap_list,omitempty"`
	// Clocks are MLPerf Power's checks of each source against the power
	// window: its readings hold the window, and a clock on another
	// machine is within telemetry.MaxClockOffset of this one's.
	Clocks []telemetry.ClockCheck `json:"clock_checks,omitempty"`
	// Phases are the energy figures of each phase of the run the
	// telemetry reaches: the warm-up, each pass, the MLPerf power window
	// again, a GB/T test's T_I.
	Phases []PhaseEnergy `json:"phases,omitempty"`
}

// PowerWindow is the MLPerf power window of res's reported pass on the
// clock of the telemetry (ns from res.StartTime): from the pass's start to
// its last completion, as LoadGen's power_begin and power_end. ok is false
// without a reported pass.
func PowerWindow(res *loadgen.Result) (w telemetry.Window, ok bool) {
	for i, p := range res.Passes {
		if !p.Reported {
			continue
		}
		start := p.StartUnixNs - res.StartTime.UnixNano()
		last := int64(0)
		for r := range res.PassRecords(i) {
			if r.CompletedNs != loadgen.NoTime && r.CompletedNs > last {
				last = r.CompletedNs
			}
		}
		return telemetry.Window{FromNs: start, ToNs: start + last}, true
	}
	return w, false
}

// powerFigures summarises b's telemetry; nil when it has none.
func powerFigures(b *bundle.Bundle, samples SampleCounts) *PowerFigures {
	if telemetry.LogOf(b) == nil || b.Result == nil {
		return nil
	}
	res := b.Result
	w, ok := PowerWindow(res)
	if !ok {
		return nil
	}
	l := telemetry.LogOf(b)
	f := &PowerFigures{Summary: telemetry.Summarize(l, w), Gaps: len(l.Gaps), GapList: l.Gaps, Phases: powerPhases(b),
		Clocks: telemetry.CheckClocks(telemetry.LogOf(b), w)}
	for _, p := range f.Phases {
		if p.Name == PhaseMLPerfWindow {
			f.WorkEnergy = p.WorkEnergy
		}
	}
	if f.EnergyJ != nil {
		queries := samples.OK
		if res.Effective.Scenario == loadgen.MultiStream && res.Effective.SamplesPerQuery > 0 {
			queries = samples.OK / res.Effective.SamplesPerQuery
		}
		if e, ok := telemetry.EfficiencyOf(res.Effective.Scenario.String(), samples.OK, queries, *f.EnergyJ); ok {
			f.Efficiency = &e
		}
	}
	return f
}
