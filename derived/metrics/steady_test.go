package metrics

import (
	"math"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// steadyResult is a token-latency run's reported pass of the given
// records, with a data set as large as the run (so that the super-pass
// detector, which needs several passes over it, finds nothing).
func steadyResult(c int, recs []loadgen.Record) *loadgen.Result {
	end := int64(0)
	for _, r := range recs {
		end = max(end, r.CompletedNs)
	}
	res := &loadgen.Result{
		Effective:           loadgen.Effective{Concurrency: uint64(c), UseTokenLatencies: true},
		QSLPerformanceCount: uint64(len(recs)),
		Passes:              []loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: uint64(len(recs)), EndNs: end, Reported: true}},
	}
	res.AttachRecords(recs)
	return res
}

// closedLoop is c slots each sending k requests one after another, 1 ms
// after the last one completed; slot j starts at j·10 ms. A request lasts
// 100 ms: its first token 20 ms after the send, then 9 more evenly.
func closedLoop(c, k int) []loadgen.Record {
	var recs []loadgen.Record
	for j := range c {
		at := int64(j) * 10 * ms
		for range k {
			recs = append(recs, loadgen.Record{ScheduledNs: at, IssuedNs: at, FirstTokenNs: at + 20*ms, CompletedNs: at + 100*ms, Tokens: 10, Status: loadgen.StatusOK})
			at += 101 * ms
		}
	}
	// In issue order, numbered.
	for i := range recs {
		for j := i + 1; j < len(recs); j++ {
			if recs[j].IssuedNs < recs[i].IssuedNs {
				recs[i], recs[j] = recs[j], recs[i]
			}
		}
	}
	for i := range recs {
		recs[i].SeqID, recs[i].QueryID = uint64(i), uint64(i)
	}
	return recs
}

// At concurrency 1 to 4, ⌈0.8 × peak⌉ is the peak: every completion ends
// the in-flight window, which holds a request or two. It is not found,
// and says why; nothing is measured over it.
func TestSteadyInFlightBelowMinimum(t *testing.T) {
	for _, tc := range []struct {
		c, k   int
		reason string
	}{
		{1, 6, "one request in flight: each window is one request"},
		{2, 6, "two slots: the window is the overlap of two requests"},
		{3, 5, "three slots staggered 10 ms: ⌈2.4⌉ = 3, the peak"},
		{4, 5, "four slots: ⌈3.2⌉ = 4, the peak"},
	} {
		s := SteadyOf(steadyResult(tc.c, closedLoop(tc.c, tc.k)))
		if s == nil || len(s.Windows) != 2 {
			t.Fatalf("c=%d (%s): steady state %+v", tc.c, tc.reason, s)
		}
		fl := s.Windows[1]
		if fl.Label != InFlightLabel || fl.Found || fl.StartNs != 0 || fl.EndNs != 0 || fl.Metrics.Samples != 0 || fl.Work != (Work{}) || fl.Note != "" {
			t.Errorf("c=%d (%s): in-flight window %+v, want not found and nothing measured", tc.c, tc.reason, fl)
		}
		if !strings.Contains(fl.Reason, "too small to be a steady state") || !strings.Contains(fl.Reason, "(at least 30 needed)") || !strings.Contains(fl.Reason, "(at least 10 mean request latencies needed") {
			t.Errorf("c=%d (%s): reason %q, want the minimum it misses", tc.c, tc.reason, fl.Reason)
		}
		if sp := s.Windows[0]; sp.Found || sp.Reason == "" || sp.Metrics.Samples != 0 {
			t.Errorf("c=%d: super-pass window %+v, want not found, with a reason, unmeasured", tc.c, sp)
		}
	}
}

// openLoop is n requests sent every 10 ms, each lasting 110 ms: its first
// token 20 ms after the send, then 9 more evenly over the next 90 ms. From
// the 11th on, 11 are in flight.
func openLoop(n int) []loadgen.Record {
	var recs []loadgen.Record
	for i := range n {
		at := int64(i) * 10 * ms
		recs = append(recs, loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), ScheduledNs: at, IssuedNs: at, FirstTokenNs: at + 20*ms,
			CompletedNs: at + 110*ms, Tokens: 10, Status: loadgen.StatusOK})
	}
	return recs
}

// A long steady run has an in-flight window, whose rates count the tokens
// that arrived in it, worked by hand.
func TestSteadyInFlightFound(t *testing.T) {
	s := SteadyOf(steadyResult(11, openLoop(200)))
	if s == nil {
		t.Fatal("no steady state")
	}
	fl := s.Windows[1]
	// Peak 11, threshold ⌈8.8⌉ = 9: reached when request 8 is sent (80 ms),
	// left when 8 remain, at the completion of request 191 (2020 ms).
	if !fl.Found || fl.StartNs != 80*ms || fl.EndNs != 2020*ms || fl.Reason != "" {
		t.Fatalf("in-flight window %+v, want found over [80 ms, 2020 ms)", fl)
	}
	// Its samples are those sent in it: 8…199, 192 of them (≥ 30), over
	// 1.94 s ≥ 10 × 110 ms.
	if fl.Metrics.Samples != 192 || fl.Metrics.Completed != 192 || fl.Metrics.SpanNs != 1940*ms {
		t.Errorf("metrics %+v, want 192 samples over 1.94 s", fl.Metrics)
	}
	// Tokens in [80, 2020) ms: requests 8…191 wholly, 184 × 10 = 1840;
	// requests 0…7 across the start: request i ≤ 5 has its first token
	// out and (10i+30)/90 of its decode in, i + 3 tokens (3+4+…+8 = 33),
	// 6 and 7 all 10 (20); requests 192…199 across the end: the first
	// token and (2000 − 10i)/90 of 9, 200 − i tokens (8+7+…+1 = 36, plus
	// 8). 1840 + 53 + 44 = 1937 tokens, 193.7 requests, over 1.94 s.
	if !near(fl.Work.Tokens, 1937) || !near(fl.Work.Requests, 193.7) {
		t.Errorf("work %+v, want 1937 tokens and 193.7 requests", fl.Work)
	}
	if !near(fl.Metrics.OutputTokensPerSec, 1937/1.94) || !near(fl.Metrics.CompletedPerSec, 193.7/1.94) {
		t.Errorf("rates %v tokens/s, %v requests/s, want %v and %v", fl.Metrics.OutputTokensPerSec, fl.Metrics.CompletedPerSec, 1937/1.94, 193.7/1.94)
	}
	if !strings.Contains(fl.Note, "0.080 s to 2.020 s") {
		t.Errorf("note %q", fl.Note)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// WindowWork's one rule, request by request, over the window [10, 20) s.
func TestWindowWorkHandWorked(t *testing.T) {
	const s = int64(1e9)
	rec := func(issued, first, done, tokens int64) loadgen.Record {
		r := loadgen.Record{SeqID: 1, IssuedNs: issued * s, FirstTokenNs: loadgen.NoTime, CompletedNs: done * s, Tokens: tokens, Status: loadgen.StatusOK}
		if first >= 0 {
			r.FirstTokenNs = first * s
		}
		return r
	}
	for _, tc := range []struct {
		reason string
		r      loadgen.Record
		times  []int64
		tokens float64
	}{
		{"wholly inside", rec(11, 12, 15, 7), nil, 7},
		{"wholly before", rec(1, 2, 9, 7), nil, 0},
		{"across the start: first token out, 8 of its 10 s of decode in", rec(5, 8, 18, 11), nil, 8},
		{"across the end: first token in (1) and 4 of 10 s of decode", rec(15, 16, 26, 11), nil, 5},
		{"across both edges: 10 of 20 s of decode", rec(0, 5, 25, 21), nil, 10},
		{"one token, at its first-token time inside", rec(5, 12, 30, 1), nil, 1},
		{"one token, at its first-token time outside", rec(5, 8, 12, 1), nil, 0},
		{"no first-token time: evenly from send to completion, 5 of 10 s", rec(5, -1, 15, 10), nil, 5},
		{"token times known: 2 of 4 arrivals in, half of 10 tokens", rec(5, 8, 22, 10), []int64{8 * s, 12 * s, 19 * s, 21 * s}, 5},
		{"token times known: the window's end excluded", rec(5, 8, 22, 10), []int64{8 * s, 20 * s}, 0},
	} {
		times := map[uint64][]int64{}
		if tc.times != nil {
			times[1] = tc.times
		}
		w := WindowWork([]loadgen.Record{tc.r}, times, 10*s, 20*s)
		wantReq := 0.0
		if tc.r.Tokens > 0 {
			wantReq = tc.tokens / float64(tc.r.Tokens)
		}
		if !near(w.Tokens, tc.tokens) || !near(w.Requests, wantReq) {
			t.Errorf("%s: %+v, want %v tokens, %v requests", tc.reason, w, tc.tokens, wantReq)
		}
	}
	// A request without tokens counts wholly where it completed; failed and
	// lost ones not at all.
	noTok := rec(5, -1, 15, 0)
	failed, lost := rec(11, 12, 15, 7), rec(11, 12, 15, 7)
	failed.Status, lost.Status, lost.CompletedNs = loadgen.StatusError, loadgen.StatusLost, loadgen.NoTime
	if w := WindowWork([]loadgen.Record{noTok, failed, lost}, nil, 10*s, 20*s); w != (Work{Requests: 1}) {
		t.Errorf("a request without tokens, a failed and a lost one: %+v, want 1 request, no tokens", w)
	}
}
