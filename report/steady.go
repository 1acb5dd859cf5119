package report

import (
	"fmt"

	"aimeter/steady"
)

// Steady is the steady state of a run (package steady): its windows, each
// measured beside the whole reported pass.
type Steady struct {
	// Whole is the reported pass measured whole, over its length.
	Whole steady.Metrics
	// Windows are the steady-state windows, in the order of the table's
	// columns.
	Windows []SteadyWindow
}

// SteadyWindow is one steady-state window of the reported pass.
type SteadyWindow struct {
	// Label heads its column and marks it on the timeline.
	Label string
	// Found is false when the method found no window: the window is then
	// the whole run and Note says why.
	Found bool
	// Note says how the window was found, or why not.
	Note string
	// StartNs and EndNs bound it on the pass's clock.
	StartNs, EndNs int64
	// Metrics measure the samples of the window.
	Metrics steady.Metrics
}

// windowMark is a window drawn on the timeline charts: a shaded span from
// From to To seconds of the pass.
type windowMark struct {
	From  num    `json:"from"`
	To    num    `json:"to"`
	Label string `json:"label"`
}

// steadyView is the steady-state part of a scenario's section.
type steadyView struct {
	Notes []string
	Table table
}

// buildSteady lays s out as a table: one row per metric, one column for
// the whole run and one per window.
func buildSteady(s *Steady) (*steadyView, []windowMark) {
	if s == nil {
		return nil, nil
	}
	v := &steadyView{Table: table{Head: []string{"Metric", "Whole run (reported pass)"}}}
	ms := []steady.Metrics{s.Whole}
	var marks []windowMark
	for _, w := range s.Windows {
		head := w.Label
		if !w.Found {
			head += ": none found, whole run"
		}
		v.Table.Head = append(v.Table.Head, head)
		ms = append(ms, w.Metrics)
		v.Notes = append(v.Notes, w.Label+": "+w.Note)
		if w.Found {
			marks = append(marks, windowMark{From: num(float64(w.StartNs) / 1e9), To: num(float64(w.EndNs) / 1e9), Label: w.Label})
		}
	}
	row := func(name string, f func(m steady.Metrics) string) {
		r := []string{name}
		for _, m := range ms {
			r = append(r, f(m))
		}
		v.Table.Rows = append(v.Table.Rows, r)
	}
	row("Span the rates are per", func(m steady.Metrics) string { return fmtDur(m.SpanNs) })
	row("Samples (completed / failed / lost)", func(m steady.Metrics) string {
		return fmt.Sprintf("%s (%s / %s / %s)", fmtCount(uint64(m.Samples)), fmtCount(uint64(m.Completed)), fmtCount(uint64(m.Failed)), fmtCount(uint64(m.Lost)))
	})
	row("Completed samples per second", func(m steady.Metrics) string { return fmtSig(m.CompletedPerSec, 4) })
	hasTokens := false
	for _, m := range ms {
		hasTokens = hasTokens || m.HasTokens
	}
	if hasTokens {
		row("Output tokens per second", func(m steady.Metrics) string { return fmtSig(m.OutputTokensPerSec, 4) })
	}
	for i, p := range steady.Percentiles {
		row(fmt.Sprintf("Latency p%g", p*100), func(m steady.Metrics) string { return fmtDur(m.Latency[i]) })
	}
	if hasTokens {
		tok := func(v int64, m steady.Metrics) string {
			if !m.HasTokens {
				return "n/a"
			}
			return fmtDur(v)
		}
		for i, p := range steady.Percentiles {
			row(fmt.Sprintf("TTFT p%g", p*100), func(m steady.Metrics) string { return tok(m.TTFT[i], m) })
		}
		for i, p := range steady.Percentiles {
			row(fmt.Sprintf("TPOT p%g", p*100), func(m steady.Metrics) string { return tok(m.TPOT[i], m) })
		}
	}
	return v, marks
}
