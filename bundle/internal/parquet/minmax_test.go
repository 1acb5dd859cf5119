package parquet

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveMinMax is the one-pair loop minMax and minMaxUnsigned replace.
func naiveMinMax(values []int64, unsigned bool) (lo, hi int64) {
	lo, hi = values[0], values[0]
	for _, v := range values[1:] {
		if unsigned {
			if uint64(v) < uint64(lo) {
				lo = v
			}
			if uint64(v) > uint64(hi) {
				hi = v
			}
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// TestMinMax checks the four-pair loop, signed and unsigned, against the
// one-pair loop.
func TestMinMax(t *testing.T) {
	tests := []struct {
		why    string
		values []int64
	}{
		{"one value: no four-wide step", []int64{7}},
		{"three values: the tail alone", []int64{3, -1, 2}},
		{"four values: one step, no tail", []int64{4, 1, 9, -2}},
		{"the extremes in the tail after two steps", []int64{5, 5, 5, 5, 5, 5, 5, 5, math.MinInt64, math.MaxInt64}},
		{"each extreme in another lane", []int64{0, 0, 0, -8, 0, 0, 9, 0}},
		{"negative numbers: unsigned, they are the greatest", []int64{1, -1, 2, math.MinInt64}},
		{"a constant column (an Offline run's issue times)", []int64{42, 42, 42, 42, 42, 42, 42}},
	}
	for _, tt := range tests {
		for _, unsigned := range []bool{false, true} {
			lo, hi := minMax(tt.values)
			if unsigned {
				lo, hi = minMaxUnsigned(tt.values)
			}
			wlo, whi := naiveMinMax(tt.values, unsigned)
			if lo != wlo || hi != whi {
				t.Errorf("%s (unsigned %v): %v: min %d max %d, want %d %d", tt.why, unsigned, tt.values, lo, hi, wlo, whi)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 70; n++ {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(r.Uint64())
		}
		for _, unsigned := range []bool{false, true} {
			lo, hi := minMax(v)
			if unsigned {
				lo, hi = minMaxUnsigned(v)
			}
			if wlo, whi := naiveMinMax(v, unsigned); lo != wlo || hi != whi {
				t.Errorf("random, %d values, unsigned %v: min %d max %d, want %d %d", n, unsigned, lo, hi, wlo, whi)
			}
		}
	}
}

func BenchmarkMinMax(b *testing.B) {
	v := make([]int64, 1<<16)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range v {
		v[i] = r.Int64N(1 << 40)
	}
	for _, c := range []struct {
		name string
		f    func([]int64) (int64, int64)
	}{
		{"naive", func(v []int64) (int64, int64) { return naiveMinMax(v, false) }},
		{"four", minMax[int64]},
		{"naive-unsigned", func(v []int64) (int64, int64) { return naiveMinMax(v, true) }},
		{"four-unsigned", minMaxUnsigned},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f(v)
			}
		})
	}
}
