package netsut

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// fakeEndpoint serves samples with do; it counts its calls and records
// whether Close ran.
type fakeEndpoint struct {
	do     func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response)
	calls  atomic.Int64
	closed atomic.Bool
}

func (f *fakeEndpoint) Do(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
	f.calls.Add(1)
	f.do(ctx, r, s, resp)
}
func (f *fakeEndpoint) Check(context.Context) error { return nil }
func (f *fakeEndpoint) Name() string                { return "fake" }
func (f *fakeEndpoint) Close() error                { f.closed.Store(true); return nil }

func offline(samples uint64) loadgen.Settings {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.Mode = loadgen.PerformanceOnly
	s.MinDurationMs = 0
	s.MinQueryCount = samples
	return s
}

func runFake(t *testing.T, ep Endpoint, opts Options, samples uint64) *loadgen.Result {
	t.Helper()
	sut := New(context.Background(), ep, opts)
	res, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 8}, offline(samples), &loadgen.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := sut.Close(); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCategories: the outcome of a sample by what the endpoint did.
func TestCategories(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		do      func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response)
		cat     string // "" = completed
		message string
	}{
		{"success: data and bytes pass through", time.Second, func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			resp.Data, resp.RequestBytes, resp.ResponseBytes, resp.Tokens = []byte("x"), 10, 20, 3
		}, "", ""},
		{"a panic is a client error", time.Second, func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			panic("boom")
		}, CategoryClient, "endpoint panicked: boom"},
		{"an endpoint that ignores its deadline still gets a timeout", 10 * time.Millisecond, func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			<-ctx.Done() // returns without setting Err
		}, CategoryRequestTimeout, "request timeout of 10ms"},
		{"an endpoint's own category is kept", time.Second, func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			resp.Err = loadgen.WithCategory(CategoryHTTP5xx, errors.New("HTTP 503"))
		}, CategoryHTTP5xx, "HTTP 503"},
		{"an endpoint's error wins over the timeout", 10 * time.Millisecond, func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			<-ctx.Done()
			resp.Err = loadgen.WithCategory(CategoryConnectionReset, errors.New("reset"))
		}, CategoryConnectionReset, "reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ep := &fakeEndpoint{do: tc.do}
				res := runFake(t, ep, Options{RequestTimeout: tc.timeout}, 4)
				if !ep.closed.Load() {
					t.Error("Close did not close the endpoint")
				}
				for rec := range res.Records() {
					info, failed := res.ErrorOf(rec)
					switch {
					case tc.cat == "" && (failed || rec.Status != loadgen.StatusOK || rec.RequestBytes != 10 || rec.ResponseBytes != 20 || rec.Tokens != 3):
						t.Errorf("record %+v, error %+v", rec, info)
					case tc.cat != "" && (!failed || info.Category != tc.cat || !strings.Contains(info.Message, tc.message)):
						t.Errorf("error %+v, want %s with %q", info, tc.cat, tc.message)
					}
				}
				if ep.calls.Load() != 4 {
					t.Errorf("%d calls, want 4", ep.calls.Load())
				}
			})
		})
	}
}

// TestNegativeTimeoutMeansNone: a negative RequestTimeout is no bound.
func TestNegativeTimeoutMeansNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep := &fakeEndpoint{do: func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			if _, ok := ctx.Deadline(); ok {
				resp.Err = errors.New("deadline set")
			}
		}}
		res := runFake(t, ep, Options{RequestTimeout: -1}, 2)
		if res.FailedSamples != 0 {
			t.Errorf("errors %+v", res.Errors)
		}
	})
}

// TestDrainAndClose: Drain waits for the requests in flight or its
// context; Close cancels those in flight and waits for them.
func TestDrainAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var cancelled atomic.Int64
		ep := &fakeEndpoint{do: func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			select {
			case <-release:
			case <-ctx.Done():
				cancelled.Add(1)
			}
		}}
		sut := New(context.Background(), ep, Options{})
		s := offline(3)
		var res *loadgen.Result
		var wg sync.WaitGroup
		wg.Go(func() {
			// The run gives up on its samples after its timeout; the
			// requests stay in flight inside the SUT.
			res, _ = loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 8}, s, &loadgen.Options{Timeout: time.Second, InterruptGrace: time.Millisecond})
		})
		wg.Wait()
		if res == nil || res.LostSamples != 3 {
			t.Fatalf("result %+v, want 3 lost samples", res)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := sut.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Drain with requests in flight: %v, want the context's deadline", err)
		}
		cancel()
		close(release)
		if err := sut.Drain(context.Background()); err != nil {
			t.Errorf("Drain once idle: %v", err)
		}
		// Idle, its goroutines wait for more requests until it is closed.
		if err := sut.Close(); err != nil {
			t.Fatal(err)
		}

		// Close cancels what is in flight.
		block := make(chan struct{})
		ep2 := &fakeEndpoint{do: func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
			select {
			case <-block:
			case <-ctx.Done():
				cancelled.Add(1)
			}
		}}
		sut2 := New(context.Background(), ep2, Options{})
		loadgen.Run(context.Background(), sut2, &loadgentest.QSL{Total: 8}, s, &loadgen.Options{Timeout: time.Second, InterruptGrace: time.Millisecond})
		if err := sut2.Close(); err != nil {
			t.Fatal(err)
		}
		if cancelled.Load() != 3 || !ep2.closed.Load() {
			t.Errorf("%d requests cancelled by Close, want 3; closed %v", cancelled.Load(), ep2.closed.Load())
		}
		if sut2.Name() != "fake" || sut2.Endpoint() != ep2 {
			t.Error("Name or Endpoint")
		}
		close(block)
	})
}

// TestWorkersReused: a request issued after another has ended is served by
// the same goroutine, until it has waited workerIdle; Close ends the idle
// ones.
func TestWorkersReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep := &fakeEndpoint{do: func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {}}
		sut := New(context.Background(), ep, Options{})
		s := loadgen.DefaultSettings()
		s.Scenario = loadgen.SingleStream
		s.Mode = loadgen.PerformanceOnly
		s.MinDurationMs = 0
		s.MinQueryCount = 20
		res, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 8}, s, nil)
		if err != nil || res.FailedSamples != 0 {
			t.Fatalf("%v %+v", err, res)
		}
		// A request issued before the last worker is back waiting starts
		// another one: most are reused.
		first := sut.started.Load()
		if first > 10 {
			t.Errorf("%d workers for 20 requests one at a time", first)
		}
		time.Sleep(workerIdle + time.Millisecond)
		synctest.Wait()
		s.MinQueryCount = 2
		if _, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 8}, s, nil); err != nil {
			t.Fatal(err)
		}
		if n := sut.started.Load(); n == first {
			t.Errorf("no worker started after the idle ones exited")
		}
		if err := sut.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
