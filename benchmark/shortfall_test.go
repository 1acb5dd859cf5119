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
	for _, tc := range []struct {
		why  string
		s    RateSearchSummary
		want string // "" for none
	}{
		{"a rate found: none", RateSearchSummary{RateSearchResult: sweep.RateSearchResult{Stop: sweep.StopFound, Probes: probe}}, ""},
		{"no probe ran (interrupted before the first): none", RateSearchSummary{RateSearchResult: sweep.RateSearchResult{Stop: sweep.StopNone}}, ""},
		{"the starting rate missed: the rate, its fraction and the SLO named",
			RateSearchSummary{SLO: metrics.SLO{TPOT: 8 * time.Millisecond}, RateSearchResult: sweep.RateSearchResult{
				Options: sweep.RateSearchOptions{Start: 5, Target: 0.9}, Stop: sweep.StopNone, Probes: probe}},
			"no request rate met the goodput target 0.9: even 5 requests/s had a goodput fraction of 0.1250 (SLO tpot=8ms)"},
	} {
		err := tc.s.Shortfall()
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%s: %v, want %q", tc.why, err, tc.want)
		}
	}
}
