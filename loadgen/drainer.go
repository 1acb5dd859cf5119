package loadgen

import "context"

// Drainer is an optional interface of a SUT that can be brought back to idle
// between runs. A run that ends with samples written off as lost (a GB/T
// timeout, a stall) can leave them queued in the SUT; a SUT that keeps
// serving them would make the next run inherit the backlog. Drain discards
// the work still queued from earlier runs (loadgen no longer waits for it),
// waits until nothing is in progress, and returns nil once the SUT is idle,
// or ctx's error if ctx ends first. Call it only between runs.
//
// A SUT that cannot drain (a remote server with no control channel) is made
// idle by a fresh instance instead, or by waiting; callers say which they used.
type Drainer interface {
	Drain(ctx context.Context) error
}
