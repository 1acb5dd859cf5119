package steady

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"aimeter/loadgen"
)

// runShape is a kind of run for TestTableMatchesLegacy.
type runShape struct {
	why string
	// n records, sent gapNs apart (jitter up to ±jitterNs, so that sends
	// tie and come out of sequence order), each taking latencyNs plus up
	// to spreadNs, of tokens tokens (0: 0 to 20 at random).
	n                                    int
	gapNs, jitterNs, latencyNs, spreadNs int64
	tokens                               int64
	// failed, lost and noFirst are the fractions of failed, lost and
	// first-token-less records; shuffled puts the records out of
	// sequence order; offsetNs moves every time (past 2^32 ns, the
	// table's 4-byte columns).
	failed, lost, noFirst float64
	shuffled              bool
	offsetNs              int64
}

// records makes the run of a shape, from seed.
func (s runShape) records(seed uint64) []loadgen.Record {
	r := rand.New(rand.NewPCG(seed, 43))
	recs := make([]loadgen.Record, s.n)
	for i := range recs {
		at := s.offsetNs + int64(i)*s.gapNs
		if s.jitterNs > 0 {
			at += r.Int64N(2*s.jitterNs+1) - s.jitterNs
		}
		tok := s.tokens
		if tok == 0 {
			tok = r.Int64N(21)
		}
		lat := s.latencyNs
		if s.spreadNs > 0 {
			lat += r.Int64N(s.spreadNs)
		}
		rec := loadgen.Record{SeqID: uint64(i) + 7, QueryID: uint64(i), SampleIndex: uint64(i % 13), ScheduledNs: at - r.Int64N(1000),
			IssuedNs: at, FirstTokenNs: at + lat/5, CompletedNs: at + lat, Tokens: tok, Status: loadgen.StatusOK}
		switch x := r.Float64(); {
		case x < s.failed:
			rec.Status = loadgen.StatusError
		case x < s.failed+s.lost:
			rec.Status, rec.CompletedNs, rec.FirstTokenNs = loadgen.StatusLost, loadgen.NoTime, loadgen.NoTime
		case x < s.failed+s.lost+s.noFirst:
			rec.FirstTokenNs = loadgen.NoTime
		}
		recs[i] = rec
	}
	if s.shuffled {
		r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	}
	return recs
}

// same reports whether two results are the same bit for bit (%v prints
// a float64 exactly, NaN as itself).
func same(a, b any) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }

// TestTableMatchesLegacy checks that the analyses over a table (and the
// []loadgen.Record functions, which now use it) give bit for bit what the
// analyses over a []loadgen.Record gave before (legacy_test.go), over runs
// of many shapes and seeds: the window, its samples and every figure.
func TestTableMatchesLegacy(t *testing.T) {
	shapes := []runShape{
		{why: "a steady run: plateaus found, windows and their samples exact", n: 4000, gapNs: int64(time.Millisecond), jitterNs: 300_000,
			latencyNs: 50 * int64(time.Millisecond), spreadNs: 2 * int64(time.Millisecond), tokens: 11},
		{why: "failures, lost samples and no first tokens are counted, not timed", n: 3000, gapNs: int64(time.Millisecond), jitterNs: 500_000,
			latencyNs: 30 * int64(time.Millisecond), spreadNs: 20 * int64(time.Millisecond), failed: 0.05, lost: 0.05, noFirst: 0.1},
		{why: "sends tie (coarse times) and records are out of sequence order: the issue order's tie-break by seq id",
			n: 2500, gapNs: 1000, jitterNs: 3000, latencyNs: 100_000, spreadNs: 50_000, tokens: 5, shuffled: true},
		{why: "times past 2^32 ns: the table's 8-byte time columns", n: 2000, gapNs: int64(10 * time.Millisecond), jitterNs: 1000,
			latencyNs: int64(time.Second), spreadNs: int64(100 * time.Millisecond), tokens: 16, offsetNs: 1 << 40},
		{why: "zero and negative durations (completed at or before the send) do not count in flight", n: 500, gapNs: 1000,
			latencyNs: -500, spreadNs: 1500, tokens: 1},
		{why: "durations of -1, 0 and 1 ns: only the positive ones count in flight", n: 500, gapNs: 2, jitterNs: 2,
			latencyNs: -1, spreadNs: 3, tokens: 2},
		{why: "a run shorter than a pass over the data set", n: 5, gapNs: 1000, latencyNs: 10_000, tokens: 3},
		{why: "no records", n: 0},
	}
	spOpts := []SuperPassOptions{
		{DatasetSize: 50, MinDuration: -1},
		{DatasetSize: 40, Concurrency: 64, MinDuration: time.Millisecond},
		{DatasetSize: 100},
		{DatasetSize: 7, Concurrency: 3, MinDuration: -1},
		{DatasetSize: 10, MinDuration: -1}, // more super-passes than MaxSuperPasses for the longer runs
		{},                                 // an error: no data set size
	}
	checked := 0
	for _, s := range shapes {
		for seed := range uint64(3) {
			recs := s.records(seed)
			tab := tableOf(recs)
			for _, o := range spOpts {
				want, werr := legacySuperPass(recs, o)
				got, gerr := SuperPassTable(tab, o)
				if !same(want, got) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Errorf("%s, seed %d, %+v: SuperPassTable = %+v, %v; legacy %+v, %v", s.why, seed, o, got, gerr, want, werr)
				}
				if got2, err2 := SuperPass(recs, o); !same(got, got2) || fmt.Sprint(err2) != fmt.Sprint(gerr) {
					t.Errorf("%s, seed %d: SuperPass differs from SuperPassTable", s.why, seed)
				}
				if want.Found {
					checked++
				}
				measure(t, s.why, recs, tab, want.Samples, want.EndNs-want.StartNs)
			}
			for _, ratio := range []float64{0.8, 0.5, 1, 0.01, 0, 1.5} {
				want, werr := legacyInFlight(recs, ratio)
				got, gerr := InFlightTable(tab, ratio)
				if !same(want, got) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Errorf("%s, seed %d, ratio %g: InFlightTable = %+v, %v; legacy %+v, %v", s.why, seed, ratio, got, gerr, want, werr)
				}
				measure(t, s.why, recs, tab, want.Samples, want.EndNs-want.StartNs)
			}
			// Seq ids: every one, none, a dense half, a scattered few.
			var half, scattered []uint64
			for i, r := range recs {
				if i%2 == 0 {
					half = append(half, r.SeqID)
				}
			}
			if len(recs) > 0 {
				scattered = []uint64{recs[0].SeqID, recs[len(recs)-1].SeqID, 1 << 50}
			}
			for _, seqs := range [][]uint64{nil, {}, half, scattered} {
				measure(t, s.why, recs, tab, seqs, 1e9)
			}
		}
	}
	if checked == 0 {
		t.Error("no run had a super-pass window: the found path went unchecked")
	}
}

// measure checks MeasureTable and Measure against legacyMeasure.
func measure(t *testing.T, why string, recs []loadgen.Record, tab loadgen.RecordAccess, seqs []uint64, span int64) {
	t.Helper()
	want := legacyMeasure(recs, seqs, span)
	if got := MeasureTable(tab, seqs, span); got != want {
		t.Errorf("%s: MeasureTable of %d seqs = %+v; legacy %+v", why, len(seqs), got, want)
	}
	if got := Measure(recs, seqs, span); got != want {
		t.Errorf("%s: Measure of %d seqs = %+v; legacy %+v", why, len(seqs), got, want)
	}
}

// TestSeqSet checks the set against a plain map: dense ids take bits,
// scattered ones a map, nil is every id.
func TestSeqSet(t *testing.T) {
	tests := []struct {
		why  string
		seqs []uint64
	}{
		{"dense ids from 0", []uint64{0, 1, 2, 5, 63, 64, 65}},
		{"dense ids far from 0, out of order", []uint64{1<<40 + 9, 1 << 40, 1<<40 + 200}},
		{"scattered ids: a map", []uint64{3, 1 << 20, 1 << 62}},
		{"one id", []uint64{42}},
		{"none", []uint64{}},
	}
	probes := []uint64{0, 1, 2, 3, 4, 5, 41, 42, 43, 63, 64, 65, 66, 1 << 20, 1 << 40, 1<<40 + 9, 1<<40 + 10, 1<<40 + 200, 1 << 62, ^uint64(0)}
	for _, tc := range tests {
		s := NewSeqSet(tc.seqs)
		for _, p := range probes {
			if got, want := s.Has(p), slices.Contains(tc.seqs, p); got != want {
				t.Errorf("%s: Has(%d) = %v, want %v", tc.why, p, got, want)
			}
		}
	}
	var all *SeqSet = NewSeqSet(nil)
	for _, p := range probes {
		if !all.Has(p) {
			t.Errorf("the set of nil seqs lacks %d; it is every id", p)
		}
	}
}

// holdingSUT holds the samples it is given, in order, and answers the
// oldest 2 whenever it holds 16 (the rest at FlushQueries, when the
// issuing ends), each with a first token and i%20 tokens for sample index
// i, failing index 13: at a concurrency of 16, 14 to 16 requests are in
// flight (13 when a sample's issue is timed after the answers IssueQuery
// gave; the in-flight window, ≥ 80 % of 16, is then most of the run) with
// varied token counts, on any machine.
type holdingSUT struct {
	mu   sync.Mutex
	held []loadgen.QuerySample
	r    *loadgen.Responder
}

func (*holdingSUT) Name() string { return "holdingSUT" }

func (s *holdingSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r = r
	s.held = append(s.held, samples...)
	if len(s.held) >= 16 {
		s.answer(2)
	}
}

func (s *holdingSUT) FlushQueries() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer(len(s.held))
}

// answer answers the oldest n samples held.
func (s *holdingSUT) answer(n int) {
	for _, q := range s.held[:n] {
		s.r.FirstToken(q.ID, nil)
		if q.Index == 13 {
			s.r.Fail(q.ID, errors.New("failed"))
			continue
		}
		s.r.Complete(q.ID, nil, int64(q.Index%20))
	}
	s.held = append(s.held[:0], s.held[n:]...)
}

type holdingQSL struct{}

func (holdingQSL) Name() string                   { return "holdingQSL" }
func (holdingQSL) TotalSampleCount() uint64       { return 64 }
func (holdingQSL) PerformanceSampleCount() uint64 { return 64 }
func (holdingQSL) LoadSamples([]uint64) error     { return nil }
func (holdingQSL) UnloadSamples([]uint64) error   { return nil }

// TestViewMatchesLegacy checks the analyses over a live run's pass as
// SteadyOf reads it (loadgen.Result.PassAccess, a view of the pass's own
// storage) against the analyses of before over its records.
func TestViewMatchesLegacy(t *testing.T) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.SingleStream
	s.Mode = loadgen.PerformanceOnly
	s.Concurrency = 16
	s.MinDurationMs = 0
	s.MinQueryCount = 20_000
	s.UseTokenLatencies = true
	res, err := loadgen.Run(context.Background(), &holdingSUT{}, holdingQSL{}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	pass := res.ReportedPass()
	view := res.PassAccess(pass)
	if _, table := view.(*loadgen.RecordTable); table {
		t.Fatalf("PassAccess of a live pass is a table, not a view")
	}
	recs := slices.Collect(res.PassRecords(pass))
	if view.Len() != len(recs) || len(recs) < 20_000 {
		t.Fatalf("the view holds %d records, the pass %d; want 20,000 or more", view.Len(), len(recs))
	}
	for _, o := range []SuperPassOptions{{DatasetSize: 64, Concurrency: 16, MinDuration: -1}, {DatasetSize: 64, Concurrency: 16}} {
		want, werr := legacySuperPass(recs, o)
		got, gerr := SuperPassTable(view, o)
		if !same(want, got) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("%+v: SuperPassTable of the view = %+v, %v; legacy %+v, %v", o, got, gerr, want, werr)
		}
		measure(t, "the view, super-pass window", recs, view, want.Samples, want.EndNs-want.StartNs)
	}
	want, werr := legacyInFlight(recs, DefaultInFlightRatio)
	got, gerr := InFlightTable(view, DefaultInFlightRatio)
	if !same(want, got) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Errorf("InFlightTable of the view = %+v, %v; legacy %+v, %v", got, gerr, want, werr)
	}
	if len(want.Samples) < 100 {
		t.Errorf("the in-flight window holds %d samples; the test wants one of 100 or more", len(want.Samples))
	}
	measure(t, "the view, in-flight window", recs, view, want.Samples, want.EndNs-want.StartNs)
	measure(t, "the view, whole", recs, view, nil, 1e9)
}
