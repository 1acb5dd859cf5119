package benchmark

import (
	"testing"

	"aimeter/loadgen"
)

// TestOutcomeLostJobs: the lost jobs are the run's lost samples and, in a
// mixed GB/T test, its foreign jobs' too.
func TestOutcomeLostJobs(t *testing.T) {
	lost := func(n uint64) *loadgen.Result {
		r := &loadgen.Result{}
		r.LostSamples = n
		return r
	}
	for _, tc := range []struct {
		why  string
		out  Outcome
		want uint64
	}{
		{"nothing lost", Outcome{Result: lost(0)}, 0},
		{"the main jobs' only: no foreign jobs", Outcome{Result: lost(3)}, 3},
		{"a mixed test: the foreign jobs' count too", Outcome{Result: lost(3), Foreign: lost(4)}, 7},
		{"only foreign jobs lost", Outcome{Result: lost(0), Foreign: lost(2)}, 2},
	} {
		if got := tc.out.LostJobs(); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.why, got, tc.want)
		}
	}
}
