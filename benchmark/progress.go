package benchmark

import (
	"time"

	"aimeter/loadgen"
)

// Rate is the samples completed per second of the pass so far; 0 before any
// time has passed.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Completed) / p.Elapsed.Seconds()
}

// Left is the time until the pass reaches its Target; 0 or less once it is
// past it, and 0 when the Target is not known.
func (p Progress) Left() time.Duration {
	if p.Target <= 0 {
		return 0
	}
	return p.Target - p.Elapsed
}

// ProgressTicker decides which snapshots of a pass are due for a periodic
// progress report: the first at or past each multiple of Interval of the
// pass's elapsed time. A pass that ends starts the count again for the next
// one. The zero value is not usable; set Interval.
type ProgressTicker struct {
	// Interval is the time between two reports.
	Interval time.Duration
	next     time.Duration
}

// Due reports whether p is due for a report: it passed the next multiple of
// Interval since the last one (a stalled callback that jumps several
// intervals is one report).
func (t *ProgressTicker) Due(p loadgen.Progress) bool {
	if t.next == 0 {
		t.next = t.Interval
	}
	if p.Done {
		t.next = t.Interval
		return false
	}
	if p.Elapsed < t.next {
		return false
	}
	for t.next <= p.Elapsed {
		t.next += t.Interval
	}
	return true
}
