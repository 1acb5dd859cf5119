package tester

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestAdmissionQueue: the memory semaphore grants first come first served,
// answers busy when its queue is full or a wait runs out, and refuses a
// need above the budget.
func TestAdmissionQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(1, 100, 1, time.Minute)
		ctx := context.Background()
		if _, err := a.acquire(ctx, 101); !errors.As(err, new(*tooBigError)) {
			t.Fatalf("a need above the budget: err = %v, want tooBigError", err)
		}
		rel1, err := a.acquire(ctx, 80)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		var rel2 func()
		go func() {
			var err error
			rel2, err = a.acquire(ctx, 50)
			got <- err
		}()
		synctest.Wait()
		if a.queued() != 1 {
			t.Fatalf("queued = %d, want the second waiting", a.queued())
		}
		var be *busyError
		if _, err := a.acquire(ctx, 10); !errors.As(err, &be) || be.queued != 1 {
			t.Fatalf("with the queue full: err = %v, want busyError naming 1 queued", err)
		}
		rel1()
		if err := <-got; err != nil {
			t.Fatalf("the waiter after a release: %v", err)
		}
		// The third waits behind 50 of 100 used... and its wait runs out
		// while the second keeps its share.
		start := time.Now()
		if _, err := a.acquire(ctx, 60); !errors.As(err, &be) || be.timeout != time.Minute {
			t.Fatalf("a wait that ran out: err = %v, want busyError after the wait", err)
		}
		if time.Since(start) != time.Minute {
			t.Fatalf("waited %s, want MaxQueueWait", time.Since(start))
		}
		rel2()
		rel2() // twice is once
		if a.used != 0 || a.queued() != 0 {
			t.Fatalf("used %d, queued %d after every release", a.used, a.queued())
		}
	})
}
