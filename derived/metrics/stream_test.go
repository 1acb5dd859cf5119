package metrics

import (
	"testing"

	"aimeter/loadgen"
)

func TestStatsOf(t *testing.T) {
	// 1..10 ms: LoadGen's rule takes index trunc(10·p), so p50 is the
	// sixth value (6 ms, not an interpolated 5.5 ms) and p90 the tenth.
	var v []int64
	for i := int64(1); i <= 10; i++ {
		v = append(v, i*ms)
	}
	want := Stats{Count: 10, Min: 1 * ms, Mean: 5500000, P50: 6 * ms, P90: 10 * ms, P95: 10 * ms, P99: 10 * ms, P999: 10 * ms, Max: 10 * ms}
	if got := StatsOf(v); got != want {
		t.Errorf("StatsOf(1..10 ms) = %+v, want %+v", got, want)
	}
	if got := StatsOf(nil); got != (Stats{}) {
		t.Errorf("StatsOf(nil) = %+v, want zero", got)
	}
	// Three values: p50 is index 1, p90 index trunc(2.7) = 2; the mean
	// 7/3 ms truncates to whole ns.
	want = Stats{Count: 3, Min: 1 * ms, Mean: 2333333, P50: 1 * ms, P90: 5 * ms, P95: 5 * ms, P99: 5 * ms, P999: 5 * ms, Max: 5 * ms}
	if got := StatsOf([]int64{1 * ms, 1 * ms, 5 * ms}); got != want {
		t.Errorf("StatsOf(1, 1, 5 ms) = %+v, want %+v", got, want)
	}
}

func TestStreamingOf(t *testing.T) {
	ok := func(seq uint64, sched, done, toks int64) loadgen.Record {
		return loadgen.Record{SeqID: seq, ScheduledNs: sched, CompletedNs: done, Tokens: toks, Status: loadgen.StatusOK, FirstTokenNs: loadgen.NoTime}
	}
	failed := loadgen.Record{SeqID: 3, ScheduledNs: 0, CompletedNs: 500 * ms, Tokens: 0, Status: loadgen.StatusError}
	perf := func(first, end uint64, endNs int64) loadgen.PassInfo {
		return loadgen.PassInfo{Kind: loadgen.PassPerformance, FirstSeq: first, EndSeq: end, EndNs: endNs, Reported: true}
	}
	one := func(v int64) Stats {
		return Stats{Count: 1, Min: v, Mean: v, P50: v, P90: v, P95: v, P99: v, P999: v, Max: v}
	}
	for _, tc := range []struct {
		name    string
		passes  []loadgen.PassInfo
		records []loadgen.Record
		traces  []loadgen.TokenTrace
		want    *Streaming
	}{
		{"not streamed: no token times", []loadgen.PassInfo{perf(0, 2, 1e9)},
			[]loadgen.Record{ok(0, 0, 10*ms, 4), ok(1, 0, 20*ms, 4)}, nil, nil},
		{"no reported pass", []loadgen.PassInfo{{Kind: loadgen.PassAccuracy, FirstSeq: 0, EndSeq: 1, EndNs: 1e9}},
			[]loadgen.Record{ok(0, 0, 10*ms, 2)}, []loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{1, 2}}}, nil},
		{"token times of a failed sample only", []loadgen.PassInfo{perf(3, 4, 1e9)},
			[]loadgen.Record{failed}, []loadgen.TokenTrace{{SeqID: 3, TimesNs: []int64{0, 400 * ms}}}, nil},
		{"one sample: gaps of 1, 2 and 3 ms", []loadgen.PassInfo{perf(0, 1, 2e9)},
			[]loadgen.Record{ok(0, 0, 10*ms, 4)}, []loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{1 * ms, 2 * ms, 4 * ms, 7 * ms}}},
			// gaps sorted 1, 2, 3 ms: p50 index 1, p90 index 2; mean 2 ms.
			&Streaming{StreamedSamples: 1, ITLNs: Stats{Count: 3, Min: 1 * ms, Mean: 2 * ms, P50: 2 * ms, P90: 3 * ms, P95: 3 * ms, P99: 3 * ms, P999: 3 * ms, Max: 3 * ms},
				E2ENs: one(10 * ms), OutputTokens: 4, SpanNs: 2e9, OutputTokensPerS: 2}},
		{"only the reported pass's successful samples count",
			[]loadgen.PassInfo{{Kind: loadgen.PassAccuracy, FirstSeq: 0, EndSeq: 1, EndNs: 1e9}, perf(1, 4, 1e9)},
			[]loadgen.Record{ok(0, 0, 900*ms, 50), ok(1, 0, 10*ms, 3), ok(2, 5*ms, 25*ms, 2), failed},
			[]loadgen.TokenTrace{
				{SeqID: 0, TimesNs: []int64{0, 800 * ms}}, // the accuracy pass
				{SeqID: 1, TimesNs: []int64{1 * ms, 2 * ms, 3 * ms}},
				{SeqID: 2, TimesNs: []int64{6 * ms, 11 * ms}},
				{SeqID: 3, TimesNs: []int64{0, 400 * ms}}, // failed
			},
			// gaps 1, 1, 5 ms; E2E 10 and 20 ms (p50 index trunc(2·0.5) = 1);
			// 3 + 2 tokens in 1 s.
			&Streaming{StreamedSamples: 2, ITLNs: Stats{Count: 3, Min: 1 * ms, Mean: 2333333, P50: 1 * ms, P90: 5 * ms, P95: 5 * ms, P99: 5 * ms, P999: 5 * ms, Max: 5 * ms},
				E2ENs:        Stats{Count: 2, Min: 10 * ms, Mean: 15 * ms, P50: 20 * ms, P90: 20 * ms, P95: 20 * ms, P99: 20 * ms, P999: 20 * ms, Max: 20 * ms},
				OutputTokens: 5, SpanNs: 1e9, OutputTokensPerS: 5}},
		{"a streamed and an unstreamed sample: E2E counts both", []loadgen.PassInfo{perf(0, 2, 4e9)},
			[]loadgen.Record{ok(0, 0, 30*ms, 3), ok(1, 0, 50*ms, 7)},
			[]loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{10 * ms, 20 * ms, 30 * ms}}},
			&Streaming{StreamedSamples: 1, ITLNs: Stats{Count: 2, Min: 10 * ms, Mean: 10 * ms, P50: 10 * ms, P90: 10 * ms, P95: 10 * ms, P99: 10 * ms, P999: 10 * ms, Max: 10 * ms},
				E2ENs:        Stats{Count: 2, Min: 30 * ms, Mean: 40 * ms, P50: 50 * ms, P90: 50 * ms, P95: 50 * ms, P99: 50 * ms, P999: 50 * ms, Max: 50 * ms},
				OutputTokens: 10, SpanNs: 4e9, OutputTokensPerS: 2.5}},
		{"single-token samples: no gaps", []loadgen.PassInfo{perf(0, 1, 1e9)},
			[]loadgen.Record{ok(0, 0, 3*ms, 1)}, []loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{2 * ms}}},
			&Streaming{StreamedSamples: 1, E2ENs: one(3 * ms), OutputTokens: 1, SpanNs: 1e9, OutputTokensPerS: 1}},
	} {
		res := &loadgen.Result{Passes: tc.passes}
		res.AttachRecords(tc.records)
		res.AttachTokenTimes(tc.traces)
		got := StreamingOf(res)
		switch {
		case (got == nil) != (tc.want == nil):
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		case got != nil && *got != *tc.want:
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, *got, *tc.want)
		}
	}
}
