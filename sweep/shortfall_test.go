package sweep

import (
	"errors"
	"testing"
)

func TestSummaryShortfall(t *testing.T) {
	search := func(stop string) *SearchResult {
		return &SearchResult{Options: SearchOptions{Start: 2, Max: 64, Target: 0.9}, Stop: stop,
			Probes: []Probe{{Concurrency: 2, Fraction: 0.25}}}
	}
	withMiss := func(r *SearchResult) *SearchResult {
		r.Shortfall = &Miss{Concurrency: 2, Fraction: 0.25, Target: 0.9, Issued: 40,
			Bounds: []BoundCheck{{Bound: "TPOT", LimitMs: 8, Percentile: 90, ValueMs: 12.5, Within: 0.25, Over: true}}}
		return r
	}
	for _, tc := range []struct {
		why     string
		s       Summary
		want    error  // nil, or ErrInvalidPoint
		message string // the error's text where want is nil and one is expected
	}{
		{"every point VALID: none", Summary{Points: []Point{{Verdict: "VALID"}, {Verdict: "VALID"}}}, nil, ""},
		{"an INVALID point", Summary{Points: []Point{{Verdict: "VALID"}, {Verdict: "INVALID"}}}, ErrInvalidPoint, ""},
		{"a search that found a concurrency: none", Summary{Search: search(StopFound)}, nil, ""},
		{"a search whose start missed the target: the start and its fraction named",
			Summary{SLO: "tpot=8ms", Search: search(StopNone)}, nil,
			"no concurrency from 2 to 64 met the goodput target 0.9: at concurrency 2 (goodput fraction 0.25 < 0.9)"},
		{"a search whose start missed the target, its records read: the bound that failed and by how much, as Outcome says it",
			Summary{SLO: "tpot=8ms", Search: withMiss(search(StopNone))}, nil,
			"no concurrency from 2 to 64 met the goodput target 0.9: TPOT p90 12.5 ms > 8 ms (25 % of requests within it) at concurrency 2 (goodput fraction 0.25 < 0.9)"},
	} {
		err := tc.s.Shortfall()
		switch {
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.why, err, tc.want)
		case tc.want == nil && tc.message == "" && err != nil:
			t.Errorf("%s: %v, want none", tc.why, err)
		case tc.message != "" && (err == nil || err.Error() != tc.message):
			t.Errorf("%s: %v, want %q", tc.why, err, tc.message)
		}
	}
}
