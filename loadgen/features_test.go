package loadgen

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// tokenSUT streams: first token after ttft, completion after total, with n tokens.
func tokenSUT(ttft, total time.Duration, n int64) funcSUT {
	return funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, s := range samples {
			time.AfterFunc(ttft, func() { r.FirstToken(s.ID, []byte{0xAB}) })
			time.AfterFunc(total, func() { r.Complete(s.ID, []byte{0xAB, 0xCD}, n) })
		}
	}}
}

func TestTokenLatencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 100
		s.MinDurationMs = 10_000
		s.UseTokenLatencies = true
		s.ServerTTFTLatencyNs = 20_000_000
		s.ServerTPOTLatencyNs = 5_000_000
		s.AccuracyLogProbability = 1
		res, err := Run(context.Background(), tokenSUT(10*time.Millisecond, 50*time.Millisecond, 11), &testQSL{total: 8, perf: 8}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		// TTFT = 10 ms; TPOT = (50 − 10 ms) / (11 − 1) = 4 ms.
		if sum.TokenTargetPercentile.SampleLatency != 10_000_000 || sum.TPOTTargetPercentile.SampleLatency != 4_000_000 {
			t.Errorf("TTFT p99 %d, TPOT p99 %d", sum.TokenTargetPercentile.SampleLatency, sum.TPOTTargetPercentile.SampleLatency)
		}
		if sum.TokenCount != 11*int64(sum.SampleCount) || !sum.Valid {
			t.Errorf("tokens %d for %d samples, valid %v %v", sum.TokenCount, sum.SampleCount, sum.Valid, sum.EarlyStoppingTPOTLines)
		}
		if len(sum.EarlyStoppingTTFTLines) == 0 || len(sum.EarlyStoppingTPOTLines) == 0 {
			t.Error("token mode reports TTFT and TPOT early stopping")
		}
		for r := range res.Records() {
			if r.FirstTokenNs-r.ScheduledNs != 10_000_000 || r.Tokens != 11 {
				t.Fatalf("record %+v", r)
			}
		}
		e := res.Accuracy[0]
		if !e.HasTokens || e.TokenCount != 11 || string(e.TokenData) != "\xAB" || string(e.Data) != "\xAB\xCD" {
			t.Errorf("accuracy entry %+v", e)
		}
	})
}

func TestTokenBoundMissedIsInvalid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 100
		s.MinDurationMs = 10_000
		s.UseTokenLatencies = true
		s.ServerTTFTLatencyNs = 5_000_000 // the SUT takes 10 ms
		res, err := Run(context.Background(), tokenSUT(10*time.Millisecond, 50*time.Millisecond, 11), &testQSL{total: 8, perf: 8}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.PerfConstraintsMet || !strings.HasPrefix(res.Summary.PerfConstraintsRecommendation, "TTFT constrain not met") {
			t.Errorf("met %v: %q", res.Summary.PerfConstraintsMet, res.Summary.PerfConstraintsRecommendation)
		}
	})
}

func TestAccuracyLogSamplingInPerformanceMode(t *testing.T) {
	run := func(seed uint64) map[uint64]bool {
		s := DefaultSettings()
		s.MinDurationMs = 0
		s.MinQueryCount = 10_000
		s.AccuracyLogProbability = 0.1
		s.AccuracyLogRNGSeed = seed
		res, err := Run(context.Background(), syncSUT, &testQSL{total: 100, perf: 100}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint64]bool{}
		for _, e := range res.Accuracy {
			got[e.SeqID] = true
		}
		return got
	}
	a, b, c := run(1), run(1), run(2)
	if len(a) < 850 || len(a) > 1150 {
		t.Errorf("%d of 10000 responses logged at probability 0.1", len(a))
	}
	if len(a) != len(b) {
		t.Error("the same accuracy_log_rng_seed must log the same samples")
	}
	for k := range a {
		if !b[k] {
			t.Fatal("the same accuracy_log_rng_seed must log the same samples")
		}
	}
	same := 0
	for k := range a {
		if c[k] {
			same++
		}
	}
	if same == len(a) {
		t.Error("another seed must log other samples")
	}
}

func TestServerMaxAsyncQueriesEndsIssuing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 1000
		s.MinDurationMs = 10_000
		s.ServerMaxAsyncQueries = 10
		// Each sample takes 1 s: outstanding queries pile up after 10 ms.
		res, err := Run(context.Background(), delaySUT(time.Second), &testQSL{total: 8, perf: 8}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		if n := res.RecordCount(); n != 11 {
			t.Errorf("issued %d queries, want max_async + 1 = 11", n)
		}
		found := false
		for _, e := range res.Events {
			if e.Error && strings.Contains(e.Value.(string), "Too many outstanding queries") {
				found = true
			}
		}
		if !found || res.Summary.Valid {
			t.Error("ending on max_async_queries is logged as an error and the run is INVALID")
		}
	})
}

func TestServerCoalescesOverdueQueries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 10_000
		s.MinDurationMs = 1000
		s.ServerCoalesceQueries = true
		calls, samples := 0, 0
		// The SUT blocks the issuer 1 ms per call, so ~10 queries are due
		// at each return and go out in one IssueQuery.
		sut := funcSUT{issue: func(r *Responder, qs []QuerySample) {
			calls++
			samples += len(qs)
			time.Sleep(time.Millisecond)
			for _, q := range qs {
				r.Complete(q.ID, nil, 0)
			}
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		if calls*3 > samples || samples != res.RecordCount() {
			t.Errorf("%d IssueQuery calls for %d samples: overdue queries were not coalesced", calls, samples)
		}
		if res.Summary.QueryCount != uint64(samples) {
			t.Errorf("coalesced queries still count one each: %d != %d", res.Summary.QueryCount, samples)
		}
		for r := range res.Records() {
			if r.IssuedNs < r.ScheduledNs {
				t.Fatalf("issued before schedule: %+v", r)
			}
		}
	})
}

func TestServerIssueThreads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 2000
		s.MinDurationMs = 1000
		s.ServerNumIssueQueryThreads = 4
		res, err := Run(context.Background(), delaySUT(100*time.Microsecond), &testQSL{total: 8, perf: 8}, s, &Options{SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[uint64]bool{}
		for r := range res.Records() {
			if seen[r.QueryID] {
				t.Fatalf("query %d issued twice", r.QueryID)
			}
			seen[r.QueryID] = true
			if r.IssuedNs != r.ScheduledNs {
				t.Fatalf("query %d late by %d ns", r.QueryID, r.IssuedNs-r.ScheduledNs)
			}
		}
		if uint64(len(seen)) != res.Passes[0].QueriesIssued || !res.Summary.Valid {
			t.Errorf("%d queries seen, %d issued, valid %v", len(seen), res.Passes[0].QueriesIssued, res.Summary.Valid)
		}
	})
}

func TestMaxDurationAndMaxQueryCountEndEarly(t *testing.T) {
	hasError := func(res *Result, text string) bool {
		for _, e := range res.Events {
			if e.Error && strings.Contains(e.Value.(string), text) {
				return true
			}
		}
		return false
	}
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.MinDurationMs = 1000
		s.MaxDurationMs = 1000
		s.MinQueryCount = 100_000
		s.SingleStreamExpectedLatencyNs = 10_000_000
		res, err := Run(context.Background(), delaySUT(10*time.Millisecond), &testQSL{total: 8, perf: 8}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Queries go out every 10 ms; the first issued after more than
		// 1000 ms (at 1010 ms, the 102nd) ends the run.
		if n := res.RecordCount(); n != 102 || !hasError(res, "Max test duration reached") {
			t.Errorf("%d queries; max duration must end the run with an error", n)
		}
		if res.Summary.MinQueriesMet {
			t.Error("min queries cannot be met")
		}

		s.MaxDurationMs, s.MinDurationMs, s.MinQueryCount, s.MaxQueryCount = 0, 10_000, 10, 20
		res, err = Run(context.Background(), delaySUT(10*time.Millisecond), &testQSL{total: 8, perf: 8}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := res.RecordCount(); n != 20 || !hasError(res, "Max query count reached") {
			t.Errorf("%d queries; max_query_count 20 must end the run with an error", n)
		}
	})
}
