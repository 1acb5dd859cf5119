package steady

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestMannKendall checks the statistics and verdicts with values worked by
// hand.
func TestMannKendall(t *testing.T) {
	tests := []struct {
		why     string
		v       []float64
		s       int
		varS, z float64
		verdict Trend
	}{
		// S = 6 (all 6 pairs rise); Var = 4·3·13/18 = 8.667; rank
		// autocorrelations 0.25, −0.3, −0.45 are all under 1.96/√4 = 0.98,
		// so no correction; Z = 5/√8.667 = 1.698, p = 0.089: not
		// significant. Four points never show a trend at 5 %.
		{"four rising points are not a significant trend", []float64{1, 2, 3, 4}, 6, 156.0 / 18, 5 / math.Sqrt(156.0/18), Flat},
		// S = 15; Var = 6·5·17/18 = 28.33; largest |r| is 0.5 at lag 1,
		// under 1.96/√6 = 0.80; Z = 14/√28.33 = 2.630, p = 0.0085.
		{"six rising points are", []float64{1, 2, 3, 4, 5, 6}, 15, 510.0 / 18, 14 / math.Sqrt(510.0/18), Up},
		{"six falling points are, downwards", []float64{6, 5, 4, 3, 2, 1}, -15, 510.0 / 18, -14 / math.Sqrt(510.0/18), Down},
		// S = 45; Var₀ = 10·9·25/18 = 125; the lag-1 rank autocorrelation
		// is 57.75/82.5 = 0.7 > 1.96/√10 = 0.62 (every other lag is
		// under), so Var = 125·(1 + 2/(10·9·8)·(9·8·7·0.7)) = 125·1.98 =
		// 247.5; Z = 44/√247.5 = 2.797.
		{"the Hamed-Rao correction inflates the variance of autocorrelated ranks", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 45, 247.5, 44 / math.Sqrt(247.5), Up},
		// Ties: the tie term 4·3·13 = 156 cancels the variance: S = 0,
		// no trend.
		{"all equal", []float64{7, 7, 7, 7}, 0, 0, 0, Flat},
		// Pairs of 1, 3, 2, 4: 1<3, 1<2, 1<4, 3>2, 3<4, 2<4, so
		// S = 5 − 1 = 4; Var = 8.667; Z = 3/2.944 = 1.019.
		{"a noisy rise", []float64{1, 3, 2, 4}, 4, 156.0 / 18, 3 / math.Sqrt(156.0/18), Flat},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			s, v, z := mkStatistics(tc.v)
			if s != tc.s || !near(v, tc.varS) || !near(z, tc.z) {
				t.Errorf("S, Var, Z = %d, %v, %v; want %d, %v, %v", s, v, z, tc.s, tc.varS, tc.z)
			}
			if got := mannKendallHamedRao(tc.v, trendAlpha); got != tc.verdict {
				t.Errorf("verdict %v, want %v", got, tc.verdict)
			}
		})
	}
	if mannKendallHamedRao([]float64{1, 2, 3}, trendAlpha) != Insufficient {
		t.Error("three points: want insufficient")
	}
}

func TestHelpers(t *testing.T) {
	// CoV of 1, 2, 3: mean 2, population sd √(2/3) = 0.8165: 0.40825.
	if got := cov([]float64{1, 2, 3}); !near(got, math.Sqrt(2.0/3)/2) {
		t.Errorf("cov = %v", got)
	}
	if cov([]float64{5}) != 0 || cov([]float64{-1, 1}) != 0 {
		t.Error("cov of one value or of a zero mean is not 0")
	}
	// 1, 2, 3, 4: slope 1, over 3 steps, median 2.5: 1.2.
	if got := relDrift([]float64{1, 2, 3, 4}); !near(got, 1.2) {
		t.Errorf("relDrift = %v", got)
	}
	// ⌊0.9·3⌋ = 2.
	if got := percentileLower([]float64{10, 20, 30, 40}, 0.9); got != 30 {
		t.Errorf("percentileLower = %v", got)
	}
	if median([]float64{4, 1, 3, 2}) != 2.5 || median([]float64{3, 1, 2}) != 2 {
		t.Error("median")
	}
	for _, tc := range []struct {
		why  string
		v    []float64
		want int
	}{
		// Back half 100, 100, 100: 200 (100 % off) and 150 (50 %) are
		// cropped, 100 is not.
		{"two slow super-passes", []float64{200, 150, 100, 100, 100, 100}, 2},
		{"none off the level: still one", []float64{100, 100, 100, 100}, 1},
		// Back half 200, 100, 100 → median 100; the first three are 100 %
		// off, and half of six is the cap.
		{"capped at half", []float64{200, 200, 200, 200, 100, 100}, 3},
		{"under four super-passes: one", []float64{300, 100, 100}, 1},
		// The NaN of a super-pass without TPOT is left out: 200, 100, 100,
		// 100, 100 → back half 100, 100, 100.
		{"a super-pass without TPOT", []float64{200, math.NaN(), 100, 100, 100, 100}, 1},
	} {
		if got := adaptiveWarmup(tc.v); got != tc.want {
			t.Errorf("%s: adaptiveWarmup = %d, want %d", tc.why, got, tc.want)
		}
	}
}
