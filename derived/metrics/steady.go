package metrics

import (
	"fmt"
	"time"

	"aimeter/loadgen"
	"aimeter/steady"
)

// MaxSteadyRecords bounds the records SteadyOf holds (about 80 bytes
// each): a pass with more has no steady-state section, so that the
// report's memory stays bounded (an LLM run of this many requests would
// take days).
const MaxSteadyRecords = 1 << 22

// Labels of the steady-state windows (Window.Label).
const (
	SuperPassLabel = "Super-pass window (MLPerf Endpoints)"
	InFlightLabel  = "In-flight window (SGLang, ≥ 80 % of peak)"
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
// (Label), whether it found one (else its metrics are the whole pass's,
// as in MLPerf Endpoints), where it lies on the pass's clock, and why.
type Window struct {
	// Label names the detector; the report heads its column with it and
	// marks it on the timeline.
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

// SteadyOf is the steady state of res's reported pass: the whole pass, the super-pass window of MLPerf Endpoints
// (steady.SuperPass, over the effective performance sample count at the
// run's concurrency) and SGLang's in-flight window (steady.InFlight at
// steady.DefaultInFlightRatio), each measured with steady.Measure. Nil for
// a run without token times, whose latencies the super-pass method cannot
// gate on (it needs TPOT), for a run without a reported pass, and for a
// pass of more than MaxSteadyRecords samples.
func SteadyOf(res *loadgen.Result) *Steady {
	recs, sp, ok := superPassOf(res)
	if !ok {
		return nil
	}
	s := &Steady{Whole: sp.Whole}
	w := Window{Label: SuperPassLabel}
	switch r := sp.SuperPassResult; {
	case sp.Err != nil:
		w.Note = sp.Err.Error()
		w.Metrics = s.Whole
	default:
		w.Found, w.StartNs, w.EndNs = r.Found, r.StartNs, r.EndNs
		w.Metrics = sp.Window
		if r.Found {
			w.Note = fmt.Sprintf("super-passes %d–%d of %d (%d samples each: the data set's %d × ⌈concurrency/%d⌉), after %d of warm-up; %s to %s of the pass; TPOT p50 and p90 flat (no Mann-Kendall trend at 5 %%, or under 5 %% drift; CoV ≤ %g) over at least 4 super-passes, and at least %v long",
				r.Lo, r.Hi-1, r.SuperPasses, r.Size, sp.DatasetSize, sp.DatasetSize, r.Warmup, fmtSec(r.StartNs), fmtSec(r.EndNs), steady.DefaultCoVBound, time.Duration(r.MinDurationNs).Round(time.Millisecond))
		} else {
			w.Note = fmt.Sprintf("no steady window (%s): the whole run stands for it, as in Endpoints", r.Reason)
		}
	}
	fl := Window{Label: InFlightLabel}
	if r, err := steady.InFlight(recs, steady.DefaultInFlightRatio); err != nil {
		fl.Note, fl.Metrics = err.Error(), s.Whole
	} else {
		fl.Found, fl.StartNs, fl.EndNs = true, r.StartNs, r.EndNs
		fl.Metrics = steady.Measure(recs, r.Samples, r.EndNs-r.StartNs)
		fl.Note = fmt.Sprintf("the longest interval with at least %d requests in flight (%g of the peak of %d, rounded up), %s to %s of the pass; its samples are those sent in it",
			r.Threshold, r.Ratio, r.Peak, fmtSec(r.StartNs), fmtSec(r.EndNs))
	}
	s.Windows = []Window{w, fl}
	return s
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

// SuperPassOf is the super-pass analysis of res's reported pass, the one
// SteadyOf reports; false where SteadyOf is nil (no token times, no
// reported pass, too many samples).
func SuperPassOf(res *loadgen.Result) (*SuperPassAnalysis, bool) {
	_, sp, ok := superPassOf(res)
	return sp, ok
}

func superPassOf(res *loadgen.Result) ([]loadgen.Record, *SuperPassAnalysis, bool) {
	recs, pass, ok := steadyRecords(res)
	if !ok {
		return nil, nil, false
	}
	sp := &SuperPassAnalysis{Whole: steady.Measure(recs, nil, res.Passes[pass].EndNs)}
	size := res.Effective.PerformanceSampleCount
	if size == 0 {
		size = res.QSLPerformanceCount
	}
	sp.DatasetSize = int(size)
	r, err := steady.SuperPass(recs, steady.SuperPassOptions{DatasetSize: int(size), Concurrency: int(res.Effective.Concurrency)})
	sp.Window = sp.Whole
	switch {
	case err != nil:
		sp.Err = err
	default:
		sp.SuperPassResult = r
		if r.Found {
			sp.Window = steady.Measure(recs, r.Samples, r.EndNs-r.StartNs)
		}
	}
	return recs, sp, true
}

// steadyRecords are the records of res's reported pass and its index;
// false for a run the steady-state analysis does not cover (see
// SteadyOf).
func steadyRecords(res *loadgen.Result) ([]loadgen.Record, int, bool) {
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
	// Count them first: one slice of the pass's size, not one grown by
	// appending (which holds up to twice as much while it grows).
	n := 0
	for c := range res.PassColumns(pass, 0) {
		n += c.Len()
	}
	if n > MaxSteadyRecords {
		return nil, 0, false
	}
	recs := make([]loadgen.Record, 0, n)
	for r := range res.PassRecords(pass) {
		recs = append(recs, r)
	}
	return recs, pass, true
}

func fmtSec(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }
