// Package batch is the dynamic batching queue of aimeter's in-process
// model SUTs (sut/reference, sut/onnx): IssueQuery queues samples without
// blocking, and each worker takes what is queued, up to a batch, runs it
// through the model and completes it. Drain and Close bring the SUT back
// to idle between runs and stop it.
package batch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"aimeter/loadgen"
)

// Job is one queued sample: where to answer it, the sample, and when it
// was received (t_ITR, on the run's clock: loadgen.Responder.Now).
type Job struct {
	R        *loadgen.Responder
	S        loadgen.QuerySample
	Received int64
}

// Queue holds the samples issued to a SUT until a worker takes them. Its
// zero value is not usable: create it with New. It is safe for
// concurrent use.
type Queue struct {
	maxBatch int
	wait     time.Duration

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []Job
	busy   int // batches taken and not yet done
	closed bool
}

// New returns a queue whose batches hold at most maxBatch samples (at
// least 1). With wait > 0, a worker that finds a partial batch waits up to
// wait for more samples before taking it; with 0 it takes what is queued.
func New(maxBatch int, wait time.Duration) *Queue {
	q := &Queue{maxBatch: max(maxBatch, 1), wait: wait}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// MaxBatch is the most samples Take returns.
func (q *Queue) MaxBatch() int { return q.maxBatch }

// IssueQuery queues the samples (loadgen.SUT); it never blocks on a model.
func (q *Queue) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	received := r.Now()
	q.mu.Lock()
	for _, s := range samples {
		q.queue = append(q.queue, Job{R: r, S: s, Received: received})
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

// FlushQueries does nothing (loadgen.SUT): workers run whatever is queued.
func (q *Queue) FlushQueries() {}

// Take waits for work and moves up to MaxBatch jobs into batch (reusing
// its array), counting the batch as busy until Done is called. It returns
// an empty batch once the queue is closed.
func (q *Queue) Take(batch []Job) []Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.queue) == 0 && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			return batch[:0]
		}
		if len(q.queue) < q.maxBatch && q.wait > 0 {
			// Give a partial batch a short window to fill up.
			deadline := time.Now().Add(q.wait)
			for len(q.queue) < q.maxBatch && !q.closed {
				left := time.Until(deadline)
				if left <= 0 {
					break
				}
				q.mu.Unlock()
				time.Sleep(min(left, 50*time.Microsecond))
				q.mu.Lock()
			}
		}
		if len(q.queue) > 0 || q.closed {
			break
		}
		// Drained while the partial batch waited: wait again.
	}
	if q.closed {
		return batch[:0]
	}
	n := min(len(q.queue), q.maxBatch)
	q.busy++
	batch = append(batch[:0], q.queue[:n]...)
	// Take from the front without moving the rest: copying a long backlog
	// for every batch would slow an overloaded SUT down further, the more
	// the longer its queue. append reallocates once the array's end is
	// reached, copying only what is still queued.
	clear(q.queue[:n])
	q.queue = q.queue[n:]
	return batch
}

// Pending returns the samples queued and the batches taken and not yet
// done.
func (q *Queue) Pending() (queued, busy int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue), q.busy
}

// Done marks a batch taken by Take as complete, waking a waiting Drain.
func (q *Queue) Done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.busy--
	if q.busy == 0 {
		q.cond.Broadcast()
	}
}

// Drain brings the queue back to idle between runs: it discards the
// samples still queued, which loadgen has written off as lost when a run
// ended before the SUT caught up, and waits until the batches taken are
// done (or the queue is closed). It returns how many samples it discarded,
// and ctx's error, naming the batches still in progress, if ctx ends
// first. Call it only between runs: samples issued during Drain may be
// discarded too.
func (q *Queue) Drain(ctx context.Context) (int, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	dropped := len(q.queue)
	clear(q.queue)
	q.queue = q.queue[:0]
	for q.busy > 0 && !q.closed {
		if err := ctx.Err(); err != nil {
			return dropped, fmt.Errorf("drain: %d batches still in progress: %w", q.busy, err)
		}
		q.cond.Wait()
	}
	return dropped, nil
}

// Close closes the queue: Take returns empty batches from now on, and
// the samples still queued are dropped (loadgen counts them lost).
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}
