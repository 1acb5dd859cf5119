package loadgen

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// hostileSUT completes every sample inside IssueQuery, except that the
// call numbered blockCall (1-based; 0 = none) blocks until release is
// closed, and FlushQueries blocks the same way when blockFlush is set.
// inside counts the calls blocked right now; calls counts IssueQuery calls.
type hostileSUT struct {
	blockCall  int64
	blockFlush bool
	release    chan struct{}
	inside     atomic.Int64
	calls      atomic.Int64
}

func (*hostileSUT) Name() string { return "HostileSUT" }

func (s *hostileSUT) IssueQuery(r *Responder, samples []QuerySample) {
	if s.calls.Add(1) == s.blockCall {
		s.inside.Add(1)
		<-s.release
		s.inside.Add(-1)
	}
	for _, smp := range samples {
		r.Complete(smp.ID, nil, 0)
	}
}

func (s *hostileSUT) FlushQueries() {
	if s.blockFlush {
		s.inside.Add(1)
		<-s.release
		s.inside.Add(-1)
	}
}

func reasonsOf(res *Result) string {
	if res == nil || res.Summary == nil {
		return ""
	}
	return strings.Join(res.Summary.AimeterReasons, " ")
}

// TestBlockedSUTCannotHangRun runs SUTs that never return from IssueQuery or
// FlushQueries: the stall timeout, Options.Timeout and cancellation must each
// end the run with every Result field filled, leaving exactly the one
// documented goroutine behind, which ends without touching the run once the
// SUT lets it go.
func TestBlockedSUTCannotHangRun(t *testing.T) {
	tests := []struct {
		name       string
		scenario   Scenario
		blockCall  int64
		blockFlush bool
		stall      time.Duration
		timeout    time.Duration
		cancelAt   time.Duration
		wantErr    error
		wantReason string
		wantMax    time.Duration // Run must return within this much fake time
	}{
		{"the stall timeout ends a blocked IssueQuery", SingleStream, 3, false, 10 * time.Second, 0, 0, ErrSUTBlocked, "SUT blocked in IssueQuery for", 12 * time.Second},
		{"Options.Timeout ends a blocked IssueQuery while the stall timeout waits forever", SingleStream, 3, false, -1, 3 * time.Second, 0, ErrInterrupted, "SUT blocked in IssueQuery for", 6 * time.Second},
		{"cancellation ends a blocked IssueQuery after the interrupt grace", SingleStream, 3, false, -1, 0, time.Second, ErrInterrupted, "SUT blocked in IssueQuery for", 4 * time.Second},
		{"a blocked Server IssueQuery is given up on too", Server, 5, false, 10 * time.Second, 0, 0, ErrSUTBlocked, "SUT blocked in IssueQuery for", 12 * time.Second},
		{"the stall timeout ends a blocked FlushQueries", Offline, 0, true, 10 * time.Second, 0, 0, ErrSUTBlocked, "SUT blocked in FlushQueries for 10s", 11 * time.Second},
		{"cancellation ends a blocked FlushQueries after the interrupt grace", Offline, 0, true, -1, 0, time.Second, ErrInterrupted, "SUT blocked in FlushQueries for", 4 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := DefaultSettings()
				s.Scenario = tc.scenario
				s.Mode = PerformanceOnly
				s.MinQueryCount = 50
				s.MinDurationMs = 100
				s.ServerTargetQPS = 100
				s.ServerTargetLatencyNs = 1e9
				sut := &hostileSUT{blockCall: tc.blockCall, blockFlush: tc.blockFlush, release: make(chan struct{})}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				start := time.Now()
				res, err := Run(ctx, sut, &testQSL{total: 16, perf: 16}, s, &Options{StallTimeout: tc.stall, Timeout: tc.timeout, SpinWindow: -1})
				if took := time.Since(start); took > tc.wantMax {
					t.Errorf("Run took %v, want at most %v", took, tc.wantMax)
				}
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("err = %v, want %v", err, tc.wantErr)
				}
				if res == nil || res.Summary == nil {
					t.Fatalf("no summary: %+v", res)
				}
				if res.Summary.Valid || !strings.Contains(reasonsOf(res), tc.wantReason) {
					t.Errorf("valid=%v reasons=%q, want INVALID with %q", res.Summary.Valid, reasonsOf(res), tc.wantReason)
				}
				if tc.blockCall > 0 && res.LostSamples == 0 {
					t.Error("the samples of the blocked call are not counted lost")
				}
				logged := false
				for _, e := range res.Events {
					logged = logged || (e.Error && strings.Contains(e.Value.(string), "SUT blocked in"))
				}
				if !logged {
					t.Error("the detail log does not say the SUT blocked")
				}
				if n := sut.inside.Load(); n != 1 {
					t.Fatalf("%d SUT calls still blocked, want exactly the documented one", n)
				}
				calls := sut.calls.Load()
				// Let the SUT go: the abandoned goroutine must end (synctest
				// fails the test if any goroutine of the bubble remains) and
				// issue nothing more.
				close(sut.release)
				synctest.Wait()
				if n := sut.inside.Load(); n != 0 {
					t.Errorf("%d calls still inside the SUT after release", n)
				}
				if after := sut.calls.Load(); after != calls {
					t.Errorf("the abandoned issuer went on issuing: %d calls, then %d", calls, after)
				}
				_ = records(res) // read every record after the leaked goroutine ran: -race checks it
			})
		})
	}
}

// TestSlowSynchronousSUTIsNotGivenUpOn: a SUT that completes its samples
// one by one inside a single IssueQuery (or FlushQueries) that lasts longer
// than the stall timeout is making progress, not blocked.
func TestSlowSynchronousSUTIsNotGivenUpOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Offline
		s.Mode = PerformanceOnly
		s.MinDurationMs = 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			for _, smp := range samples {
				time.Sleep(time.Second)
				r.Complete(smp.ID, nil, 0)
			}
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, &Options{StallTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.LostSamples != 0 || strings.Contains(reasonsOf(res), "blocked") {
			t.Errorf("lost=%d reasons=%q: a SUT that keeps completing was given up on", res.LostSamples, reasonsOf(res))
		}
		if len(records(res)) < 20 {
			t.Errorf("only %d samples: the test is too short to outlast the stall timeout", len(records(res)))
		}
	})
}

// TestNeverCompletingSUTEndsAtTheStallTimeout: a SUT that returns from
// IssueQuery but never completes anything loses its samples at the stall
// timeout.
func TestNeverCompletingSUTEndsAtTheStallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Offline
		s.Mode = PerformanceOnly
		sut := funcSUT{issue: func(*Responder, []QuerySample) {}}
		start := time.Now()
		res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, &Options{StallTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("Run took %v", took)
		}
		if res.Summary.Valid || res.LostSamples == 0 {
			t.Errorf("valid=%v lost=%d, want INVALID with lost samples", res.Summary.Valid, res.LostSamples)
		}
	})
}

// panicQSL panics in LoadSamples or UnloadSamples.
type panicQSL struct {
	testQSL
	inLoad bool
}

func (q *panicQSL) LoadSamples(s []uint64) error {
	if q.inLoad {
		panic("load exploded")
	}
	return q.testQSL.LoadSamples(s)
}

func (q *panicQSL) UnloadSamples([]uint64) error {
	if !q.inLoad {
		panic("unload exploded")
	}
	return nil
}

// TestPanickingQSLIsAnError: a QSL that panics is an error of Run, not a
// crash of the process.
func TestPanickingQSLIsAnError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inLoad bool
		want   string
	}{
		{"LoadSamples panics before anything is issued", true, "QSL panicked in LoadSamples: load exploded"},
		{"UnloadSamples panics after the pass", false, "QSL panicked in UnloadSamples: unload exploded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Scenario = Offline
			s.Mode = PerformanceOnly
			_, err := Run(context.Background(), syncSUT, &panicQSL{testQSL: testQSL{total: 8, perf: 8}, inLoad: tc.inLoad}, s, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestUnrepresentableScheduleIsRefusedBeforeGeneration: a Server rate so
// small that its schedule overflows int64 nanoseconds used to give
// scheduled_ns = MinInt64 and a run that never ended (1e-12), or to run out
// of memory (1e-300); Run must refuse it at once with a *FieldError.
func TestUnrepresentableScheduleIsRefusedBeforeGeneration(t *testing.T) {
	for _, qps := range []float64{1e-12, 1e-300} {
		s := DefaultSettings()
		s.Scenario = Server
		s.Mode = PerformanceOnly
		s.ServerTargetQPS = qps
		res, err := Run(context.Background(), syncSUT, &testQSL{total: 8, perf: 8}, s, nil)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "server_target_qps" || res != nil {
			t.Errorf("target_qps %g: got %v (result %v), want a FieldError for server_target_qps", qps, err, res != nil)
		}
	}
}

// TestProtocolErrorsMakeTheRunInvalid: a SUT that completes every sample
// twice, or completes ids it was never given, proves it misbehaves; MLPerf's
// checker rejects such logs, so the run is INVALID with that reason, every
// error is counted although only the first 20 are logged in full, and a
// summary rebuilt from the stored pass (aimeter report) says the same.
func TestProtocolErrorsMakeTheRunInvalid(t *testing.T) {
	tests := []struct {
		name          string
		extra         func(r *Responder, s QuerySample)
		wantDuplicate uint64
		wantUnknown   uint64
	}{
		{"every sample completed twice", func(r *Responder, s QuerySample) { r.Complete(s.ID, nil, 0) }, 100, 0},
		{"a completion for an id never issued after every sample", func(r *Responder, s QuerySample) { r.Complete(s.ID+1_000_000, nil, 0) }, 0, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Scenario = SingleStream
			s.Mode = PerformanceOnly
			s.MinQueryCount = 100
			s.MaxQueryCount = 100
			s.MinDurationMs = 0
			sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
				for _, smp := range samples {
					r.Complete(smp.ID, nil, 0)
					tc.extra(r, smp)
				}
			}}
			res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.DuplicateCompletions != tc.wantDuplicate || res.UnknownCompletions != tc.wantUnknown {
				t.Errorf("duplicate=%d unknown=%d, want %d and %d", res.DuplicateCompletions, res.UnknownCompletions, tc.wantDuplicate, tc.wantUnknown)
			}
			want := tc.wantDuplicate + tc.wantUnknown
			if got := res.Passes[0].ProtocolErrors; got != want {
				t.Errorf("pass counts %d protocol errors, want %d", got, want)
			}
			if res.Summary.Valid || !strings.Contains(reasonsOf(res), "100 SUT protocol errors") {
				t.Errorf("valid=%v reasons=%q, want INVALID for 100 protocol errors", res.Summary.Valid, reasonsOf(res))
			}
			full, rest := 0, false
			for _, e := range res.Events {
				if v, ok := e.Value.(string); ok && e.Error {
					if strings.Contains(v, "further SUT errors not logged in full") {
						rest = strings.HasPrefix(v, "80 further")
					} else if strings.Contains(v, "completion for") {
						full++
					}
				}
			}
			if full != maxErrorMessages || !rest {
				t.Errorf("%d errors logged in full and the rest counted=%v, want %d and a count of the other 80", full, rest, maxErrorMessages)
			}
			again, err := SummarizePass(res.SUTName, res.Effective, res.Passes[0], records(res))
			if err != nil {
				t.Fatal(err)
			}
			if again.Valid || strings.Join(again.AimeterReasons, " ") != reasonsOf(res) {
				t.Errorf("rebuilt summary: valid=%v reasons=%q, want %q", again.Valid, again.AimeterReasons, reasonsOf(res))
			}
		})
	}
}

// countdownCtx reports cancellation from its n-th call of Err on, so that a
// test can cancel generation at a known point without timing.
type countdownCtx struct {
	context.Context
	n, calls    int
	firstCancel int // the call that first reported cancellation
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls >= c.n {
		if c.firstCancel == 0 {
			c.firstCancel = c.calls
		}
		return context.Canceled
	}
	return nil
}

// TestGenerationHonoursCancellation: query generation checks for
// cancellation every generationCheckEvery samples (Ctrl-C used to wait 31 s
// for a long generation), and a run cancelled before its generation ends
// keeps no pass and says why. (SingleStream, where this was first seen, is
// now generated on demand; a Server schedule is still generated whole.)
func TestGenerationHonoursCancellation(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Server
	s.Mode = PerformanceOnly
	s.ServerTargetQPS = 2e7
	s.MinDurationMs = 200 // 4·10⁶ queries
	e, err := NewEffective(s, 64, 64)
	if err != nil {
		t.Fatal(err)
	}
	set := generateLoadableSets(&e, false, 64)[0]
	ctx := &countdownCtx{Context: context.Background(), n: 3}
	g, err := generateQueriesAt(ctx, &e, false, set, 0, nil, nil)
	if !errors.Is(err, context.Canceled) || g != nil {
		t.Fatalf("got %v and %v, want context.Canceled and no queries", g != nil, err)
	}
	if ctx.firstCancel != 3 || ctx.calls > 4 {
		t.Errorf("generation went on after the context was cancelled (call %d of %d), want it to stop at call 3", ctx.firstCancel, ctx.calls)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(cancelled, syncSUT, &testQSL{total: 64, perf: 64}, s, nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("err = %v, want ErrInterrupted", err)
	}
	if res == nil || len(res.Passes) != 0 {
		t.Fatalf("a run cancelled during generation keeps a pass: %+v", res)
	}
	said := false
	for _, ev := range res.Events {
		said = said || (ev.Key == "generic_message" && strings.HasPrefix(ev.Value.(string), "Query generation cancelled"))
	}
	if !said {
		t.Error("the detail log does not say generation was cancelled")
	}
}

// TestImpossibleTokenTimesAreDropped: token times a SUT reports outside
// its sample's issue-to-completion window, or out of order, are dropped and
// counted as protocol errors (the run is INVALID, the completion still
// counts); times on the window's edges are kept. Kept, the bad ones would
// give negative or oversized first-token latencies and a bundle that
// bundle.Read refuses.
func TestImpossibleTokenTimesAreDropped(t *testing.T) {
	const ms = int64(time.Millisecond)
	tests := []struct {
		why   string
		times func(issued, done int64) []int64
		keep  bool
	}{
		{"inside the window", func(i, d int64) []int64 { return []int64{i + ms/10, i + ms/2, d - 1} }, true},
		{"on both edges of the window", func(i, d int64) []int64 { return []int64{i, i, d} }, true},
		{"1 ns before the issue", func(i, d int64) []int64 { return []int64{i - 1, i + ms/2} }, false},
		{"1 ns after the completion", func(i, d int64) []int64 { return []int64{i + ms/2, d + 1} }, false},
		{"out of order", func(i, d int64) []int64 { return []int64{i + ms/2, i + ms/4} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := DefaultSettings()
				s.Scenario = SingleStream
				s.Mode = PerformanceOnly
				s.MinQueryCount, s.MaxQueryCount, s.MinDurationMs = 10, 10, 0
				s.UseTokenLatencies = true
				sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
					issued := r.Now()
					go func() {
						time.Sleep(time.Millisecond)
						done := r.Now()
						for _, smp := range samples {
							r.Respond(Response{ID: smp.ID, Tokens: 3, TokenTimes: tc.times(issued, done)})
						}
					}()
				}}
				res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				withTimes := 0
				for range res.TokenTimes() {
					withTimes++
				}
				ok := 0
				for rec := range res.Records() {
					if rec.Status == StatusOK {
						ok++
					}
					if rec.FirstTokenNs != NoTime && (rec.FirstTokenNs < rec.IssuedNs || rec.FirstTokenNs > rec.CompletedNs) {
						t.Errorf("record %+v: first token outside its window", rec)
					}
				}
				if ok != 10 {
					t.Errorf("%d samples ok, want all 10: bad token times do not undo a completion", ok)
				}
				wantErrs := uint64(10)
				if tc.keep {
					wantErrs = 0
				}
				if got := res.Passes[0].ProtocolErrors; got != wantErrs {
					t.Errorf("%d protocol errors, want %d", got, wantErrs)
				}
				if tc.keep != (withTimes == 10) || (!tc.keep && withTimes != 0) {
					t.Errorf("%d samples kept their token times; keep=%v", withTimes, tc.keep)
				}
				if !tc.keep && (res.Summary.Valid || !strings.Contains(reasonsOf(res), "token times outside")) {
					t.Errorf("valid=%v reasons=%q: want INVALID naming the token times", res.Summary.Valid, reasonsOf(res))
				}
			})
		})
	}
}

// TestErrorsLoggedWhenTheyHappen: a SUT error is an error_runtime event at
// the time it was reported, placed among the other events by that time,
// not at the end of the run (the report and the detail log show when a
// failure happened).
func TestErrorsLoggedWhenTheyHappen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = SingleStream
		s.Mode = PerformanceOnly
		s.MinQueryCount, s.MaxQueryCount, s.MinDurationMs = 10, 10, 0
		n := 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			n++
			fail := n == 2 || n == 7
			go func() {
				time.Sleep(time.Millisecond)
				for _, smp := range samples {
					if fail {
						r.Fail(smp.ID, errors.New("boom"))
					} else {
						r.Complete(smp.ID, nil, 0)
					}
				}
			}()
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var at []int64
		var idx []int
		for i, e := range res.Events {
			if e.Key == "error_runtime" {
				at, idx = append(at, e.TimeNs), append(idx, i)
			}
		}
		// Query 2 fails 2 ms after the start, query 7 five queries (5 ms)
		// later; both before the run's last events.
		if len(at) != 2 || at[1]-at[0] != 5*int64(time.Millisecond) {
			t.Fatalf("error events at %v, want two 5 ms apart", at)
		}
		if last := res.Events[len(res.Events)-1]; idx[1] == len(res.Events)-1 || last.TimeNs < at[1] {
			t.Errorf("the errors are not placed among the events by time: %d events, errors at %v, last %+v", len(res.Events), idx, last)
		}
	})
}
