// Package benchmark runs one test, MLPerf or GB/T 45087, from a plan and
// writes its bundle: the one library call behind `aimeter run`, `aimeter
// demo`, `aimeter video-streams` and any Go program that starts runs
// (sweeps, audits, uploads).
//
// Run owns the whole sequence, in this order:
//
//  1. the settings cascade (LoadGen's defaults or aimeter's self-test
//     defaults, mlperf.conf, user.conf, audit.config, overrides, values a
//     SUT implies), with where each setting came from;
//  2. the GB/T 45087 plan of an arrival mode (Table 10), when asked for;
//  3. the SUT and QSL, built from a declarative sut.Config (or a program's
//     own), checked before the run;
//  4. the host, detected once; the output directory, checked writable;
//  5. the load meter, the GB/T lifecycle, the foreign jobs of a mixed test
//     (mode 5), loadgen.Run;
//  6. scoring: the accuracy log against the data set's labels, the GB/T
//     metrics;
//  7. the bundle, raw parts and every derived file (package derived).
//
// A plan that cannot run fails before anything runs, with a *UsageError
// that names the field; nothing is written then. Once the run has started,
// its bundle is written whatever happens (an interrupt, a failing SUT), and
// the Outcome says what the run found.
package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
	"aimeter/shard"
	"aimeter/sut"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
	"aimeter/telemetry"
	"aimeter/tokenize"
	"aimeter/version"
	"aimeter/workload/session"
	"aimeter/workload/trace"
)

// Plan is one test to run. Its zero value, with OutputDir set, is aimeter's
// self-benchmark: the Server scenario against the null SUT, sized by the
// self-test defaults. A field that does not apply to every run says where
// it applies in one table (Rules), and a field set where it does not
// apply is refused (Validate) rather than ignored.
type Plan struct {
	// SUT is the system under test and its sample library; the zero value
	// is the null SUT over 1024 null samples.
	SUT sut.Config
	// Custom, if set, is a SUT and QSL the program built itself, run
	// instead of building one from SUT (whose Name then labels it).
	Custom *Custom
	// Settings are where the LoadGen settings come from.
	Settings Settings
	// Warmup, for a fixed-concurrency run (Settings.Concurrency > 0) or
	// an MLPerf Server run (not a replay or a sessions run), is run first
	// and left out of the results; the zero value runs none.
	Warmup Warmup
	// GBT, if set, makes the run a GB/T 45087 inference test (clause 7):
	// the arrival mode chooses the LoadGen scenario and mode, and the
	// loss-rate verdict is the run's verdict.
	GBT *GBT
	// Replay, if set, takes the schedule and the prompts from a trace
	// file (see Replay); nil generates them.
	Replay *Replay
	// Sessions, if set, runs multi-turn chat sessions (see Sessions); nil
	// runs none.
	Sessions *Sessions
	// Shard, if set, runs the plan as one shard of a test split over
	// several load generators, or starts it at a common time (see Shard);
	// nil runs the whole test at once.
	Shard *Shard
	// SLO, if set, is the per-request service-level objective that
	// result.json and the report measure the run's goodput against; nil
	// measures it against the run's TTFT and TPOT bounds, if any.
	SLO *bundle.SLO
	// Division, if "network", declares the result one of MLPerf's network
	// division (a network SUT in the datacenter scenarios, Server and
	// Offline), which needs a system description with a diagram (aimeter
	// check reports one without). "" declares none; no other value is
	// taken (a closed or open result needs no mark).
	Division string
	// SystemDesc, if set, is a system description file (JSON or YAML,
	// package sysdesc, docs/network-division.md): the SUT nodes' NICs, the
	// components between them and the LoadGen node, the fabric and the
	// protocol (OSI layers 1 to 4), the data path and a diagram. It is
	// validated before the run and stored in the bundle with its diagram
	// (system_desc.json). "" for none.
	SystemDesc string

	// InputDType declares the data type of the run's inputs on the wire
	// (fp32, int8, …; for DLRMv2 the numerical and the categorical
	// inputs', fp16,int32) for the MLPerf datacenter bandwidth check of
	// Settings.Model (package bandwidth, bandwidth.json); "" takes a KServe
	// server's declared input datatype, else declares none. OutputDType is
	// the outputs' (3D U-Net, SDXL); "" means InputDType's.
	InputDType, OutputDType string

	// OutputDir is the directory the bundle is written to. Required.
	OutputDir string
	// Name labels the run in report.html; "" means "<SUT> <scenario>".
	Name string
	// Trace also writes mlperf_log_trace.json.
	Trace bool
	// NoReport leaves report.html out.
	NoReport bool

	// Timeout ends the run after this long; outstanding samples are lost
	// and the result INVALID. 0 means no limit.
	Timeout time.Duration
	// StallTimeout gives up on outstanding samples when none completes
	// for this long; 0 means loadgen.DefaultStallTimeout.
	StallTimeout time.Duration
	// SpinWindow is loadgen.Options.SpinWindow; 0 means its default,
	// negative never spins.
	SpinWindow time.Duration
	// MaxMemory refuses a run whose estimated memory exceeds this many
	// bytes before generating anything; 0 means no limit.
	MaxMemory int64
	// MaxMemorySource says where MaxMemory comes from (recorded in
	// bundle.Control), e.g. the command line's memory option or "auto:
	// half of cgroup-v2 4.3 GB (/sys/fs/cgroup/a/memory.max)"; "" when
	// unsaid.
	MaxMemorySource string
	// FindPeakResolution and KeepProbeRecords are those of
	// loadgen.Options for find-peak runs; 0 and false are LoadGen's
	// behaviour.
	FindPeakResolution float64
	KeepProbeRecords   bool

	// Progress, if set, is called about ten times a second during the
	// run (loadgen.Options.Progress), with the pass's expected length.
	Progress func(Progress)
	// Phase, if set, is called as the run enters and leaves the loading
	// of its data (DataLoadStart, DataLoadEnd), from the goroutine of
	// Run: the GB/T 45087 Annex A events data_download_start and
	// data_download_end of a network test. nil reports nothing.
	Phase func(Phase)
	// Done, if set, is called once the run's bundle is written whole
	// (whatever its verdict, and for a run that ended early too), before
	// Run returns: the place to record it in a results store. A study
	// that runs copies of its base plan (a sweep's points, a search's
	// probes, an audit's runs) calls it for each. nil does nothing.
	Done func(*Outcome)
	// Notify, if set, receives the warnings and notes of the run as they
	// arise (before the run: settings warnings, a long run ahead, servers
	// left out; after it: a busy machine, an issuer that fell behind its
	// schedule). nil discards them; they are also kept in
	// Outcome.Notices.
	Notify func(Notice)
	// CommandLine is recorded in the bundle, with the values of
	// secret-looking options replaced; nil for a run from Go code.
	CommandLine []string
	// ServerMetrics says which of the server's Prometheus endpoints a
	// network run scrapes; the zero value scrapes each server's /metrics
	// when it answers.
	ServerMetrics ServerMetrics
	// Backends adds node protocols for a Dispatch SUT to the built-in
	// "openai" and "kserve"; nil adds none.
	Backends map[string]Backend
	// Version is the aimeter version recorded; "" means version.String().
	Version string

	// Power are the power, energy and utilisation sources sampled while
	// the run goes (telemetry.Open makes them from a source list); their
	// readings go into the bundle's telemetry.json and the energy figures
	// into result.json. Nil samples nothing.
	Power []telemetry.Source
	// PowerOptions sets the sampling period and timeouts; the zero value
	// samples once a second.
	PowerOptions telemetry.Options
}

// Progress is loadgen's progress of a pass with the length the run is
// expected to take: the minimum duration, or a GB/T test's duration; 0
// when not known in advance.
type Progress struct {
	loadgen.Progress
	Target time.Duration
}

// Custom is a system under test a program built itself.
type Custom struct {
	SUT loadgen.SUT
	QSL loadgen.QSL
	// Labels, if set, gives the ground-truth class of each sample, so that
	// an accuracy run is scored top-1 (one class byte per response).
	Labels func(index uint64) uint8
	// Target is the top-1 fraction an accuracy run must reach; 0 scores
	// without a target.
	Target float64
}

// Settings are the inputs of the settings cascade.
type Settings struct {
	// Explicit, if set, are the settings of the run as they are: the
	// cascade is skipped (a program's own settings, a run repeated from
	// its bundle), and so is every field below.
	Explicit *loadgen.Settings
	// Model is the config files' model key (e.g. "resnet50"); with it, or
	// with MLPerfConf or UserConf, the built-in mlperf.conf applies. With
	// none of the three, aimeter's self-test defaults apply instead.
	Model string
	// Scenario is "SingleStream", "MultiStream", "Server" or "Offline";
	// "" means "Server". A GB/T plan chooses it itself.
	Scenario string
	// Mode is "performance", "accuracy", "submission" or "find-peak"; ""
	// means "performance" (and leaves the config files' mode alone).
	Mode string
	// MLPerfConf is an mlperf.conf to use instead of the built-in one;
	// "" means the built-in one.
	MLPerfConf string
	// UserConf is a user.conf applied after mlperf.conf; "" means none.
	UserConf string
	// AuditConfig is an audit.config applied last if it exists; "" means
	// none. (The CLI passes audit.config in the working directory, as
	// LoadGen looks there.)
	AuditConfig string
	// Set are NAME=VALUE overrides of config keys, applied last.
	Set []string
	// Concurrency, if not 0, is aimeter's fixed-concurrency mode: that
	// many samples in flight, on SingleStream's issuing.
	Concurrency uint64
	// MaxErrorRate is the fraction of samples that may fail with an
	// MLPerf-scenario run still VALID (loadgen.Settings.MaxErrorRate); 0
	// makes any failure INVALID. A GB/T test counts failures as lost jobs
	// against its loss threshold instead.
	MaxErrorRate float64
}

// Warmup is a warm-up of a fixed-concurrency run or a Server run: requests
// sent at the same concurrency, or on a Poisson schedule at the same
// target rate, before the measured run, excluded from its statistics and
// recorded in its invocation.json. A Server run against a network SUT
// otherwise begins with no connection open, and the first hundreds of
// milliseconds of its schedule pay for opening them (at 20,000 queries/s
// on 2 cores shared with the server, issue lateness of 2–22 ms). Its zero
// value is no warm-up.
type Warmup struct {
	// Requests is the number of warm-up requests; 0 means none by count.
	Requests uint64
	// Duration is how long the warm-up lasts at least; 0 means none by
	// time. With both set, the warm-up ends when both are reached.
	Duration time.Duration
}

// GBT is a GB/T 45087 inference test.
type GBT struct {
	// Input is the arrival mode and its parameters, the timeout class and
	// the loss threshold (gbt.NewRunPlan's input). Arrival parameters left at
	// zero take the standard's defaults (gbt.Arrival.WithDefaults: λ, the
	// period T and n).
	Input gbt.PlanInput
	// InfoFile is a test information YAML (7.1 a)); "" means none. What it
	// leaves out is filled from the detected host and the SUT.
	InfoFile string
}

// Backend makes the endpoint of one node of a Dispatch SUT from its URL.
type Backend func(url string, cfg *sut.Config) (Endpoint, error)

// PhaseKind names a step of a run that Plan.Phase reports.
type PhaseKind int

const (
	// DataLoadStart: the run begins to load its data: the replay trace or
	// sessions, the model and the data set of the SUT, the QSL.
	DataLoadStart PhaseKind = iota + 1
	// DataLoadEnd: the data is loaded and the QSL built (or, with Err,
	// loading failed and the run ends here).
	DataLoadEnd
)

// String returns the GB/T 45087 Annex A event name of the phase:
// "data_download_start" or "data_download_end".
func (k PhaseKind) String() string {
	switch k {
	case DataLoadStart:
		return "data_download_start"
	case DataLoadEnd:
		return "data_download_end"
	}
	return fmt.Sprintf("PhaseKind(%d)", int(k))
}

// Phase is a step of a run, reported to Plan.Phase as it happens.
type Phase struct {
	Kind PhaseKind
	// QSL, TotalSamples and PerformanceSamples describe the loaded QSL,
	// on DataLoadEnd when loading succeeded.
	QSL                              string
	TotalSamples, PerformanceSamples uint64
	// Err, on DataLoadEnd, is why loading failed; nil when it succeeded.
	Err error
}

// NoticeKind says what a Notice is.
type NoticeKind int

const (
	// Info is progress information (the model loaded, the prompts read).
	Info NoticeKind = iota
	// Note is something the user should know (a run longer than asked).
	Note
	// Warning is something that may be wrong.
	Warning
)

// Notice is a message of a run for the user.
type Notice struct {
	Kind NoticeKind
	Text string
}

// UsageError is a plan that cannot run: a field, setting or file that is
// wrong. Nothing ran and nothing was written. Its message names fields by
// their paths as Field does (the command line names their flags instead).
type UsageError struct {
	// Field names what is wrong by its path from the plan: a Plan's
	// ("OutputDir", "Settings.Set", "GBT.Input.Arrival.Mode",
	// "SUT.OpenAI.CACert"), a study plan's with its type
	// ("SweepPlan.Points", "StreamsPlan.FPS"), or "PlanFromBundle" for
	// the bundle it reads; "" when no one field is.
	Field string
	Err   error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(field, format string, args ...any) error {
	return &UsageError{Field: field, Err: fmt.Errorf(format, args...)}
}

// IsUsage reports whether err is (or wraps) a *UsageError.
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// VerdictKind says which rules decided a run's verdict (derived.VerdictKind).
type VerdictKind = derived.VerdictKind

// The rules that decide a verdict (see package derived).
const (
	VerdictMLPerf   = derived.VerdictMLPerf
	VerdictGBT      = derived.VerdictGBT
	VerdictAccuracy = derived.VerdictAccuracy
	VerdictNone     = derived.VerdictNone
)

// Verdict is what a run found, the same on the console, in the summary,
// the report, result.json and the exit code (derived.Verdict).
type Verdict = derived.Verdict

// Outcome is a run that ran: what it measured, its bundle, its verdict.
type Outcome struct {
	// Dir is where the bundle was written.
	Dir string
	// Bundle is the run's bundle; Derived derives its files and metrics.
	Bundle  *bundle.Bundle
	Derived *derived.Set
	// Result is the run; Foreign the foreign jobs of a mixed test.
	Result  *loadgen.Result
	Foreign *loadgen.Result
	// GBT are the clause 7.6 metrics of a GB/T test; nil otherwise.
	GBT *gbt.Metrics
	// Accuracy is the score of the accuracy log against the data set's
	// labels; nil where there is no log or no labels.
	Accuracy *bundle.AccuracyCheck
	// Score scores an accuracy log of this run's data set against its
	// labels, over the distinct samples the log holds (a performance
	// run's sampled log as well as a whole accuracy run's); the audit
	// tests (package compliance) score with it. Nil where the data set
	// has no labels.
	Score func(entries []loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error)
	// Verdict decides the exit code.
	Verdict Verdict
	// Notices are every notice of the run, in order.
	Notices []Notice
	// WriteErr is the error of writing the bundle; nil when every file
	// was written.
	WriteErr error
	// Lateness is how closely a trace replay (Plan.Replay) kept its
	// schedule; nil for other runs.
	Lateness *trace.LatenessSummary
	// Sessions are the per-turn and per-session metrics of a sessions run
	// (Plan.Sessions); nil for other runs.
	Sessions *session.Metrics
}

// Run runs p and writes its bundle into p.OutputDir.
//
// It returns a nil Outcome and a *UsageError when the plan cannot run, or
// another error when its SUT cannot be built or fails its check before the
// run; nothing is written then. Once the run has started it returns an
// Outcome, and an error only when the run ended early (it wraps
// loadgen.ErrInterrupted for a cancelled ctx), the foreign jobs failed, or
// the bundle could not be written whole (Outcome.WriteErr).
//
// When the bundle was written whole, Plan.Done is called with the Outcome
// before Run returns.
func Run(ctx context.Context, p Plan) (*Outcome, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &runner{plan: &p, ctx: ctx}
	out, err := r.run()
	if out != nil && out.WriteErr == nil && p.Done != nil {
		p.Done(out)
	}
	return out, err
}

// runner is the state of one Run.
type runner struct {
	plan    *Plan
	ctx     context.Context
	notices []Notice
	// warmed is the warm-up that ran, for the bundle; nil for none.
	warmed *bundle.Warmup
	// replay is the loaded trace of a replay run; nil for none.
	replay *replayed
	// sessions is the loaded workload of a sessions run; nil for none.
	sessions *sessionRun
	// tok is the OpenAI client's tokenizer once opened (runner.tokenizer).
	tok tokenize.Tokenizer
	// shardStart is the clock and start of a shard (Plan.Shard) once
	// measured; nil for none.
	shardStart *shardStart
	// sysdesc is the run's division and system description for the
	// bundle (Plan.Division, Plan.SystemDesc); nil for neither.
	sysdesc *sysdesc.Record
}

func (r *runner) notify(kind NoticeKind, format string, args ...any) {
	n := Notice{Kind: kind, Text: fmt.Sprintf(format, args...)}
	r.notices = append(r.notices, n)
	if r.plan.Notify != nil {
		r.plan.Notify(n)
	}
}

func (r *runner) version() string {
	if r.plan.Version != "" {
		return r.plan.Version
	}
	return version.String()
}

func (r *runner) run() (*Outcome, error) {
	p := r.plan
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var err error
	if r.sysdesc, err = p.systemRecord(); err != nil {
		return nil, err
	}
	if err := r.prepareShard(); err != nil {
		return nil, err
	}
	r.phase(Phase{Kind: DataLoadStart})
	st, gp, manual, o, err := r.load()
	end := Phase{Kind: DataLoadEnd, Err: err}
	if o != nil {
		end.QSL, end.TotalSamples, end.PerformanceSamples = o.qsl.Name(), o.qsl.TotalSampleCount(), o.qsl.PerformanceSampleCount()
	}
	r.phase(end)
	if err != nil {
		return nil, err
	}
	defer o.close()
	if gp != nil {
		gp.SizeJobs(offlineJobs(p, &st.settings, o.qsl))
		st.settings = gp.Settings
	}
	eff, err := loadgen.NewEffective(st.settings, o.qsl.TotalSampleCount(), o.qsl.PerformanceSampleCount())
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	// The one sizing rule: a run lasts what was asked, or says so now.
	length := lengthInput{eff: eff, set: st.settings, src: st.sources, explicit: p.Settings.Explicit != nil, model: p.Settings.Model,
		gbt: gp, chains: r.sessions != nil}
	if gp != nil {
		length.arrivals = gp.Arrivals
	}
	if r.replay != nil {
		length.arrivals, length.replay = r.replay.sched.Arrivals, true
	}
	if n := lengthNotice(length); n != "" {
		r.notify(Note, "%s", n)
	}
	if gp != nil && gp.Foreign != nil {
		if n := foreignNotice(gp); n != "" {
			r.notify(Note, "%s", n)
		}
	}
	if err := PrepareOutputDir(p.OutputDir); err != nil {
		return nil, err
	}
	return r.measure(&st, o, gp, manual)
}

// offlineJobs is the jobs count of a GB/T offline test that named none
// (gbt.RunPlan.SizeJobs): the loaded data set, min(performance_sample_count,
// QSL size), each sample once; for a program's own settings (a run
// repeated from its bundle) their min_query_count, the count they sent.
func offlineJobs(p *Plan, s *loadgen.Settings, qsl loadgen.QSL) uint64 {
	if p.Settings.Explicit != nil {
		return s.MinQueryCount
	}
	perf := s.PerformanceSampleCountOverride
	if perf == 0 {
		perf = qsl.PerformanceSampleCount()
	}
	return min(perf, qsl.TotalSampleCount())
}

// load reads the replay trace or sessions, resolves the settings and the
// GB/T plan, and opens the SUT with its data set: everything between
// DataLoadStart and DataLoadEnd.
func (r *runner) load() (st resolved, gp *gbt.RunPlan, manual testinfo.Info, o *opened, err error) {
	p := r.plan
	if err = r.loadReplay(); err != nil {
		return
	}
	if st, err = r.settings(); err != nil {
		return
	}
	if p.GBT != nil {
		if gp, err = planGBT(p.GBT, st); err != nil {
			return
		}
		if p.GBT.InfoFile != "" {
			if err = needFile("GBT.InfoFile", p.GBT.InfoFile); err != nil {
				return
			}
			if manual, err = testinfo.Load(p.GBT.InfoFile); err != nil {
				err = &UsageError{Field: "GBT.InfoFile", Err: err}
				return
			}
			st.files = append(st.files, inputFile("info", p.GBT.InfoFile))
		}
		st.settings = gp.Settings
	}
	o, err = r.open(&st)
	return
}

func (r *runner) phase(ph Phase) {
	if r.plan.Phase != nil {
		r.plan.Phase(ph)
	}
}

// measure runs the test on the opened SUT, with its recorders beside it
// (recorder), and writes the bundle.
func (r *runner) measure(st *resolved, o *opened, gp *gbt.RunPlan, manual testinfo.Info) (*Outcome, error) {
	p := r.plan
	system, info := r.host(o, gp, manual)
	opts := r.runOptions(st, gp)
	recs := r.recorders(st, o, gp)
	defer closeAll(recs) // once the bundle is written, a no-op
	var fj foreignJobs
	res, runErr := runBeside(r.ctx, recs, func() error { return r.warmup(o, st) }, func(opts *loadgen.Options) (*loadgen.Result, error) {
		return r.runTest(o, st, gp, opts, &fj)
	}, opts)
	if res == nil {
		return nil, runErr
	}
	if err := missedStart(runErr); err != nil {
		return nil, err
	}

	b := &bundle.Bundle{Result: res, Version: r.version(), Name: p.Name, System: system, Trace: p.Trace, NoReport: p.NoReport,
		Nodes: o.nodes()}
	invocation.Set(b, r.invocation(st, o))
	r.setBandwidth(b, o)
	if rec := r.shardRecord(res); rec != nil {
		shard.Set(b, rec)
	}
	if r.sysdesc != nil {
		sysdesc.Set(b, r.sysdesc)
	}
	out := &Outcome{Dir: p.OutputDir, Bundle: b, Result: res, Foreign: fj.res}
	out.Accuracy, runErr = score(res, o, runErr)
	out.Score = subsetScorer(o)
	b.AccuracyCheck = out.Accuracy
	attachAll(recs, b)
	if gp != nil {
		gbt.SetTest(b, r.gbtTest(gp, o, info, res))
		if fj.res != nil {
			b.Foreign = &bundle.Bundle{Result: fj.res, Version: r.version(), System: system, NoReport: true}
		}
	}
	d := derived.Of(b)
	out.Derived = d
	if gp != nil {
		m, err := d.GBTMetrics()
		if err != nil {
			return nil, err
		}
		out.GBT = &m
	}
	finishAll(recs, b)
	out.WriteErr = d.Write(p.OutputDir)
	out.Verdict = verdictOf(out)
	r.replayOutcome(out)
	if w := loadWarning(out, b.HostLoad); w != "" {
		r.notify(Warning, "%s", w)
	}
	if w := scheduleWarning(d.SendLateness(), p.SpinWindow); w != "" {
		r.notify(Warning, "%s", w)
	}
	out.Notices = r.notices
	return out, r.runError(out, runErr, fj.err)
}

// foreignJobs are the Result and error of a mixed test's foreign jobs.
type foreignJobs struct {
	res *loadgen.Result
	err error
}

// runTest runs the test with opts, and the foreign jobs of a mixed test
// (GB/T mode 5) into fj beside it; a nil Result comes with a *UsageError
// (loadgen refused the settings before issuing anything).
func (r *runner) runTest(o *opened, st *resolved, gp *gbt.RunPlan, opts *loadgen.Options, fj *foreignJobs) (*loadgen.Result, error) {
	// Foreign jobs of another workload, with their own accounting, run
	// beside the main jobs on the same SUT (IN-50). They draw from samples
	// of the main QSL that they load themselves, so that the main jobs'
	// unloading never takes a sample from under them.
	var wg sync.WaitGroup
	if gp != nil && gp.Foreign != nil {
		fopts := gp.ForeignOptions()
		fopts.SpinWindow, fopts.StallTimeout, fopts.MaxMemory = -1, opts.StallTimeout, r.plan.MaxMemory
		fqsl := newForeignQSL(o.qsl, gp.Test.Mixed.QSLSize)
		wg.Go(func() { fj.res, fj.err = loadgen.Run(r.ctx, o.sut, fqsl, *gp.Foreign, &fopts) })
	}
	res, err := loadgen.Run(r.ctx, o.sut, o.qsl, st.settings, opts)
	wg.Wait()
	if res == nil {
		return nil, &UsageError{Err: err}
	}
	return res, err
}

// host detects the host once: the bundle's system and, for a GB/T test,
// its test information come from the same detection.
func (r *runner) host(o *opened, gp *gbt.RunPlan, manual testinfo.Info) (sysinfo.System, testinfo.Info) {
	var system sysinfo.System
	var info testinfo.Info
	if gp != nil {
		host := sysinfo.Detect()
		system = sysinfo.SystemOf(host.Hardware)
		info = testinfo.Merge(testinfo.Merge(testinfo.FromHost(host), o.info), manual)
	} else {
		system = sysinfo.SystemOf(sysinfo.DetectHardware())
	}
	system.AimeterVersion = r.version()
	system.Routes = r.routes()
	return system, info
}

// runOptions are loadgen's options of the measured run.
func (r *runner) runOptions(st *resolved, gp *gbt.RunPlan) *loadgen.Options {
	p := r.plan
	opts := &loadgen.Options{Timeout: p.Timeout, StallTimeout: p.StallTimeout, Warnings: st.warnings, SpinWindow: p.SpinWindow,
		FindPeakResolution: p.FindPeakResolution, KeepProbeRecords: p.KeepProbeRecords, MaxMemory: p.MaxMemory}
	if p.Progress != nil {
		target := time.Duration(st.settings.MinDurationMs) * time.Millisecond
		if gp != nil {
			target = gp.Test.Arrival.Duration
		}
		opts.Progress = func(pr loadgen.Progress) { p.Progress(Progress{Progress: pr, Target: target}) }
	}
	if opts.StallTimeout == 0 {
		opts.StallTimeout = loadgen.DefaultStallTimeout
	}
	if gp != nil {
		g := gp.Options()
		opts.Arrivals, opts.SampleTimeout, opts.ExtendToDuration = g.Arrivals, g.SampleTimeout, g.ExtendToDuration
	}
	r.replayOptions(opts)
	r.shardOptions(opts)
	return opts
}

// gbtTest is the GB/T test of the bundle of a run that measured res.
func (r *runner) gbtTest(gp *gbt.RunPlan, o *opened, info testinfo.Info, res *loadgen.Result) *gbt.Test {
	test := gp.Test
	test.Generator = "aimeter " + r.version()
	test.Info = info
	if o.correct != nil {
		test.Correct = o.correct.score(o.qsl.TotalSampleCount(), o.labels)
	}
	test.Start, test.EndNs = reportedPassSpan(res)
	test.Precision = info.Precision
	test.Notes = []string{o.infoNote(info)}
	if !res.HasStages() {
		test.Notes = append(test.Notes, "The SUT reported no stage times: only tester-side time metrics are available.")
	}
	return &test
}

// runError is the error Run returns with out: the bundle's writing, the
// run's, or the foreign jobs'; nil when none failed.
func (r *runner) runError(out *Outcome, runErr, foreignErr error) error {
	switch {
	case out.WriteErr != nil:
		err := fmt.Errorf("writing the run bundle to %s (the result was measured but its files are incomplete): %w", r.plan.OutputDir, out.WriteErr)
		if runErr != nil {
			err = fmt.Errorf("%w; the run itself: %w", err, runErr)
		}
		return err
	case runErr != nil:
		return runErr
	case foreignErr != nil && !errors.Is(foreignErr, loadgen.ErrInterrupted):
		return fmt.Errorf("foreign jobs: %w", foreignErr)
	}
	return nil
}

// warmup runs the plan's warm-up, if any: the fixed-concurrency load, or
// the Server scenario's schedule at its target rate, for the requests or
// the time asked, on the same SUT, its results dropped.
// An interrupt during it ends the run before it measured anything.
func (r *runner) warmup(o *opened, st *resolved) error {
	w := r.plan.Warmup
	if w == (Warmup{}) {
		return nil
	}
	s := st.settings
	s.Mode = loadgen.PerformanceOnly
	s.MinQueryCount = max(w.Requests, 1)
	s.MinDurationMs = uint64(w.Duration.Milliseconds())
	s.AccuracyLogProbability, s.AccuracyLogSamplingTarget = 0, 0
	s.MaxErrorRate = 1
	// The warm-up's queries carry other nonces and salts than the
	// measured run's, whose query ids and samples they repeat.
	for _, w := range o.warmups {
		w(true)
	}
	defer func() {
		for _, w := range o.warmups {
			w(false)
		}
	}()
	start := time.Now()
	res, err := loadgen.Run(r.ctx, o.sut, o.qsl, s, &loadgen.Options{StallTimeout: r.plan.StallTimeout, SpinWindow: -1, MaxMemory: r.plan.MaxMemory})
	if err != nil {
		if errors.Is(err, loadgen.ErrInterrupted) || r.ctx.Err() != nil {
			return fmt.Errorf("interrupted during the warm-up: %w", err)
		}
		return fmt.Errorf("the warm-up: %w", err)
	}
	if d, ok := o.sut.(loadgen.Drainer); ok {
		if err := d.Drain(r.ctx); err != nil {
			return fmt.Errorf("draining the SUT after the warm-up: %w", err)
		}
	}
	r.warmed = &bundle.Warmup{Requests: uint64(res.RecordCount()), Failed: res.FailedSamples, DurationNs: int64(time.Since(start)), StartUnixNs: start.UnixNano()}
	r.notify(Info, "warm-up: %d requests in %v (%d failed), left out of the results", r.warmed.Requests, time.Duration(r.warmed.DurationNs).Round(time.Millisecond), res.FailedSamples)
	return nil
}

// scheduleWarning is the warning of a run on a schedule (the Server
// scenario, a trace replay) that issued more than 1 % of its queries later
// than l.LateAfter after their scheduled times: their latency counts from
// the scheduled time, so the issuer's lateness is in every latency figure.
// spin is the run's Plan.SpinWindow. On a machine whose cores the SUT
// shares, the issuer's busy-wait takes one of them: at 20,000 queries/s
// against a server on the same 2 cores (issue 27), p99 3–14 ms with the
// default window and 1.0–1.4 ms without one.
func scheduleWarning(l *trace.LatenessSummary, spin time.Duration) string {
	if l == nil || l.Count == 0 || l.P99 <= l.LateAfter {
		return ""
	}
	msg := fmt.Sprintf("the issuer fell behind its schedule: %d of %d queries (%.3g %%) went out more than %v late (p99 %v); "+
		"latency counts from the scheduled time, so every latency figure includes it", l.Late, l.Count, 100*float64(l.Late)/float64(l.Count),
		l.LateAfter, trace.RoundLateness(l.P99))
	if spin < 0 {
		return msg + "; the issuer did not busy-wait (SpinWindow below 0): this machine could not keep the schedule"
	}
	if spin == 0 {
		spin = loadgen.DefaultSpinWindow
	}
	return msg + fmt.Sprintf("; if the SUT shares this machine's cores, SpinWindow -1ns frees the core the issuer busy-waits on (%v before each query) "+
		"at the cost of Go's timer precision (about a millisecond), or run the SUT on other cores", spin)
}

// verdictOf is derived.VerdictOf of the outcome: one rule for the run,
// `aimeter report` and result.json (none for one shard of a test).
func verdictOf(o *Outcome) Verdict {
	return derived.VerdictOf(o.Bundle, o.GBT)
}

// loadWarning is the busy-machine warning, given only when the measured
// load of other processes plausibly explains the failed check: a run that
// missed its latency bound (MLPerf) or lost jobs to their timeout (GB/T),
// with no SUT failures and no interrupt to explain it instead.
func loadWarning(o *Outcome, load *sysinfo.Load) string {
	res := o.Result
	if load == nil || !load.Busy() || o.Verdict.Pass || res.Interrupted != "" || res.FailedSamples > 0 {
		return ""
	}
	explains := false
	switch {
	case o.GBT != nil:
		explains = o.GBT.Loss.Lost > 0
	case res.Summary != nil:
		explains = res.Summary.HasPerfConstraints() && !res.Summary.PerfConstraintsMet
	}
	if !explains {
		return ""
	}
	what := "latency bound"
	if o.GBT != nil {
		what = "job timeouts"
	}
	return fmt.Sprintf("during the run %s: the missed %s may be the machine's, not the SUT's; run again on a quieter machine", load, what)
}

// reportedPassSpan returns the wall-clock start of the reported pass (the
// records' time zero) and its length in ns.
func reportedPassSpan(res *loadgen.Result) (time.Time, int64) {
	for _, ps := range res.Passes {
		if ps.Reported {
			return time.Unix(0, ps.StartUnixNs), ps.EndNs
		}
	}
	if len(res.Passes) > 0 {
		ps := res.Passes[len(res.Passes)-1]
		return time.Unix(0, ps.StartUnixNs), ps.EndNs
	}
	return time.Now(), 0
}

// PrepareOutputDir creates dir and checks that a file can be written in
// it (a *UsageError naming OutputDir otherwise), so that an unusable
// directory (empty, a file, a device, read-only, or
// a path under a file) is refused before anything runs rather than after
// the run, when its result would be lost.
func PrepareOutputDir(dir string) error {
	if strings.TrimSpace(dir) == "" {
		return usage("OutputDir", "OutputDir: empty; name a directory for the logs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usage("OutputDir", "OutputDir %s: cannot create the directory: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".aimeter-write-test-*")
	if err != nil {
		return usage("OutputDir", "OutputDir %s: cannot write in the directory: %w", dir, err)
	}
	name := probe.Name()
	_, werr := io.WriteString(probe, "aimeter\n")
	cerr := probe.Close()
	rerr := os.Remove(name)
	if err := errors.Join(werr, cerr, rerr); err != nil {
		return usage("OutputDir", "OutputDir %s: cannot write in the directory: %w", dir, err)
	}
	return nil
}

// OutcomeOf is the outcome of a bundle read back (`aimeter report`): the
// same verdict and figures its run had, recomputed from the raw parts. dir
// is where its derived files are (or are to be) written.
func OutcomeOf(b *bundle.Bundle, dir string) (*Outcome, error) {
	if b.Result == nil {
		return nil, errors.New("benchmark: OutcomeOf a bundle without a run (a training bundle?)")
	}
	d := derived.Of(b)
	out := &Outcome{Dir: dir, Bundle: b, Derived: d, Result: b.Result, Accuracy: b.AccuracyCheck}
	if b.Foreign != nil {
		out.Foreign = b.Foreign.Result
	}
	if gbt.TestOf(b) != nil {
		m, err := d.GBTMetrics()
		if err != nil {
			return nil, err
		}
		out.GBT = &m
	}
	out.Verdict = verdictOf(out)
	if err := workloadOutcome(out); err != nil {
		return nil, err
	}
	return out, nil
}
