package tester

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/attest"
	"aimeter/internal/bundletest"
	"aimeter/store"
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

// TestBusyQueueFull: with the memory budget taken and the queue full, a
// received upload is answered 503 with Retry-After and a JSON error that
// counts the queue, and nothing is stored; once the budget is free the
// same bundle is stored.
func TestBusyQueueFull(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st, err := store.Open(ctx, store.Options{DSN: filepath.Join(t.TempDir(), "r.db"), FilesDir: filepath.Join(dataDir, "results")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Options{Store: st, DataDir: dataDir, AdminToken: "adm_test", MemoryBudget: 1 << 40, MaxQueuedUploads: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	pub, key, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pp, _ := attest.MarshalPublicKey(pub)
	reg, err := (&Client{BaseURL: ts.URL, Token: "adm_test", HTTP: ts.Client()}).Register(ctx, Registration{Party: "Lab", PublicKey: string(pp)})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{BaseURL: ts.URL, Token: reg.Token, HTTP: ts.Client(), RetryFor: -1}

	// The whole budget is taken, and one upload waits in the queue.
	hold, err := srv.admit.acquire(ctx, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan func(), 1)
	go func() {
		rel, _ := srv.admit.acquire(ctx, 1)
		waiting <- rel
	}()
	for srv.admit.queued() != 1 {
		time.Sleep(time.Millisecond)
	}
	dir := bundletest.Copy(t, bundletest.MLPerf)
	_, err = c.Submit(ctx, reg.TestID, dir, key)
	var re *RefusedError
	if !errors.As(err, &re) || re.Status != http.StatusServiceUnavailable || re.RetryAfter != busyRetryAfter*time.Second || re.Queued != 1 ||
		!strings.Contains(re.Message, "the service is busy: 1 upload(s) queued") {
		t.Fatalf("err = %#v, want 503 with Retry-After %d s and 1 queued", err, busyRetryAfter)
	}
	if runs, _ := st.Runs(ctx, store.RunFilter{}); len(runs) != 0 {
		t.Fatalf("%d runs stored", len(runs))
	}
	hold()
	(<-waiting)()
	if _, err := c.Submit(ctx, reg.TestID, dir, key); err != nil {
		t.Fatalf("with the budget free: %v", err)
	}
}
