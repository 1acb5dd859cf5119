package metrics

import (
	"fmt"
	"strings"
	"time"

	"aimeter/loadgen"
	"aimeter/steady"
)

// MaxSteadyRecords bounds the records SteadyOf reads (a run's pass,
// loadgen.Result.PassAccess: a view of the pass, or a table of about 36
// bytes a record for a shard's): a pass with more has no steady-state
// section, so that the report's memory stays bounded (an LLM run of this
// many requests would take days).
const MaxSteadyRecords = 1 << 22

// Labels of the steady-state windows (Window.Label).
const (
	SuperPassLabel = "Super-pass window (MLPerf Endpoints)"
	InFlightLabel  = "In-flight window (SGLang, ≥ 80 % of peak)"
)

// The least a steady-state window must hold to count (docs/steady-state.md,
// "What a window must hold"). A detector's window below either is "not
// found", with the reason, and nothing is derived from it.
//
// MinWindowRequests: the window's percentiles and rates are statistics of
// its requests; under 30 the p90 rests on two or three of them and one slow
// request moves the rates by several per cent (30 is the usual floor of a
// large sample). It is also what rules out the in-flight window of a run at
// concurrency 1 to 4, where ⌈0.8 × peak⌉ is the peak itself, so that every
// completion ends the window and the longest one often holds one request.
//
// MinWindowMeanLatencies: a window's edges cut the requests in flight
// across them, about one concurrency's worth at each edge. Their output is
// shared out by WindowWork's rule, exact only where tokens arrive evenly;
// over a window of k mean request latencies (send to completion) the cut
// requests are about 2/k of its work, so at 10 the edges weigh at most a
// fifth, and the error of their share far less. It also keeps a window from
// being shorter than the requests it measures.
const (
	MinWindowRequests      = 30
	MinWindowMeanLatencies = 10
)

// Steady is the steady state of a run (package steady): its windows, each
// measured beside the whole reported pass. The report shows it and
// result.json holds it (steady_state).
type Steady struct {
	// Whole is the reported pass measured whole, over its length.
	Whole steady.Metrics
	// Windows are the steady-state windows, in the order of the report's
	// columns.
	Windows []Window
}

// Window is one steady-state window of the reported pass: its detector
// (Label), whether it found one that holds the minimum (MinWindowRequests,
// MinWindowMeanLatencies), where it lies on the pass's clock, and why.
type Window struct {
	// Label names the detector; the report heads its column with it and
	// marks it on the timeline.
	Label string
	// Found is false when the detector found no window, or one below the
	// minimum: Reason then says why, and StartNs, EndNs, Metrics and Work
	// are zero (nothing is derived from it).
	Found bool
	// Note says how the window was found; empty when none was.
	Note string
	// Reason says why no window was found; empty when one was.
	Reason string
	// StartNs and EndNs bound it on the pass's clock.
	StartNs, EndNs int64
	// Metrics measure the window: counts and latency percentiles over the
	// samples its detector assigns to it (steady.Measure); the rates
	// (CompletedPerSec, OutputTokensPerSec) are Work over its span.
	Metrics steady.Metrics
	// Work is the work done within [StartNs, EndNs) by WindowWork's rule:
	// what its rates and its energy per sample and per token divide by.
	Work Work
}

// Work is the work of a run done within a window, by WindowWork's rule.
type Work struct {
	// Requests are the successful requests, each counted by the fraction
	// of its output tokens that arrived in the window.
	Requests float64
	// Tokens are the output tokens that arrived in the window.
	Tokens float64
}

// WindowWork is the work the successful records did within [startNs,
// endNs) on their clock, by the one rule every steady-state window's rates
// and energy per sample and per token use (docs/steady-state.md, "Requests
// across a window's edges"): a request counts in the window by the fraction
// of its output tokens that arrived in it, and with it that share of its
// tokens. Where times holds the request's token arrival times (keyed by seq
// id, as loadgen.Result.TokenTimes gives them), the fraction is that of the
// arrivals in the window; otherwise its first token arrives at FirstTokenNs
// and the others evenly over the decode time, from the first token to the
// completion (without a first-token time, all of them evenly from the send
// to the completion). A request without output tokens counts wholly where
// it completed. Failed and lost requests do no work.
func WindowWork(recs []loadgen.Record, times map[uint64][]int64, startNs, endNs int64) Work {
	t := loadgen.NewRecordTable(len(recs))
	t.Append(recs...)
	return windowWork(t, times, startNs, endNs)
}

// windowWork is WindowWork of the records of t.
func windowWork(t loadgen.RecordAccess, times map[uint64][]int64, startNs, endNs int64) Work {
	var w Work
	for c := range t.Blocks(0) {
		for k := range c.Len() {
			r := c.Record(k)
			f := tokenFraction(r, times[r.SeqID], startNs, endNs)
			w.Requests += f
			w.Tokens += f * float64(max(r.Tokens, 0))
		}
	}
	return w
}

// tokenFraction is the fraction of r's output tokens that arrived within
// [startNs, endNs), by WindowWork's rule; times are r's token arrival
// times, if known.
func tokenFraction(r loadgen.Record, times []int64, startNs, endNs int64) float64 {
	if r.Status != loadgen.StatusOK || r.CompletedNs == loadgen.NoTime {
		return 0
	}
	in := func(t int64) float64 {
		if t >= startNs && t < endNs {
			return 1
		}
		return 0
	}
	// spread is the fraction of (from, to] within the window: tokens
	// arriving evenly over it.
	spread := func(from, to int64) float64 {
		if to <= from {
			return in(to)
		}
		lo, hi := max(from, startNs), min(to, endNs)
		if hi <= lo {
			return 0
		}
		return float64(hi-lo) / float64(to-from)
	}
	n := float64(r.Tokens)
	switch {
	case r.Tokens <= 0:
		return in(r.CompletedNs)
	case len(times) > 0:
		k := 0
		for _, t := range times {
			k += int(in(t))
		}
		return float64(k) / float64(len(times))
	case r.FirstTokenNs != loadgen.NoTime:
		if r.Tokens == 1 {
			return in(r.FirstTokenNs)
		}
		return (in(r.FirstTokenNs) + (n-1)*spread(r.FirstTokenNs, r.CompletedNs)) / n
	default:
		return spread(r.IssuedNs, r.CompletedNs)
	}
}

// SteadyOf is the steady state of res's reported pass: the whole pass, the
// super-pass window of MLPerf Endpoints (steady.SuperPass, over the
// effective performance sample count at the run's concurrency) and SGLang's
// in-flight window (steady.InFlight at steady.DefaultInFlightRatio), each
// measured with steady.Measure and WindowWork, and each counted only when
// it holds the minimum (MinWindowRequests, MinWindowMeanLatencies). Nil for
// a run without token times, whose latencies the super-pass method cannot
// gate on (it needs TPOT), for a run without a reported pass, and for a
// pass of more than MaxSteadyRecords samples.
func SteadyOf(res *loadgen.Result) *Steady {
	tab, sp, ok := superPassOf(res)
	if !ok {
		return nil
	}
	s := &Steady{Whole: sp.Whole}
	type candidate struct {
		start, end int64
		samples    []uint64
		note       string
	}
	var cands [2]*candidate
	w := Window{Label: SuperPassLabel}
	switch r := sp.SuperPassResult; {
	case sp.Err != nil:
		w.Reason = sp.Err.Error()
	case !r.Found:
		w.Reason = fmt.Sprintf("no steady window (%s); MLPerf Endpoints would report the whole run instead", r.Reason)
	default:
		cands[0] = &candidate{start: r.StartNs, end: r.EndNs, samples: r.Samples,
			note: fmt.Sprintf("super-passes %d–%d of %d (%d samples each: the data set's %d × ⌈concurrency/%d⌉), after %d of warm-up; %s to %s of the pass; TPOT p50 and p90 flat (no Mann-Kendall trend at 5 %%, or under 5 %% drift; CoV ≤ %g) over at least 4 super-passes, and at least %v long",
				r.Lo, r.Hi-1, r.SuperPasses, r.Size, sp.DatasetSize, sp.DatasetSize, r.Warmup, fmtSec(r.StartNs), fmtSec(r.EndNs), steady.DefaultCoVBound, time.Duration(r.MinDurationNs).Round(time.Millisecond))}
	}
	fl := Window{Label: InFlightLabel}
	if r, err := steady.InFlightTable(tab, steady.DefaultInFlightRatio); err != nil {
		fl.Reason = err.Error()
	} else {
		cands[1] = &candidate{start: r.StartNs, end: r.EndNs, samples: r.Samples,
			note: fmt.Sprintf("the longest interval with at least %d requests in flight (%g of the peak of %d, rounded up), %s to %s of the pass; its samples are those sent in it",
				r.Threshold, r.Ratio, r.Peak, fmtSec(r.StartNs), fmtSec(r.EndNs))}
	}
	var edges [][2]int64
	for _, c := range cands {
		if c != nil {
			edges = append(edges, [2]int64{c.start, c.end})
		}
	}
	times := straddlingTokenTimes(res, tab, edges)
	s.Windows = []Window{w, fl}
	for i, c := range cands {
		if c == nil {
			continue
		}
		w := &s.Windows[i]
		if why := belowMinimum(tab, c.samples, c.start, c.end); why != "" {
			w.Reason = why
			continue
		}
		w.Found, w.StartNs, w.EndNs, w.Note = true, c.start, c.end, c.note+"; its rates and energy count the output tokens that arrived in it (each request's share)"
		w.Work = windowWork(tab, times, c.start, c.end)
		w.Metrics = steady.MeasureTable(tab, c.samples, c.end-c.start)
		w.Metrics.CompletedPerSec, w.Metrics.OutputTokensPerSec = 0, 0
		if sec := float64(c.end-c.start) / 1e9; sec > 0 {
			w.Metrics.CompletedPerSec, w.Metrics.OutputTokensPerSec = w.Work.Requests/sec, w.Work.Tokens/sec
		}
	}
	return s
}

// belowMinimum says why the window [startNs, endNs) with the given samples
// is below the minimum a window must hold (MinWindowRequests completed
// requests, MinWindowMeanLatencies of their mean latency from send to
// completion); "" when it holds it.
func belowMinimum(t loadgen.RecordAccess, samples []uint64, startNs, endNs int64) string {
	keep := steady.NewSeqSet(samples)
	n, sum := 0, 0.0
	for c := range t.Blocks(0) {
		for k, seq := range c.SeqID {
			if c.Status[k] == loadgen.StatusOK && c.CompletedNs[k] != loadgen.NoTime && keep.Has(seq) {
				n++
				sum += float64(c.CompletedNs[k] - c.IssuedNs[k])
			}
		}
	}
	span := endNs - startNs
	mean := 0.0
	if n > 0 {
		mean = sum / float64(n)
	}
	need := MinWindowMeanLatencies * mean
	var short []string
	if n < MinWindowRequests {
		plural := "s"
		if n == 1 {
			plural = ""
		}
		short = append(short, fmt.Sprintf("holds %d completed request%s (at least %d needed)", n, plural, MinWindowRequests))
	}
	if float64(span) < need || span <= 0 {
		short = append(short, fmt.Sprintf("lasts %s (at least %d mean request latencies needed: %d × %s = %s)", fmtDur(span), MinWindowMeanLatencies,
			MinWindowMeanLatencies, fmtDur(int64(mean)), fmtDur(int64(need))))
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("too small to be a steady state: the detector's window, %s to %s of the pass, %s; nothing is derived from it (docs/steady-state.md)",
		fmtSec(startNs), fmtSec(endNs), strings.Join(short, " and "))
}

// straddlingTokenTimes are the token arrival times of the records that were
// in flight across an edge of one of the windows (the others count wholly
// in or out whatever their times), keyed by seq id.
func straddlingTokenTimes(res *loadgen.Result, t loadgen.RecordAccess, windows [][2]int64) map[uint64][]int64 {
	want := map[uint64]bool{}
	for c := range t.Blocks(0) {
		for k, done := range c.CompletedNs {
			if done == loadgen.NoTime {
				continue
			}
			for _, w := range windows {
				for _, edge := range w {
					if c.IssuedNs[k] < edge && done >= edge {
						want[c.SeqID[k]] = true
					}
				}
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	times := make(map[uint64][]int64, len(want))
	for seq, tt := range res.TokenTimes() {
		if want[seq] {
			times[seq] = tt
		}
	}
	return times
}

// SuperPassAnalysis is the super-pass detector's outcome for a run's
// reported pass, as SteadyOf computes it, with the metrics of the
// window and of the whole pass.
type SuperPassAnalysis struct {
	// SuperPassResult is steady.SuperPass's outcome; when Found is false
	// its window is the whole run.
	steady.SuperPassResult
	// Err is steady.SuperPass's error (a run without a data set size);
	// SuperPassResult is then zero.
	Err error
	// DatasetSize is the pass over the data set that super-passes are
	// made of: the effective performance sample count, else the QSL's.
	DatasetSize int
	// Window is measured over the window's samples and its issue span
	// when one was found, else it is Whole.
	Window steady.Metrics
	// Whole is measured over the whole pass.
	Whole steady.Metrics
}

// SuperPassOf is the super-pass analysis of res's reported pass by MLPerf
// Endpoints' rules alone, as the Endpoints export needs it (SteadyOf
// further holds its window to MinWindowRequests and
// MinWindowMeanLatencies); false where SteadyOf is nil (no token times, no
// reported pass, too many samples).
func SuperPassOf(res *loadgen.Result) (*SuperPassAnalysis, bool) {
	_, sp, ok := superPassOf(res)
	return sp, ok
}

func superPassOf(res *loadgen.Result) (loadgen.RecordAccess, *SuperPassAnalysis, bool) {
	tab, pass, ok := steadyRecords(res)
	if !ok {
		return nil, nil, false
	}
	sp := &SuperPassAnalysis{Whole: steady.MeasureTable(tab, nil, res.Passes[pass].EndNs)}
	size := res.Effective.PerformanceSampleCount
	if size == 0 {
		size = res.QSLPerformanceCount
	}
	sp.DatasetSize = int(size)
	r, err := steady.SuperPassTable(tab, steady.SuperPassOptions{DatasetSize: int(size), Concurrency: int(res.Effective.Concurrency)})
	sp.Window = sp.Whole
	switch {
	case err != nil:
		sp.Err = err
	default:
		sp.SuperPassResult = r
		if r.Found {
			sp.Window = steady.MeasureTable(tab, r.Samples, r.EndNs-r.StartNs)
		}
	}
	return tab, sp, true
}

// steadyRecords are the records of res's reported pass, by position and
// by column (loadgen.Result.PassAccess: a view of the pass, never a
// []loadgen.Record of it, issue 43), and its index; false for a run the steady-state analysis does not
// cover (see SteadyOf).
func steadyRecords(res *loadgen.Result) (loadgen.RecordAccess, int, bool) {
	if res == nil {
		return nil, 0, false
	}
	pass := res.ReportedPass()
	if pass < 0 {
		return nil, 0, false
	}
	// A first-token time is recorded only in token-latency mode: any other
	// run has none, and reading its records to see it would cost as much
	// as the rest of its report (an Offline run of 4.4 M samples: 100 ms).
	if !res.Effective.UseTokenLatencies {
		return nil, 0, false
	}
	// Look for a token time first, holding nothing.
	tokens := false
	for r := range res.PassRecords(pass) {
		if r.FirstTokenNs != loadgen.NoTime {
			tokens = true
			break
		}
	}
	if !tokens {
		return nil, 0, false
	}
	n := 0
	for c := range res.PassColumns(pass, 0) {
		n += c.Len()
	}
	if n > MaxSteadyRecords {
		return nil, 0, false
	}
	return res.PassAccess(pass), pass, true
}

func fmtSec(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }

// fmtDur is ns as a duration rounded to 0.1 ms ("12.3ms").
func fmtDur(ns int64) string { return time.Duration(ns).Round(100 * time.Microsecond).String() }
