package benchmark

import (
	"context"
	"errors"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sysinfo"
)

// recorder is one thing that runs beside a run and puts its part into the
// bundle: the power sampler, the GB/T lifecycle, the server-metrics
// scraper, the host load meter, the record stream (k6's output.Output is
// the model). runBeside and measure drive every recorder through the same
// lifecycle:
//
//  1. Start, in the slice's order: first each early recorder (one that is
//     an earlyRecorder) before the warm-up, then every other one after
//     it. A Start that fails ends the run before it began: the recorders
//     already started are stopped with a nil Result and the error is the
//     run's.
//  2. The run. A recordReceiver receives its records as they complete.
//  3. Stop(res), for every started recorder, in the order they started, as
//     soon as the run (and the foreign jobs of a mixed test) returned:
//     res is the run's Result, interrupted or not; nil when the run never
//     started (the warm-up failed or was interrupted, a Start failed, or
//     LoadGen refused the settings), and then the recorder keeps nothing.
//     res.StartTime is the run's time zero, the clock of the records (it
//     is fixed when LoadGen starts the pass, so a recorder learns it
//     here): a recorder puts its part on that clock. Stop never fails the
//     run: a recorder reports its trouble as a notice and keeps what it
//     can.
//  4. Attach(b), for every recorder, once the run is scored, before the
//     bundle's derived files are computed.
//  5. Finish(b), for a finisher, just before the bundle is written.
//  6. Close, for every recorder built (started or not) that is a closer,
//     once the bundle is written or the run gave up.
type recorder interface {
	// Start begins recording; ctx is the run's (cancelled on interrupt).
	Start(ctx context.Context) error
	// Stop ends recording with the run's Result (nil: no run).
	Stop(res *loadgen.Result)
	// Attach puts the recorder's part into the bundle.
	Attach(b *bundle.Bundle)
}

// earlyRecorder is a recorder that starts before the warm-up, so that its
// record covers it too (the power sampler: the energy of the warm-up and
// of the run are cut from the same telemetry).
type earlyRecorder interface {
	recorder
	BeforeWarmup()
}

// recordReceiver is a recorder that receives the run's records as they
// complete (loadgen.Options.RecordColumns); calls come one at a time, in
// the order of the records.
type recordReceiver interface {
	recorder
	RecordColumns(c *loadgen.RecordColumns)
}

// finisher is a recorder with a last word just before the bundle is
// written.
type finisher interface {
	recorder
	Finish(b *bundle.Bundle)
}

// closer is a recorder that holds something until the bundle is written.
type closer interface {
	recorder
	Close()
}

// runBeside runs warmup, then run, with recs beside them (the lifecycle
// of recorder, steps 1 to 3). It returns run's Result and error, or the
// error of the warm-up or of a Start, with a nil Result.
func runBeside(ctx context.Context, recs []recorder, warmup func() error, run func(*loadgen.Options) (*loadgen.Result, error), opts *loadgen.Options) (*loadgen.Result, error) {
	var started []recorder
	stop := func(res *loadgen.Result) {
		for _, rec := range started {
			rec.Stop(res)
		}
	}
	start := func(early bool) error {
		for _, rec := range recs {
			if _, ok := rec.(earlyRecorder); ok != early {
				continue
			}
			if err := rec.Start(ctx); err != nil {
				stop(nil)
				return err
			}
			started = append(started, rec)
		}
		return nil
	}
	if err := start(true); err != nil {
		return nil, err
	}
	if err := warmup(); err != nil {
		stop(nil)
		return nil, err
	}
	if err := start(false); err != nil {
		return nil, err
	}
	var receivers []recordReceiver
	for _, rec := range started {
		if rr, ok := rec.(recordReceiver); ok {
			receivers = append(receivers, rr)
		}
	}
	switch len(receivers) {
	case 0:
	case 1:
		opts.RecordColumns = receivers[0].RecordColumns
	default:
		opts.RecordColumns = func(c *loadgen.RecordColumns) {
			for _, rr := range receivers {
				rr.RecordColumns(c)
			}
		}
	}
	res, err := run(opts)
	stop(res)
	return res, err
}

// besideTraining runs a training test's run with recs beside it, through
// runBeside (the lifecycle of recorder, steps 1 to 3): a training has no
// warm-up and no LoadGen records, and its clock is its own, so run returns
// the training's clock origin and its recorders are stopped with a Result
// that holds only that origin as its StartTime; with a nil Result (nothing
// kept) when the training never started (a *startError, or no origin).
func besideTraining(ctx context.Context, recs []recorder, run func() (origin time.Time, err error)) error {
	_, err := runBeside(ctx, recs, func() error { return nil }, func(*loadgen.Options) (*loadgen.Result, error) {
		origin, err := run()
		if _, ok := errors.AsType[*startError](err); ok || origin.IsZero() {
			return nil, err
		}
		return &loadgen.Result{StartTime: origin}, err
	}, &loadgen.Options{})
	return err
}

// attachAll attaches every recorder's part to b (step 4).
func attachAll(recs []recorder, b *bundle.Bundle) {
	for _, rec := range recs {
		rec.Attach(b)
	}
}

// finishAll gives every finisher its last word on b (step 5).
func finishAll(recs []recorder, b *bundle.Bundle) {
	for _, rec := range recs {
		if f, ok := rec.(finisher); ok {
			f.Finish(b)
		}
	}
}

// closeAll closes every closer (step 6).
func closeAll(recs []recorder) {
	for _, rec := range recs {
		if c, ok := rec.(closer); ok {
			c.Close()
		}
	}
}

// sampler is the one lifecycle of a periodic sampler that runs beside a
// run (telemetry.Sampler, scrape.Scraper): started before the run on a
// clock that counts from its own start, given the run's time zero with
// SetOrigin once it is known, and stopped with Stop, which returns its
// record on that clock.
type sampler[T any] interface {
	SetOrigin(origin time.Time)
	Stop(ctx context.Context) (T, error)
}

// stopSampler stops s at the end of a run whose Result is res: on the
// run's clock when res has a time zero. The stop is not cancelled with the
// run (an interrupted run still gets its record), and each source is
// bounded by its own timeout instead. The record of a run that never
// started (res nil) is thrown away: ok is false then.
func stopSampler[T any](ctx context.Context, s sampler[T], res *loadgen.Result) (rec T, ok bool, err error) {
	if res != nil && !res.StartTime.IsZero() {
		s.SetOrigin(res.StartTime)
	}
	rec, err = s.Stop(context.WithoutCancel(ctx))
	return rec, res != nil, err
}

// loadRecorder measures the machine's load from after the warm-up to the
// end of the run (bundle.Bundle.HostLoad; the busy-machine warning reads
// it). Counters that cannot be read (a system without /proc) leave no
// record and no notice.
type loadRecorder struct {
	meter *sysinfo.LoadMeter
	load  *sysinfo.Load
}

func (l *loadRecorder) Start(context.Context) error {
	l.meter = sysinfo.StartLoad()
	return nil
}

func (l *loadRecorder) Stop(res *loadgen.Result) {
	load, err := l.meter.Stop()
	if err == nil && res != nil {
		l.load = load
	}
}

func (l *loadRecorder) Attach(b *bundle.Bundle) { b.HostLoad = l.load }

// lifecycleRecorder marks the GB/T 45087 lifecycle events of an inference
// test (GB-7.7.1-j): test_start, dataset_load_start and dataset_load_end
// at Start (after the warm-up: the data set is loaded before the run),
// test_end at Attach (once the run is scored), and
// result_upload_complete at Finish, just before the bundle is written, so
// that the result file carries it (GB-7.7.1-j-1); Finish puts the events
// into the bundle's GB/T test, which measure has set by then.
type lifecycleRecorder struct {
	life gbt.Lifecycle
}

func (l *lifecycleRecorder) Start(context.Context) error {
	l.life.Mark(gbt.EventTestStart)
	l.life.Mark(gbt.EventDatasetLoadStart)
	l.life.Mark(gbt.EventDatasetLoadEnd)
	return nil
}

func (l *lifecycleRecorder) Stop(*loadgen.Result) {}

func (l *lifecycleRecorder) Attach(*bundle.Bundle) { l.life.Mark(gbt.EventTestEnd) }

func (l *lifecycleRecorder) Finish(b *bundle.Bundle) {
	l.life.Mark(gbt.EventResultUploadComplete)
	if gbt.TestOf(b) != nil {
		gbt.TestOf(b).Lifecycle = l.life.Events()
	}
}

// streamRecorder writes the run's records into the bundle's records file
// while a timed run goes (issue 27): at its end only the last records and
// the derived files remain (Server, 100 k queries/s for 5 s: the process
// ends 60–70 ms sooner, with 15 % less memory). It opens the stream at
// Start and hands it to the bundle at Attach, which finishes the file;
// Close discards a stream the bundle did not write (a no-op after Write).
type streamRecorder struct {
	dir    string
	stream *bundle.RecordStream
}

func (s *streamRecorder) Start(context.Context) error {
	s.stream = bundle.NewRecordStream(s.dir)
	return nil
}

func (s *streamRecorder) RecordColumns(c *loadgen.RecordColumns) { s.stream.AddColumns(c) }

func (s *streamRecorder) Stop(*loadgen.Result) {}

func (s *streamRecorder) Attach(b *bundle.Bundle) { b.Records = s.stream }

func (s *streamRecorder) Close() {
	if s.stream != nil {
		s.stream.Discard()
	}
}

// recorders are what runs beside the run of p, in the order they start
// (recorder): the power sampler (before the warm-up), the GB/T lifecycle,
// the server-metrics scraper, the host load meter and the record stream.
func (r *runner) recorders(st *resolved, o *opened, gp *gbt.RunPlan) []recorder {
	p := r.plan
	var recs []recorder
	if len(p.Power) > 0 {
		recs = append(recs, &powerRecorder{sources: p.Power, opts: p.PowerOptions, notify: r.notify})
	}
	if gp != nil {
		recs = append(recs, &lifecycleRecorder{})
	}
	// The scraper starts before the load meter and the record stream, so
	// that an endpoint it refuses leaves nothing running but the power
	// sampler, which the failure stops.
	if sm := p.ServerMetrics; !sm.Off && o.cfg != nil && (o.cfg.KindOrNull().IsNetwork() || len(sm.URLs) > 0) {
		recs = append(recs, &scrapeRecorder{cfg: sm, urls: o.cfg.Net.URLs, notify: r.notify})
	}
	recs = append(recs, &loadRecorder{})
	// An Offline run issues everything at once and its records complete
	// in one burst on the issuer's processor: encoding them during it
	// costs more processor time than at its end (the ranges of completed
	// samples are found and copied twice), so they are written at its end,
	// on every core. So is a find-peak search that drops its probes'
	// records.
	if st.settings.Scenario != loadgen.Offline && (st.settings.Mode != loadgen.FindPeakPerformance || p.KeepProbeRecords) {
		recs = append(recs, &streamRecorder{dir: p.OutputDir})
	}
	return recs
}
