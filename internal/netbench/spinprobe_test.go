package netbench

import (
	"testing"
	"time"
)

// TestSpinProbe checks the probe's bookkeeping, not the machine: the gaps
// it counts fit in its duration, however busy the machine is.
func TestSpinProbe(t *testing.T) {
	r := SpinProbe(20*time.Millisecond, 50*time.Microsecond)
	if r.Elapsed < 20*time.Millisecond {
		t.Errorf("ran %v, want at least 20ms", r.Elapsed)
	}
	if r.Lost > r.Elapsed || r.Longest > r.Lost || (r.Gaps == 0) != (r.Lost == 0) {
		t.Errorf("inconsistent %+v", r)
	}
	if f := r.LostFraction(); f < 0 || f > 1 {
		t.Errorf("LostFraction %v outside [0, 1]", f)
	}
	if (ProbeResult{}).LostFraction() != 0 {
		t.Error("LostFraction of an empty result is not 0")
	}
}
