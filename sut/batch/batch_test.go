package batch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// worker is a SUT over a Queue: each worker takes a batch, records its
// size, sleeps the model's time and completes it.
type worker struct {
	*Queue
	model time.Duration
	mu    sync.Mutex
	sizes []int
	wg    sync.WaitGroup
}

func (*worker) Name() string { return "BatchSUT" }

func newWorker(maxBatch int, wait, model time.Duration) *worker {
	w := &worker{Queue: New(maxBatch, wait), model: model}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var jobs []Job
		for {
			jobs = w.Take(jobs)
			if len(jobs) == 0 {
				return
			}
			w.mu.Lock()
			w.sizes = append(w.sizes, len(jobs))
			w.mu.Unlock()
			time.Sleep(w.model)
			for _, j := range jobs {
				j.R.Complete(j.S.ID, nil, 0)
			}
			w.Done()
		}
	}()
	return w
}

func (w *worker) stop() { w.Close(); w.wg.Wait() }

// TestQueueBatches: an Offline query of 100 samples runs in batches of at
// most MaxBatch, every sample completed once; in SingleStream each batch
// holds the one sample issued.
func TestQueueBatches(t *testing.T) {
	for _, tc := range []struct {
		scenario loadgen.Scenario
		max      int // the largest batch expected
	}{{loadgen.Offline, 8}, {loadgen.SingleStream, 1}} {
		synctest.Test(t, func(t *testing.T) {
			w := newWorker(8, 0, time.Millisecond)
			defer w.stop()
			s := loadgen.DefaultSettings()
			s.Scenario, s.MinDurationMs, s.MinQueryCount = tc.scenario, 0, 100
			s.OfflineExpectedQPS, s.SingleStreamExpectedLatencyNs = 100, uint64(time.Millisecond)
			res, err := loadgen.Run(context.Background(), w, &loadgentest.QSL{Total: 64}, s, &loadgen.Options{SpinWindow: -1})
			if err != nil {
				t.Fatal(err)
			}
			if res.FailedSamples != 0 || res.LostSamples != 0 {
				t.Fatalf("%v: %d failed, %d lost", tc.scenario, res.FailedSamples, res.LostSamples)
			}
			total, largest := 0, 0
			for _, n := range w.sizes {
				total += n
				largest = max(largest, n)
			}
			want := 0
			for range res.Records() {
				want++
			}
			if total != want || want < 100 || largest != tc.max {
				t.Errorf("%v: batches %v: %d samples, the largest %d; want %d samples, the largest %d",
					tc.scenario, w.sizes, total, largest, want, tc.max)
			}
		})
	}
}

// push queues samples as IssueQuery does, without a responder.
func push(q *Queue, ids ...uint64) {
	q.mu.Lock()
	for _, id := range ids {
		q.queue = append(q.queue, Job{S: loadgen.QuerySample{ID: loadgen.ResponseID(id), Index: id}})
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

// TestQueueBatchWait: a worker with a partial batch waits up to its
// BatchWait for the batch to fill: two samples issued 100 µs apart make
// one batch with a wait of 1 ms, two without.
func TestQueueBatchWait(t *testing.T) {
	for _, tc := range []struct {
		wait    time.Duration
		batches int
	}{{time.Millisecond, 1}, {0, 2}} {
		synctest.Test(t, func(t *testing.T) {
			q := New(4, tc.wait)
			go func() {
				push(q, 1)
				time.Sleep(100 * time.Microsecond)
				push(q, 2)
			}()
			var sizes []int
			for got := 0; got < 2; {
				jobs := q.Take(nil)
				sizes = append(sizes, len(jobs))
				got += len(jobs)
				q.Done()
			}
			if len(sizes) != tc.batches {
				t.Errorf("wait %v: batches %v, want %d", tc.wait, sizes, tc.batches)
			}
			q.Close()
		})
	}
}

// TestQueueDrain: Drain discards what is queued, counts it, and waits for
// the batch in progress; with a context that ends first it says how many
// batches are still in progress. After Close, Take returns nothing.
func TestQueueDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(2, 0)
		push(q, 1, 2, 3, 4, 5)
		jobs := q.Take(nil)
		if len(jobs) != 2 {
			t.Fatalf("took %d, want 2", len(jobs))
		}
		if queued, busy := q.Pending(); queued != 3 || busy != 1 {
			t.Fatalf("%d queued, %d busy; want 3 and 1", queued, busy)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n, err := q.Drain(ctx)
		if n != 3 || !errors.Is(err, context.Canceled) || err.Error() != "drain: 1 batches still in progress: context canceled" {
			t.Errorf("drain with an ended context: %d, %v", n, err)
		}
		drained := make(chan int)
		go func() {
			n, _ := q.Drain(context.Background())
			drained <- n
		}()
		synctest.Wait()
		select {
		case n := <-drained:
			t.Fatalf("drain returned %d with a batch in progress", n)
		default:
		}
		q.Done()
		if n := <-drained; n != 0 {
			t.Errorf("the second drain discarded %d, want 0", n)
		}
		q.Close()
		if jobs := q.Take(jobs); len(jobs) != 0 {
			t.Errorf("Take after Close: %d jobs", len(jobs))
		}
	})
}
