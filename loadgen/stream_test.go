package loadgen

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sinkOf collects what Options.Records sends, with the time of each call.
type sinkOf struct {
	recs  []Record
	times []time.Time
	sizes []int
}

func (s *sinkOf) opts(every time.Duration) *Options {
	return &Options{SpinWindow: -1, RecordsInterval: every, Records: func(recs []Record) {
		s.recs = append(s.recs, recs...)
		s.times = append(s.times, time.Now())
		s.sizes = append(s.sizes, len(recs))
	}}
}

// columnOpts is opts with Options.RecordColumns instead of Records: each
// call's records are taken back from the columns.
func (s *sinkOf) columnOpts(every time.Duration) *Options {
	return &Options{SpinWindow: -1, RecordsInterval: every, RecordColumns: func(c *RecordColumns) {
		for i := range c.Len() {
			s.recs = append(s.recs, c.Record(i))
		}
		s.times = append(s.times, time.Now())
		s.sizes = append(s.sizes, c.Len())
	}}
}

// columnsOnly is rec without the fields RecordColumns leaves out.
func columnsOnly(rec Record) Record {
	rec.RequestBytes, rec.ResponseBytes, rec.Node, rec.Error = 0, 0, 0, 0
	return rec
}

func TestRecordsStreamIsResultRecords(t *testing.T) {
	// Whatever the scenario and however samples end, the records sent
	// while the run goes are Result.Records, in order, once each.
	hostile := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		// Completions from many goroutines, out of order, with every
		// optional column, some failed, some never answered (lost at the
		// end of the pass).
		var wg sync.WaitGroup
		for _, s := range samples {
			if s.Index%7 == 3 {
				continue
			}
			wg.Go(func() {
				resp := Response{ID: s.ID, Tokens: int64(s.Index), RequestBytes: 10, ResponseBytes: int64(s.Index), Node: uint32(s.Index%3 + 1)}
				if s.Index%5 == 1 {
					resp.Err = errors.New("boom")
				}
				r.Respond(resp)
			})
		}
		wg.Wait()
	}}
	cases := []struct {
		name     string
		why      string
		settings func() Settings
		sut      SUT
		timeout  time.Duration
		statuses []Status // that the records must hold
	}{
		{"offline", "one query of every sample, completed in order", func() Settings {
			s := DefaultSettings()
			s.Scenario, s.MinDurationMs, s.MinQueryCount = Offline, 0, 20000
			return s
		}, syncSUT, 0, []Status{StatusOK}},
		{"offline hostile", "out-of-order completions, failures, optional columns and lost samples", func() Settings {
			s := DefaultSettings()
			s.Scenario, s.MinDurationMs, s.MinQueryCount = Offline, 0, 5000
			return s
		}, hostile, 0, []Status{StatusOK, StatusError, StatusLost}},
		{"server", "queries on a schedule, completed after a delay", func() Settings {
			s := DefaultSettings()
			s.Scenario, s.ServerTargetQPS, s.ServerTargetLatencyNs, s.MinDurationMs, s.MinQueryCount = Server, 2000, 10_000_000, 1000, 100
			return s
		}, delaySUT(3 * time.Millisecond), 0, []Status{StatusOK}},
		{"singlestream", "a closed loop generated on demand", func() Settings {
			s := DefaultSettings()
			s.MinDurationMs, s.SingleStreamExpectedLatencyNs = 500, 1_000_000
			return s
		}, delaySUT(time.Millisecond), 0, []Status{StatusOK}},
		{"multistream", "queries of 8 samples", func() Settings {
			s := DefaultSettings()
			s.Scenario, s.MinDurationMs, s.MinQueryCount = MultiStream, 300, 50
			return s
		}, delaySUT(2 * time.Millisecond), 0, []Status{StatusOK}},
		{"submission", "an accuracy pass, then a performance pass", func() Settings {
			s := DefaultSettings()
			s.Mode, s.MinDurationMs, s.SingleStreamExpectedLatencyNs = SubmissionRun, 200, 1_000_000
			return s
		}, delaySUT(time.Millisecond), 0, []Status{StatusOK}},
		{"server with a sample timeout", "samples lost while the pass runs", func() Settings {
			s := DefaultSettings()
			s.Scenario, s.ServerTargetQPS, s.ServerTargetLatencyNs, s.MinDurationMs, s.MinQueryCount = Server, 500, 10_000_000, 500, 100
			return s
		}, funcSUT{issue: func(r *Responder, samples []QuerySample) {
			for _, s := range samples {
				d := time.Millisecond
				if s.Index%4 == 0 {
					d = 50 * time.Millisecond // past the timeout below
				}
				time.AfterFunc(d, func() { r.Complete(s.ID, nil, 0) })
			}
		}}, 20 * time.Millisecond, []Status{StatusOK, StatusLost}},
	}
	for _, c := range cases {
		for _, byColumn := range []bool{false, true} {
			name := c.name
			if byColumn {
				// Options.RecordColumns: the same records, without the
				// fields only some SUTs fill.
				name += " by column"
			}
			t.Run(name, func(t *testing.T) { checkRecordsStream(t, c.sut, c.settings(), c.timeout, byColumn, c.why, c.statuses) })
		}
	}
}

// checkRecordsStream runs one case of TestRecordsStreamIsResultRecords.
func checkRecordsStream(t *testing.T, sut SUT, settings Settings, timeout time.Duration, byColumn bool, why string, statuses []Status) {
	synctest.Test(t, func(t *testing.T) {
		sink := &sinkOf{}
		opts := sink.opts(5 * time.Millisecond)
		if byColumn {
			opts = sink.columnOpts(5 * time.Millisecond)
		}
		opts.SampleTimeout = timeout
		res, err := Run(context.Background(), sut, &testQSL{total: 64, perf: 64}, settings, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Collect(res.Records())
		if len(want) == 0 {
			t.Fatal("no records")
		}
		if byColumn {
			for i := range want {
				want[i] = columnsOnly(want[i])
			}
		}
		if !slices.Equal(sink.recs, want) {
			t.Fatalf("%s: %d records sent, Result.Records has %d (first difference at %d)", why, len(sink.recs), len(want), firstDiff(sink.recs, want))
		}
		for _, st := range statuses {
			if !slices.ContainsFunc(want, func(r Record) bool { return r.Status == st }) {
				t.Errorf("%s: no record with status %v", why, st)
			}
		}
		for _, n := range sink.sizes {
			if n == 0 || n > recordsBatch {
				t.Fatalf("a call of %d records", n)
			}
		}
	})
}

func firstDiff(a, b []Record) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestRecordsStreamDuringTheRun(t *testing.T) {
	// A 2 s Server run: records arrive while it goes, not at its end.
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario, s.ServerTargetQPS, s.ServerTargetLatencyNs, s.MinDurationMs, s.MinQueryCount = Server, 1000, 10_000_000, 2000, 100
		sink := &sinkOf{}
		start := time.Now()
		res, err := Run(context.Background(), delaySUT(time.Millisecond), &testQSL{total: 64, perf: 64}, s, sink.opts(0))
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		if len(sink.times) < 50 {
			t.Fatalf("%d calls in a 2 s run at a 20 ms interval", len(sink.times))
		}
		if first := sink.times[0].Sub(start); first > 50*time.Millisecond {
			t.Errorf("the first records came %v into the run", first)
		}
		// By the last second, most records were sent.
		sent := 0
		for i, at := range sink.times {
			if end.Sub(at) >= time.Second {
				sent += sink.sizes[i]
			}
		}
		if total := res.RecordCount(); sent < total/3 {
			t.Errorf("%d of %d records sent a second before the end", sent, total)
		}
	})
}

func TestRecordsStreamUnderRace(t *testing.T) {
	// Real goroutines and the real clock (run it with -race): completions
	// from many goroutines while the sender reads every millisecond.
	s := DefaultSettings()
	s.Scenario, s.MinDurationMs, s.MinQueryCount = Offline, 0, 50000
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		var wg sync.WaitGroup
		for part := range slices.Chunk(samples, len(samples)/8+1) {
			wg.Go(func() {
				for _, s := range part {
					if rand.IntN(1000) == 0 {
						time.Sleep(time.Microsecond)
					}
					r.Respond(Response{ID: s.ID, Tokens: 3, Node: 2, ResponseBytes: 5})
				}
			})
		}
		wg.Wait()
	}}
	var got []Record
	res, err := Run(context.Background(), sut, &testQSL{total: 64, perf: 64}, s, &Options{RecordsInterval: time.Millisecond, Records: func(recs []Record) {
		got = append(got, recs...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Collect(res.Records()); !slices.Equal(got, want) {
		t.Fatalf("%d records sent, want the %d of Result.Records (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
}

func TestRecordsStreamRefused(t *testing.T) {
	findPeak := DefaultSettings()
	findPeak.Scenario, findPeak.Mode = Server, FindPeakPerformance
	for _, c := range []struct {
		why      string
		settings Settings
		opts     *Options
		field    string
	}{
		{"a find-peak run drops its probes' records", findPeak, &Options{Records: func([]Record) {}}, "Options.Records"},
		{"the same by column", findPeak, &Options{RecordColumns: func(*RecordColumns) {}}, "Options.RecordColumns"},
		{"both sinks: which one gets the records?", DefaultSettings(), &Options{Records: func([]Record) {}, RecordColumns: func(*RecordColumns) {}}, "Options.RecordColumns"},
	} {
		_, err := Run(context.Background(), syncSUT, &testQSL{total: 8, perf: 8}, c.settings, c.opts)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: err %v, want a FieldError naming %s", c.why, err, c.field)
		}
	}
}
