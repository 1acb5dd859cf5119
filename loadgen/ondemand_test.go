package loadgen

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// closedLoopByLoop runs LoadGen's generation loop condition literally,
// counting queries without drawing samples.
func closedLoopByLoop(genDuration, period int64, minQueries uint64, nLoaded int, equalIssue bool) int {
	var q uint64
	var ts, prev int64
	for prev < genDuration || q < minQueries {
		q++
		prev = ts
		ts += period
		if equalIssue && q >= minQueries && prev < genDuration {
			minQueries += uint64(nLoaded)
		}
	}
	return int(q)
}

func TestClosedLoopQueriesMatchesTheLoop(t *testing.T) {
	cases := []struct {
		gen, period int64
		minQ        uint64
		nLoaded     int
		equal       bool
		why         string
	}{
		{0, 1, 0, 8, false, "no duration, no minimum: nothing"},
		{0, 1, 5, 8, false, "no duration: the minimum"},
		{10, 5, 1, 8, false, "duration a multiple of the period: one query past it"},
		{11, 5, 1, 8, false, "duration not a multiple: rounds up"},
		{10, 5, 100, 8, false, "the minimum dominates"},
		{1000, 7, 0, 3, true, "equal issue from a zero minimum: bumps at 1, then at multiples"},
		{1000, 7, 3, 3, true, "equal issue: whole data-set multiples while the duration is not covered"},
		{1000, 7, 300, 3, true, "equal issue with the minimum beyond the duration: no bump"},
		{1, 1, 0, 1, true, "one-sample set"},
		{2_000_000_000, 100, 1, 1024, false, "GB/T mode 0 with the self-test latency: 2·10⁷ queries"},
	}
	for _, c := range cases {
		got, ok := closedLoopQueries(c.gen, c.period, c.minQ, c.nLoaded, c.equal)
		want := closedLoopByLoop(c.gen, c.period, c.minQ, c.nLoaded, c.equal)
		if !ok || got != want {
			t.Errorf("%s: closedLoopQueries(%d, %d, %d, %d, %v) = %d, %v; the loop makes %d", c.why, c.gen, c.period, c.minQ, c.nLoaded, c.equal, got, ok, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		gen := rng.Int64N(5000)
		period := 1 + rng.Int64N(50)
		minQ := uint64(rng.IntN(300))
		nLoaded := 1 + rng.IntN(40)
		equal := rng.IntN(2) == 0
		if equal && minQ%uint64(nLoaded) != 0 {
			minQ += uint64(nLoaded) - minQ%uint64(nLoaded) // as generate rounds it
		}
		got, ok := closedLoopQueries(gen, period, minQ, nLoaded, equal)
		if want := closedLoopByLoop(gen, period, minQ, nLoaded, equal); !ok || got != want {
			t.Fatalf("closedLoopQueries(%d, %d, %d, %d, %v) = %d, %v; the loop makes %d", gen, period, minQ, nLoaded, equal, got, ok, want)
		}
	}
}

// TestOnDemandGenerationMatchesWhole: a closed-loop pass generated a chunk
// at a time holds the same queries, with the same sequence ids, count and
// duration, as the same pass generated whole.
func TestOnDemandGenerationMatchesWhole(t *testing.T) {
	cases := []struct {
		why  string
		edit func(*Settings)
	}{
		{"SingleStream, uniform draws", func(s *Settings) {}},
		{"SingleStream, equal issue", func(s *Settings) { s.SampleConcatenatePermutation = true }},
		{"SingleStream, the same index", func(s *Settings) { s.PerformanceIssueSame = true; s.PerformanceIssueSameIndex = 3 }},
		{"MultiStream of 8", func(s *Settings) { s.Scenario = MultiStream; s.MultiStreamExpectedLatencyNs = 5000 }},
		{"MultiStream of 3 (queries across pages)", func(s *Settings) {
			s.Scenario = MultiStream
			s.MultiStreamSamplesPerQuery = 3
			s.MultiStreamExpectedLatencyNs = 5000
		}},
	}
	for _, c := range cases {
		s := DefaultSettings()
		s.Mode = PerformanceOnly
		s.SingleStreamExpectedLatencyNs = 3000
		s.MinDurationMs = 10 // thousands of queries: several chunks
		c.edit(&s)
		e, err := NewEffective(s, 100, 100)
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		set := generateLoadableSets(&e, false, 100)[0]
		whole, _ := generate(context.Background(), &e, false, set, 77, nil, nil, false)
		lazy, _ := generate(context.Background(), &e, false, set, 77, nil, nil, true)
		if lazy.made != 0 || lazy.src == nil {
			t.Fatalf("%s: the on-demand pass generated %d chunks up front", c.why, lazy.made)
		}
		if whole.queries != lazy.queries || whole.n != lazy.n || whole.duration != lazy.duration || whole.spq != lazy.spq {
			t.Fatalf("%s: whole %d queries / %d samples / %d ns, on demand %d / %d / %d",
				c.why, whole.queries, whole.n, whole.duration, lazy.queries, lazy.n, lazy.duration)
		}
		if whole.queries < 3<<lazyChunkShift {
			t.Fatalf("%s: only %d queries; the test wants several chunks", c.why, whole.queries)
		}
		// Generate in uneven steps, as an issuer would.
		for q := 0; q < lazy.queries; q += 1 + q/3 {
			lazy.generate(q)
			if !lazy.generated(q) {
				t.Fatalf("%s: query %d not generated", c.why, q)
			}
		}
		lazy.materialize()
		for i := range whole.n {
			if w, l := whole.sample(i), lazy.sample(i); w != l {
				t.Fatalf("%s: sample %d: whole %+v, on demand %+v", c.why, i, w, l)
			}
		}
		for q := range whole.queries {
			w, l := whole.query(q), lazy.query(q)
			if len(w) != len(l) || w[0] != l[0] {
				t.Fatalf("%s: query %d differs", c.why, q)
			}
		}
	}
}

// TestMode0MemoryScalesWithIssued is issue 14's arrival mode 0 case: a
// SingleStream pass with a 100 ns expected latency over 2 s generates
// 4·10⁷ queries (about 2 GB of records when they were allocated up front);
// with a SUT that answers in 1 ms only 2 000 are issued, and the run must
// allocate in proportion to those.
func TestMode0MemoryScalesWithIssued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Mode = PerformanceOnly
		s.MinDurationMs = 2000
		s.MinQueryCount = 1
		s.SingleStreamExpectedLatencyNs = 100
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			time.Sleep(time.Millisecond)
			st := NoStages
			st.Clock, st.Received, st.ResultSent = TestClock, 1, 2
			for _, smp := range samples {
				r.Respond(Response{ID: smp.ID, Stages: &st, Node: 1, RequestBytes: 10})
			}
		}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(context.Background(), sut, &testQSL{total: 64, perf: 64}, s, &Options{SampleTimeout: time.Second, SpinWindow: -1})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		var generated uint64
		for _, ev := range res.Events {
			if ev.Key == "generated_query_count" {
				generated = ev.Value.(uint64)
			}
		}
		if generated != 40_000_001 {
			t.Errorf("generated_query_count = %d, want 40000001 (LoadGen's count for 2 × 2 s at 100 ns)", generated)
		}
		n := res.RecordCount()
		if n < 1900 || n > 2100 {
			t.Fatalf("%d jobs issued, want about 2000", n)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("the run allocated %d MB for %d jobs; want it to scale with the jobs issued, not the %d generated", alloc>>20, n, generated)
		}
		recs := 0
		for rec := range res.Records() {
			if rec.Status != StatusOK || rec.Node != 1 || rec.RequestBytes != 10 {
				t.Fatalf("record %+v, want ok from node 1 with 10 request bytes", rec)
			}
			recs++
		}
		if recs != n {
			t.Errorf("Records yields %d, RecordCount %d", recs, n)
		}
	})
}
