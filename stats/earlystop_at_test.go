package stats

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestEarlyStoppingAtEqualsSlice checks SingleStreamAt and MultiStreamAt
// against SingleStream and MultiStream on the same sorted latencies, for
// counts on both sides of the minimum query counts, and that a recording
// first call names exactly the ranks the second reads.
func TestEarlyStoppingAtEqualsSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 50, 64, 65, 300, 659, 660, 661, 2000, 25000} {
		for _, p := range []float64{0.9, 0.99} {
			v := make([]int64, n)
			for i := range v {
				v[i] = rng.Int64N(1e6)
			}
			slices.Sort(v)
			var read []int64
			rec := func(i int64) int64 { read = append(read, i); return 0 }
			at := func(i int64) int64 {
				if !slices.Contains(read, i) {
					t.Fatalf("n=%d p=%v: rank %d read but not recorded (%v)", n, p, i, read)
				}
				return v[i]
			}
			NewEarlyStopping().SingleStreamAt(int64(n), p, rec)
			if got, want := NewEarlyStopping().SingleStreamAt(int64(n), p, at), NewEarlyStopping().SingleStream(v, p); !reflect.DeepEqual(got, want) {
				t.Errorf("n=%d p=%v: SingleStreamAt %+v, SingleStream %+v", n, p, got, want)
			}
			read = nil
			NewEarlyStopping().MultiStreamAt(int64(n), p, rec)
			if got, want := NewEarlyStopping().MultiStreamAt(int64(n), p, at), NewEarlyStopping().MultiStream(v, p); !reflect.DeepEqual(got, want) {
				t.Errorf("n=%d p=%v: MultiStreamAt %+v, MultiStream %+v", n, p, got, want)
			}
		}
	}
}
