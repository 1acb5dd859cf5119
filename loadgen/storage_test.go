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

func TestSizeColumnKeepsEveryCount(t *testing.T) {
	c := sizeColumn{column: newColumn[uint32](3*pageLen, nil)}
	cases := []struct {
		i   int
		v   int64
		why string
	}{
		{0, 0, "zero: an element never set reads the same"},
		{1, 512, "a request's size: 4 bytes"},
		{pageLen + 7, sizeBig - 1, "the largest count stored in the page"},
		{pageLen + 8, sizeBig, "the marker itself: kept aside"},
		{2*pageLen + 1, 5 << 30, "a 5 GiB response: kept aside"},
		{2*pageLen + 2, -3, "a negative count from a faulty SUT: kept as it is"},
	}
	for _, c2 := range cases {
		if c2.v != 0 {
			c.put(c2.i, c2.v)
		}
	}
	for _, c2 := range cases {
		if got := c.value(c.page(c2.i>>pageShift), c2.i); got != c2.v {
			t.Errorf("%s: element %d reads %d, want %d", c2.why, c2.i, got, c2.v)
		}
	}
	if got := c.value(nil, 5); got != 0 {
		t.Errorf("a missing page reads %d, want 0", got)
	}
}

// TestOnDemandDirectoryFollowsTheIssued: a fixed-concurrency pass is
// generated for requests as short as a microsecond, 2 × min_duration of
// them (7.7 billion queries for a minute at a concurrency of 64). Its
// chunk directory must cost next to nothing until chunks are made: a flat
// one was 8 bytes for every 1024 of those queries, 60 MB a minute of
// min_duration, more than the requests a network run issued in it.
func TestOnDemandDirectoryFollowsTheIssued(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = SingleStream
	s.Mode = PerformanceOnly
	s.Concurrency = 64
	s.MinDurationMs = 60_000
	eff, err := NewEffective(s, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	set := generateLoadableSets(&eff, false, 1024)[0]
	var g *generatedQueries
	bytes := allocated(func() { g = generateQueries(&eff, false, set, 0) })
	if g.chunkShift != lazyChunkShift || g.queries < 1<<32 {
		t.Fatalf("%d queries, chunk shift %d: want billions generated on demand", g.queries, g.chunkShift)
	}
	const most = 1 << 20
	if bytes > most {
		t.Errorf("generating a pass of %d queries on demand allocated %d bytes before any chunk, want at most %d", g.queries, bytes, most)
	}
	g.generate(5000) // the first chunks: the directory's first page, then theirs
	for q := range 5001 {
		if s := g.query(q); len(s) != 1 || s[0].ID != ResponseID(q)+1 {
			t.Fatalf("query %d: samples %v", q, s)
		}
	}
}
