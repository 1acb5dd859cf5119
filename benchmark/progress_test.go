package benchmark

import (
	"aimeter/loadgen"
	"slices"
	"testing"
	"time"
)

// TestProgressTicker: one report at or past each multiple of the interval,
// one for a callback that jumps several, none once the pass ends, and the
// count starts again for the next pass.
func TestProgressTicker(t *testing.T) {
	tk := ProgressTicker{Interval: 10 * time.Second}
	var got []bool
	for _, p := range []loadgen.Progress{
		{Elapsed: 9 * time.Second}, {Elapsed: 10 * time.Second}, {Elapsed: 11 * time.Second},
		{Elapsed: 35 * time.Second}, {Elapsed: 39 * time.Second}, {Elapsed: 40 * time.Second},
		{Elapsed: 41 * time.Second, Done: true}, {Elapsed: 10 * time.Second},
	} {
		got = append(got, tk.Due(p))
	}
	want := []bool{false, true, false, true, false, true, false, true}
	if !slices.Equal(got, want) {
		t.Errorf("due %v, want %v", got, want)
	}
}
