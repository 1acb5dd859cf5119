package cli

import (
	"slices"
	"testing"

	"aimeter/loadgen"
)

func TestTokenFigures(t *testing.T) {
	ms := int64(1e6)
	ok := func(seq uint64, sched, done, toks int64) loadgen.Record {
		return loadgen.Record{SeqID: seq, ScheduledNs: sched, CompletedNs: done, Tokens: toks, Status: loadgen.StatusOK, FirstTokenNs: loadgen.NoTime}
	}
	failed := loadgen.Record{SeqID: 3, ScheduledNs: 0, CompletedNs: 500 * ms, Tokens: 0, Status: loadgen.StatusError}
	for _, tc := range []struct {
		name    string
		passes  []loadgen.PassInfo
		records []loadgen.Record
		traces  []loadgen.TokenTrace
		want    []string
	}{
		{"not streamed: no token times, no lines",
			[]loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: 2, EndNs: 1e9, Reported: true}},
			[]loadgen.Record{ok(0, 0, 10*ms, 4), ok(1, 0, 20*ms, 4)}, nil, nil},
		{"no reported pass", []loadgen.PassInfo{{Kind: loadgen.PassAccuracy, FirstSeq: 0, EndSeq: 1, EndNs: 1e9}},
			[]loadgen.Record{ok(0, 0, 10*ms, 2)}, []loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{1, 2}}}, nil},
		{"one sample: gaps of 1, 2 and 3 ms",
			[]loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: 1, EndNs: 2e9, Reported: true}},
			[]loadgen.Record{ok(0, 0, 10*ms, 4)}, []loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{1 * ms, 2 * ms, 4 * ms, 7 * ms}}},
			[]string{
				"  ITL p50 2.000 ms, p90 3.000 ms, p99 3.000 ms (3 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 10.00 ms, p90 10.00 ms, p99 10.00 ms (1 successful samples)",
				"  Output tokens/s 2.0 (4 tokens in 2.000 s)",
			}},
		{"only the reported pass's successful samples count",
			[]loadgen.PassInfo{
				{Kind: loadgen.PassAccuracy, FirstSeq: 0, EndSeq: 1, EndNs: 1e9},
				{Kind: loadgen.PassPerformance, FirstSeq: 1, EndSeq: 4, EndNs: 1e9, Reported: true},
			},
			[]loadgen.Record{ok(0, 0, 900*ms, 50), ok(1, 0, 10*ms, 3), ok(2, 5*ms, 25*ms, 2), failed},
			[]loadgen.TokenTrace{
				{SeqID: 0, TimesNs: []int64{0, 800 * ms}}, // the accuracy pass
				{SeqID: 1, TimesNs: []int64{1 * ms, 2 * ms, 3 * ms}},
				{SeqID: 2, TimesNs: []int64{6 * ms, 11 * ms}},
				{SeqID: 3, TimesNs: []int64{0, 400 * ms}}, // failed
			},
			[]string{
				"  ITL p50 1.000 ms, p90 5.000 ms, p99 5.000 ms (3 gaps between tokens of 2 streamed samples)",
				"  E2E latency p50 20.00 ms, p90 20.00 ms, p99 20.00 ms (2 successful samples)",
				"  Output tokens/s 5.0 (5 tokens in 1.000 s)",
			}},
		{"single-token samples: no gaps",
			[]loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: 1, EndNs: 1e9, Reported: true}},
			[]loadgen.Record{ok(0, 0, 3*ms, 1)}, []loadgen.TokenTrace{{SeqID: 0, TimesNs: []int64{2 * ms}}},
			[]string{
				"  ITL none (0 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 3.000 ms, p90 3.000 ms, p99 3.000 ms (1 successful samples)",
				"  Output tokens/s 1.0 (1 tokens in 1.000 s)",
			}},
	} {
		res := &loadgen.Result{Passes: tc.passes}
		res.AttachRecords(tc.records)
		res.AttachTokenTimes(tc.traces)
		if got := tokenFigures(res); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
