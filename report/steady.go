package report

import (
	"fmt"

	"aimeter/derived/metrics"
	"aimeter/steady"
)

// windowMark is a window drawn on the timeline charts: a shaded span from
// From to To seconds of the pass.
type windowMark struct {
	From  num    `json:"from"`
	To    num    `json:"to"`
	Label string `json:"label"`
}

// steadyView is the steady-state part of a scenario's section.
type steadyView struct {
	// Rule says what a window must hold and how its rates count.
	Rule  string
	Notes []string
	Table table
}

// buildSteady lays s out as a table: one row per metric, one column for
// the whole run and one per window. A window not found (none, or one below
// the minimum a window must hold) keeps its column, headed "not found",
// with a dash in each row: nothing is derived from it; the notes say why.
func buildSteady(s *metrics.Steady) (*steadyView, []windowMark) {
	if s == nil {
		return nil, nil
	}
	v := &steadyView{Table: table{Head: []string{"Metric", "Whole run (reported pass)"}},
		Rule: fmt.Sprintf(`A window counts only with at least %d completed requests and %d mean request latencies; one below that is "not found", and nothing is derived from it. A window's rates count each request by the share of its output tokens that arrived in it.`,
			metrics.MinWindowRequests, metrics.MinWindowMeanLatencies)}
	ms := []*steady.Metrics{&s.Whole}
	var marks []windowMark
	for _, w := range s.Windows {
		head := w.Label
		if !w.Found {
			head += ": not found"
			ms = append(ms, nil)
			v.Notes = append(v.Notes, w.Label+": not found: "+w.Reason)
		} else {
			ms = append(ms, &w.Metrics)
			v.Notes = append(v.Notes, w.Label+": "+w.Note)
			marks = append(marks, windowMark{From: num(float64(w.StartNs) / 1e9), To: num(float64(w.EndNs) / 1e9), Label: w.Label})
		}
		v.Table.Head = append(v.Table.Head, head)
	}
	row := func(name string, f func(m steady.Metrics) string) {
		r := []string{name}
		for _, m := range ms {
			if m == nil {
				r = append(r, "—")
				continue
			}
			r = append(r, f(*m))
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
		hasTokens = hasTokens || m != nil && m.HasTokens
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
