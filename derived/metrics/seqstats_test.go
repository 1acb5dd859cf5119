package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestStatsOfSeqIsStatsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n int, f func() int64) []int64 {
		v := make([]int64, n)
		for k := range v {
			v[k] = f()
		}
		return v
	}
	cases := []struct {
		name string
		v    []int64
	}{
		{"none", nil},
		{"one value", []int64{42}},
		{"few values, sorted directly", gen(100, func() int64 { return rng.Int64N(1000) })},
		{"all equal, many", gen(200_000, func() int64 { return 7 })},
		{"many in one bucket of the first level: refined again", gen(300_000, func() int64 {
			if rng.IntN(10) == 0 {
				return rng.Int64N(1 << 50)
			}
			return 1_000_000 + rng.Int64N(1<<20)
		})},
		{"inter-token gaps: log-normal ns", gen(250_000, func() int64 { return int64(math.Exp(rng.NormFloat64()*1.5 + 14)) })},
		{"two values", gen(150_000, func() int64 { return rng.Int64N(2) * 1e9 })},
		{"negative values: collected and sorted", gen(100_000, func() int64 { return rng.Int64N(2000) - 1000 })},
		{"extremes of int64: sum overflows", []int64{math.MaxInt64, math.MinInt64, 0, 5, math.MaxInt64}},
		{"sum at 2^53: collected and sorted", gen(70_000, func() int64 { return 1 << 40 })},
	}
	for _, c := range cases {
		sorted := slices.Clone(c.v)
		slices.Sort(sorted)
		want := StatsOf(sorted)
		reads := 0
		got := StatsOfSeq(func(yield func(int64) bool) {
			reads++
			for _, x := range c.v {
				if !yield(x) {
					return
				}
			}
		})
		if got != want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, want)
		}
		if reads > 2+4+1 {
			t.Errorf("%s: %d reads of the values, want at most 7", c.name, reads)
		}
	}
}
