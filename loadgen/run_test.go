package loadgen

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// funcSUT adapts a function to the SUT interface.
type funcSUT struct {
	issue func(r *Responder, samples []QuerySample)
}

func (funcSUT) Name() string { return "FuncSUT" }
func (s funcSUT) IssueQuery(r *Responder, samples []QuerySample) {
	s.issue(r, samples)
}
func (funcSUT) FlushQueries() {}

// syncSUT completes every sample inside IssueQuery.
var syncSUT = funcSUT{issue: func(r *Responder, samples []QuerySample) {
	for _, s := range samples {
		r.Complete(s.ID, []byte{byte(s.Index)}, 0)
	}
}}

// delaySUT completes each sample after d, from another goroutine.
func delaySUT(d time.Duration) funcSUT {
	return funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, s := range samples {
			time.AfterFunc(d, func() { r.Complete(s.ID, nil, 0) })
		}
	}}
}

// testQSL is a QSL that records what was loaded.
type testQSL struct {
	total, perf uint64
	mu          sync.Mutex
	loaded      [][]uint64
}

func (q *testQSL) Name() string                   { return "TestQSL" }
func (q *testQSL) TotalSampleCount() uint64       { return q.total }
func (q *testQSL) PerformanceSampleCount() uint64 { return q.perf }
func (q *testQSL) LoadSamples(s []uint64) error {
	q.mu.Lock()
	q.loaded = append(q.loaded, slices.Clone(s))
	q.mu.Unlock()
	return nil
}
func (q *testQSL) UnloadSamples([]uint64) error { return nil }

func records(r *Result) []Record { return slices.Collect(r.Records()) }

func TestServerIssuesOnScheduleInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 1000
		s.ServerTargetLatencyNs = 1_000_000
		s.MinDurationMs = 2000
		s.MinQueryCount = 100
		res, err := Run(context.Background(), delaySUT(300*time.Microsecond), &testQSL{total: 64, perf: 64}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		recs := records(res)
		if len(recs) < 1900 {
			t.Fatalf("only %d samples issued in 2 s at 1000 qps", len(recs))
		}
		if recs[0].ScheduledNs != 0 {
			t.Errorf("first Server query scheduled at %d, want 0", recs[0].ScheduledNs)
		}
		for _, r := range recs {
			// On the fake clock a sleeping issuer wakes exactly on time, so
			// any lateness would be a scheduling bug.
			if r.IssuedNs != r.ScheduledNs {
				t.Fatalf("query %d issued at %d, scheduled at %d", r.QueryID, r.IssuedNs, r.ScheduledNs)
			}
			if lat := r.CompletedNs - r.ScheduledNs; lat != 300_000 {
				t.Fatalf("latency %d ns, want exactly the SUT's 300 µs", lat)
			}
		}
		sum := res.Summary
		if !sum.Valid || sum.TargetPercentile.SampleLatency != 300_000 {
			t.Errorf("valid=%v p99=%d reasons=%v", sum.Valid, sum.TargetPercentile.SampleLatency, sum.AimeterReasons)
		}
	})
}

func TestSingleStreamWaitsForEachQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.MinDurationMs = 1000
		s.SingleStreamExpectedLatencyNs = 5_000_000
		res, err := Run(context.Background(), delaySUT(5*time.Millisecond), &testQSL{total: 64, perf: 64}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs := records(res)
		// One query every 5 ms for 1 s: the run ends naturally after the
		// query issued at or past 1 s, i.e. 201 queries.
		if len(recs) != 201 {
			t.Errorf("%d queries, want 201", len(recs))
		}
		for i := 1; i < len(recs); i++ {
			if recs[i].IssuedNs != recs[i-1].CompletedNs {
				t.Fatalf("query %d issued at %d, previous completed at %d", i, recs[i].IssuedNs, recs[i-1].CompletedNs)
			}
		}
		if !res.Summary.MinDurationMet || !res.Summary.MinQueriesMet {
			t.Errorf("min duration %v, min queries %v", res.Summary.MinDurationMet, res.Summary.MinQueriesMet)
		}
	})
}

func TestLostSampleEndsRunWithoutHanging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.MinDurationMs = 100
		n := 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			n++
			if n == 10 {
				return // lose it
			}
			r.Complete(samples[0].ID, nil, 0)
		}}
		start := time.Now()
		res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, &Options{StallTimeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("a stall is not an interruption of the caller: %v", err)
		}
		if waited := time.Since(start); waited != 30*time.Second {
			t.Errorf("run took %v, want exactly the stall timeout", waited)
		}
		if res.LostSamples != 1 {
			t.Errorf("lost %d samples, want 1", res.LostSamples)
		}
		recs := records(res)
		if last := recs[len(recs)-1]; last.Status != StatusLost || last.CompletedNs != NoTime {
			t.Errorf("last record %+v, want lost", last)
		}
		if res.Summary.Valid || !strings.Contains(strings.Join(res.Summary.AimeterReasons, " "), "lost") {
			t.Errorf("a run with a lost sample must be INVALID and say why: %v", res.Summary.AimeterReasons)
		}
	})
}

func TestRunTimeoutCountsOutstandingAsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 100
		s.MinDurationMs = 60_000
		blackHole := funcSUT{issue: func(*Responder, []QuerySample) {}}
		res, err := Run(context.Background(), blackHole, &testQSL{total: 16, perf: 16}, s, &Options{Timeout: 2 * time.Second, SpinWindow: -1})
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("err = %v, want ErrInterrupted", err)
		}
		if res == nil || res.Summary == nil {
			t.Fatal("an interrupted run still returns its result")
		}
		issued := res.RecordCount()
		if issued == 0 || res.LostSamples != uint64(issued) {
			t.Errorf("issued %d, lost %d: every outstanding sample must be lost", issued, res.LostSamples)
		}
		if res.Summary.Valid || !strings.Contains(res.Interrupted, "timeout") {
			t.Errorf("valid=%v interrupted=%q", res.Summary.Valid, res.Interrupted)
		}
	})
}

func TestPanicInIssueQueryEndsRunCleanly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.MinDurationMs = 100
		n := 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			n++
			if n == 5 {
				panic("model exploded")
			}
			r.Complete(samples[0].ID, nil, 0)
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 16, perf: 16}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.RecordCount() != 5 || res.LostSamples != 1 {
			t.Errorf("records %d lost %d, want 5 and 1", res.RecordCount(), res.LostSamples)
		}
		found := false
		for _, e := range res.Events {
			if e.Error && strings.Contains(e.Value.(string), "model exploded") {
				found = true
			}
		}
		if !found || res.Summary.Valid {
			t.Errorf("the panic must be logged as an error and invalidate the run (found=%v)", found)
		}
	})
}

func TestMisbehavingCompletionsAreCounted(t *testing.T) {
	s := DefaultSettings()
	s.MinDurationMs = 0
	s.MinQueryCount = 50
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		id := samples[0].ID
		r.Complete(0, nil, 0)          // never a valid id
		r.Complete(id+1000, nil, 0)    // beyond the pass
		r.Complete(id+1, nil, 0)       // generated but not yet issued
		r.Complete(id, nil, 0)         // the real one
		r.Complete(id, nil, 0)         // duplicate
		r.FirstToken(id+5000, nil)     // unknown
		r.Fail(id, errors.New("late")) // after completion: duplicate
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Unknown: id 0, id+1000 and the first token of id+5000 for each of the
	// 50 queries, plus id+1 of the last query, which is past the pass.
	if res.UnknownCompletions != 50*3+1 {
		t.Errorf("unknown = %d, want 151", res.UnknownCompletions)
	}
	// Duplicate: id+1 before it is issued (49 times), the second Complete
	// and the Fail after completion (50 times each).
	if res.DuplicateCompletions != 49+50+50 {
		t.Errorf("duplicate = %d, want 149", res.DuplicateCompletions)
	}
	if res.FailedSamples != 0 || res.LostSamples != 0 {
		t.Errorf("failed %d lost %d", res.FailedSamples, res.LostSamples)
	}
	if res.ErrorCount() == 0 {
		t.Error("misbehaviour must reach the detail log as errors")
	}
}

func TestFailedSamplesInvalidateTheRun(t *testing.T) {
	s := DefaultSettings()
	s.MinDurationMs = 0
	s.MinQueryCount = 100
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		if samples[0].Index == 3 {
			r.Fail(samples[0].ID, errors.New("HTTP 500"))
			return
		}
		r.Complete(samples[0].ID, nil, 0)
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for r := range res.Records() {
		if r.Status == StatusError {
			failed++
			if r.SampleIndex != 3 {
				t.Errorf("sample %d marked failed", r.SampleIndex)
			}
		}
	}
	if failed == 0 || uint64(failed) != res.FailedSamples || res.Summary.Valid {
		t.Errorf("failed records %d, counter %d, valid %v", failed, res.FailedSamples, res.Summary.Valid)
	}
}

func TestCancelReturnsResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 1000
		s.MinDurationMs = 60_000
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		res, err := Run(ctx, delaySUT(time.Millisecond), &testQSL{total: 16, perf: 16}, s, &Options{SpinWindow: -1})
		if !errors.Is(err, ErrInterrupted) || res == nil {
			t.Fatalf("err = %v", err)
		}
		if res.Summary == nil || res.Summary.Valid {
			t.Fatal("an interrupted run is reported INVALID")
		}
		if n := res.RecordCount(); n < 900 || n > 1100 {
			t.Errorf("%d samples issued in 1 s at 1000 qps", n)
		}
	})
}

func TestAccuracyModeIssuesEverySample(t *testing.T) {
	for _, sc := range []Scenario{SingleStream, MultiStream, Server, Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			s := DefaultSettings()
			s.Scenario = sc
			s.Mode = AccuracyOnly
			s.ServerTargetQPS = 1e6
			s.OfflineExpectedQPS = 1e6
			q := &testQSL{total: 300, perf: 128}
			res, err := Run(context.Background(), syncSUT, q, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary != nil {
				t.Error("accuracy mode has no performance summary")
			}
			if len(q.loaded) != 3 {
				t.Errorf("loaded %d sets, want ceil(300/128) = 3", len(q.loaded))
			}
			seen := map[uint64]int{}
			for _, e := range res.Accuracy {
				seen[e.QSLIndex]++
				if len(e.Data) != 1 || e.Data[0] != byte(e.QSLIndex) {
					t.Fatalf("accuracy entry %+v does not hold the response", e)
				}
			}
			for i := uint64(0); i < 300; i++ {
				if seen[i] == 0 {
					t.Fatalf("sample %d never issued", i)
				}
				if sc != MultiStream && seen[i] != 1 {
					t.Fatalf("sample %d issued %d times", i, seen[i])
				}
			}
		})
	}
}

func TestSubmissionRunContinuesSequenceIDs(t *testing.T) {
	s := DefaultSettings()
	s.Mode = SubmissionRun
	s.MinDurationMs = 0
	s.MinQueryCount = 10
	res, err := Run(context.Background(), syncSUT, &testQSL{total: 20, perf: 20}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Passes) != 2 || res.Passes[0].Kind != PassAccuracy || res.Passes[1].Kind != PassPerformance {
		t.Fatalf("passes %+v", res.Passes)
	}
	if res.Passes[1].FirstSeq != res.Passes[0].EndSeq || !res.Passes[1].Reported {
		t.Errorf("the performance pass must follow the accuracy pass in one seq-id space and be reported: %+v", res.Passes)
	}
	if res.Summary == nil || len(res.Accuracy) != 20 {
		t.Errorf("summary %v, %d accuracy entries", res.Summary != nil, len(res.Accuracy))
	}
}

// queueSUT serves one sample at a time, each taking service; past
// 1/service QPS its queue, and latency, grow without bound.
type queueSUT struct {
	service time.Duration
	queue   chan work
}

type work struct {
	r *Responder
	s QuerySample
}

func (*queueSUT) Name() string { return "QueueSUT" }
func (q *queueSUT) IssueQuery(r *Responder, samples []QuerySample) {
	for _, s := range samples {
		q.queue <- work{r, s}
	}
}
func (*queueSUT) FlushQueries() {}
func (q *queueSUT) serve(ctx context.Context) {
	for {
		select {
		case w := <-q.queue:
			time.Sleep(q.service)
			w.r.Complete(w.s.ID, nil, 0)
		case <-ctx.Done():
			return
		}
	}
}

func TestFindPeakBracketsCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sut := &queueSUT{service: time.Millisecond, queue: make(chan work, 1<<20)}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go sut.serve(ctx)
		s := DefaultSettings()
		s.Scenario = Server
		s.Mode = FindPeakPerformance
		s.ServerTargetQPS = 300
		s.ServerTargetLatencyNs = 20_000_000
		s.MinDurationMs = 1000
		s.ServerFindPeakQPSDecimalsOfPrecision = 0
		res, err := Run(ctx, sut, &testQSL{total: 16, perf: 16}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		// 300 → 600 pass, 1200 fails, then bisection; the peak of a 1 ms
		// single server is below 1000 qps.
		peak := res.Summary.Effective.TargetQPS
		if peak < 600 || peak >= 1000 {
			t.Errorf("peak %.1f qps, want in [600, 1000)", peak)
		}
		if !res.Summary.PerfConstraintsMet {
			t.Error("the reported run is the last passing one")
		}
		reported := 0
		for _, p := range res.Passes {
			if p.Kind != PassFindPeak {
				t.Errorf("pass kind %s", p.Kind)
			}
			if p.Reported {
				reported++
				if p.TargetQPS != peak {
					t.Errorf("reported pass at %v qps, summary at %v", p.TargetQPS, peak)
				}
			}
		}
		if reported != 1 || len(res.Passes) < 6 {
			t.Errorf("%d passes, %d reported", len(res.Passes), reported)
		}
	})
}

func TestFindPeakFinished(t *testing.T) {
	tests := []struct {
		l, u     float64
		decimals int
		want     bool
		reason   string
	}{
		{800, 1600, 0, false, "bounds 800 apart"},
		{999, 1000, 0, true, "floor(999)+1 ≥ floor(1000)"},
		{999.5, 1000.4, 0, true, "floor(999.5)+1 = 1000 ≥ 1000"},
		{99.81, 100.02, 1, false, "998+1 < 1000 at one decimal"},
		{99.95, 100.02, 1, true, "floor(999.5)+1 = 1000 ≥ 1000"},
	}
	for _, tc := range tests {
		if got := findPeakFinished(tc.l, tc.u, tc.decimals); got != tc.want {
			t.Errorf("findPeakFinished(%v, %v, %d) = %v, want %v: %s", tc.l, tc.u, tc.decimals, got, tc.want, tc.reason)
		}
	}
}

func TestAttachRecordsServesStoredPasses(t *testing.T) {
	s := DefaultSettings()
	s.Mode = SubmissionRun
	s.MinDurationMs = 0
	s.MinQueryCount = 10
	live, err := Run(context.Background(), syncSUT, &testQSL{total: 20, perf: 20}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := &Result{Passes: live.Passes}
	stored.AttachRecords(records(live))
	if stored.RecordCount() != live.RecordCount() {
		t.Fatalf("%d stored records, %d live", stored.RecordCount(), live.RecordCount())
	}
	for i := range live.Passes {
		a, b := slices.Collect(live.PassRecords(i)), slices.Collect(stored.PassRecords(i))
		if !slices.Equal(a, b) {
			t.Errorf("pass %d: stored records differ from the live ones", i)
		}
	}
}
