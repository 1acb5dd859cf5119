package loadgen

import (
	"fmt"
	"math"
)

// findPeak is LoadGen's FindPeakPerformanceMode for the Server scenario:
// check the requested QPS, widen the upper bound by (1+step) until a run
// misses the latency constraint, then bisect until the bounds agree to the
// requested decimals. Only the performance constraint (the percentile
// latency bound) decides, as in LoadGen; the reported summary is the last
// passing (lower-bound) run.
//
// Two things are aimeter's own and change no schedule: every probe's outcome
// is kept in its PassInfo.Probe while only the lower bound's records are
// kept (unless Options.KeepProbeRecords), and Options.FindPeakResolution
// may end the bisection early.
func (t *testRun) findPeak() (*Summary, error) {
	t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "Starting FindPeakPerformance mode"})
	base := t.eff
	t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "FindPeakPerformance: Check validity of the base settings field: " + qpsField(base.TargetQPS)})
	lower, err := t.probe(&base, nil)
	if err != nil || t.stopped() {
		return t.markReported(lower), err
	}
	if !lower.PerfConstraintsMet {
		t.errorEvent("error_runtime", "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: "+lower.PerfConstraintsRecommendation)
		return t.markReported(lower), nil
	}
	// Widen: [l, l×(1+step)) until the upper run fails.
	var upper *Summary
	for {
		u := lower.Effective
		u.TargetQPS = lower.Effective.TargetQPS * (1 + u.ServerFindPeakQPSBoundaryStepSize)
		t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: fmt.Sprintf("FindBoundaries: Checking fields [%s, %s)", qpsField(lower.Effective.TargetQPS), qpsField(u.TargetQPS))})
		s, err := t.probe(&u, lower)
		if err != nil || t.stopped() {
			return t.markReported(lower), err
		}
		if !s.PerfConstraintsMet {
			upper = s
			break
		}
		lower = s
	}
	t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: fmt.Sprintf("FindPeakPerformance: Found boundaries: [%s, %s)", qpsField(lower.Effective.TargetQPS), qpsField(upper.Effective.TargetQPS))})
	// Bisect.
	for !findPeakFinished(lower.Effective.TargetQPS, upper.Effective.TargetQPS, base.ServerFindPeakQPSDecimalsOfPrecision) {
		if r := t.opts.FindPeakResolution; r > 0 && upper.Effective.TargetQPS-lower.Effective.TargetQPS <= r*lower.Effective.TargetQPS {
			t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: fmt.Sprintf("FindPeakPerformance: bounds [%s, %s) within the resolution of %g %% of the lower bound: search ended (aimeter)",
				qpsField(lower.Effective.TargetQPS), qpsField(upper.Effective.TargetQPS), r*100)})
			break
		}
		m := lower.Effective
		m.TargetQPS = lower.Effective.TargetQPS + (upper.Effective.TargetQPS-lower.Effective.TargetQPS)/2
		t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: fmt.Sprintf("FindPeakPerformanceBinarySearch: Testing the mid value of bounds [%s, %s): %s",
			qpsField(lower.Effective.TargetQPS), qpsField(upper.Effective.TargetQPS), qpsField(m.TargetQPS))})
		s, err := t.probe(&m, lower)
		if err != nil || t.stopped() {
			return t.markReported(lower), err
		}
		if s.PerfConstraintsMet {
			lower = s
		} else {
			upper = s
		}
	}
	t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "FindPeakPerformance: Found peak performance field: " + qpsField(lower.Effective.TargetQPS)})
	return t.markReported(lower), nil
}

// probe runs one find-peak probe at e's target QPS and records its outcome
// in its pass. Unless the records of probes are kept, it then drops the
// records of every earlier probe but lower (the current lower bound, nil
// before the first), and of the new probe itself when it failed: a failed
// probe is never reported, and a passing one becomes the new lower bound.
func (t *testRun) probe(e *Effective, lower *Summary) (*Summary, error) {
	if lower != nil {
		// Run checked the first probe; later ones run at higher rates.
		if err := checkBudget(e, t.qsl.TotalSampleCount(), &t.opts); err != nil {
			return nil, fmt.Errorf("find-peak stopped before the probe at %s: %w", qpsField(e.TargetQPS), err)
		}
	}
	s, err := t.runPerformance(e, PassFindPeak)
	if s == nil || s.pass < 0 || s.pass >= len(t.passes) {
		return s, err
	}
	_, value := s.Metric()
	t.passes[s.pass].info.Probe = &ProbeOutcome{
		PerfConstraintsMet:        s.PerfConstraintsMet,
		TargetPercentileLatencyNs: s.TargetPercentile.SampleLatency,
		CompletedSamplesPerSecond: value,
		Samples:                   s.SampleCount,
	}
	if t.opts.KeepProbeRecords {
		return s, err
	}
	keep := s.pass
	if !s.PerfConstraintsMet && lower != nil {
		keep = lower.pass
	}
	if err != nil || t.stopped() {
		// The search ends here and reports lower (or this first probe).
		if lower != nil {
			keep = lower.pass
		}
	}
	for i, pr := range t.passes {
		if i != keep && pr.info.Kind == PassFindPeak {
			pr.dropRecords()
		}
	}
	return s, err
}

// findPeakFinished: floor(l·10^d) + 1 ≥ floor(u·10^d).
func findPeakFinished(l, u float64, decimals int) bool {
	scale := math.Pow10(decimals)
	return math.Floor(l*scale)+1 >= math.Floor(u*scale)
}

func qpsField(qps float64) string { return fmt.Sprintf("target_qps : %f", qps) }

func (t *testRun) markReported(s *Summary) *Summary {
	if s != nil && s.pass >= 0 && s.pass < len(t.passes) {
		t.passes[s.pass].info.Reported = true
	}
	return s
}
