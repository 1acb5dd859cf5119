package derived

import (
	"fmt"
	"time"

	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/steady"
)

// MaxSteadyRecords bounds the records ReportSteady holds (about 80 bytes
// each): a pass with more has no steady-state section, so that the
// report's memory stays bounded (an LLM run of this many requests would
// take days).
const MaxSteadyRecords = 1 << 22

// Labels of the steady-state windows in the report.
const (
	SuperPassLabel = "Super-pass window (MLPerf Endpoints)"
	InFlightLabel  = "In-flight window (SGLang, ≥ 80 % of peak)"
)

// ReportSteady is the steady state of res's reported pass as the report
// shows it: the whole pass, the super-pass window of MLPerf Endpoints
// (steady.SuperPass, over the effective performance sample count at the
// run's concurrency) and SGLang's in-flight window (steady.InFlight at
// steady.DefaultInFlightRatio), each measured with steady.Measure. Nil for
// a run without token times, whose latencies the super-pass method cannot
// gate on (it needs TPOT), for a run without a reported pass, and for a
// pass of more than MaxSteadyRecords samples.
func ReportSteady(res *loadgen.Result) *report.Steady {
	if res == nil {
		return nil
	}
	pass := res.ReportedPass()
	if pass < 0 {
		return nil
	}
	// A first-token time is recorded only in token-latency mode: any other
	// run has none, and reading its records to see it would cost as much
	// as the rest of its report (an Offline run of 4.4 M samples: 100 ms).
	if !res.Effective.UseTokenLatencies {
		return nil
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
		return nil
	}
	var recs []loadgen.Record
	for r := range res.PassRecords(pass) {
		if len(recs) == MaxSteadyRecords {
			return nil
		}
		recs = append(recs, r)
	}
	s := &report.Steady{Whole: steady.Measure(recs, nil, res.Passes[pass].EndNs)}

	size := res.Effective.PerformanceSampleCount
	if size == 0 {
		size = res.QSLPerformanceCount
	}
	sp := report.SteadyWindow{Label: SuperPassLabel}
	r, err := steady.SuperPass(recs, steady.SuperPassOptions{DatasetSize: int(size), Concurrency: int(res.Effective.Concurrency)})
	switch {
	case err != nil:
		sp.Note = err.Error()
		sp.Metrics = s.Whole
	default:
		sp.Found, sp.StartNs, sp.EndNs = r.Found, r.StartNs, r.EndNs
		sp.Metrics = steady.Measure(recs, r.Samples, r.EndNs-r.StartNs)
		if r.Found {
			sp.Note = fmt.Sprintf("super-passes %d–%d of %d (%d samples each: the data set's %d × ⌈concurrency/%d⌉), after %d of warm-up; %s to %s of the pass; TPOT p50 and p90 flat (no Mann-Kendall trend at 5 %%, or under 5 %% drift; CoV ≤ %g) over at least 4 super-passes, and at least %v long",
				r.Lo, r.Hi-1, r.SuperPasses, r.Size, size, size, r.Warmup, fmtSec(r.StartNs), fmtSec(r.EndNs), steady.DefaultCoVBound, time.Duration(r.MinDurationNs).Round(time.Millisecond))
		} else {
			sp.Note = fmt.Sprintf("no steady window (%s): the whole run stands for it, as in Endpoints", r.Reason)
			sp.Metrics = s.Whole
		}
	}
	fl := report.SteadyWindow{Label: InFlightLabel}
	if r, err := steady.InFlight(recs, steady.DefaultInFlightRatio); err != nil {
		fl.Note, fl.Metrics = err.Error(), s.Whole
	} else {
		fl.Found, fl.StartNs, fl.EndNs = true, r.StartNs, r.EndNs
		fl.Metrics = steady.Measure(recs, r.Samples, r.EndNs-r.StartNs)
		fl.Note = fmt.Sprintf("the longest interval with at least %d requests in flight (%g of the peak of %d, rounded up), %s to %s of the pass; its samples are those sent in it",
			r.Threshold, r.Ratio, r.Peak, fmtSec(r.StartNs), fmtSec(r.EndNs))
	}
	s.Windows = []report.SteadyWindow{sp, fl}
	return s
}

func fmtSec(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }
