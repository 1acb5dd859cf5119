package benchmark

import (
	"fmt"
	"testing"
	"time"

	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/sweep"
)

// TestOutcomeLostJobs: the lost jobs are the run's lost samples and, in a
// mixed GB/T test, its foreign jobs' too.
func TestOutcomeLostJobs(t *testing.T) {
	lost := func(n uint64) *loadgen.Result {
		r := &loadgen.Result{}
		r.LostSamples = n
		return r
	}
	for _, tc := range []struct {
		why  string
		out  Outcome
		want uint64
	}{
		{"nothing lost", Outcome{Result: lost(0)}, 0},
		{"the main jobs' only: no foreign jobs", Outcome{Result: lost(3)}, 3},
		{"a mixed test: the foreign jobs' count too", Outcome{Result: lost(3), Foreign: lost(4)}, 7},
		{"only foreign jobs lost", Outcome{Result: lost(0), Foreign: lost(2)}, 2},
	} {
		if got := tc.out.LostJobs(); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.why, got, tc.want)
		}
	}
}

func TestRateSearchShortfall(t *testing.T) {
	probe := []sweep.RateProbe{{TargetQPS: 5, Fraction: 0.125}}
	five := 5.0
	for _, tc := range []struct {
		why  string
		s    RateSearchSummary
		want string // "" for none
	}{
		{"a rate found: none", RateSearchSummary{RateSearchResult: sweep.RateSearchResult{Stop: sweep.StopFound, Best: &five, Probes: []sweep.RateProbe{{TargetQPS: 5, Fraction: 1, Pass: true}}}}, ""},
		{"no probe ran (interrupted before the first): none", RateSearchSummary{RateSearchResult: sweep.RateSearchResult{Stop: sweep.StopNone}}, ""},
		{"the starting rate missed, an older file without a shortfall: the rate and its fraction named",
			RateSearchSummary{SLO: metrics.SLO{TPOT: 8 * time.Millisecond}, RateSearchResult: sweep.RateSearchResult{
				Options: sweep.RateSearchOptions{Start: 5, Max: 20, Target: 0.9}, Stop: sweep.StopNone, Probes: probe}},
			"no request rate from 5 to 20 requests/s met the goodput target 0.9: at 5 requests/s (goodput fraction 0.125 < 0.9)"},
		{"the starting rate missed: the bound that failed named, and by how much (the search's Outcome)",
			RateSearchSummary{SLO: metrics.SLO{TPOT: 8 * time.Millisecond}, RateSearchResult: sweep.RateSearchResult{
				Options: sweep.RateSearchOptions{Start: 5, Max: 20, Target: 0.9}, Stop: sweep.StopNone, Probes: probe,
				Shortfall: &sweep.Miss{TargetQPS: 5, Fraction: 0.125, Target: 0.9, Issued: 8,
					Bounds: []sweep.BoundCheck{{Bound: "TPOT", LimitMs: 8, Percentile: 90, ValueMs: 9.5, Within: 0.125, Over: true}}}}},
			"no request rate from 5 to 20 requests/s met the goodput target 0.9: TPOT p90 9.5 ms > 8 ms (12.5 % of requests within it) at 5 requests/s (goodput fraction 0.125 < 0.9)"},
	} {
		err := tc.s.Shortfall()
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%s: %v, want %q", tc.why, err, tc.want)
		}
	}
}
