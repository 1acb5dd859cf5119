package benchmark

import (
	"strings"
	"testing"
	"time"

	"aimeter/workload/trace"
)

// TestScheduleWarning: the warning of a run whose issuer fell behind its
// schedule, given when more than 1 % of the queries went out later than
// the threshold, with advice that depends on the spin window.
func TestScheduleWarning(t *testing.T) {
	late := func(p99 time.Duration, n uint64) *trace.LatenessSummary {
		return &trace.LatenessSummary{Count: 1000, Late: n, LateAfter: time.Millisecond, P50: 40, P99: p99, Max: 2 * p99}
	}
	tests := []struct {
		why  string
		l    *trace.LatenessSummary
		spin time.Duration
		want []string // "" when no warning
	}{
		{"not a run on a schedule (Offline, fixed concurrency)", nil, 0, nil},
		{"no queries", &trace.LatenessSummary{LateAfter: time.Millisecond}, 0, nil},
		{"p99 under the threshold: under 1 % late", late(35*time.Microsecond, 3), 0, nil},
		{"p99 exactly at the threshold is not behind", late(time.Millisecond, 10), 0, nil},
		{"behind with the default window: it is named and the way out given",
			late(3210987*time.Nanosecond, 120), 0,
			[]string{"120 of 1000 queries (12 %) went out more than 1ms late (p99 3.211ms)", "SpinWindow -1ns", "(2ms before each query)"}},
		{"behind with a window of the user's", late(2*time.Millisecond, 20), 500 * time.Microsecond,
			[]string{"(500µs before each query)", "SpinWindow -1ns"}},
		{"behind without busy-waiting: no window to give back", late(5*time.Millisecond, 50), -1,
			[]string{"did not busy-wait", "could not keep the schedule"}},
	}
	for _, tt := range tests {
		got := scheduleWarning(tt.l, tt.spin)
		checkNotice(t, tt.why, got, tt.want)
		if tt.spin < 0 && strings.Contains(got, "SpinWindow -1ns frees") {
			t.Errorf("%s: warning %q advises giving back a core the issuer never took", tt.why, got)
		}
	}
}
