package stats

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	seq := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(i)
		}
		return s
	}
	tests := []struct {
		name   string
		sorted []int64
		p      float64
		want   int64
		why    string
	}{
		{"empty", nil, 0.9, 0, "LoadGen leaves the field at 0 when there are no latencies"},
		{"single", []int64{42}, 0.999, 42, "1*0.999 truncates to index 0"},
		{"p0", seq(10), 0, 0, "index 0 is the minimum"},
		{"p50 even", seq(10), 0.5, 5, "10*0.5 = 5 exactly: upper median, no interpolation"},
		{"p90 of 10", seq(10), 0.9, 9, "10*0.9 = 9 (0.9 rounds so the product is exactly 9)"},
		{"p90 of 1024", seq(1024), 0.9, 921, "1024*0.9 = 921.6 truncates to 921"},
		{"p99 of 100", seq(100), 0.99, 99, "100*0.99 = 99 exactly in double"},
		{"p97 of 100", seq(100), 0.97, 97, "100*0.97 = 97 exactly in double"},
		{"p99.9 of 1000", seq(1000), 0.999, 999, "1000*0.999 = 999 exactly in double"},
		{"p95 of 7", seq(7), 0.95, 6, "7*0.95 = 6.65 truncates to 6"},
		{"p50 of 3", []int64{10, 20, 30}, 0.5, 20, "3*0.5 = 1.5 truncates to 1"},
		{"p29 of 100", seq(100), 0.29, 28, "100*0.29 = 28.999999999999996 in double: truncation gives 28, not 29"},
		{"p57 of 100", seq(100), 0.57, 56, "100*0.57 = 56.99999999999999 in double: truncation gives 56"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("Percentile(n=%d, %v) = %d, want %d (%s)", len(tc.sorted), tc.p, got, tc.want, tc.why)
			}
		})
	}
}

func TestPercentileIndexIsDoubleProduct(t *testing.T) {
	for n := 1; n <= 3000; n++ {
		for _, p := range []float64{0.5, 0.9, 0.95, 0.97, 0.99, 0.999, 0.29, 0.57, 0.1} {
			want := int(math.Trunc(float64(n) * p))
			if got := percentileIndex(n, p); got != want {
				t.Fatalf("percentileIndex(%d, %v) = %d, want %d", n, p, got, want)
			}
		}
	}
}

func TestPercentilePanics(t *testing.T) {
	for _, p := range []float64{-0.1, 1, 1.5, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Percentile(.., %v) did not panic", p)
				}
			}()
			Percentile([]int64{1, 2, 3}, p)
		}()
	}
}

func TestMeanMinMaxCount(t *testing.T) {
	tests := []struct {
		name             string
		v                []int64
		mean, min, max   int64
		above10, above20 int64
		why              string
	}{
		{"empty", nil, 0, 0, 0, 0, 0, "LoadGen's zero defaults"},
		{"one", []int64{7}, 7, 7, 7, 0, 0, "trivial"},
		{"truncating mean", []int64{1, 2}, 1, 1, 2, 0, 0, "3/2 truncates to 1"},
		{"mean of three", []int64{10, 20, 31}, 20, 10, 31, 2, 1, "61/3 = 20.33 -> 20; 10 is not > 10, 20 is not > 20"},
		{"unsorted", []int64{30, 10, 20}, 20, 10, 30, 2, 1, "min/max/count do not need order"},
		{"big", []int64{math.MaxInt64 / 2, math.MaxInt64 / 2}, math.MaxInt64 / 2, math.MaxInt64 / 2, math.MaxInt64 / 2, 2, 2, "no overflow below MaxInt64"},
		{"negative sum", []int64{-4, 0}, int64(uint64(math.MaxUint64-3) / 2), -4, 0, 0, 0,
			"C++ divides int64 by size_t: the sum converts to unsigned first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MeanInt(tc.v); got != tc.mean {
				t.Errorf("MeanInt = %d, want %d (%s)", got, tc.mean, tc.why)
			}
			if got := Min(tc.v); got != tc.min {
				t.Errorf("Min = %d, want %d (%s)", got, tc.min, tc.why)
			}
			if got := Max(tc.v); got != tc.max {
				t.Errorf("Max = %d, want %d (%s)", got, tc.max, tc.why)
			}
			if got := CountAbove(tc.v, 10); got != tc.above10 {
				t.Errorf("CountAbove(10) = %d, want %d (%s)", got, tc.above10, tc.why)
			}
			if got := CountAbove(tc.v, 20); got != tc.above20 {
				t.Errorf("CountAbove(20) = %d, want %d (%s)", got, tc.above20, tc.why)
			}
		})
	}
}
