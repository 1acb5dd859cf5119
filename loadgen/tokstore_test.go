package loadgen

import (
	"math"
	"slices"
	"testing"
)

func TestTokenStoreRoundTrips(t *testing.T) {
	// Each row: token times as a SUT reports them (non-decreasing, not
	// before issued), with why the encoding must hold them exactly.
	big := make([]int64, 20_000) // more than a block: a block of its own
	for k := range big {
		big[k] = int64(k) * 7
	}
	cases := []struct {
		name   string
		issued int64
		tt     []int64
	}{
		{"one token at the issue time", 5, []int64{5}},
		{"equal times (zero gaps)", 0, []int64{3, 3, 3}},
		{"gaps of every size", 1, []int64{1, 2, 300, 1 << 20, 1 << 40, math.MaxInt64 / 2}},
		{"a negative issue time", -100, []int64{-50, -1, 0, 10}},
		{"more times than a block holds", 0, big},
	}
	var s tokenStore
	refs := make([]uint64, len(cases))
	for round := range 3 { // later rounds fill blocks past the first
		for k, c := range cases {
			refs[k] = s.put(c.tt, c.issued)
			if refs[k] == 0 {
				t.Fatalf("%s: reference 0 means none", c.name)
			}
		}
		for k, c := range cases {
			if got := s.get(refs[k], c.issued); !slices.Equal(got, c.tt) {
				t.Errorf("round %d, %s: got %v, want %v", round, c.name, got[:min(len(got), 8)], c.tt[:min(len(c.tt), 8)])
			}
		}
	}
	if len(s.blocks) < 2 {
		t.Errorf("%d blocks: the long trace should have taken its own", len(s.blocks))
	}
}
