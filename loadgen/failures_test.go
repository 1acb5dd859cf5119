package loadgen

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestFailuresAreNotCompletions: a failure (here a 2 s "timeout" of every
// third sample) is counted beside the statistics, never as a latency or a
// completion: the percentiles and the throughput are those of the
// successful samples alone, the pass is INVALID unless max_error_rate
// allows the failures, and LoadGen's advice on the load is not given when
// the failures decided it. On the old code the p99 was the 2 s failure
// time, "Performance constraints satisfied" came with "Reduce target QPS".
func TestFailuresAreNotCompletions(t *testing.T) {
	for _, tc := range []struct {
		why       string
		maxErrors float64
		valid     bool
	}{
		{"any failure is INVALID by default", 0, false},
		{"a third failing is within max_error_rate 0.4", 0.4, true},
		{"a third failing is over max_error_rate 0.2", 0.2, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
				for _, s := range samples {
					id := s.ID
					if s.Index%3 == 0 {
						time.AfterFunc(2*time.Second, func() { r.Fail(id, errors.New("request timed out")) })
						continue
					}
					time.AfterFunc(10*time.Millisecond, func() { r.Complete(id, nil, 0) })
				}
			}}
			s := DefaultSettings()
			s.Scenario = Server
			s.ServerTargetQPS = 100
			s.ServerTargetLatencyNs = uint64(50 * time.Millisecond)
			s.MinDurationMs = 20000
			s.MinQueryCount = 2000
			s.MaxErrorRate = tc.maxErrors
			res, err := Run(context.Background(), sut, &testQSL{total: 300, perf: 300}, s, &Options{SpinWindow: -1})
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			if sum.Result.FailedSamples == 0 || sum.SampleCount+sum.Result.FailedSamples != uint64(res.RecordCount()) {
				t.Fatalf("%s: %d ok, %d failed, %d records", tc.why, sum.SampleCount, sum.Result.FailedSamples, res.RecordCount())
			}
			if sum.SampleLatencyMax != int64(10*time.Millisecond) || sum.TargetPercentile.SampleLatency != int64(10*time.Millisecond) {
				t.Errorf("%s: max %d, p99 %d ns; want the successes' 10 ms: a failure is no latency", tc.why, sum.SampleLatencyMax, sum.TargetPercentile.SampleLatency)
			}
			if !sum.PerfConstraintsMet {
				t.Errorf("%s: the successes met the 50 ms bound", tc.why)
			}
			if got := sum.CompletedSamplesPerSecond(); got > 70 {
				t.Errorf("%s: %.1f completed samples/s; the failures must not count (about 2/3 of 100/s succeed)", tc.why, got)
			}
			if sum.Valid != tc.valid {
				t.Errorf("%s: valid %v, want %v (%q; minq %v mind %v es %v perf %v)", tc.why, sum.Valid, tc.valid, sum.AimeterReasons, sum.MinQueriesMet, sum.MinDurationMet, sum.EarlyStoppingMet, sum.PerfConstraintsMet)
			}
			if !tc.valid && (sum.PerfConstraintsRecommendation != "" || sum.MinDurationRecommendation != "" || !sum.FailuresDecided) {
				t.Errorf("%s: LoadGen's advice given although failures decided: %q %q", tc.why, sum.PerfConstraintsRecommendation, sum.MinDurationRecommendation)
			}
		})
	}
}

// TestConcurrencyRunsItsDuration: fixed concurrency generates its own
// queries, so a run against a SUT much faster than SingleStream's expected
// latency (1 s by default) runs its whole duration instead of running out
// of queries after twice the expected latency's worth.
func TestConcurrencyRunsItsDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := concurrencyRun(t, 8, 1, 5*time.Second, func(uint64) time.Duration { return 2 * time.Millisecond })
		if !res.Summary.Valid {
			t.Fatalf("INVALID: %q, min duration met %v, early stopping %v", res.Summary.AimeterReasons, res.Summary.MinDurationMet, res.Summary.EarlyStoppingMet)
		}
		if n := res.RecordCount(); n < 8*5000/2-8 {
			t.Errorf("%d samples in 5 s at 8 × 2 ms; want about %d", n, 8*5000/2)
		}
	})
}
