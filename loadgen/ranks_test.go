package loadgen_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"aimeter/loadgen"
)

// TestRanksOfScan checks that the ranks read from a stream in several
// readings are those of the values sorted, for value sets that take each
// path: few values (sorted at once), many spread over the whole int64
// range (narrowed by histograms to the end), many ties, and the extremes.
func TestRanksOfScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func(n int, f func(i int) int64) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	for _, row := range []struct {
		why  string
		vals []int64
	}{
		{"one value: every rank is it", []int64{42}},
		{"a few values, sorted at once", gen(1000, func(int) int64 { return rng.Int64N(1e6) - 5e5 })},
		{"many values over the whole range: histograms narrow them", gen(300_000, func(int) int64 { return int64(rng.Uint64()) })},
		{"many ties: ranges that end as one value", gen(300_000, func(i int) int64 { return int64(i % 7) })},
		{"the extremes of int64", gen(200_000, func(i int) int64 {
			switch i % 3 {
			case 0:
				return math.MinInt64
			case 1:
				return math.MaxInt64
			}
			return rng.Int64N(1 << 40)
		})},
	} {
		n := int64(len(row.vals))
		ranks := []int64{0, n / 2, (n*99+99)/100 - 1, n - 1, n / 3}
		reads := 0
		got, count, err := loadgen.RanksOfScan(func(add func(int64)) error {
			reads++
			for _, v := range row.vals {
				add(v)
			}
			return nil
		}, ranks)
		if err != nil {
			t.Fatalf("%s: %v", row.why, err)
		}
		sorted := slices.Sorted(slices.Values(row.vals))
		if count != n {
			t.Errorf("%s: count %d, want %d", row.why, count, n)
		}
		for i, r := range ranks {
			if got[i] != sorted[r] {
				t.Errorf("%s: rank %d = %d, want %d", row.why, r, got[i], sorted[r])
			}
		}
		if reads > 7 {
			t.Errorf("%s: %d readings, at most 7 expected", row.why, reads)
		}
	}
	if _, _, err := loadgen.RanksOfScan(func(add func(int64)) error { add(1); return nil }, []int64{1}); err == nil {
		t.Error("a rank beyond the values: no error")
	}
}
