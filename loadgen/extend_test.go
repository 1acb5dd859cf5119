package loadgen

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// runExtend runs s on a SUT answering in 1 ms over 64 samples, with
// Options.ExtendToDuration as extend.
func runExtend(t *testing.T, s Settings, extend bool) *Result {
	t.Helper()
	res, err := Run(context.Background(), delaySUT(time.Millisecond), &testQSL{total: 64, perf: 64}, s,
		&Options{SpinWindow: -1, ExtendToDuration: extend})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExtendToDurationRunsTheDuration is issue 39's GB/T mode 0 case
// (GB-7.4.2-T10-mode0: the next job when the previous completes, until the
// duration has passed). LoadGen generates 2 × min_duration at the expected
// latency (loadgen-reference §5): 41 queries for 2 s at 100 ms, which a SUT
// answering in 1 ms issues in 41 ms and then runs out, INVALID. With
// Options.ExtendToDuration the pass goes on generating, the same sample_rng
// stream continued, until min_duration has passed; the log keeps LoadGen's
// generated_query_count and the first 41 queries are LoadGen's.
func TestExtendToDurationRunsTheDuration(t *testing.T) {
	for _, sc := range []Scenario{SingleStream, MultiStream} {
		t.Run(sc.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := DefaultSettings()
				s.Scenario = sc
				s.Mode = PerformanceOnly
				s.MinDurationMs = 2000
				s.MinQueryCount = 1
				s.SingleStreamExpectedLatencyNs = uint64(100 * time.Millisecond)
				s.MultiStreamExpectedLatencyNs = uint64(100 * time.Millisecond)
				plain, extended := runExtend(t, s, false), runExtend(t, s, true)
				if plain.Summary.MinDurationMet || plain.RecordCount() != 41*int(plain.Effective.SamplesPerQuery) {
					t.Fatalf("without the option: %d samples, min duration met %v; want LoadGen's 41 queries, run out",
						plain.RecordCount(), plain.Summary.MinDurationMet)
				}
				sum := extended.Summary
				if !sum.MinDurationMet || !sum.Valid {
					t.Fatalf("extended: min duration met %v, valid %v (%v); want a VALID run of 2 s", sum.MinDurationMet, sum.Valid, sum.AimeterReasons)
				}
				queries := extended.RecordCount() / int(extended.Effective.SamplesPerQuery)
				if queries < 1900 || queries > 2100 {
					t.Errorf("extended: %d queries in 2 s of 1 ms each; want about 2000", queries)
				}
				for _, ev := range extended.Events {
					if ev.Error {
						t.Errorf("extended: error event %s: %v", ev.Key, ev.Value)
					}
					if ev.Key == "generated_query_count" && ev.Value.(uint64) != 41 {
						t.Errorf("extended: generated_query_count %v, want LoadGen's 41", ev.Value)
					}
				}
				// The same queries as far as LoadGen's go, and contiguous
				// sequence ids within the pass's range after them.
				a, b := records(plain), records(extended)
				idx := func(rs []Record) []uint64 {
					var out []uint64
					for _, r := range rs {
						out = append(out, r.SampleIndex)
					}
					return out
				}
				if n := len(a); !slices.Equal(idx(a), idx(b)[:n]) {
					t.Errorf("the first %d samples differ from LoadGen's", n)
				}
				info := extended.Passes[len(extended.Passes)-1]
				spq := uint64(extended.Effective.SamplesPerQuery)
				if got := info.EndSeq - info.FirstSeq; got < uint64(len(b)) || got > uint64(len(b))+spq<<lazyChunkShift {
					t.Errorf("pass sequence range %d–%d: want the %d samples issued, up to a chunk more", info.FirstSeq, info.EndSeq, len(b))
				}
				for i, r := range b {
					if r.SeqID != info.FirstSeq+uint64(i) || r.SeqID >= info.EndSeq {
						t.Fatalf("record %d has sequence id %d; pass %d–%d", i, r.SeqID, info.FirstSeq, info.EndSeq)
					}
				}
			})
		})
	}
}

// TestExtendToDurationLeavesLoadGenRunsAlone: the option changes nothing
// of a pass that ends naturally within LoadGen's count, nor of a Server
// or Offline pass (the same records, the same log).
func TestExtendToDurationLeavesLoadGenRunsAlone(t *testing.T) {
	for _, sc := range []Scenario{SingleStream, Server, Offline} {
		synctest.Test(t, func(t *testing.T) {
			s := DefaultSettings()
			s.Scenario = sc
			s.Mode = PerformanceOnly
			s.MinDurationMs = 500
			s.MinQueryCount = 10
			s.SingleStreamExpectedLatencyNs = uint64(time.Millisecond) // 1001 queries, 500 issued
			s.ServerTargetQPS = 100
			s.OfflineExpectedQPS = 100
			a, b := runExtend(t, s, false), runExtend(t, s, true)
			if !slices.Equal(records(a), records(b)) {
				t.Errorf("%v: the records differ with ExtendToDuration", sc)
			}
			if !slices.EqualFunc(a.Events, b.Events, func(x, y Event) bool {
				return x.Key == y.Key && (x.Key == "power_begin" || x.Key == "power_end" || reflect.DeepEqual(x.Value, y.Value))
			}) {
				t.Errorf("%v: the events differ with ExtendToDuration", sc)
			}
			if a.Passes[0].EndSeq != b.Passes[0].EndSeq {
				t.Errorf("%v: end_seq %d, extended %d", sc, a.Passes[0].EndSeq, b.Passes[0].EndSeq)
			}
		})
	}
}
