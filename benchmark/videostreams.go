package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut"
)

// OpenFunc starts a new instance of a system under test: its SUT, its QSL
// and the function that releases them.
type OpenFunc func(ctx context.Context) (loadgen.SUT, loadgen.QSL, func(), error)

// StreamsPlan is the search for the maximum number of video streams
// (GB-7.6.7-T21-MVS, IN-78): probes of arrival mode 1, each n jobs of one
// frame every 1/FPS, from an idle SUT.
type StreamsPlan struct {
	// Open starts a fresh SUT instance; required (OpenConfig for a SUT
	// aimeter builds from a sut.Config).
	Open OpenFunc
	// FPS is each stream's frame rate; required, > 0.
	FPS float64
	// Duration is the length of each probe; required, > 0.
	Duration time.Duration
	// Timeout is the job timeout; 0 means the mode-1 threshold 1 (4 s).
	Timeout time.Duration
	// SpinWindow is loadgen.Options.SpinWindow of each probe (0: its
	// default).
	SpinWindow time.Duration
	// Search are gbt.MaxStreams's options (limit, linear, resolution,
	// budget); ProbeEstimate is filled from Duration and Timeout when 0.
	Search gbt.StreamsOptions
	// Streams, if > 0, makes RunStreams run one probe of this many
	// streams on a fresh SUT instead of the search.
	Streams int
	// Log, if set, gets one line per probe (and RunStreams' line saying
	// how the search goes about it).
	Log io.Writer
}

// OpenConfig is the OpenFunc of a SUT aimeter builds from cfg (Open);
// notify, if set, receives its notices.
func OpenConfig(cfg sut.Config, notify func(Notice)) OpenFunc {
	return func(ctx context.Context) (loadgen.SUT, loadgen.QSL, func(), error) {
		sys, err := Open(ctx, cfg, notify)
		if err != nil {
			return nil, nil, nil, err
		}
		return sys.SUT, sys.QSL, sys.Close, nil
	}
}

// StreamProber runs stream probes, each from an idle SUT: the first on
// the instance just opened; then a SUT that implements loadgen.Drainer is
// drained, and any other is replaced by a fresh instance from Open. Make
// one with NewStreamProber and Close it.
//
// A probe does not go through Run's measuring path (runner.measure and its
// recorders): it is one of many short LoadGen passes of a search, each
// judged only by its GB/T loss and error counts (gbt.StreamProbePassed), with
// no warm-up, no bundle, no power, server metrics or host load beside it,
// and with the SUT made idle (drained or opened afresh) between passes,
// which Run's single SUT cannot do; the search's result is the
// gbt.StreamsResult the caller writes out.
type StreamProber struct {
	plan     StreamsPlan
	sut      loadgen.SUT
	qsl      loadgen.QSL
	closeSUT func()
	probes   int
}

// NewStreamProber opens the first SUT instance of plan.
func NewStreamProber(ctx context.Context, plan StreamsPlan) (*StreamProber, error) {
	if plan.Open == nil || !(plan.FPS > 0) || plan.Duration <= 0 {
		return nil, usage("StreamsPlan.FPS", "StreamsPlan: a stream search needs Open, FPS > 0 and Duration > 0")
	}
	if plan.Timeout == 0 {
		plan.Timeout, _ = gbt.Timeout(gbt.ModeFixedPeriod, gbt.Threshold1)
	}
	if period := time.Duration(float64(time.Second) / plan.FPS); plan.Timeout < period {
		return nil, usage("StreamsPlan.Timeout", "StreamsPlan.Timeout %v is shorter than the frame period %v", plan.Timeout, period)
	}
	sut, qsl, closeSUT, err := plan.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &StreamProber{plan: plan, sut: sut, qsl: qsl, closeSUT: closeSUT}, nil
}

// SUTName is the name of the SUT probed.
func (p *StreamProber) SUTName() string { return p.sut.Name() }

// Drains reports whether the SUT is drained between probes (else a fresh
// instance is opened for each).
func (p *StreamProber) Drains() bool { _, ok := p.sut.(loadgen.Drainer); return ok }

// Close releases the SUT instance.
func (p *StreamProber) Close() { p.closeSUT() }

// Search runs gbt.MaxStreams with the prober.
func (p *StreamProber) Search(ctx context.Context) (gbt.StreamsResult, error) {
	o := p.plan.Search
	if o.ProbeEstimate == 0 {
		o.ProbeEstimate = p.plan.Duration + p.plan.Timeout
	}
	return gbt.MaxStreams(ctx, p.Probe, o)
}

// idle makes the SUT idle and says how.
func (p *StreamProber) idle(ctx context.Context) (string, error) {
	defer func() { p.probes++ }()
	if p.probes == 0 {
		return "fresh", nil // just opened
	}
	if d, ok := p.sut.(loadgen.Drainer); ok {
		if err := d.Drain(ctx); err != nil {
			return "", fmt.Errorf("draining %s: %w", p.sut.Name(), err)
		}
		// Collect the last probe's records now rather than during the next
		// probe, where the collector would compete with the SUT.
		runtime.GC()
		return "drained", nil
	}
	p.closeSUT()
	p.closeSUT = func() {}
	runtime.GC()
	sut, qsl, closeSUT, err := p.plan.Open(ctx)
	if err != nil {
		return "", fmt.Errorf("a fresh SUT: %w", err)
	}
	p.sut, p.qsl, p.closeSUT = sut, qsl, closeSUT
	return "fresh", nil
}

// Probe runs one fixed-period probe with n streams from an idle SUT
// (gbt.StreamProber): the plan of gbt.StreamPlanInput, loadgen.Run, and
// the GB/T metrics of its records (derived).
func (p *StreamProber) Probe(ctx context.Context, n int) (gbt.StreamProbe, error) {
	t0 := time.Now()
	how, err := p.idle(ctx)
	if err != nil {
		return gbt.StreamProbe{}, err
	}
	plan, err := gbt.NewRunPlan(gbt.StreamPlanInput(p.plan.FPS, n, p.plan.Duration, p.plan.Timeout), loadgen.DefaultSettings(), nil)
	if err != nil {
		return gbt.StreamProbe{}, err
	}
	opts := plan.Options()
	opts.StallTimeout = 2 * p.plan.Timeout
	opts.SpinWindow = p.plan.SpinWindow
	res, err := loadgen.Run(ctx, p.sut, p.qsl, plan.Settings, &opts)
	if err != nil {
		return gbt.StreamProbe{}, err
	}
	test := plan.Test
	b := &bundle.Bundle{Result: res}
	gbt.SetTest(b, &test)
	m, err := derived.Of(b).GBTMetrics()
	if err != nil {
		return gbt.StreamProbe{}, err
	}
	out := gbt.StreamProbe{
		N: n, OK: gbt.StreamProbePassed(m), Idle: how,
		Frames: int64(m.Loss.Sent), Lost: int64(m.Loss.Lost - m.Loss.Failed), Failed: int64(m.Throughput.Errors),
	}
	if p.plan.Log != nil {
		out.Seconds = time.Since(t0).Seconds()
		verdict := "pass"
		if !out.OK {
			verdict = fmt.Sprintf("FAIL (%.1f %% lost)", 100*out.LostFraction())
		}
		fmt.Fprintf(p.plan.Log, "  %6d streams: %9d frames, %s, %.1f s, SUT %s\n", n, out.Frames, verdict, out.Seconds, how)
	}
	return out, nil
}

// StreamsOutcome is what RunStreams found: the SUT probed, the plan as it
// ran (Timeout resolved) and the result of the search or single probe.
type StreamsOutcome struct {
	// SUT is the name of the SUT probed.
	SUT string
	// Plan is the plan run, its Timeout resolved.
	Plan StreamsPlan
	// Result is the search's result; for a single probe
	// (StreamsPlan.Streams), gbt.SingleProbeResult of the probe, whose
	// Phase is "single".
	Result gbt.StreamsResult
}

// RunStreams runs the plan: the search of the maximum number of video
// streams (StreamProber.Search), or one probe (StreamsPlan.Streams), on
// instances from plan.Open. A search in which every count up to the limit
// passed has ended (Result.Stop is gbt.StopLimit), with no error. The
// outcome is nil where there is nothing to report (the SUT did not open, the
// single probe failed to run); where a search ends early (a probe error, a
// cancelled ctx), the probes so far come with the error.
func RunStreams(ctx context.Context, plan StreamsPlan) (*StreamsOutcome, error) {
	p, err := NewStreamProber(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out := &StreamsOutcome{SUT: p.SUTName(), Plan: p.plan}
	if plan.Streams > 0 {
		t0 := time.Now()
		probe, err := p.Probe(ctx, plan.Streams)
		if err != nil {
			return nil, err
		}
		probe.N, probe.Phase, probe.Seconds = plan.Streams, "single", time.Since(t0).Seconds()
		out.Result = gbt.SingleProbeResult(probe)
		return out, nil
	}
	if plan.Log != nil {
		how := "a fresh " + p.SUTName() + " instance for each probe"
		if p.Drains() {
			how = p.SUTName() + " drained before each probe"
		}
		fmt.Fprintf(plan.Log, "video streams at %g fps, %v a probe, budget %v, resolution %g; %s\n",
			plan.FPS, plan.Duration, plan.Search.Budget, plan.Search.Resolution, how)
	}
	out.Result, err = p.Search(ctx)
	if errors.Is(err, gbt.ErrStreamsLimit) {
		err = nil
	}
	return out, err
}

// StreamsFile is the JSON file of a stream search (StreamsOutcome.WriteJSON):
// its plan and its result with every probe.
type StreamsFile struct {
	SUT             string  `json:"sut"`
	FPS             float64 `json:"fps"`
	ProbeSeconds    float64 `json:"probe_seconds"`
	JobTimeoutSecs  float64 `json:"job_timeout_seconds"`
	BudgetSeconds   float64 `json:"budget_seconds"`
	MaxStreamsLimit int     `json:"max_streams_limit"`
	gbt.StreamsResult
}

// File is the outcome as its JSON file.
func (o *StreamsOutcome) File() StreamsFile {
	r := o.Result
	if r.Probes == nil {
		r.Probes = []gbt.StreamProbe{}
	}
	return StreamsFile{
		SUT: o.SUT, FPS: o.Plan.FPS, ProbeSeconds: o.Plan.Duration.Seconds(), JobTimeoutSecs: o.Plan.Timeout.Seconds(),
		BudgetSeconds: o.Plan.Search.Budget.Seconds(), MaxStreamsLimit: o.Plan.Search.Limit, StreamsResult: r,
	}
}

// WriteJSON writes the outcome's StreamsFile, indented, to path.
func (o *StreamsOutcome) WriteJSON(path string) error {
	b, err := json.MarshalIndent(o.File(), "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
