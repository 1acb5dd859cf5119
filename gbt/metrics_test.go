package gbt

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
)

// TestStatPercentileRule pins the index rule trunc(N×p) of the ascending
// order (LoadGen's, stats.Percentile), no interpolation.
func TestStatPercentileRule(t *testing.T) {
	seq := func(n int) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(n-i) * 1e6 // n … 1 ms, reversed
		}
		return v
	}
	rows := []struct {
		why  string
		in   []int64
		want Stat
	}{
		{"empty: all zero", nil, Stat{}},
		{"one value", []int64{7e6}, Stat{N: 1, Min: 7, Mean: 7, P50: 7, P90: 7, P99: 7, Max: 7}},
		{"1..10 ms: indices 5, 9, 9", seq(10), Stat{N: 10, Min: 1, Mean: 5.5, P50: 6, P90: 10, P99: 10, Max: 10}},
		{"1..100 ms: indices 50, 90, 99", seq(100), Stat{N: 100, Min: 1, Mean: 50.5, P50: 51, P90: 91, P99: 100, Max: 100}},
		{"1..1000 ms: indices 500, 900, 990", seq(1000), Stat{N: 1000, Min: 1, Mean: 500.5, P50: 501, P90: 901, P99: 991, Max: 1000}},
		{"negatives count as absolute values (GB-7.6.2-T16-note)", []int64{-3e6, 1e6, -2e6},
			Stat{N: 3, Min: 1, Mean: 2, P50: 2, P90: 3, P99: 3, Max: 3}},
		{"sub-ms values keep their ns", []int64{1, 2, 1500000},
			Stat{N: 3, Min: 1e-6, Mean: 1500003.0 / 3 / 1e6, P50: 2e-6, P90: 1.5, P99: 1.5, Max: 1.5}},
	}
	for _, row := range rows {
		if got := StatOf(row.in); !statEq(got, row.want) {
			t.Errorf("%s: StatOf = %+v, want %+v", row.why, got, row.want)
		}
	}
}

// TestStatMeanExact: the mean of values whose int64 sum overflows is still
// exact (128-bit sum).
func TestStatMeanExact(t *testing.T) {
	v := []int64{math.MaxInt64, math.MaxInt64, math.MaxInt64 - 2}
	got := StatOf(v).Mean
	want := (float64(math.MaxInt64) - 2.0/3) / 1e6
	if !near(got, want) {
		t.Errorf("mean = %v, want %v", got, want)
	}
	if s := StatOf([]int64{math.MinInt64}); s.Max != float64(math.MaxInt64)/1e6 {
		t.Errorf("|MinInt64| should saturate at MaxInt64, got %v", s.Max)
	}
}

// TestSortNonNegative compares the radix sort with slices.Sort.
func TestSortNonNegative(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := []struct {
		name string
		gen  func() int64
	}{
		{"ms-scale durations", func() int64 { return rng.Int64N(int64(10 * time.Second)) }},
		{"full non-negative int64 range", func() int64 { return rng.Int64() }},
		{"both signs, full range", func() int64 { return int64(rng.Uint64()) }},
		{"few distinct values", func() int64 { return rng.Int64N(3) * 1e9 }},
		{"all equal", func() int64 { return 42 }},
		{"high bits only", func() int64 { return rng.Int64N(8) << 60 }},
	}
	for _, g := range gens {
		for _, n := range []int{0, 1, 5, radixMin - 1, radixMin, 3*radixMin + 7, 100000} {
			v := make([]int64, n)
			for i := range v {
				v[i] = g.gen()
			}
			want := slices.Clone(v)
			slices.Sort(want)
			sortNonNegative(v, nil)
			if !slices.Equal(v, want) {
				t.Fatalf("%s, n = %d: radix sort differs from slices.Sort", g.name, n)
			}
		}
	}
}

// TestSortPairs compares the pair sort with a stable sort by key, for keys of
// either sign and for the small-slice fallback.
func TestSortPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, radixMin - 1, radixMin, 50000} {
		for _, span := range []int64{3, 1 << 40, math.MaxInt64} {
			keys, vals := make([]int64, n), make([]int64, n)
			for i := range keys {
				keys[i] = rng.Int64N(span) - span/2
				vals[i] = int64(i)
			}
			type kv struct{ k, v int64 }
			want := make([]kv, n)
			for i := range want {
				want[i] = kv{keys[i], vals[i]}
			}
			slices.SortStableFunc(want, func(a, b kv) int { return cmpInt64(a.k, b.k) })
			sortPairs(keys, vals, nil, nil)
			for i := range want {
				if keys[i] != want[i].k || vals[i] != want[i].v {
					t.Fatalf("n = %d, span %d: element %d = (%d, %d), want %+v", n, span, i, keys[i], vals[i], want[i])
				}
			}
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lossRun: timeout 1 s; deadlines 0.5+1 = 1.5 s and 1.2+1 = 2.2 s.
func lossRun() []loadgen.Record {
	r := func(q uint64, issued, done float64, st loadgen.Status) loadgen.Record {
		c := loadgen.NoTime
		if done >= 0 {
			c = ms(done * 1000)
		}
		return loadgen.Record{QueryID: q, IssuedNs: ms(issued * 1000), ScheduledNs: ms(issued * 1000),
			FirstTokenNs: loadgen.NoTime, CompletedNs: c, Status: st}
	}
	return []loadgen.Record{
		r(0, 0, 0.1, loadgen.StatusOK),
		r(0, 0.5, -1, loadgen.StatusLost),
		r(1, 1.2, -1, loadgen.StatusLost),
		r(2, 2.0, 2.1, loadgen.StatusOK),
	}
}

func TestLossRate(t *testing.T) {
	lost, total, rate := LossRate(lossRun())
	if lost != 2 || total != 4 || rate != 0.5 {
		t.Errorf("LossRate = %d/%d = %v, want 2/4 = 0.5 (GB-7.7.1-c-2, IN-79)", lost, total, rate)
	}
	if l, n, r := LossRate(nil); l != 0 || n != 0 || r != 0 {
		t.Errorf("LossRate(nil) = %d, %d, %v", l, n, r)
	}
	// Jobs (queries): q0 has one lost sample of two, q1 is lost, q2 is ok.
	lost, total, rate = JobLossRate(lossRun())
	if lost != 2 || total != 3 || !near(rate, 2.0/3) {
		t.Errorf("JobLossRate = %d/%d = %v, want 2/3 (IN-79 per job)", lost, total, rate)
	}
}

func TestLossPerSecond(t *testing.T) {
	rows := []struct {
		why     string
		timeout time.Duration
		want    []int
	}{
		{"deadlines 1.5 s and 2.2 s fall in seconds 1 and 2 (IN-63)", time.Second, []int{0, 1, 1}},
		{"no timeout: both counted at the run's end, 2.1 s (IN-51)", 0, []int{0, 0, 2}},
		{"timeout 3 s: deadlines 3.5 s and 4.2 s extend the run", 3 * time.Second, []int{0, 0, 0, 1, 1}},
	}
	for _, row := range rows {
		if got := LossPerSecond(lossRun(), row.timeout); !slices.Equal(got, row.want) {
			t.Errorf("%s: LossPerSecond = %v, want %v", row.why, got, row.want)
		}
	}
	if LossPerSecond(nil, time.Second) != nil {
		t.Error("LossPerSecond(nil) should be nil")
	}
}

func TestLossVerdict(t *testing.T) {
	rows := []struct {
		why             string
		rate, threshold float64
		valid, err      bool
	}{
		{"equal to the threshold passes: only exceeding invalidates (IN-79)", 0.01, 0.01, true, false},
		{"above the threshold: invalid", 0.0101, 0.01, false, false},
		{"no loss allowed, none lost", 0, 0, true, false},
		{"no loss allowed, one lost", 1e-7, 0, false, false},
		{"negative threshold: the tester must set a real one", 0, -1, false, true},
		{"NaN threshold (unset)", 0, math.NaN(), false, true},
		{"threshold given in percent by mistake", 0, 5, false, true},
		{"rate outside [0, 1]", 1.5, 0.01, false, true},
		{"NaN rate", math.NaN(), 0.01, false, true},
	}
	for _, row := range rows {
		v, err := LossVerdict(row.rate, row.threshold)
		if (err != nil) != row.err || (err == nil && v.Valid != row.valid) {
			t.Errorf("%s: LossVerdict(%v, %v) = %+v, %v; want valid %v, error %v", row.why, row.rate, row.threshold, v, err, row.valid, row.err)
		}
		if err == nil && !v.Valid && !strings.Contains(v.Reason, "GB-7.7.1-c-2") {
			t.Errorf("%s: reason %q should cite GB-7.7.1-c-2", row.why, v.Reason)
		}
	}
}
