package netbench

import "time"

// ProbeResult is what SpinProbe saw: how long a thread that never sleeps
// went without the CPU.
type ProbeResult struct {
	Elapsed time.Duration // the probe's duration
	Gaps    int           // stretches of at least the probe's gap between two readings of the clock
	Lost    time.Duration // their total
	Longest time.Duration // the longest
}

// LostFraction is Lost over Elapsed.
func (r ProbeResult) LostFraction() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Lost) / float64(r.Elapsed)
}

// SpinProbe reads the clock in a tight loop for d and counts the stretches
// of at least gap between two readings: the time the goroutine (and its
// thread) did not run, because the kernel gave the CPU to other work or
// the Go runtime preempted it. It is what an issuer that busy-waits for
// its schedule (loadgen's Server spin window) meets on the same machine, so
// that a script can tell the machine's share of issue lateness from the
// issuer's own (scripts/bench-openloop.sh).
func SpinProbe(d, gap time.Duration) ProbeResult {
	start := time.Now()
	var r ProbeResult
	last := time.Duration(0)
	for {
		now := time.Since(start)
		if g := now - last; g >= gap {
			r.Gaps++
			r.Lost += g
			r.Longest = max(r.Longest, g)
		}
		last = now
		if now >= d {
			r.Elapsed = now
			return r
		}
	}
}
