package loadgen

import (
	"context"
	"testing"
)

// TestScheduleDigestOnDemand: the digest of a closed-loop pass, generated
// again a chunk at a time, is the digest of the same pass generated whole,
// and differs from another pass's.
func TestScheduleDigestOnDemand(t *testing.T) {
	for _, sc := range []Scenario{SingleStream, MultiStream} {
		s := DefaultSettings()
		s.Scenario, s.MinDurationMs, s.MinQueryCount = sc, 50, 3000 // several chunks of 1024 queries
		s.SingleStreamExpectedLatencyNs, s.MultiStreamExpectedLatencyNs = 10_000, 100_000
		e, err := NewEffective(s, 256, 64)
		if err != nil {
			t.Fatal(err)
		}
		set := generateLoadableSets(&e, false, 256)[0]
		lazy, _ := generate(context.Background(), &e, false, set, 0, nil, nil, true)
		whole, _ := generate(context.Background(), &e, false, set, 0, nil, nil, false)
		if lazy.chunkShift != lazyChunkShift || lazy.chunks.len() < 3 {
			t.Fatalf("%v: the pass is not generated on demand in several chunks (%d)", sc, lazy.chunks.len())
		}
		a, err := scheduleDigest(context.Background(), &e, false, set, 0, nil, nil, lazy, PassPerformance)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := scheduleDigest(context.Background(), &e, false, set, 0, nil, nil, whole, PassPerformance)
		if a != b {
			t.Fatalf("%v: on demand %s, whole %s", sc, a, b)
		}
		if lazy.made != 0 {
			t.Fatalf("%v: the digest generated %d chunks of the pass itself, want none (a copy)", sc, lazy.made)
		}
		shifted, _ := generate(context.Background(), &e, false, set, 1, nil, nil, false)
		c, _ := scheduleDigest(context.Background(), &e, false, set, 1, nil, nil, shifted, PassPerformance)
		d, _ := scheduleDigest(context.Background(), &e, false, set, 0, nil, nil, whole, PassAccuracy)
		if c == a || d == a {
			t.Fatalf("%v: other ids or another pass kind give the same digest", sc)
		}
	}
}
