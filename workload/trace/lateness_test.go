package trace

import (
	"testing"
	"time"
)

// TestLatenessText: the console's line rounds lateness from a millisecond
// up to the microsecond and keeps shorter ones to the nanosecond.
func TestLatenessText(t *testing.T) {
	l := LatenessSummary{Count: 100, Late: 2, LateAfter: time.Millisecond, P50: 1234 * time.Nanosecond, P99: 1234567 * time.Nanosecond, Max: 5 * time.Millisecond}
	want := "Send lateness (issued − scheduled) p50 1.234µs, p99 1.235ms, max 5ms; 2 of 100 later than 1ms"
	if got := l.Text(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
