package stats

import (
	"math"
	"testing"
)

// TestMomentsOf: the exact mean and sample standard deviation, against
// hand-worked values.
func TestMomentsOf(t *testing.T) {
	for _, tc := range []struct {
		xs       []int64
		mean, sd float64
		why      string
	}{
		{nil, 0, 0, "no values: zero moments"},
		{[]int64{7}, 7, 0, "one value: the sample deviation needs two, and reads 0"},
		{[]int64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7), "the textbook set: squared deviations sum to 32 over n − 1 = 7"},
		{[]int64{1e12 + 1, 1e12 + 2, 1e12 + 3, 1e12 + 4}, 1e12 + 2.5, math.Sqrt(5.0 / 3), "large values close together lose nothing to cancellation (shifted by the first)"},
		{[]int64{5e9, 5e9, 5e9}, 5e9, 0, "equal values: zero, never a negative variance's NaN"},
		{[]int64{-3, 3}, 0, math.Sqrt(18), "negative values: (9 + 9) / 1"},
	} {
		m := MomentsOf(tc.xs)
		if m.N != int64(len(tc.xs)) || m.Mean != tc.mean || math.Abs(m.Stddev-tc.sd) > 1e-12*max(1, tc.sd) {
			t.Errorf("%s: %+v, want n %d, mean %v, sd %v", tc.why, m, len(tc.xs), tc.mean, tc.sd)
		}
	}
}
