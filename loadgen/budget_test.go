package loadgen

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// nilDataSUT completes every sample inside IssueQuery without response
// data, so that the SUT itself allocates nothing per sample.
var nilDataSUT = funcSUT{issue: func(r *Responder, samples []QuerySample) {
	for _, s := range samples {
		r.Complete(s.ID, nil, 0)
	}
}}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestEstimateMatchesAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of MB")
	}
	tests := []struct {
		name   string
		reason string
		edit   func(*Settings)
		total  uint64
	}{
		{"SingleStream", "per query: one sample, its records and the query columns", func(s *Settings) {
			s.Scenario = SingleStream
			s.MinQueryCount = 200_000
			s.SingleStreamExpectedLatencyNs = 1_000_000_000
		}, 1024},
		{"MultiStream", "per query: samples_per_query samples", func(s *Settings) {
			s.Scenario = MultiStream
			s.MinQueryCount = 20_000
			s.MultiStreamSamplesPerQuery = 8
			s.MultiStreamExpectedLatencyNs = 1_000_000_000
		}, 1024},
		{"Offline", "one query of many samples", func(s *Settings) {
			s.Scenario = Offline
			s.MinQueryCount = 300_000
			s.OfflineExpectedQPS = 1
		}, 1024},
		{"Server", "the schedule column as well", func(s *Settings) {
			s.Scenario = Server
			s.MinQueryCount = 100_000
			s.ServerTargetQPS = 1e8
		}, 1024},
		{"large QSL", "the loadable sets and index lists dominate", func(s *Settings) {
			s.Scenario = Offline
			s.MinQueryCount = 1000
			s.OfflineExpectedQPS = 1
		}, 2_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			s.MinDurationMs = 0
			s.Mode = PerformanceOnly
			tt.edit(&s)
			qsl := &testQSL{total: tt.total, perf: tt.total}
			eff, err := NewEffective(s, qsl.total, qsl.perf)
			if err != nil {
				t.Fatal(err)
			}
			est := eff.EstimateMemory(qsl.total, 0)
			measured := allocated(func() {
				if _, err := Run(context.Background(), nilDataSUT, qsl, s, &Options{SpinWindow: -1}); err != nil {
					t.Fatal(err)
				}
			})
			ratio := est.Bytes / float64(measured)
			t.Logf("%s (%s): estimate %.0f bytes, measured %d, ratio %.2f", tt.name, tt.reason, est.Bytes, measured, ratio)
			if ratio < 0.5 || ratio > 2 {
				t.Errorf("estimate %.0f bytes is not within 2× of the %d bytes allocated (%s)", est.Bytes, measured, tt.reason)
			}
		})
	}
}

func TestBudgetRefusesBeforeGenerating(t *testing.T) {
	const limit = 1 << 30
	tests := []struct {
		name    string
		reason  string
		edit    func(*Settings)
		total   uint64
		opts    Options
		setting string // must appear in the error
	}{
		{"min_query_count", "1e9 queries of 32+ bytes each", func(s *Settings) { s.MinQueryCount = 1_000_000_000 }, 1024, Options{}, "min_query_count ≤ "},
		{"qsl size", "the loadable sets of 1e9 samples", func(s *Settings) {}, 1_000_000_000, Options{}, "QSL or sample count ≤ "},
		{"MultiStream samples_per_query", "1e5 samples in each of the queries", func(s *Settings) {
			s.Scenario = MultiStream
			s.MultiStreamSamplesPerQuery = 100_000
			s.MinQueryCount = 1000
			s.MinDurationMs = 0
		}, 1024, Options{}, "samples_per_query ≤ "},
		{"SingleStream page directories", "a 1 ns expected latency over 2×1000 s: 2·10¹² queries on demand, 47 GB of page directories alone", func(s *Settings) {
			s.Scenario = SingleStream
			s.SingleStreamExpectedLatencyNs = 1
			s.MinDurationMs = 1_000_000
		}, 1024, Options{}, "min_duration ≤ "},
		{"Server target_qps", "1e12 queries a second", func(s *Settings) {
			s.Scenario = Server
			s.ServerTargetQPS = 1e12
			s.MinDurationMs = 1000
		}, 1024, Options{}, "target_qps ≤ "},
		{"arrivals", "one query per arrival", func(s *Settings) { s.Scenario = Server }, 1024,
			Options{Arrivals: make([]int64, 100_000), MaxMemory: 1 << 20}, "at most "},
		{"Offline", "one huge query", func(s *Settings) {
			s.Scenario = Offline
			s.OfflineExpectedQPS = 1e6
			s.MinDurationMs = 600_000
		}, 1024, Options{}, "samples per query fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Mode = PerformanceOnly
			tt.edit(&s)
			opts := tt.opts
			if opts.MaxMemory == 0 {
				opts.MaxMemory = limit
			}
			qsl := &testQSL{total: tt.total, perf: tt.total}
			var err error
			start := time.Now()
			bytes := allocated(func() {
				_, err = Run(context.Background(), nilDataSUT, qsl, s, &opts)
			})
			var be *BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("%s: Run returned %v, want a *BudgetError", tt.reason, err)
			}
			if !strings.Contains(be.Error(), tt.setting) {
				t.Errorf("%s: error %q does not name %q", tt.reason, be.Error(), tt.setting)
			}
			if bytes > 16<<20 {
				t.Errorf("%s: refusing allocated %d bytes", tt.reason, bytes)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("%s: refusing took %v", tt.reason, d)
			}
			if len(qsl.loaded) != 0 {
				t.Errorf("%s: samples were loaded before refusing", tt.reason)
			}
			t.Log(be)
		})
	}
}

func TestBudgetErrorFitIsAccepted(t *testing.T) {
	s := DefaultSettings()
	s.Mode = PerformanceOnly
	s.Scenario = Server
	s.MinQueryCount = 1_000_000_000
	const limit = 1 << 30
	eff, err := NewEffective(s, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	be, ok := checkBudget(&eff, 1024, &Options{MaxMemory: limit}).(*BudgetError)
	if !ok {
		t.Fatal("min_query_count = 1e9 was not refused")
	}
	_, after, _ := strings.Cut(be.Fits, "≤ ")
	n, err := strconv.ParseUint(strings.Fields(after)[0], 10, 64)
	if err != nil {
		t.Fatalf("parsing the advice %q: %v", be.Fits, err)
	}
	for _, tc := range []struct {
		count  uint64
		fits   bool
		reason string
	}{
		{n, true, "the advised count fits"},
		{n + n/100, false, "1 % more does not: the advice is the nearest"},
	} {
		s.MinQueryCount = tc.count
		eff, _ := NewEffective(s, 1024, 1024)
		if err := checkBudget(&eff, 1024, &Options{MaxMemory: limit}); (err == nil) != tc.fits {
			t.Errorf("%s: min_query_count = %d: %v", tc.reason, tc.count, err)
		}
	}
}

func TestMaxMemoryZeroValue(t *testing.T) {
	for _, tc := range []struct {
		max    int64
		want   uint64
		reason string
	}{
		{0, DefaultMaxMemory, "the zero value is the default budget"},
		{-1, 0, "negative means no limit"},
		{12345, 12345, "a positive value is bytes"},
	} {
		o := Options{MaxMemory: tc.max}
		if got := o.maxMemory(); got != tc.want {
			t.Errorf("%s: MaxMemory %d gives %d, want %d", tc.reason, tc.max, got, tc.want)
		}
	}
	if math.IsInf(float64(DefaultMaxMemory), 0) {
		t.Fatal("unreachable")
	}
}

func TestUnusedEqualIssueListIsNotBuilt(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = SingleStream
	s.Mode = PerformanceOnly
	s.MinDurationMs = 0
	s.MinQueryCount = 1 << 20
	eff, err := NewEffective(s, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	set := generateLoadableSets(&eff, false, 1024)[0]
	bytes := allocated(func() { generateQueries(&eff, false, set, 0) })
	samples := uint64(16 << 20) // 2^20 QuerySamples of 16 bytes
	if bytes > samples+samples/4 {
		t.Errorf("generating 2^20 queries allocated %d bytes; the samples need %d: an index list that only equal-issue mode reads was built", bytes, samples)
	}
}

func TestFindPeakStopsAtTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sut := &queueSUT{service: time.Millisecond, queue: make(chan work, 1<<20)}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go sut.serve(ctx)
		s := DefaultSettings()
		s.Scenario = Server
		s.Mode = FindPeakPerformance
		s.ServerTargetQPS = 300
		s.ServerTargetLatencyNs = 20_000_000
		s.MinDurationMs = 1000
		s.ServerFindPeakQPSDecimalsOfPrecision = 0
		// 300 and 600 qps fit in 100 kB (about 60 bytes per query, two
		// passes); the probe at 1200 qps does not and must not run.
		res, err := Run(ctx, sut, &testQSL{total: 16, perf: 16}, s, &Options{SpinWindow: -1, MaxMemory: 100_000})
		var be *BudgetError
		if !errors.As(err, &be) {
			t.Fatalf("want a *BudgetError from the probe at 1200 qps, got %v", err)
		}
		if res == nil || res.Summary == nil || res.Summary.Effective.TargetQPS != 600 {
			t.Fatalf("want the 600 qps probe reported, got %+v", res)
		}
		if len(res.Passes) != 2 {
			t.Errorf("%d probes ran, want 2 (300 and 600 qps)", len(res.Passes))
		}
	})
}

// TestOnDemandPassStopsAtTheBudget: a closed-loop pass is no longer refused
// for the queries it generates (a 100 ns expected latency over 2 × 20 s
// generates 4·10⁸), since it allocates only what it issues; a SUT fast
// enough to issue beyond the budget is stopped at it, with the reason, and
// the run keeps what it measured.
func TestOnDemandPassStopsAtTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Mode = PerformanceOnly
		s.Scenario = SingleStream
		s.SingleStreamExpectedLatencyNs = 100
		s.MinDurationMs = 20_000
		const limit = 32 << 20
		eff, err := NewEffective(s, 1024, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkBudget(&eff, 1024, &Options{MaxMemory: limit}); err != nil {
			t.Fatalf("refused before the run: %v", err)
		}
		// The clock stands still in the bubble while the SUT answers at
		// once: only the budget can end this pass.
		res, err := Run(context.Background(), nilDataSUT, &testQSL{total: 1024, perf: 1024}, s, &Options{MaxMemory: limit, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		pi := res.Passes[len(res.Passes)-1]
		if !strings.Contains(pi.StopReason, "memory budget reached") {
			t.Fatalf("stop reason %q, want the memory budget", pi.StopReason)
		}
		n := res.RecordCount()
		if perQuery := 4 + 8 + 4 + 20 + 16; n == 0 || n*perQuery > limit {
			t.Errorf("%d samples issued: want some, and their records within the %d-byte budget", n, limit)
		}
		if res.ErrorCount() == 0 {
			t.Error("a pass stopped by the budget must log the error that makes it INVALID")
		}
	})
}
