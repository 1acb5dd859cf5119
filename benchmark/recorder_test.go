package benchmark

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut/dispatch"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
	"aimeter/sut/openai"
	"aimeter/telemetry"
)

// The endpoints offer what benchmark asks of them through netsut's
// optional interfaces, without benchmark naming their types.
var (
	_ netsut.StatsReporter  = (*openai.Endpoint)(nil)
	_ netsut.StatsReporter  = (*kserve.Endpoint)(nil)
	_ netsut.InputsProvider = (*kserve.Endpoint)(nil)
	_ netsut.Nodes          = (*dispatch.Dispatcher)(nil)
)

// fakeRecorder logs its lifecycle into a shared log, each call with the
// time on the test's fake clock from t0.
type fakeRecorder struct {
	name     string
	log      *[]string
	t0       time.Time
	startErr error
	stopped  []*loadgen.Result
	records  int
}

func (f *fakeRecorder) at() time.Duration { return time.Since(f.t0) }

func (f *fakeRecorder) Start(context.Context) error {
	*f.log = append(*f.log, fmt.Sprintf("%s start %v", f.name, f.at()))
	return f.startErr
}

func (f *fakeRecorder) Stop(res *loadgen.Result) {
	f.stopped = append(f.stopped, res)
	zero := "no run"
	if res != nil {
		zero = "zero " + res.StartTime.Sub(f.t0).String()
	}
	*f.log = append(*f.log, fmt.Sprintf("%s stop %v (%s)", f.name, f.at(), zero))
}

func (f *fakeRecorder) Attach(*bundle.Bundle) { *f.log = append(*f.log, f.name+" attach") }

type fakeEarly struct{ fakeRecorder }

func (*fakeEarly) BeforeWarmup() {}

type fakeReceiver struct{ fakeRecorder }

func (f *fakeReceiver) RecordColumns(c *loadgen.RecordColumns) { f.records += c.Len() }

// beside runs runBeside over recs with a warm-up of 1 s that fails with
// warmErr, and a run that starts (time zero) after 0.5 s, sends two
// records to the receivers, lasts 2 s and ends with runErr.
func beside(t0 time.Time, log *[]string, recs []recorder, warmErr, runErr error) (*loadgen.Result, error, bool) {
	ran := false
	res, err := runBeside(context.Background(), recs, func() error {
		*log = append(*log, fmt.Sprintf("warm-up %v", time.Since(t0)))
		time.Sleep(time.Second)
		return warmErr
	}, func(opts *loadgen.Options) (*loadgen.Result, error) {
		ran = true
		time.Sleep(time.Second / 2)
		res := &loadgen.Result{StartTime: time.Now()}
		*log = append(*log, fmt.Sprintf("run %v", time.Since(t0)))
		if opts.RecordColumns != nil {
			var c loadgen.RecordColumns
			c.Append(loadgen.Record{}, loadgen.Record{})
			opts.RecordColumns(&c)
		}
		time.Sleep(2 * time.Second)
		if runErr != nil {
			res.Interrupted = runErr.Error()
		}
		return res, runErr
	}, &loadgen.Options{})
	return res, err, ran
}

// TestRunBesideOrder: the early recorder starts before the warm-up, the
// others after it in their order, every one is stopped when the run ends,
// in the order they started, with the Result whose StartTime is the run's
// time zero, and the record receivers get the run's records.
func TestRunBesideOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log []string
		t0 := time.Now()
		power := &fakeEarly{fakeRecorder{name: "power", log: &log, t0: t0}}
		life := &fakeRecorder{name: "life", log: &log, t0: t0}
		stream := &fakeReceiver{fakeRecorder{name: "stream", log: &log, t0: t0}}
		other := &fakeReceiver{fakeRecorder{name: "other", log: &log, t0: t0}}
		res, err, _ := beside(t0, &log, []recorder{life, power, stream, other}, nil, nil)
		if err != nil || res == nil {
			t.Fatalf("runBeside: %v, %v", res, err)
		}
		want := []string{
			"power start 0s", "warm-up 0s", "life start 1s", "stream start 1s", "other start 1s", "run 1.5s",
			"power stop 3.5s (zero 1.5s)", "life stop 3.5s (zero 1.5s)", "stream stop 3.5s (zero 1.5s)", "other stop 3.5s (zero 1.5s)",
		}
		if !slices.Equal(log, want) {
			t.Errorf("lifecycle\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
		}
		if stream.records != 2 || other.records != 2 {
			t.Errorf("records received %d and %d, want 2 each", stream.records, other.records)
		}
	})
}

// TestRunBesideStartFails: a recorder whose Start fails ends the run
// before it began (as the server-metrics scraper refusing an endpoint
// does): the recorders started before it are stopped with no Result, it
// and those after it are not, and its error is the run's. A failing
// warm-up stops the early recorders the same way, and starts no other.
func TestRunBesideStartFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log []string
		t0 := time.Now()
		refused := errors.New("refused")
		power := &fakeEarly{fakeRecorder{name: "power", log: &log, t0: t0}}
		life := &fakeRecorder{name: "life", log: &log, t0: t0}
		scrape := &fakeRecorder{name: "scrape", log: &log, t0: t0, startErr: refused}
		load := &fakeRecorder{name: "load", log: &log, t0: t0}
		res, err, ran := beside(t0, &log, []recorder{power, life, scrape, load}, nil, nil)
		if res != nil || !errors.Is(err, refused) || ran {
			t.Fatalf("runBeside: %v, %v, ran %v; want no run and the Start's error", res, err, ran)
		}
		want := []string{"power start 0s", "warm-up 0s", "life start 1s", "scrape start 1s", "power stop 1s (no run)", "life stop 1s (no run)"}
		if !slices.Equal(log, want) {
			t.Errorf("lifecycle\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
		}

		log = nil
		warm := errors.New("interrupted during the warm-up")
		res, err, ran = beside(t0, &log, []recorder{power, life, load}, warm, nil)
		if res != nil || !errors.Is(err, warm) || ran {
			t.Fatalf("runBeside: %v, %v, ran %v; want no run and the warm-up's error", res, err, ran)
		}
		want = []string{"power start 1s", "warm-up 1s", "power stop 2s (no run)"}
		if !slices.Equal(log, want) {
			t.Errorf("lifecycle\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestRunBesideInterrupted: an interrupted run stops every recorder with
// its Result, which keeps what was measured, and returns its error.
func TestRunBesideInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log []string
		t0 := time.Now()
		power := &fakeEarly{fakeRecorder{name: "power", log: &log, t0: t0}}
		load := &fakeRecorder{name: "load", log: &log, t0: t0}
		res, err, _ := beside(t0, &log, []recorder{power, load}, nil, loadgen.ErrInterrupted)
		if res == nil || !errors.Is(err, loadgen.ErrInterrupted) {
			t.Fatalf("runBeside: %v, %v; want the interrupted run", res, err)
		}
		for _, f := range []*fakeRecorder{&power.fakeRecorder, load} {
			if len(f.stopped) != 1 || f.stopped[0] != res {
				t.Errorf("%s stopped with %v, want once with the run's Result", f.name, f.stopped)
			}
		}
	})
}

// steadyMeter is a power source that reads 100 W, or fails.
type steadyMeter struct{ err error }

func (steadyMeter) Name() string    { return "meter" }
func (steadyMeter) Spec() string    { return "test" }
func (steadyMeter) Notes() []string { return nil }
func (m steadyMeter) Poll(context.Context) ([]telemetry.Reading, error) {
	if m.err != nil {
		return nil, m.err
	}
	return []telemetry.Reading{{Device: "cpu", Kind: telemetry.Power, Value: 100}}, nil
}

// TestPowerRecorder: the power sampler reads from its start, before the
// warm-up, and its log is on the run's clock (a reading during the
// warm-up is before time zero); a failing source leaves gaps and a
// warning, not a failed run; a run that never started keeps nothing.
func TestPowerRecorder(t *testing.T) {
	for _, tc := range []struct {
		why      string
		src      steadyMeter
		noRun    bool
		readings []int64 // ms on the run's clock
		gaps     bool
	}{
		{why: "a source that reads", readings: []int64{-2000, -1000, 0, 1000, 2000, 2500}},
		{why: "a failing source", src: steadyMeter{err: errors.New("no meter")}, gaps: true},
		{why: "no run", noRun: true},
	} {
		synctest.Test(t, func(t *testing.T) {
			var notes []string
			p := &powerRecorder{sources: []telemetry.Source{tc.src}, opts: telemetry.Options{Period: time.Second},
				notify: func(k NoticeKind, f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }}
			if err := p.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second) // the warm-up
			var res *loadgen.Result
			if !tc.noRun {
				res = &loadgen.Result{StartTime: time.Now()}
			}
			time.Sleep(2500 * time.Millisecond) // the last read is Stop's
			p.Stop(res)
			b := &bundle.Bundle{}
			p.Attach(b)
			if tc.noRun {
				if telemetry.LogOf(b) != nil || len(notes) > 0 {
					t.Errorf("%s: telemetry %v, notices %q; want none", tc.why, telemetry.LogOf(b), notes)
				}
				return
			}
			l := telemetry.LogOf(b)
			if l == nil || l.StartUnixNs != res.StartTime.UnixNano() {
				t.Fatalf("%s: log %+v, want one that starts at the run's time zero", tc.why, l)
			}
			var at []int64
			for _, r := range l.Readings {
				at = append(at, r.T/1e6)
			}
			if !slices.Equal(at, tc.readings) {
				t.Errorf("%s: readings at %v ms, want %v", tc.why, at, tc.readings)
			}
			if warned := len(notes) == 1 && strings.Contains(notes[0], "reads gave nothing"); (len(l.Gaps) > 0) != tc.gaps || warned != tc.gaps {
				t.Errorf("%s: gaps %v, notices %q", tc.why, l.Gaps, notes)
			}
		})
	}
}

// TestLifecycleRecorder: the GB/T lifecycle's events are marked at the
// recorder's steps (test_start and the data set's load at Start, test_end
// at Attach, result_upload_complete at Finish) and land in the bundle's
// GB/T test at Finish.
func TestLifecycleRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var l lifecycleRecorder
		if err := l.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		l.Stop(&loadgen.Result{})
		time.Sleep(time.Second) // scoring
		b := &bundle.Bundle{}
		l.Attach(b)
		gbt.SetTest(b, &gbt.Test{})
		time.Sleep(time.Second) // the derived files
		l.Finish(b)
		ev := gbt.TestOf(b).Lifecycle
		got := []time.Duration{ev.TestStart.Sub(t0), ev.DatasetLoadStart.Sub(t0), ev.DatasetLoadEnd.Sub(t0), ev.TestEnd.Sub(t0), ev.ResultUploadComplete.Sub(t0)}
		want := []time.Duration{0, 0, 0, 4 * time.Second, 5 * time.Second}
		if !slices.Equal(got, want) {
			t.Errorf("events at %v, want %v", got, want)
		}
	})
}

// TestScrapeRecorder: an endpoint the scraper refuses fails Start with a
// usage error (and so the run, before it began); an endpoint that fails
// is scraped, its failures kept as gaps on the run's clock, with a
// warning, and the record attached.
func TestScrapeRecorder(t *testing.T) {
	var notes []NoticeKind
	notify := func(k NoticeKind, _ string, _ ...any) { notes = append(notes, k) }
	bad := &scrapeRecorder{cfg: ServerMetrics{URLs: []string{"ftp://h/metrics"}}, notify: notify}
	if err := bad.Start(t.Context()); !IsUsage(err) {
		t.Fatalf("Start with an ftp endpoint: %v, want a usage error", err)
	}
	requests := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
		requests <- struct{}{}
	}))
	defer srv.Close()
	down := &scrapeRecorder{cfg: ServerMetrics{URLs: []string{srv.URL + "/metrics"}, Interval: 10 * time.Millisecond}, notify: notify}
	if err := down.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := &loadgen.Result{StartTime: time.Now()}
	// Until the second scrape has begun, so that the first has ended.
	<-requests
	<-requests
	down.Stop(res)
	var b bundle.Bundle
	down.Attach(&b)
	m := b.ServerMetrics
	if m == nil || len(m.Scrapes) == 0 {
		t.Fatalf("server metrics %+v, want the failed scrapes", m)
	}
	for _, sc := range m.Scrapes {
		if sc.Error == "" || sc.TimeNs < 0 {
			t.Errorf("scrape %+v, want a gap after time zero", sc)
		}
	}
	if !slices.Equal(notes, []NoticeKind{Warning}) {
		t.Errorf("notices %v, want one warning", notes)
	}
}
