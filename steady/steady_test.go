package steady

import (
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

const ms = int64(1e6)

// passes makes records of a run with a data set of 2 samples sent one at a
// time, one every 200 ms (gap100 for 100 ms): super-pass k (samples 2k and 2k+1) has TPOT
// tpots[k] ms; each sample has 11 tokens, its first token 10 ms after its
// scheduled (= sent) time, so its latency is 10 + 10·TPOT ms.
func passes(tpots ...int64) []loadgen.Record { return spaced(200, tpots...) }

func gap100(tpots ...int64) []loadgen.Record { return spaced(100, tpots...) }

func spaced(gapMs int64, tpots ...int64) []loadgen.Record {
	var recs []loadgen.Record
	for k, tp := range tpots {
		for j := range 2 {
			i := int64(2*k + j)
			at := i * gapMs * ms
			recs = append(recs, loadgen.Record{SeqID: uint64(i), ScheduledNs: at, IssuedNs: at, FirstTokenNs: at + 10*ms,
				CompletedNs: at + 10*ms + 10*tp*ms, Tokens: 11, Status: loadgen.StatusOK})
		}
	}
	return recs
}

func seqRange(lo, hi int) []uint64 {
	var s []uint64
	for i := lo; i < hi; i++ {
		s = append(s, uint64(i))
	}
	return s
}

// TestSuperPass checks the detector on runs worked by hand.
func TestSuperPass(t *testing.T) {
	noFloor := SuperPassOptions{DatasetSize: 2, MinDuration: -1}
	tests := []struct {
		why     string
		recs    []loadgen.Record
		opts    SuperPassOptions
		found   bool
		lo, hi  int
		warmup  int
		start   int64
		end     int64
		reason  string
		samples []uint64
	}{{
		// TPOT p50 per super-pass 20, 10, 10, … ms: the back half's median
		// is 10, the first super-pass is 100 % off and cropped. The seven
		// left are all 10 ms (no trend, CoV 0): one plateau [1, 8). Its
		// issue span is 400 ms (sample 2) to 3000 ms (sample 15), longer
		// than the 5 × 110 ms p90 latency it needs.
		why: "steady after a slow first super-pass", recs: passes(20, 10, 10, 10, 10, 10, 10, 10), opts: noFloor,
		found: true, lo: 1, hi: 8, warmup: 1, start: 400 * ms, end: 3000 * ms, samples: seqRange(2, 16),
	}, {
		// 10 ms for five super-passes, then 14 ms for four: the back
		// half's median is 14, so the first four (29 % off) are warm-up
		// (the cap is half of nine, 4). From super-pass 4: 10, 14, 14, 14
		// has a CoV of 1.73/13 = 0.13 > 0.08; from 5 the four 14s are a
		// plateau, spanning 2000–3400 ms, over 5 × 150 ms.
		why: "a level shift: the later level", recs: passes(10, 10, 10, 10, 10, 14, 14, 14, 14), opts: noFloor,
		found: true, lo: 5, hi: 9, warmup: 4, start: 2000 * ms, end: 3400 * ms, samples: seqRange(10, 18),
	}, {
		// The same, sent twice as fast: the plateau spans 700 ms, under
		// the 5 × 150 ms = 750 ms of relaxation its latency asks for.
		why: "a plateau shorter than 5 × its p90 latency", recs: gap100(10, 10, 10, 10, 10, 14, 14, 14, 14), opts: noFloor,
		found: false, lo: 0, hi: 9, warmup: 4, start: 0, end: 1700 * ms, reason: "spans 700ms, under the 750ms required", samples: seqRange(0, 18),
	}, {
		// TPOT rises 1 ms a super-pass, 10 to 21: warm-up is the first
		// six (all over 5 % below the back half's 18.5). 16–19 is a
		// plateau (four points show no significant trend; CoV 0.064);
		// adding 20 makes S = 10, Z = 9/√16.67 = 2.20, p = 0.028, with a
		// drift of 4/18 = 22 %: the plateau stops at 4 super-passes.
		why: "a drift: the plateau stops where the trend becomes significant", recs: passes(10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21), opts: noFloor,
		found: true, lo: 6, hi: 10, warmup: 6, start: 2400 * ms, end: 3800 * ms, samples: seqRange(12, 20),
	}, {
		// The same steady run, with Endpoints' 600 s floor: its 2.6 s
		// plateau is too short, so the window is the whole run.
		why: "a plateau shorter than the minimum duration", recs: passes(20, 10, 10, 10, 10, 10, 10, 10), opts: SuperPassOptions{DatasetSize: 2},
		found: false, lo: 0, hi: 8, warmup: 1, start: 0, end: 3000 * ms, reason: "under the 10m0s required", samples: seqRange(0, 16),
	}, {
		// Alternating 10 and 20 ms: every 4 super-passes have a CoV of
		// 5/15 = 0.33.
		why: "never flat", recs: passes(10, 20, 10, 20, 10, 20, 10, 20, 10, 20), opts: noFloor,
		found: false, lo: 0, hi: 10, warmup: 1, start: 0, end: 3800 * ms, reason: "no admissible steady plateau", samples: seqRange(0, 20),
	}, {
		why: "fewer samples than the data set", recs: passes(10), opts: SuperPassOptions{DatasetSize: 5, MinDuration: -1},
		found: false, lo: 0, hi: 1, warmup: 0, start: 0, end: 200 * ms, reason: "less than one pass over the data set", samples: seqRange(0, 2),
	}}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			got, err := SuperPass(tc.recs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != tc.found || got.Lo != tc.lo || got.Hi != tc.hi || got.Warmup != tc.warmup || got.StartNs != tc.start || got.EndNs != tc.end {
				t.Errorf("found %v [%d, %d) warm-up %d, %d–%d ns (%s); want %v [%d, %d) warm-up %d, %d–%d ns",
					got.Found, got.Lo, got.Hi, got.Warmup, got.StartNs, got.EndNs, got.Reason, tc.found, tc.lo, tc.hi, tc.warmup, tc.start, tc.end)
			}
			if !strings.Contains(got.Reason, tc.reason) || (tc.found && got.Reason != "") {
				t.Errorf("reason %q, want %q", got.Reason, tc.reason)
			}
			s := slices.Clone(got.Samples)
			slices.Sort(s)
			if !slices.Equal(s, tc.samples) {
				t.Errorf("samples %v, want %v", s, tc.samples)
			}
		})
	}
}

func TestSuperPassSizeAndFailures(t *testing.T) {
	// A data set of 2 at concurrency 3: ⌈3/2⌉ = 2 passes, 4 samples a
	// super-pass.
	recs := passes(10, 10, 10, 10, 10, 10, 10, 10)
	got, err := SuperPass(recs, SuperPassOptions{DatasetSize: 2, Concurrency: 3, MinDuration: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != 4 || got.SuperPasses != 4 {
		t.Errorf("size %d, %d super-passes; want 4 and 4", got.Size, got.SuperPasses)
	}
	// A failed sample counts as issued (it fills its super-pass) but gives
	// no time: super-pass 1's TPOT comes from its other sample alone.
	recs = passes(20, 10, 10, 10, 10, 10, 10, 10)
	recs[2].Status, recs[2].CompletedNs, recs[2].FirstTokenNs = loadgen.StatusError, 0, loadgen.NoTime
	recs[3].CompletedNs = recs[3].FirstTokenNs + 10*30*ms // 30 ms
	got, err = SuperPass(recs, SuperPassOptions{DatasetSize: 2, MinDuration: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got.TPOTP50[1] != float64(30*ms) {
		t.Errorf("super-pass 1 TPOT p50 %v, want 30 ms from its one good sample", got.TPOTP50[1])
	}
	// More super-passes than the detector examines: the whole run, saying so.
	many := make([]int64, MaxSuperPasses+1)
	for i := range many {
		many[i] = 10
	}
	if got, _ := SuperPass(passes(many...), SuperPassOptions{DatasetSize: 2, MinDuration: -1}); got.Found || !strings.Contains(got.Reason, "more than the 500") {
		t.Errorf("%d super-passes: found %v, reason %q", len(many), got.Found, got.Reason)
	}
	if _, err := SuperPass(recs, SuperPassOptions{}); err == nil {
		t.Error("no data set size: no error")
	}
}

// TestInFlight checks SGLang's window on a hand-drawn timeline:
//
//	A sent 0, done 10; B 2–12; C 4–6; D 11–20
//
// in flight: [0,2) 1, [2,4) 2, [4,6) 3, [6,10) 2, [10,11) 1, [11,12) 2,
// [12,20) 1; peak 3.
func TestInFlight(t *testing.T) {
	rec := func(seq uint64, from, to int64, st loadgen.Status) loadgen.Record {
		return loadgen.Record{SeqID: seq, ScheduledNs: from, IssuedNs: from, CompletedNs: to, Status: st, FirstTokenNs: loadgen.NoTime}
	}
	recs := []loadgen.Record{rec(0, 0, 10, loadgen.StatusOK), rec(1, 2, 12, loadgen.StatusOK), rec(2, 4, 6, loadgen.StatusOK), rec(3, 11, 20, loadgen.StatusOK),
		rec(4, 1, 30, loadgen.StatusError)} // a failure is not in flight for the window
	tests := []struct {
		why        string
		ratio      float64
		threshold  int
		start, end int64
		samples    []uint64
	}{
		{"0.8 of 3 is ⌈2.4⌉ = 3: only [4, 6)", 0.8, 3, 4, 6, []uint64{2}},
		{"0.5 of 3 is 2: [2, 10) (8 long) beats [11, 12)", 0.5, 2, 2, 10, []uint64{1, 2}},
		{"0.1 of 3 is 1: the whole run", 0.1, 1, 0, 20, []uint64{0, 1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			got, err := InFlight(recs, tc.ratio)
			if err != nil {
				t.Fatal(err)
			}
			if got.Peak != 3 || got.Threshold != tc.threshold || got.StartNs != tc.start || got.EndNs != tc.end || !slices.Equal(got.Samples, tc.samples) {
				t.Errorf("%+v; want threshold %d, [%d, %d), samples %v", got, tc.threshold, tc.start, tc.end, tc.samples)
			}
		})
	}
	// Two spans of equal length above the threshold: the first wins.
	tie := []loadgen.Record{rec(0, 0, 5, loadgen.StatusOK), rec(1, 10, 15, loadgen.StatusOK)}
	if got, _ := InFlight(tie, 1); got.StartNs != 0 || got.EndNs != 5 {
		t.Errorf("tie: [%d, %d), want the first, [0, 5)", got.StartNs, got.EndNs)
	}
	for _, bad := range []float64{0, -0.5, 1.5} {
		if _, err := InFlight(recs, bad); err == nil || !strings.Contains(err.Error(), "(0, 1]") {
			t.Errorf("ratio %v: %v", bad, err)
		}
	}
	if _, err := InFlight([]loadgen.Record{rec(0, 0, 10, loadgen.StatusError)}, 0.8); err == nil {
		t.Error("no success: no error")
	}
}

// TestMeasure checks the figures of a window worked by hand: two
// successes, a failure and a lost sample over one second.
func TestMeasure(t *testing.T) {
	recs := []loadgen.Record{
		// latency 30, TTFT 10, TPOT (30−10)/2 = 10
		{SeqID: 1, ScheduledNs: 0, IssuedNs: 0, FirstTokenNs: 10, CompletedNs: 30, Tokens: 3, Status: loadgen.StatusOK},
		// latency 40, TTFT 20, TPOT (45−25)/4 = 5
		{SeqID: 2, ScheduledNs: 5, IssuedNs: 6, FirstTokenNs: 25, CompletedNs: 45, Tokens: 5, Status: loadgen.StatusOK},
		{SeqID: 3, ScheduledNs: 5, IssuedNs: 6, FirstTokenNs: loadgen.NoTime, CompletedNs: 50, Status: loadgen.StatusError},
		{SeqID: 4, ScheduledNs: 5, IssuedNs: 6, FirstTokenNs: loadgen.NoTime, CompletedNs: loadgen.NoTime, Status: loadgen.StatusLost},
		{SeqID: 5, ScheduledNs: 0, IssuedNs: 0, FirstTokenNs: 1, CompletedNs: 1000, Tokens: 2, Status: loadgen.StatusOK}, // outside the window
	}
	m := Measure(recs, []uint64{1, 2, 3, 4}, 1e9)
	// LoadGen's percentile: index ⌊n·p⌋, so p50 of [30, 40] is 40.
	want := Metrics{Samples: 4, Completed: 2, Failed: 1, Lost: 1, SpanNs: 1e9, CompletedPerSec: 2, OutputTokensPerSec: 8,
		Latency: [3]int64{40, 40, 40}, TTFT: [3]int64{20, 20, 20}, TPOT: [3]int64{10, 10, 10}, HasTokens: true}
	if m != want {
		t.Errorf("%+v\nwant %+v", m, want)
	}
	if all := Measure(recs, nil, 0); all.Samples != 5 || all.CompletedPerSec != 0 {
		t.Errorf("all records over no span: %+v", all)
	}
}

// TestMeasureKeepsTheGivenSeqs: Measure's selection of records by seq id
// (kept as bits for dense ids, a map for scattered ones) keeps exactly
// the records named.
func TestMeasureKeepsTheGivenSeqs(t *testing.T) {
	var recs []loadgen.Record
	for seq := range uint64(300) {
		recs = append(recs, loadgen.Record{SeqID: 1000 + seq*7, IssuedNs: int64(seq), CompletedNs: int64(seq) + 10,
			FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK})
	}
	recs = append(recs, loadgen.Record{SeqID: 1 << 60, CompletedNs: 5, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK})
	cases := []struct {
		why  string
		seqs []uint64
		want int
	}{
		{"nil: every record", nil, 301},
		{"empty: none", []uint64{}, 0},
		{"dense ids, some not among the records", []uint64{1000, 1007, 1008, 1014, 1000 + 299*7}, 4},
		{"an id far from the others: a map", []uint64{1000, 1 << 60, 999}, 2},
	}
	for _, c := range cases {
		if got := Measure(recs, c.seqs, 1000).Samples; got != c.want {
			t.Errorf("%s: %d samples, want %d", c.why, got, c.want)
		}
	}
}
