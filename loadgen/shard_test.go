package loadgen_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// issuedSample is what the schedule fixes of one issued sample.
type issuedSample struct {
	seq, query, index uint64
	scheduled         int64
	status            loadgen.Status
}

// shardCase is one test sharded the same way N = 1…5 times.
type shardCase struct {
	name string
	// why the union must be the single-host run bit for bit.
	why      string
	settings func() loadgen.Settings
	sut      loadgen.SUT
	opts     func() loadgen.Options
	// times says whether scheduled times must match too (for N where
	// timesFor is nil or returns true).
	times    bool
	timesFor func(n int) bool
}

func runIssued(t *testing.T, c shardCase, sh loadgen.Shard) ([]issuedSample, *loadgen.Result) {
	t.Helper()
	var res *loadgen.Result
	synctest.Test(t, func(t *testing.T) {
		o := loadgen.Options{SpinWindow: -1}
		if c.opts != nil {
			o = c.opts()
			o.SpinWindow = -1
		}
		o.Shard = sh
		// The records streamed while the run goes, past other shards'
		// queries, are the Result's.
		var streamed []loadgen.Record
		var first time.Time // the first record streamed, on the fake clock
		o.Records = func(recs []loadgen.Record) {
			if first.IsZero() {
				first = time.Now()
			}
			streamed = append(streamed, recs...)
		}
		o.RecordsInterval = time.Millisecond
		var err error
		res, err = loadgen.Run(context.Background(), c.sut, &loadgentest.QSL{Total: 256, Performance: 64}, c.settings(), &o)
		if err != nil {
			t.Fatalf("shard %v: %v", sh, err)
		}
		// Every record lies within its pass's sequence ids, as a bundle
		// read back checks (SummarizePass).
		for k, p := range res.Passes {
			for r := range res.PassRecords(k) {
				if r.SeqID < p.FirstSeq || r.SeqID >= p.EndSeq {
					t.Fatalf("shard %v: record %d outside its pass's ids [%d, %d)", sh, r.SeqID, p.FirstSeq, p.EndSeq)
				}
			}
		}
		if kept := slices.Collect(res.Records()); !slices.Equal(streamed, kept) {
			t.Fatalf("shard %v: %d records streamed, %d kept: not the same", sh, len(streamed), len(kept))
		}
		// A pass of many intervals streams while it runs, not only at its
		// end: the stream steps over the queries of other shards.
		p := res.Passes[len(res.Passes)-1]
		if end := time.Unix(0, p.StartUnixNs+p.EndNs); p.EndNs > int64(20*time.Millisecond) && !first.Before(end) {
			t.Fatalf("shard %v: the first records were streamed at the end of the pass (%v), not while it ran", sh, time.Duration(p.EndNs))
		}
	})
	var out []issuedSample
	for r := range res.Records() {
		out = append(out, issuedSample{seq: r.SeqID, query: r.QueryID, index: r.SampleIndex, scheduled: r.ScheduledNs, status: r.Status})
	}
	return out, res
}

func shardCases() []shardCase {
	small := loadgentest.SmallSettings
	delay := loadgentest.DelaySUT{Delay: time.Millisecond}
	return []shardCase{
		{
			name: "Server", why: "open loop: every shard issues its queries at their times in the whole schedule",
			settings: func() loadgen.Settings { return small(loadgen.Server, loadgen.PerformanceOnly) },
			sut:      delay, times: true,
		},
		{
			name: "Server, 3 issuing goroutines, coalesced", why: "the shard rule composes with the issuing goroutines' stride and with coalescing, which changes issue times, never scheduled ones",
			settings: func() loadgen.Settings {
				s := small(loadgen.Server, loadgen.PerformanceOnly)
				s.ServerNumIssueQueryThreads, s.ServerCoalesceQueries = 3, true
				return s
			},
			sut: delay, times: true,
		},
		{
			name: "Server with explicit arrivals (GB/T modes 1–3)", why: "an arrival list is a schedule like the Poisson one",
			settings: func() loadgen.Settings { return small(loadgen.Server, loadgen.PerformanceOnly) },
			opts: func() loadgen.Options {
				arr := make([]int64, 97)
				for i := range arr {
					arr[i] = int64(i*i) * 1000
				}
				return loadgen.Options{Arrivals: arr}
			},
			sut: delay, times: true,
		},
		{
			name: "SingleStream to min_query_count", why: "closed loop: min_query_count is split by the shard rule, so the shards together issue exactly the first min_query_count queries; an answer at once keeps the fake clock at 0",
			settings: func() loadgen.Settings {
				s := small(loadgen.SingleStream, loadgen.PerformanceOnly)
				s.MinDurationMs, s.MinQueryCount = 0, 101
				return s
			},
			sut: loadgentest.SyncSUT{}, times: true,
		},
		{
			name: "SingleStream, every generated query", why: "closed loop: no time passes, so the single host and every shard run out of generated queries, having issued them all",
			settings: func() loadgen.Settings { return small(loadgen.SingleStream, loadgen.PerformanceOnly) },
			sut:      loadgentest.SyncSUT{}, times: true,
		},
		{
			name: "fixed concurrency 12", why: "the concurrency is split 12/N (the first 12 mod N shards one more) and min_query_count the same way; with N dividing 12 each shard's slots free at the single host's moments, so even issue times match",
			settings: func() loadgen.Settings {
				s := small(loadgen.SingleStream, loadgen.PerformanceOnly)
				s.MinDurationMs, s.MinQueryCount, s.Concurrency = 0, 120, 12
				return s
			},
			sut: delay, times: true, timesFor: func(n int) bool { return 12%n == 0 },
		},
		{
			name: "GB/T arrival mode 0: a job timeout, extended to the duration", why: "closed loop with the reaper: every shard times out its own jobs only (a job of another shard is never issued here), and a job's fate follows from its sample",
			settings: func() loadgen.Settings {
				s := small(loadgen.SingleStream, loadgen.PerformanceOnly)
				s.MinDurationMs, s.MinQueryCount = 0, 90
				return s
			},
			opts: func() loadgen.Options {
				return loadgen.Options{SampleTimeout: 5 * time.Millisecond, ExtendToDuration: true}
			},
			sut: loadgentest.DelaySUT{DelayOf: func(index uint64, _ int) time.Duration {
				if index%5 == 0 {
					return 20 * time.Millisecond // lost to the timeout
				}
				return time.Millisecond
			}},
		},
		{
			name: "GB/T arrival mode 0: no job is answered", why: "the reaper, not the issuer, times out each shard's last job: it must skip the jobs of other shards, never issued here, or the shard waits for the stall timeout",
			settings: func() loadgen.Settings {
				s := small(loadgen.SingleStream, loadgen.PerformanceOnly)
				s.MinDurationMs, s.MinQueryCount = 0, 60
				return s
			},
			opts: func() loadgen.Options {
				return loadgen.Options{SampleTimeout: 5 * time.Millisecond, ExtendToDuration: true}
			},
			sut: loadgentest.DelaySUT{Delay: time.Hour},
		},
		{
			name: "MultiStream", why: "closed loop of 8-sample queries: whole queries go to shards",
			settings: func() loadgen.Settings {
				s := small(loadgen.MultiStream, loadgen.PerformanceOnly)
				s.MinDurationMs, s.MinQueryCount = 0, 50
				return s
			},
			sut: loadgentest.SyncSUT{}, times: true,
		},
		{
			name: "Offline", why: "one query at 0: contiguous blocks of its samples, with their ids",
			settings: func() loadgen.Settings { return small(loadgen.Offline, loadgen.PerformanceOnly) },
			sut:      delay, times: true,
		},
		{
			name: "Offline submission", why: "an accuracy pass then a performance pass: each is split, and the second's ids follow the whole first",
			settings: func() loadgen.Settings { return small(loadgen.Offline, loadgen.SubmissionRun) },
			sut:      delay, times: true,
		},
		{
			name: "Server accuracy", why: "every sample of the data set once, by query",
			settings: func() loadgen.Settings { return small(loadgen.Server, loadgen.AccuracyOnly) },
			sut:      delay, times: true,
		},
	}
}

// TestShardUnionIsTheSchedule runs each test whole and as N = 1…5 shards:
// the union of what the shards issued (sequence id, query id, sample
// index, scheduled time) is what the single host issued, bit for bit, no
// sample is issued twice, and every shard records the same schedule
// digest.
func TestShardUnionIsTheSchedule(t *testing.T) {
	for _, c := range shardCases() {
		t.Run(c.name, func(t *testing.T) {
			whole, wholeRes := runIssued(t, c, loadgen.Shard{})
			if len(whole) < 50 {
				t.Fatalf("the single-host run issued %d samples: too few to mean anything", len(whole))
			}
			digests := map[string]bool{}
			for n := 1; n <= 5; n++ {
				var union []issuedSample
				for i := range n {
					part, res := runIssued(t, c, loadgen.Shard{Index: i, Count: n})
					if res.Shard == nil || res.Shard.Index != i || res.Shard.Count != n || len(res.Shard.Passes) != len(res.Passes) {
						t.Fatalf("N=%d shard %d: Result.Shard = %+v, want its index, N and one digest per pass", n, i, res.Shard)
					}
					digests[res.Shard.ScheduleSHA256] = true
					for k, p := range res.Passes {
						if p.StopReason != wholeRes.Passes[k].StopReason {
							t.Fatalf("N=%d shard %d pass %d stopped with %q, the single host with %q", n, i, k, p.StopReason, wholeRes.Passes[k].StopReason)
						}
					}
					if n > 1 && len(part) == len(whole) {
						t.Fatalf("N=%d shard %d issued all %d samples", n, i, len(part))
					}
					union = append(union, part...)
				}
				slices.SortFunc(union, func(a, b issuedSample) int { return cmp.Compare(a.seq, b.seq) })
				times := c.times && (c.timesFor == nil || c.timesFor(n))
				if !times {
					for k := range union {
						union[k].scheduled = 0
					}
				}
				want := slices.Clone(whole)
				slices.SortFunc(want, func(a, b issuedSample) int { return cmp.Compare(a.seq, b.seq) })
				if !times {
					for k := range want {
						want[k].scheduled = 0
					}
				}
				if !slices.Equal(union, want) {
					i := 0
					for i < min(len(union), len(want)) && union[i] == want[i] {
						i++
					}
					t.Fatalf("N=%d (%s): the union of the shards (%d samples) differs from the single host's (%d) at %d:\nunion %+v\nwhole %+v",
						n, c.why, len(union), len(want), i, union[i:min(i+3, len(union))], want[i:min(i+3, len(want))])
				}
			}
			if len(digests) != 1 {
				t.Fatalf("the shards recorded %d different schedule digests, want one: %v", len(digests), digests)
			}
		})
	}
}

// TestShardDigestNamesTheSchedule checks that the digest changes with
// what the schedule depends on: a seed, the rate.
func TestShardDigestNamesTheSchedule(t *testing.T) {
	base := shardCases()[0]
	digest := func(edit func(*loadgen.Settings)) string {
		c := base
		c.settings = func() loadgen.Settings {
			s := base.settings()
			edit(&s)
			return s
		}
		_, res := runIssued(t, c, loadgen.Shard{Index: 0, Count: 2})
		return res.Shard.ScheduleSHA256
	}
	same := digest(func(*loadgen.Settings) {})
	for _, row := range []struct {
		why  string
		edit func(*loadgen.Settings)
	}{
		{"another schedule seed", func(s *loadgen.Settings) { s.ScheduleRNGSeed++ }},
		{"another sample seed", func(s *loadgen.Settings) { s.SampleIndexRNGSeed++ }},
		{"another rate", func(s *loadgen.Settings) { s.ServerTargetQPS *= 2 }},
	} {
		if d := digest(row.edit); d == same {
			t.Errorf("%s: same digest %s", row.why, d)
		}
	}
	if d := digest(func(*loadgen.Settings) {}); d != same {
		t.Errorf("the same settings twice: digests %s and %s", same, d)
	}
}

// TestShardRefused checks the shards a test cannot have, each refused
// before anything runs, naming the option.
func TestShardRefused(t *testing.T) {
	for _, row := range []struct {
		why   string
		edit  func(*loadgen.Settings, *loadgen.Options)
		field string
	}{
		{"an index at N", func(_ *loadgen.Settings, o *loadgen.Options) { o.Shard = loadgen.Shard{Index: 3, Count: 3} }, "Options.Shard.Index"},
		{"a negative index", func(_ *loadgen.Settings, o *loadgen.Options) { o.Shard = loadgen.Shard{Index: -1, Count: 3} }, "Options.Shard.Index"},
		{"a negative count", func(_ *loadgen.Settings, o *loadgen.Options) { o.Shard = loadgen.Shard{Count: -2} }, "Options.Shard.Count"},
		{"a find-peak search", func(s *loadgen.Settings, o *loadgen.Options) {
			s.Mode = loadgen.FindPeakPerformance
			o.Shard = loadgen.Shard{Index: 0, Count: 2}
		}, "Options.Shard"},
		{"fewer slots than shards", func(s *loadgen.Settings, o *loadgen.Options) {
			s.Scenario, s.Concurrency = loadgen.SingleStream, 2
			o.Shard = loadgen.Shard{Index: 0, Count: 3}
		}, "Options.Shard"},
		{"a negative start tolerance", func(_ *loadgen.Settings, o *loadgen.Options) { o.StartTolerance = -time.Second }, "Options.StartTolerance"},
	} {
		s := loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)
		var o loadgen.Options
		row.edit(&s, &o)
		res, err := loadgen.Run(context.Background(), loadgentest.SyncSUT{}, &loadgentest.QSL{Total: 64}, s, &o)
		var fe *loadgen.FieldError
		if res != nil || !errors.As(err, &fe) || fe.Field != row.field {
			t.Errorf("%s: Run = %v, %v; want a *FieldError naming %s", row.why, res, err, row.field)
		}
	}
}

// TestStartAtWaits checks the common start on the fake clock: issuing
// starts exactly at StartAt, after the queries were generated and the
// samples loaded, and a cancelled wait ends the run at once.
func TestStartAtWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(90 * time.Second)
		o := &loadgen.Options{SpinWindow: -1, StartAt: at, Shard: loadgen.Shard{Index: 1, Count: 2}}
		res, err := loadgen.Run(context.Background(), loadgentest.DelaySUT{Delay: time.Millisecond}, &loadgentest.QSL{Total: 64},
			loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly), o)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Passes[res.ReportedPass()]
		if got := time.Unix(0, p.StartUnixNs); !got.Equal(at) {
			t.Fatalf("issuing started at %v, want the start %v", got, at)
		}
		if res.Shard == nil || res.Shard.StartLate != 0 {
			t.Fatalf("Result.Shard = %+v, want StartLate 0", res.Shard)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		o := &loadgen.Options{SpinWindow: -1, StartAt: time.Now().Add(time.Hour)}
		start := time.Now()
		res, err := loadgen.Run(ctx, loadgentest.SyncSUT{}, &loadgentest.QSL{Total: 64},
			loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly), o)
		if !errors.Is(err, loadgen.ErrInterrupted) || time.Since(start) != time.Second {
			t.Fatalf("cancelled after 1s of waiting: err %v after %v, want ErrInterrupted after 1s", err, time.Since(start))
		}
		if len(res.Passes) != 0 {
			t.Fatalf("%d passes kept, want none: nothing was issued", len(res.Passes))
		}
	})
}

// slowQSL takes a while to load its samples.
type slowQSL struct {
	loadgentest.QSL
	load time.Duration
}

func (q *slowQSL) LoadSamples(idx []uint64) error {
	time.Sleep(q.load)
	return q.QSL.LoadSamples(idx)
}

// TestStartAtMissed checks that a run ready to issue later than the
// tolerance after StartAt refuses to run, rather than shift its schedule,
// and that one within it runs with its lateness recorded.
func TestStartAtMissed(t *testing.T) {
	for _, row := range []struct {
		why       string
		load      time.Duration
		tolerance time.Duration
		missed    bool
	}{
		{"loading ends 150 ms after the start: beyond the default 100 ms", 10*time.Second + 150*time.Millisecond, 0, true},
		{"loading ends 50 ms after the start: within the default", 10*time.Second + 50*time.Millisecond, 0, false},
		{"a 1 s tolerance takes 150 ms", 10*time.Second + 150*time.Millisecond, time.Second, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			at := time.Now().Add(10 * time.Second)
			o := &loadgen.Options{SpinWindow: -1, StartAt: at, StartTolerance: row.tolerance}
			res, err := loadgen.Run(context.Background(), loadgentest.SyncSUT{}, &slowQSL{QSL: loadgentest.QSL{Total: 64}, load: row.load},
				loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly), o)
			var se *loadgen.StartError
			if row.missed {
				if !errors.As(err, &se) || !errors.Is(err, loadgen.ErrMissedStart) || se.Late != row.load-10*time.Second {
					t.Fatalf("%s: err %v, want a StartError 150ms late", row.why, err)
				}
				if len(res.Passes) != 0 {
					t.Fatalf("%s: %d passes ran, want none", row.why, len(res.Passes))
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", row.why, err)
			}
			if late := res.Shard.StartLate; late != row.load-10*time.Second {
				t.Fatalf("%s: StartLate %v", row.why, late)
			}
		})
	}
}

// TestShardExtendedPass: a closed-loop pass extended past LoadGen's count
// (GB/T mode 0 runs for its duration) issues, on each shard, its own
// queries only (q mod N), and its records lie within the pass's sequence
// ids, which end after the last query the shard issued.
func TestShardExtendedPass(t *testing.T) {
	for i := range 3 {
		synctest.Test(t, func(t *testing.T) {
			s := loadgentest.SmallSettings(loadgen.SingleStream, loadgen.PerformanceOnly)
			// LoadGen generates 64 queries at 10 ms each; the SUT answers
			// in 100 µs, so 20 ms hold about 200.
			s.SingleStreamExpectedLatencyNs, s.MinDurationMs = 10_000_000, 20
			o := &loadgen.Options{SpinWindow: -1, ExtendToDuration: true, Shard: loadgen.Shard{Index: i, Count: 3}}
			res, err := loadgen.Run(context.Background(), loadgentest.DelaySUT{Delay: 100 * time.Microsecond}, &loadgentest.QSL{Total: 64}, s, o)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Passes[0]
			var last uint64
			n := 0
			for r := range res.Records() {
				if r.QueryID%3 != uint64(i) || r.SeqID < p.FirstSeq || r.SeqID >= p.EndSeq {
					t.Fatalf("shard %d: record (query %d, seq %d) not its own or outside [%d, %d)", i, r.QueryID, r.SeqID, p.FirstSeq, p.EndSeq)
				}
				last, n = r.SeqID, n+1
			}
			if n <= 64/3+1 || last+1 != p.EndSeq {
				t.Fatalf("shard %d: %d records, the last %d; pass ids end at %d: want more than LoadGen's count, ending with the last", i, n, last, p.EndSeq)
			}
		})
	}
}
