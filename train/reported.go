package train

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Sources of a ReportedFigure.
const (
	// SourceWorkload marks a figure the workload computed and set itself
	// (an ais-bench package's set_result), which aimeter did not measure.
	SourceWorkload = "set by the workload"
	// SourceWorkloadFiles marks a figure aimeter computed from files the
	// workload wrote (per-rank throughput files summed).
	SourceWorkloadFiles = "computed by aimeter from the workload's files"
	// SourceAimeter marks a figure aimeter measured itself: phase times
	// on its own clock, power from its own meters.
	SourceAimeter = "measured by aimeter"
)

// WorkloadReport is what a workload reported of itself beside the events,
// such as the set_result keys of an ais-bench workload package, mapped onto
// this test's figures where GB/T 45087 defines them. The standard's figures
// in Metrics stay computed from the events; this says where each reported
// one came from, keeps every key verbatim, and lists the inconsistencies
// found. Nothing in it changes the verdict.
type WorkloadReport struct {
	// Tool names the workload's interface: "ais-bench".
	Tool string `json:"tool"`
	// Package is the workload package's folder name.
	Package string `json:"package,omitempty"`
	// Exit says how the package's entry script ended, in words.
	Exit string `json:"exit,omitempty"`
	// Figures are the mapped figures, each with its source.
	Figures []ReportedFigure `json:"figures"`
	// Keys are every result the workload set, verbatim, in order.
	Keys []ReportedKey `json:"keys"`
	// Problems are the inconsistencies and gaps found, one line each.
	Problems []string `json:"problems,omitempty"`
}

// ReportedFigure is one figure of a WorkloadReport.
type ReportedFigure struct {
	// Name is the figure, in the standard's symbol where it has one:
	// "Th", "accuracy", "T_TR", "P_TR", "P_TRmax", "T_L", "T_P", "T_CV".
	Name string `json:"name"`
	// Requirement is the GB-… requirement that defines it; "" for a
	// figure the standard has no place for.
	Requirement string `json:"requirement,omitempty"`
	// Value is the figure as a number; nil when it is not one (Text).
	Value *float64 `json:"value,omitempty"`
	// Unit is Value's unit ("samples/s", "ms", "W", "" for a fraction).
	Unit string `json:"unit,omitempty"`
	// Text is the value as set when it is not a number.
	Text string `json:"text,omitempty"`
	// Source is SourceWorkload, SourceWorkloadFiles or SourceAimeter.
	Source string `json:"source"`
	// From names the keys, files or events it came from.
	From string `json:"from"`
}

// ReportedKey is one result as the workload set it.
type ReportedKey struct {
	Mode string `json:"mode"`
	Key  string `json:"key"`
	// Value is the value as set: a JSON string or number.
	Value json.RawMessage `json:"value"`
	// Extra are the words after the value on a command line (an unquoted
	// date split by the shell); nil when there were none.
	Extra []string `json:"extra,omitempty"`
	// Rank is the RANK_ID of the process that set it; "" when unset.
	Rank string `json:"rank,omitempty"`
	// TimeS is when it was set, in seconds since the Unix epoch.
	TimeS float64 `json:"time_s"`
}

// Figure is the reported figure named name ("Th", "accuracy", …) with a
// numeric value: the first one set by the workload, else the first
// computed from its files; nil when r is nil or has none.
func (r *WorkloadReport) Figure(name string) *ReportedFigure {
	if r == nil {
		return nil
	}
	var found *ReportedFigure
	for i := range r.Figures {
		f := &r.Figures[i]
		if f.Name != name || f.Value == nil {
			continue
		}
		if f.Source == SourceWorkload {
			return f
		}
		if found == nil {
			found = f
		}
	}
	return found
}

// Instead is the text a summary shows for a figure aimeter could not
// compute ("--") when the workload reported it: "-- (not computed from the
// events; 5441.56 samples/s set by the workload)"; "--" when it did not.
func (r *WorkloadReport) Instead(name string) string {
	f := r.Figure(name)
	if f == nil {
		return "--"
	}
	return fmt.Sprintf("-- (not computed from the events; %s %s %s)", strconv.FormatFloat(*f.Value, 'g', 6, 64), f.Unit, f.Source)
}
