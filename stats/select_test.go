package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSelectRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		name, reason string
		gen          func(i, n int) int64
	}{
		{"random", "latencies in no order", func(int, int) int64 { return r.Int64N(1e9) }},
		{"few values", "many copies of the pivot: the three-way partition ends on them", func(int, int) int64 { return r.Int64N(3) }},
		{"equal", "every value the same", func(int, int) int64 { return 42 }},
		{"sorted", "an Offline run's latencies come nearly sorted", func(i, _ int) int64 { return int64(i) }},
		{"reversed", "descending input", func(i, n int) int64 { return int64(n - i) }},
		{"saw teeth", "Offline latencies in issue order: sorted runs, one per issuing worker", func(i, n int) int64 { return int64(i % max(n/7, 1)) }},
		{"organ pipe", "a pattern that defeats a median-of-three pivot: the depth limit sorts instead", func(i, n int) int64 { return int64(min(i, n-i)) }},
		{"extremes", "the int64 limits and negatives", func(i, _ int) int64 {
			return []int64{math.MinInt64, math.MaxInt64, -1, 0, 1}[i%5] + int64(i%7)*0
		}},
	} {
		for _, n := range []int{1, 2, 17, 1000, 100_003} {
			v := make([]int64, n)
			for i := range v {
				v[i] = c.gen(i, n)
			}
			want := slices.Clone(v)
			slices.Sort(want)
			ranks := []int{0, n - 1, n / 2, int(float64(n) * .99), int(float64(n) * .999), n / 2, -1, n}
			for _, p := range []float64{.5, .9, .95, .97} {
				ranks = append(ranks, int(float64(n)*p))
			}
			SelectRanks(v, ranks)
			for _, k := range ranks {
				if k >= 0 && k < n && v[k] != want[k] {
					t.Fatalf("%s, n %d: rank %d holds %d, want %d (%s)", c.name, n, k, v[k], want[k], c.reason)
				}
			}
			slices.Sort(v)
			if !slices.Equal(v, want) {
				t.Fatalf("%s, n %d: not a permutation of the input", c.name, n)
			}
		}
	}
}

func BenchmarkSelectRanks(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	src := make([]int64, 2_000_000)
	for i := range src {
		src[i] = r.Int64N(1e9)
	}
	v := make([]int64, len(src))
	ranks := []int{0, len(src) - 1, len(src) / 2, len(src) * 9 / 10, len(src) * 99 / 100, len(src) * 999 / 1000}
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			copy(v, src)
			SelectRanks(v, ranks)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			copy(v, src)
			slices.Sort(v)
		}
	})
}
