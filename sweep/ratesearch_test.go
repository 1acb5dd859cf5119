package sweep

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// rateStep is a server whose goodput fraction is 1 up to knee requests/s
// and 0.4 above.
func rateStep(knee float64) RateProbeFunc {
	return func(_ context.Context, q float64, _ string) (float64, error) {
		if q <= knee {
			return 1, nil
		}
		return 0.4, nil
	}
}

// TestFindMaxRate works LoadGen's find-peak procedure by hand over rates.
func TestFindMaxRate(t *testing.T) {
	for _, c := range []struct {
		knee   float64
		opts   RateSearchOptions
		best   *float64 // nil: no rate met the target
		stop   string
		probes []float64
		reason string
	}{
		{13.7, RateSearchOptions{Start: 1, Max: 100, Target: 0.9}, qps(13), StopFound, []float64{1, 2, 4, 8, 16, 12, 14, 13},
			"check 1; widen 2, 4, 8, 16 (fails); bisect [8,16) → 12 passes, 14 fails, 13 passes; 13 and 14 agree to 0 decimals"},
		{13.7, RateSearchOptions{Start: 1, Max: 100, Target: 0.9, Decimals: 1}, qps(13.625), StopFound,
			[]float64{1, 2, 4, 8, 16, 12, 14, 13, 13.5, 13.75, 13.625},
			"to one decimal: [13,14) → 13.5 passes, 13.75 fails, 13.625 passes; floor(136.25)+1 ≥ floor(137.5)"},
		{13.7, RateSearchOptions{Start: 1, Max: 100, Target: 0.9, Resolution: 0.2}, qps(12), StopFound, []float64{1, 2, 4, 8, 16, 12, 14},
			"a resolution of 20 %: [12,14) is within 2.4 of 12, so the search ends there"},
		{100, RateSearchOptions{Start: 0.5, Max: 3, Target: 0.9}, qps(3), StopLimit, []float64{0.5, 1, 2, 3},
			"every probe passes: widening stops at the maximum 3 (not 4)"},
		{0.1, RateSearchOptions{Start: 1, Max: 10, Target: 0.9}, nil, StopNone, []float64{1},
			"an SLO no rate meets: the first probe fails"},
		{3, RateSearchOptions{Start: 4, Max: 8, Target: 0.4}, qps(8), StopLimit, []float64{4, 8},
			"a fraction equal to the target (0.4) passes"},
	} {
		res, err := FindMaxRate(context.Background(), c.opts, rateStep(c.knee))
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, p := range res.Probes {
			got = append(got, p.TargetQPS)
			if p.Pass != (p.Fraction >= c.opts.Target) {
				t.Errorf("probe %+v: pass disagrees with its fraction", p)
			}
		}
		if rateText(res.Best) != rateText(c.best) || res.Stop != c.stop || !slices.Equal(got, c.probes) {
			t.Errorf("knee %g, %+v: best %s (%s), probes %v; want %s (%s), %v: %s", c.knee, c.opts, rateText(res.Best), res.Stop, got, rateText(c.best), c.stop, c.probes, c.reason)
		}
	}
}

// TestFindMaxRateError: a failing probe ends the search with what it has.
func TestFindMaxRateError(t *testing.T) {
	boom := errors.New("boom")
	res, err := FindMaxRate(context.Background(), RateSearchOptions{Start: 1, Max: 100, Target: 0.9}, func(_ context.Context, q float64, _ string) (float64, error) {
		if q > 3 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) || res.Stop != StopPartial || rateText(res.Best) != "2" || len(res.Probes) != 2 {
		t.Errorf("err %v, result %+v: want the partial search (best 2) and the probe's error", err, res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := FindMaxRate(ctx, RateSearchOptions{Start: 1, Max: 2, Target: 1}, rateStep(5)); err == nil || res.Stop != StopPartial {
		t.Errorf("a cancelled search: %v, %+v", err, res)
	}
}

// TestRateSearchOptionsRefused: each bad option is an error naming it.
func TestRateSearchOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		opts RateSearchOptions
		want string
	}{
		{RateSearchOptions{Start: 1, Max: 2, Target: 0}, "goodput target"},
		{RateSearchOptions{Start: 1, Max: 2, Target: 1.5}, "goodput target"},
		{RateSearchOptions{Start: 0, Max: 2, Target: 1}, "search start"},
		{RateSearchOptions{Start: 3, Max: 2, Target: 1}, "search maximum"},
		{RateSearchOptions{Start: 1, Max: 2, Target: 1, Decimals: 7}, "search decimals"},
		{RateSearchOptions{Start: 1, Max: 2, Target: 1, Resolution: 1}, "search resolution"},
	} {
		_, err := FindMaxRate(context.Background(), c.opts, rateStep(1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about the %s", c.opts, err, c.want)
		}
	}
}

func qps(q float64) *float64 { return &q }

func rateText(q *float64) string {
	if q == nil {
		return "none"
	}
	return fmtRate(*q)
}
