package derived

import (
	"fmt"
	"strings"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/steady"
	"aimeter/workload/session"
	"aimeter/workload/trace"
)

// GoodputFigures are the requests of the reported pass that met a
// per-request SLO (metrics.SLO: a failed or lost request never does).
type GoodputFigures struct {
	SLO bundle.SLO `json:"slo"`
	// SLOSource is "invocation" for an SLO the run was given (--slo), or
	// "settings" for one taken from the run's token-latency settings
	// (ttft_latency and tpot_latency, each applied per request).
	SLOSource string `json:"slo_source"`
	metrics.Goodput
}

// Labels of the steady-state windows (metrics.Window.Label).
const (
	SuperPassLabel = metrics.SuperPassLabel
	InFlightLabel  = metrics.InFlightLabel
)

// SLO sources of GoodputFigures.
const (
	SLOFromInvocation = "invocation"
	SLOFromSettings   = "settings"
)

// SteadyFigures are a run's metrics over its whole reported pass and over
// each steady-state window (metrics.SteadyOf), for result.json.
type SteadyFigures struct {
	Whole   WindowMetrics   `json:"whole"`
	Windows []WindowFigures `json:"windows"`
}

// WindowFigures are a steady-state window (metrics.Window) as result.json
// holds it: its detector (Label), whether it found one that holds the
// minimum (metrics.MinWindowRequests, metrics.MinWindowMeanLatencies),
// where it lies on the pass's clock, and how it was found (Note) or why
// not (Reason). A window not found has no bounds, metrics or work: nothing
// is derived from it.
type WindowFigures struct {
	Label   string         `json:"label"`
	Found   bool           `json:"found"`
	StartNs int64          `json:"start_ns,omitempty"`
	EndNs   int64          `json:"end_ns,omitempty"`
	Note    string         `json:"note,omitempty"`
	Reason  string         `json:"not_found_reason,omitempty"`
	Metrics *WindowMetrics `json:"metrics,omitempty"`
	Work    *WindowWork    `json:"work,omitempty"`
}

// WindowWork is the work done within a steady-state window by
// metrics.WindowWork's rule (each request by the share of its output tokens
// that arrived in it): what the window's rates and its energy per sample
// and per output token divide by.
type WindowWork struct {
	Requests     float64 `json:"requests"`
	OutputTokens float64 `json:"output_tokens"`
}

// WindowMetrics are steady.Metrics for result.json: latencies in ns at
// p50, p90 and p99 (LoadGen's percentile rule), over the successful
// samples of the window. A window's rates are its work (WindowWork) per
// second of its span; the whole pass's count every successful sample.
type WindowMetrics struct {
	Samples            int       `json:"samples"`
	Completed          int       `json:"completed"`
	Failed             int       `json:"failed"`
	Lost               int       `json:"lost"`
	SpanNs             int64     `json:"span_ns"`
	CompletedPerSec    float64   `json:"completed_per_s"`
	OutputTokensPerSec float64   `json:"output_tokens_per_s"`
	LatencyNs          [3]int64  `json:"latency_p50_p90_p99_ns"`
	TTFTNs             *[3]int64 `json:"ttft_p50_p90_p99_ns,omitempty"`
	TPOTNs             *[3]int64 `json:"tpot_p50_p90_p99_ns,omitempty"`
}

func windowMetrics(m steady.Metrics) WindowMetrics {
	w := WindowMetrics{Samples: m.Samples, Completed: m.Completed, Failed: m.Failed, Lost: m.Lost, SpanNs: m.SpanNs,
		CompletedPerSec: finite(m.CompletedPerSec), OutputTokensPerSec: finite(m.OutputTokensPerSec), LatencyNs: m.Latency}
	if m.HasTokens {
		ttft, tpot := m.TTFT, m.TPOT
		w.TTFTNs, w.TPOTNs = &ttft, &tpot
	}
	return w
}

// SessionFigures are a multi-turn run's figures (session.Metrics without
// the per-session list, which the records give).
type SessionFigures struct {
	Sessions int                 `json:"sessions"`
	Turns    int                 `json:"turns"`
	PerTurn  []session.TurnStats `json:"per_turn"`
	// E2EInteractivity is MLPerf Endpoints' agentic e2e_interactivity:
	// output tokens of the successful turns over their turn times, per s.
	E2EInteractivity        float64 `json:"e2e_interactivity"`
	SessionInteractivityP50 float64 `json:"session_interactivity_p50"`
	SessionInteractivityP10 float64 `json:"session_interactivity_p10"`
}

// goodputOf measures the reported pass of res against the run's SLO: the
// one it was given, else its token-latency bounds; nil for neither.
func goodputOf(b *bundle.Bundle) *GoodputFigures {
	res := b.Result
	var slo bundle.SLO
	source := ""
	if inv := invocation.Of(b); inv != nil && inv.SLO != nil && *inv.SLO != (bundle.SLO{}) {
		slo, source = *inv.SLO, SLOFromInvocation
	} else if e := res.Effective; e.UseTokenLatencies && (e.TTFTLatencyNs > 0 || e.TPOTLatencyNs > 0) {
		slo, source = bundle.SLO{TTFTNs: e.TTFTLatencyNs, TPOTNs: e.TPOTLatencyNs}, SLOFromSettings
	} else {
		return nil
	}
	pt, err := metrics.MeasureResult(res, metrics.SLO{TTFT: time.Duration(slo.TTFTNs), TPOT: time.Duration(slo.TPOTNs), E2E: time.Duration(slo.E2ENs)})
	if err != nil || pt.Goodput == nil {
		return nil
	}
	g := *pt.Goodput
	g.Fraction, g.RequestsPerS, g.TokensPerS = finite(g.Fraction), finite(g.RequestsPerS), finite(g.TokensPerS)
	return &GoodputFigures{SLO: slo, SLOSource: source, Goodput: g}
}

// sendLatenessOf is the send lateness (issue − scheduled time) of the
// reported pass of a run on a schedule: the Server scenario at a target
// rate, or a trace replay. Nil for other runs, whose scheduled times are
// not send times (Offline queues every sample at 0; a fixed-concurrency
// run schedules a sample when a slot frees).
func sendLatenessOf(res *loadgen.Result) *trace.LatenessSummary {
	e := res.Effective
	pass := res.ReportedPass()
	if e.Scenario != loadgen.Server || e.Concurrency > 0 || pass < 0 || res.Summary == nil {
		return nil
	}
	n := 0
	var late uint64
	for c := range res.PassColumns(pass, 0) {
		n += c.Len()
		for i, issued := range c.IssuedNs {
			if issued-c.ScheduledNs[i] > int64(trace.DefaultLateAfter) {
				late++
			}
		}
	}
	if n > latenessHoldMax {
		return sendLatenessScan(res, pass, n, late)
	}
	// The delays in one slice of the pass's size, read by column.
	d := make([]int64, 0, n)
	for c := range res.PassColumns(pass, 0) {
		for i, issued := range c.IssuedNs {
			d = append(d, issued-c.ScheduledNs[i])
		}
	}
	l := trace.LatenessOf(d, trace.DefaultLateAfter)
	if l.Count == 0 {
		return nil
	}
	return &l
}

// latenessHoldMax is the most send delays sendLatenessOf holds in a
// slice (8 bytes each: 8 MiB); the delays of a larger pass are read from
// its records in several readings instead (sendLatenessScan), which give
// the same figures in memory that does not grow with the records: a
// merged bundle's records stay in their file (issue 43).
const latenessHoldMax = 1 << 20

// sendLatenessScan is trace.LatenessOf of the send delays of pass of res,
// n of them, late of which are later than trace.DefaultLateAfter, with its
// ranks read in passes over the records (loadgen.RanksOfScan); nil when
// the records cannot be read.
func sendLatenessScan(res *loadgen.Result, pass, n int, late uint64) *trace.LatenessSummary {
	scan := func(add func(int64)) error {
		for c := range res.PassColumns(pass, 0) {
			for i, issued := range c.IssuedNs {
				add(max(issued-c.ScheduledNs[i], 0)) // a negative delay counts as 0, as in LatenessOf
			}
		}
		return res.RecordSourceErr()
	}
	// rank is the index of the ⌈n·num/den⌉-th smallest, as in LatenessOf.
	rank := func(num, den int) int64 { return int64(max((n*num+den-1)/den, 1) - 1) }
	v, count, err := loadgen.RanksOfScan(scan, []int64{rank(50, 100), rank(99, 100), int64(n) - 1})
	if err != nil || count != int64(n) {
		return nil
	}
	return &trace.LatenessSummary{Count: uint64(n), Late: late, LateAfter: trace.DefaultLateAfter,
		P50: time.Duration(v[0]), P99: time.Duration(v[1]), Max: time.Duration(v[2])}
}

// steadyOf is the steady state of metrics.SteadyOf for result.json; nil
// where that is.
func steadyOf(s *metrics.Steady) *SteadyFigures {
	if s == nil {
		return nil
	}
	f := &SteadyFigures{Whole: windowMetrics(s.Whole)}
	for _, w := range s.Windows {
		wf := WindowFigures{Label: w.Label, Found: w.Found, Note: w.Note, Reason: w.Reason}
		if w.Found {
			m := windowMetrics(w.Metrics)
			wf.StartNs, wf.EndNs, wf.Metrics = w.StartNs, w.EndNs, &m
			wf.Work = &WindowWork{Requests: finite(w.Work.Requests), OutputTokens: finite(w.Work.Tokens)}
		}
		f.Windows = append(f.Windows, wf)
	}
	return f
}

// sessionsOf computes the session figures of a sessions run; nil for
// other runs, or when its records do not fit its sessions.
func sessionsOf(b *bundle.Bundle) *SessionFigures {
	inv := invocation.Of(b)
	if inv == nil || inv.Sessions == nil || len(inv.Sessions.TurnsPerSession) == 0 {
		return nil
	}
	recs, err := session.TurnRecords(b.Result.Records(), inv.Sessions.TurnsPerSession)
	if err != nil {
		return nil
	}
	m, err := session.Compute(recs)
	if err != nil {
		return nil
	}
	f := &SessionFigures{Sessions: len(inv.Sessions.TurnsPerSession), PerTurn: m.PerTurn, E2EInteractivity: finite(m.E2EInteractivity),
		SessionInteractivityP50: finite(m.SessionInteractivityP50), SessionInteractivityP10: finite(m.SessionInteractivityP10)}
	for _, n := range inv.Sessions.TurnsPerSession {
		f.Turns += n
	}
	return f
}

// StatsText is the p50, p90 and p99 of st as the console and the report
// give them ("p50 2.000 ms, p90 3.000 ms, p99 3.000 ms"), or "none" for an
// empty distribution.
func StatsText(st Stats) string {
	if st.Count == 0 {
		return "none"
	}
	return "p50 " + report.FormatDuration(st.P50) + ", p90 " + report.FormatDuration(st.P90) + ", p99 " + report.FormatDuration(st.P99)
}

// finite is x, or 0 for NaN and ±Inf (which JSON cannot hold).
func finite(x float64) float64 {
	if x != x || x > 1e308 || x < -1e308 {
		return 0
	}
	return x
}

// ReportServing is the report's table of b's serving figures: the goodput,
// send lateness and session figures of result.json; nil when the run has
// none.
func ReportServing(b *bundle.Bundle) *report.Serving {
	if b == nil || b.Result == nil {
		return nil
	}
	return reportServing(b, sendLatenessOf(b.Result), metrics.StreamingOf(b.Result))
}

// reportServing is ReportServing with the send lateness and the streaming
// figures of b's run (Set.SendLateness, Set.Streaming) given; b has a
// Result.
func reportServing(b *bundle.Bundle, late *trace.LatenessSummary, stream *metrics.Streaming) *report.Serving {
	s := &report.Serving{}
	add := func(group, name, format string, a ...any) {
		s.Rows = append(s.Rows, report.ServingRow{Group: group, Name: name, Value: fmt.Sprintf(format, a...)})
	}
	if st := stream; st != nil {
		add("Streaming", "Inter-token latency (ITL)", "%s (%d gaps between tokens of %d streamed samples)", StatsText(st.ITLNs), st.ITLNs.Count, st.StreamedSamples)
		add("Streaming", "End-to-end latency (E2E)", "%s (%d successful samples)", StatsText(st.E2ENs), st.E2ENs.Count)
		if st.SpanNs > 0 {
			add("Streaming", "Output tokens per second", "%.1f (%d tokens in %s)", st.OutputTokensPerS, st.OutputTokens, report.FormatDuration(st.SpanNs))
		}
	}
	if b.Result.Summary != nil {
		if g := goodputOf(b); g != nil {
			var bounds []string
			for _, x := range []struct {
				name string
				ns   int64
			}{{"TTFT", g.SLO.TTFTNs}, {"TPOT", g.SLO.TPOTNs}, {"E2E", g.SLO.E2ENs}} {
				if x.ns > 0 {
					bounds = append(bounds, fmt.Sprintf("%s ≤ %v", x.name, time.Duration(x.ns)))
				}
			}
			src := "given to the run (--slo)"
			if g.SLOSource == SLOFromSettings {
				src = "the run's ttft_latency and tpot_latency, applied to each request"
			}
			add("Goodput", "SLO", "%s (%s)", strings.Join(bounds, ", "), src)
			add("Goodput", "Requests that met it", "%d (%.4g %% of those issued; failed and lost ones never do)", g.Met, 100*g.Fraction)
			add("Goodput", "Requests per second", "%.4g", g.RequestsPerS)
			add("Goodput", "Output tokens per second", "%.4g", g.TokensPerS)
		}
		if l := late; l != nil {
			add("Send lateness", "Issue − scheduled time", "p50 %v, p99 %v, max %v over %d requests", l.P50, l.P99, l.Max, l.Count)
			add("Send lateness", fmt.Sprintf("Later than %v", l.LateAfter), "%d", l.Late)
		}
	}
	if f := sessionsOf(b); f != nil {
		add("Sessions", "Sessions and turns", "%d sessions, %d turns", f.Sessions, f.Turns)
		add("Sessions", "e2e_interactivity (MLPerf Endpoints)", "%.4g output tokens/s of turn time", f.E2EInteractivity)
		add("Sessions", "Session interactivity p50 / p10", "%.4g / %.4g tokens/s", f.SessionInteractivityP50, f.SessionInteractivityP10)
		for _, ts := range f.PerTurn {
			add("Sessions", fmt.Sprintf("Turn %d", ts.Turn), "%d turns (%d failed): TTFT p50 %v p90 %v, E2E p50 %v p90 %v",
				ts.Count, ts.Failed, ts.TTFTP50, ts.TTFTP90, ts.E2EP50, ts.E2EP90)
		}
	}
	if len(s.Rows) == 0 {
		return nil
	}
	return s
}
