package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/stdrand"
)

// DefaultStallTimeout is how long a run waits without any sample completing
// before it gives up on the outstanding samples.
const DefaultStallTimeout = 5 * time.Minute

// DefaultInterruptGrace is how long a cancelled run waits for samples already
// issued before counting them lost.
const DefaultInterruptGrace = 2 * time.Second

// ErrInterrupted is returned (wrapped) by Run when the context was cancelled
// or the run timed out; the Result is still complete and INVALID.
var ErrInterrupted = errors.New("run interrupted")

// ErrSUTBlocked is returned (wrapped) by Run when the SUT stayed inside
// IssueQuery or FlushQueries past the stall timeout, or past the interrupt
// grace of a cancelled run, and Run gave up on the call. The Result is still
// complete and its summary INVALID, with the reason "SUT blocked in
// IssueQuery for …". When the run was also cancelled or timed out, Run
// returns ErrInterrupted instead.
var ErrSUTBlocked = errors.New("SUT blocked")

// Options are aimeter's run controls beyond LoadGen's TestSettings. The zero
// value is ready to use.
type Options struct {
	// Timeout ends the whole test after this long (0 = no limit). The
	// outstanding samples are then lost and the result is INVALID.
	Timeout time.Duration
	// StallTimeout ends the test when no sample completes for this long while
	// the run waits for one (0 = DefaultStallTimeout; negative = wait forever).
	// It also bounds a single call of the SUT's IssueQuery or FlushQueries:
	// Run gives up on a call that has not returned after this long.
	//
	// A call Run gives up on (after StallTimeout, or after InterruptGrace
	// once the run is cancelled or Timeout expires) cannot be stopped: Go
	// has no way to end another goroutine. Run leaves the goroutine that
	// made the call behind, one per blocked call, and returns; the call's
	// samples are lost, the pass stops with the reason "SUT blocked in
	// IssueQuery for …" (or FlushQueries), no later pass runs, and Run's
	// error wraps ErrSUTBlocked. When the call finally returns, that
	// goroutine ends without touching the Result.
	StallTimeout time.Duration
	// InterruptGrace is how long a cancelled run still waits for issued
	// samples, and for a SUT call in progress to return
	// (0 = DefaultInterruptGrace).
	InterruptGrace time.Duration
	// Warnings are logged as warning_generic_message events before the test
	// (for example "Found Audit Config file…"). Package mlperflog writes
	// them where LoadGen writes its own, and counts as warnings only
	// LoadGen's (the audit.config one and Test05Warning).
	Warnings []string
	// Progress, if set, is called about five times a second from a separate
	// goroutine while a pass runs, and once when it ends.
	Progress func(Progress)

	// SampleTimeout, when > 0, is the GB/T 45087 timeout-control threshold
	// (GB-7.4.1-d/e, GB-7.6.2-TOUT): a sample whose result has not arrived
	// this long after its query was issued is lost at that moment — counted,
	// recorded with status "lost", and never waited for again. The
	// timestamps decide, not the timer: a result completed after issue +
	// SampleTimeout is lost even when it beats the timer, and every late
	// result is counted in Result.LateCompletions against its sample. In
	// SingleStream and MultiStream the next query then goes out (arrival
	// mode 0).
	SampleTimeout time.Duration

	// Arrivals, if not nil, replaces the Server scenario's Poisson schedule
	// with these query arrival offsets (ns from the start of issuing,
	// non-decreasing): one query per entry, samples chosen as for Server.
	// The GB/T 45087 arrival modes 1–3 are built on it. Server only.
	Arrivals []int64
	// ArrivalSamples, if not nil, names the sample of each query of
	// Arrivals (same length): query k issues QSL index ArrivalSamples[k]
	// instead of a drawn one, so that a replayed trace sends request k at
	// its own time. Every index must be loaded by the performance pass:
	// below min(performance sample count, total sample count). It applies
	// to performance passes only (accuracy passes issue the data set as
	// LoadGen does); a find-peak search is refused, as its probes would
	// all replay the same schedule.
	ArrivalSamples []uint64
	// Chains, if not nil, replaces the Server schedule with dependent
	// queries, such as the turns of chat sessions (see Chains). It
	// excludes Arrivals and ArrivalSamples and applies to performance
	// passes only.
	Chains *Chains

	// SpinWindow is how close to a scheduled Server query the issuer stops
	// sleeping and busy-waits, so that queries go out within nanoseconds of
	// their schedule (Go's timers cannot wake an idle process sooner than
	// about a millisecond, golang/go#44343, and lateness counts as latency).
	// The price is one core kept busy at high rates, which an in-process
	// SUT on a small machine may need more. 0 means DefaultSpinWindow; a
	// negative value never spins: the issuer sleeps to each scheduled time,
	// which is also what lets it run on testing/synctest's fake clock.
	SpinWindow time.Duration

	// Records, if not nil, receives the run's records while it goes, so
	// that a program can encode, hash or aggregate them during the run
	// instead of after it. Every record of Result.Records comes exactly
	// once and in that order, in calls of consecutive records: while a pass
	// runs, about every RecordsInterval, the records of its samples that
	// have ended (completed, failed or lost) in an unbroken run from the
	// last one sent; when the pass ends, before the next starts, the rest.
	// Calls come one at a time from a goroutine of Run's, and the last one
	// before Run returns; recs is reused once the call returns, and a slow
	// Records holds up only itself and the end of each pass. A find-peak
	// run needs KeepProbeRecords, as its probes' records would otherwise be
	// dropped after they were sent. Records must not panic.
	Records func(recs []Record)
	// RecordColumns is Records by column, for a program that keeps records
	// as columns (an encoder of a columnar file): the same records in the
	// same calls, without the fields that only some SUTs fill (the bytes,
	// node and error of a sample: read them from the Result afterwards).
	// c is reused once the call returns. At most one of Records and
	// RecordColumns may be set.
	RecordColumns func(c *RecordColumns)
	// RecordsInterval is how often Records is offered the records that have
	// ended; 0 means DefaultRecordsInterval.
	RecordsInterval time.Duration

	// KeepProbeRecords keeps the records of every find-peak probe. By
	// default only the reported probe keeps its records; the others are
	// summarised (PassInfo.Probe) and their records dropped as soon as the
	// search has moved past them, so that memory and records.csv hold about
	// one probe's worth, not the whole search's.
	KeepProbeRecords bool
	// FindPeakResolution, when > 0, ends the find-peak bisection once the
	// bounds are within this fraction of the lower bound (0.01: 1 %), as
	// well as at LoadGen's own stopping point (the decimals of precision).
	// 0 searches exactly as LoadGen does.
	FindPeakResolution float64

	// ExtendToDuration lets a closed-loop performance pass (SingleStream,
	// fixed concurrency, MultiStream) generate queries beyond LoadGen's
	// count until it ends naturally: min_query_count issued and
	// min_duration passed. LoadGen generates twice min_duration at the
	// expected latency and, against a SUT faster than that, runs out of
	// queries before min_duration ("Ran out of generated queries"); GB/T
	// 45087 arrival mode 0 must instead send jobs until its duration has
	// passed (GB-7.4.2-T10-mode0). The further queries continue the same
	// sample_rng stream, a chunk at a time as the issuer reaches them, so
	// the queries LoadGen would have generated are the same, and the
	// detail log keeps LoadGen's generated_query_count and
	// generated_query_duration. Memory follows the queries issued and
	// stays within MaxMemory (the pass stops at its budget, as any
	// on-demand pass); a pass of more than extendMaxQueries queries
	// still runs out. Settings are untouched, so a run without it keeps
	// LoadGen's queries, count and bytes. Passes generated whole
	// (performance_issue_unique, accuracy) are not extended.
	ExtendToDuration bool

	// Shard, when Shard.Count > 1, makes the run one shard of a test split
	// over several load generators: it generates the whole test's schedule
	// and issues only its part (see Shard for the rule), with the whole
	// test's sequence and query ids, and Result.Shard records the
	// schedule's digest. The zero value runs the whole test.
	Shard Shard
	// StartAt, when not zero, is when the reported pass (the performance
	// pass; in accuracy mode the first accuracy pass) starts issuing, on
	// this host's clock: Run generates its queries and loads its samples,
	// then waits until StartAt (or until ctx is cancelled), so that shards
	// on several hosts start their schedules together. It sleeps to within
	// SpinWindow of StartAt and spins through the rest (a negative
	// SpinWindow only sleeps, as testing/synctest needs). The zero value
	// starts at once.
	StartAt time.Time
	// StartTolerance is how late after StartAt issuing may start: later,
	// Run issues nothing and returns a *StartError (ErrMissedStart) rather
	// than shift the schedule. 0 means DefaultStartTolerance.
	StartTolerance time.Duration

	// MaxMemory is the memory budget of the run in bytes: a run whose
	// estimated memory (Effective.EstimateMemory) exceeds it is refused
	// with a *BudgetError before anything is generated. 0 means
	// DefaultMaxMemory; a negative value means no limit.
	MaxMemory int64
}

// Test05Warning is the warning LoadGen logs before the settings when the
// settings ask for TEST05 (its random seeds replace the usual ones).
const Test05Warning = "Test05 flag detected Overriding random seeds"

// DefaultSpinWindow is the default Options.SpinWindow.
const DefaultSpinWindow = 2 * time.Millisecond

func (o *Options) spinWindow() time.Duration {
	if o.SpinWindow == 0 {
		return DefaultSpinWindow
	}
	return max(o.SpinWindow, 0)
}

// Progress is a snapshot of the running pass for live displays.
type Progress struct {
	Pass        PassKind
	Elapsed     time.Duration // since the start of issuing of this pass
	Issued      int64         // samples issued so far
	Completed   int64         // samples completed (or lost) so far
	Lost        int64         // samples lost so far (timeouts, see Options.SampleTimeout)
	Failed      int64         // samples completed with an error so far (counted in Completed)
	Queries     int64         // queries (jobs) issued so far
	QueriesDone int64         // queries (jobs) completed (or lost) so far
	Generated   int64         // samples generated for the pass
	Done        bool          // the pass has ended
}

func (o *Options) validate(s Settings) error {
	if o.Records != nil && o.RecordColumns != nil {
		return &FieldError{Field: "Options.RecordColumns", Value: "set", Allowed: "Options.Records is set too: set one of them"}
	}
	if o.Records != nil && s.Mode == FindPeakPerformance && !o.KeepProbeRecords {
		return &FieldError{Field: "Options.Records", Value: "set", Allowed: "a find-peak run drops its probes' records after they were sent: set KeepProbeRecords too"}
	}
	if o.RecordColumns != nil && s.Mode == FindPeakPerformance && !o.KeepProbeRecords {
		return &FieldError{Field: "Options.RecordColumns", Value: "set", Allowed: "a find-peak run drops its probes' records after they were sent: set KeepProbeRecords too"}
	}
	if o.RecordsInterval < 0 {
		return &FieldError{Field: "Options.RecordsInterval", Value: o.RecordsInterval, Allowed: "must be ≥ 0 (0 = DefaultRecordsInterval)"}
	}
	if err := o.checkShard(s); err != nil {
		return err
	}
	if !o.StartAt.IsZero() && s.Mode == FindPeakPerformance {
		return &FieldError{Field: "Options.StartAt", Value: o.StartAt, Allowed: "a find-peak search has no one pass to start at a given time: leave it zero"}
	}
	if o.StartTolerance < 0 {
		return &FieldError{Field: "Options.StartTolerance", Value: o.StartTolerance, Allowed: "must be ≥ 0 (0 = DefaultStartTolerance)"}
	}
	if o.SampleTimeout < 0 {
		return &FieldError{Field: "Options.SampleTimeout", Value: o.SampleTimeout, Allowed: "must be ≥ 0 (0 = no timeout)"}
	}
	if o.Arrivals != nil {
		if s.Scenario != Server {
			return &FieldError{Field: "Options.Arrivals", Value: len(o.Arrivals), Allowed: "an arrival schedule replaces the Server schedule: use the Server scenario"}
		}
		if len(o.Arrivals) == 0 {
			return &FieldError{Field: "Options.Arrivals", Value: 0, Allowed: "must hold at least one arrival"}
		}
		for i, a := range o.Arrivals {
			if a < 0 || (i > 0 && a < o.Arrivals[i-1]) {
				return &FieldError{Field: "Options.Arrivals", Value: a, Allowed: fmt.Sprintf("offsets must be ≥ 0 and non-decreasing (entry %d)", i)}
			}
		}
	}
	return nil
}

// validateSamples checks Options.ArrivalSamples against Arrivals and the
// loaded set [0, loaded).
func (o *Options) validateSamples(s Settings, loaded uint64) error {
	if o.ArrivalSamples == nil {
		return nil
	}
	switch {
	case o.Arrivals == nil:
		return &FieldError{Field: "Options.ArrivalSamples", Value: len(o.ArrivalSamples), Allowed: "names the sample of each entry of Options.Arrivals: set Arrivals too"}
	case len(o.ArrivalSamples) != len(o.Arrivals):
		return &FieldError{Field: "Options.ArrivalSamples", Value: len(o.ArrivalSamples), Allowed: fmt.Sprintf("must hold one sample per arrival (%d)", len(o.Arrivals))}
	case s.Mode == FindPeakPerformance:
		return &FieldError{Field: "Options.ArrivalSamples", Value: len(o.ArrivalSamples), Allowed: "a find-peak search changes the rate of each probe; a fixed list of arrivals has none to change: use the performance mode"}
	}
	for i, idx := range o.ArrivalSamples {
		if idx >= loaded {
			return &FieldError{Field: "Options.ArrivalSamples", Value: idx, Allowed: fmt.Sprintf("entry %d: indices must be below the %d samples a performance pass loads (the performance sample count, capped at the QSL's size)", i, loaded)}
		}
	}
	return nil
}

func (o *Options) stallTimeout() time.Duration {
	switch {
	case o.StallTimeout == 0:
		return DefaultStallTimeout
	case o.StallTimeout < 0:
		return 1<<63 - 1
	}
	return o.StallTimeout
}

func (o *Options) interruptGrace() time.Duration {
	if o.InterruptGrace > 0 {
		return o.InterruptGrace
	}
	return DefaultInterruptGrace
}

// testRun is the state of one Run: LoadGen's StartTest.
type testRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	sut    SUT
	qsl    QSL
	req    Settings
	eff    Effective
	opts   Options
	origin time.Time
	resp   *Responder

	evMu   sync.Mutex
	events []Event

	seq uint64 // next sample sequence id
	qid uint64 // next query sequence id
	// accuracy-log values: the default-seeded engine shared by the test,
	// and how many samples it has been advanced past.
	accRNG *stdrand.MT19937
	accPos uint64

	passes []*passRecord

	progressIssued    atomic.Int64
	serverIssuedTotal atomic.Int64
	interrupted       string
	// blocked is the first "SUT blocked in …" reason: once set, no further
	// pass runs. Only Run's goroutine touches it.
	blocked string

	// startDone says the wait for Options.StartAt is over; startLate is
	// how late issuing started, startErr why it did not.
	startDone bool
	startLate time.Duration
	startErr  error
	// digests are the schedule digests of the kept passes of a shard.
	digests []string
}

// recordsShard reports whether the run fills Result.Shard: a shard, or a
// run with a common start.
func (t *testRun) recordsShard() bool {
	return t.opts.Shard.Count > 0 || !t.opts.StartAt.IsZero()
}

// blockedSUT records that Run gave up on a SUT call.
func (t *testRun) blockedSUT(reason string) {
	if t.blocked == "" {
		t.blocked = reason
	}
	t.errorEvent("error_runtime", reason+": its samples are lost and the goroutine that made the call is left behind")
}

// stopped reports whether no further pass may run: the run was cancelled
// or timed out, or the SUT blocked.
func (t *testRun) stopped() bool {
	return t.ctx.Err() != nil || t.blocked != ""
}

// passRecord is a finished pass as kept in the Result.
type passRecord struct {
	info      PassInfo
	p         *pass
	queryBase uint64
	// dropped says dropRecords discarded the per-sample data; droppedLost
	// counts the lost samples it held.
	dropped     bool
	droppedLost int
}

// dropRecords discards the per-sample data of the pass, keeping its info
// and its count of lost samples; its records then yield nothing.
func (pr *passRecord) dropRecords() {
	if pr.dropped {
		return
	}
	pr.dropped = true
	pr.droppedLost = countState(pr.p, stateLost)
	pr.p = &pass{kind: pr.p.kind, seqBase: pr.p.seqBase, gen: &generatedQueries{spq: 1}}
	if pr.info.Probe != nil {
		pr.info.Probe.RecordsDropped = true
	}
}

func (t *testRun) now() int64 { return int64(time.Since(t.origin)) }

// mergeNotes places each note among events as an error_runtime event at
// the time it was noted: before the first event after it, keeping the
// order of events as it is.
func mergeNotes(events []Event, notes []timedNote) []Event {
	if len(notes) == 0 {
		return events
	}
	notes = slices.Clone(notes)
	slices.SortStableFunc(notes, func(a, b timedNote) int { return cmp.Compare(a.at, b.at) })
	out := make([]Event, 0, len(events)+len(notes))
	// flush appends the notes noted up to t (all of them for MaxInt64).
	flush := func(t int64) {
		for len(notes) > 0 && notes[0].at <= t {
			out = append(out, Event{TimeNs: notes[0].at, Key: "error_runtime", Value: notes[0].msg, Error: true})
			notes = notes[1:]
		}
	}
	for _, e := range events {
		flush(e.TimeNs)
		out = append(out, e)
	}
	flush(math.MaxInt64)
	return out
}

func (t *testRun) event(e Event) {
	t.evMu.Lock()
	t.events = append(t.events, e)
	t.evMu.Unlock()
}

func (t *testRun) errorEvent(key, msg string) {
	t.event(Event{TimeNs: t.now(), Key: key, Value: msg, Error: true})
}

func (t *testRun) cancelReason() string {
	if cause := context.Cause(t.ctx); cause != nil {
		return cause.Error()
	}
	return "cancelled"
}

// Run runs one test, like LoadGen's StartTest, and returns its result.
//
// Invalid settings are reported before anything is issued, as a *FieldError
// naming the key. Once the test has started Run always returns a Result;
// when ctx is cancelled or opts.Timeout expires it stops issuing, counts the
// outstanding samples as lost and also returns an error wrapping
// ErrInterrupted. Run never exits the process, handles no signals and writes
// no files: see package mlperflog for the logs.
func Run(ctx context.Context, sut SUT, qsl QSL, settings Settings, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	total, perf := qsl.TotalSampleCount(), qsl.PerformanceSampleCount()
	eff, err := NewEffective(settings, total, perf)
	if err != nil {
		return nil, err
	}
	if err := opts.validate(settings); err != nil {
		return nil, err
	}
	if err := opts.validateSamples(settings, min(total, perf)); err != nil {
		return nil, err
	}
	if c := opts.Chains; c != nil {
		if opts.Arrivals != nil || opts.ArrivalSamples != nil {
			return nil, &FieldError{Field: "Options.Chains", Value: "set", Allowed: "chains replace Arrivals and ArrivalSamples: give one or the other"}
		}
		if err := c.validate(settings, min(total, perf)); err != nil {
			return nil, err
		}
	}
	if err := checkBudget(&eff, total, opts); err != nil {
		return nil, err
	}
	t := &testRun{sut: sut, qsl: qsl, req: settings, eff: eff, opts: *opts, accRNG: stdrand.New(stdrand.DefaultSeed)}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	defer t.cancel(nil)
	if opts.Timeout > 0 {
		var stop context.CancelFunc
		t.ctx, stop = context.WithTimeoutCause(t.ctx, opts.Timeout, fmt.Errorf("run timeout of %v reached", opts.Timeout))
		defer stop()
	}
	t.resp = &Responder{t: t}
	t.origin = time.Now()
	res := &Result{
		StartTime:           t.origin,
		QSLName:             qsl.Name(),
		QSLTotalCount:       total,
		QSLPerformanceCount: perf,
		Requested:           settings,
		Effective:           eff,
	}
	before := t.now()
	res.SUTName = sut.Name()
	res.GetSUTNameDurationNs = t.now() - before

	for _, w := range opts.Warnings {
		t.event(Event{TimeNs: t.now(), Key: "warning_generic_message", Value: w, Warning: true})
	}
	if settings.Test05 {
		t.event(Event{TimeNs: t.now(), Key: "warning_generic_message", Value: Test05Warning, Warning: true})
	}

	var runErr error
	switch eff.Mode {
	case SubmissionRun:
		runErr = t.runAccuracy()
		if runErr == nil && !t.stopped() {
			res.Summary, runErr = t.runPerformance(&t.eff, PassPerformance)
			t.markReported(res.Summary)
		}
	case AccuracyOnly:
		runErr = t.runAccuracy()
	case PerformanceOnly:
		res.Summary, runErr = t.runPerformance(&t.eff, PassPerformance)
		t.markReported(res.Summary)
	case FindPeakPerformance:
		res.Summary, runErr = t.findPeak()
	}
	if runErr == nil && t.ctx.Err() != nil {
		t.interrupted = t.cancelReason()
	}

	res.Events = t.events
	r := t.resp
	r.mu.Lock()
	res.Accuracy = r.accuracy
	res.Errors = r.errs.list
	res.Events = mergeNotes(res.Events, r.errLog)
	if left := r.errNotes - uint64(len(r.errLog)); left > 0 {
		res.Events = append(res.Events, Event{TimeNs: t.now(), Key: "error_runtime", Error: true, Value: fmt.Sprintf(
			"%d further SUT errors not logged in full (%d unknown, %d duplicate completions, %d failed samples in all)",
			left, r.unknown.Load(), r.duplicate.Load(), r.failed.Load())})
	}
	r.mu.Unlock()
	res.UnknownCompletions = r.unknown.Load()
	res.DuplicateCompletions = r.duplicate.Load()
	res.LateCompletions = r.late.Load()
	res.FailedSamples = r.failed.Load()
	for _, pr := range t.passes {
		res.Passes = append(res.Passes, pr.info)
		res.LostSamples += uint64(countState(pr.p, stateLost) + pr.droppedLost)
	}
	res.passes = t.passes
	res.Interrupted = t.interrupted
	if t.recordsShard() {
		res.Shard = &ShardRun{Shard: t.opts.Shard, Passes: t.digests, ScheduleSHA256: combineDigests(t.digests), StartLate: t.startLate}
	}
	if runErr != nil {
		return res, runErr
	}
	if res.Interrupted != "" {
		return res, fmt.Errorf("%w: %s", ErrInterrupted, res.Interrupted)
	}
	if t.blocked != "" {
		return res, fmt.Errorf("%w: %s", ErrSUTBlocked, t.blocked)
	}
	return res, nil
}

func countState(p *pass, s uint32) int {
	n := 0
	for i := range int(p.extent.Load()) {
		if p.state.at(i).Load() == s {
			n++
		}
	}
	return n
}

func (t *testRun) loadSamples(set []uint64) (err error) {
	t.event(Event{TimeNs: t.now(), Key: "loaded_qsl_set", Value: set})
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("loading %d samples from QSL %q: QSL panicked in LoadSamples: %v", len(set), t.qsl.Name(), v)
		}
	}()
	if err := t.qsl.LoadSamples(set); err != nil {
		return fmt.Errorf("loading %d samples from QSL %q: %w", len(set), t.qsl.Name(), err)
	}
	return nil
}

func (t *testRun) unloadSamples(set []uint64) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("unloading samples from QSL %q: QSL panicked in UnloadSamples: %v", t.qsl.Name(), v)
		}
	}()
	if err := t.qsl.UnloadSamples(set); err != nil {
		return fmt.Errorf("unloading samples from QSL %q: %w", t.qsl.Name(), err)
	}
	return nil
}

// runAccuracy is LoadGen's RunAccuracyMode: every loadable set of the
// accuracy sample count, load → issue every sample once → unload.
func (t *testRun) runAccuracy() error {
	t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "Starting accuracy mode"})
	for _, set := range generateLoadableSets(&t.eff, true, t.qsl.TotalSampleCount()) {
		if err := t.loadSamples(set.indices); err != nil {
			return err
		}
		t.runPass(&t.eff, set, PassAccuracy)
		if err := t.unloadSamples(set.indices); err != nil {
			return err
		}
		if t.startErr != nil {
			return t.startErr
		}
		if t.stopped() {
			if t.ctx.Err() != nil {
				t.interrupted = t.cancelReason()
			}
			return nil
		}
	}
	return nil
}

// runPerformance is LoadGen's RunPerformanceMode for one set of settings.
func (t *testRun) runPerformance(e *Effective, kind PassKind) (*Summary, error) {
	if kind == PassPerformance {
		t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "Starting performance mode"})
	}
	set := generateLoadableSets(e, false, t.qsl.TotalSampleCount())[0]
	if err := t.loadSamples(set.indices); err != nil {
		return nil, err
	}
	sum := t.runPass(e, set, kind)
	if sum != nil {
		sum.pass = len(t.passes) - 1
	}
	if err := t.unloadSamples(set.indices); err != nil {
		return sum, err
	}
	return sum, t.startErr
}

// runPass generates, issues and drains one pass and records it. It returns
// the pass summary for performance passes.
func (t *testRun) runPass(e *Effective, set loadableSet, kind PassKind) *Summary {
	accuracy := kind == PassAccuracy
	arrivals, samples := t.opts.Arrivals, t.opts.ArrivalSamples
	if c := t.opts.Chains; c != nil {
		// Every query is generated at offset 0; the issuer sets each
		// one's scheduled time as it becomes known (runChains).
		arrivals, samples = make([]int64, len(c.After)), c.Samples
	}
	gen, err := generateQueriesAt(t.ctx, e, accuracy, set, t.seq, arrivals, samples)
	if err != nil {
		// Cancelled while generating: nothing was issued, no pass is kept.
		t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "Query generation cancelled: " + err.Error()})
		return nil
	}
	var digest string
	if t.recordsShard() {
		// The whole schedule, before the shard takes its part.
		if digest, err = scheduleDigest(t.ctx, e, accuracy, set, t.seq, arrivals, samples, gen, kind); err != nil {
			t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "Query generation cancelled: " + err.Error()})
			return nil
		}
	}
	// Extended or not, the log holds LoadGen's count (Options.ExtendToDuration).
	extended := t.opts.ExtendToDuration && !accuracy && gen.extendTo(extendCapacity(gen, t.opts.maxMemory()))
	t.event(Event{TimeNs: t.now(), Key: "generated_query_count", Value: uint64(gen.logged)})
	t.event(Event{TimeNs: t.now(), Key: "generated_samples_per_query", Value: uint64(gen.loggedSPQ)})
	t.event(Event{TimeNs: t.now(), Key: "generated_query_duration", Value: gen.duration})

	// The whole pass's ids: a shard's records keep them.
	wholeSamples, wholeQueries := uint64(gen.n), uint64(gen.queries)
	seqBase, ownAll := t.seq, !t.opts.Shard.Sharded()
	if !ownAll && e.Scenario == Offline && gen.queries == 1 {
		// Offline's one query: the shard's block of its samples (shard.go).
		lo, hi := t.opts.Shard.Block(gen.n)
		gen, seqBase, ownAll = gen.offlineBlock(lo, hi), t.seq+uint64(lo), true
	}
	p := newPass(kind, gen, seqBase, e.UseTokenLatencies, e.Scenario == Offline)
	if !ownAll {
		p.shard = t.opts.Shard
	}
	t.setupAccuracyLog(p, e, accuracy)
	if p.onDemand() {
		// Its pages are allocated as the issuer reaches them, within the
		// run's memory budget.
		p.budget = t.opts.maxMemory()
	} else {
		p.prepareAll()
	}
	if t.startsHere(kind) {
		if t.startErr = t.waitStart(); t.startErr != nil {
			t.errorEvent("error_runtime", t.startErr.Error())
			return nil
		}
	}
	rec := &passRecord{p: p, queryBase: t.qid, info: PassInfo{Kind: kind, FirstSeq: t.seq, EndSeq: t.seq + wholeSamples, TargetQPS: e.TargetQPS}}
	t.seq += wholeSamples
	t.qid += wholeQueries
	t.passes = append(t.passes, rec)
	if t.recordsShard() {
		t.digests = append(t.digests, digest)
	}

	protocolBefore := t.resp.protocolErrors()
	t.resp.cur.Store(p)
	wallStart := time.Now()
	p.origin = t.now()
	stopProgress := t.startProgress(p)
	stopReaper := t.startReaper(p)
	finishRecords := t.streamRecords(rec)
	st := t.issuePass(p, e, accuracy)
	if extended {
		// An extended pass's sequence ids end with LoadGen's count, or
		// with the queries it issued beyond it. (The performance pass is
		// the last of a closed-loop run: no pass follows to number on.)
		q := max(uint64(gen.logged), t.opts.Shard.issuedEnd(st.queriesIssued))
		rec.info.EndSeq = rec.info.FirstSeq + q*uint64(gen.spq)
		t.seq, t.qid = rec.info.EndSeq, rec.queryBase+q
	}
	rec.info.StartUnixNs = wallStart.UnixNano()
	rec.info.QueriesIssued = st.queriesIssued
	for _, ev := range st.errors {
		t.event(ev)
	}
	if !st.blocked {
		if reason := t.flush(p); reason != "" {
			st.blocked, st.stop, st.ranOut = true, reason, false
		}
	}
	if !accuracy && st.ranOut {
		t.errorEvent("error_runtime", "Ending early: Ran out of generated queries to issue before the minimum query count and test duration were reached. Please update the relevant expected latency or target qps in the TestSettings so they are more accurate.")
	}
	stop := st.stop
	if !st.stalled && !st.blocked {
		// A stalled issuer already waited the stall timeout for progress.
		if reason := t.drain(p); stop == "" {
			stop = reason
		}
	}
	rec.info.EndNs = t.now() - p.origin
	stopReaper()
	t.closePass(p)
	finishRecords()
	stopProgress()
	rec.info.StopReason = stop
	rec.info.ProtocolErrors = t.resp.protocolErrors() - protocolBefore

	maxCompletion, pr := rec.scan(e, !accuracy)
	power := t.origin.Add(time.Duration(p.origin))
	t.event(Event{TimeNs: t.now(), Key: "power_begin", Value: powerTime(power), Kind: EventIntervalStart})
	t.event(Event{TimeNs: t.now(), Key: "power_end", Value: powerTime(power.Add(time.Duration(maxCompletion))), Kind: EventIntervalEnd})
	if accuracy {
		return nil
	}
	if stop != "" {
		pr.StopReason = stop
	}
	return Summarize(t.sutName(), *e, pr)
}

func (t *testRun) sutName() string { return t.sut.Name() }

// extendCapacity is the most queries a pass extended past LoadGen's count
// (Options.ExtendToDuration) may generate: those whose records fit the
// memory budget (0: none), at most extendMaxQueries.
func extendCapacity(g *generatedQueries, budget uint64) int {
	capacity := uint64(extendMaxQueries)
	if budget > 0 {
		perQuery := uint64(g.spq)*(bytesPerSample+bytesPerResult) + bytesPerQuery
		capacity = min(capacity, budget/perQuery)
	}
	return int(capacity)
}

// powerTime formats a time as LoadGen's power logs: MM-DD-YYYY HH:MM:SS.mmm in UTC.
func powerTime(tm time.Time) string {
	return tm.UTC().Format("01-02-2006 15:04:05.000")
}

// flush calls the SUT's FlushQueries on a goroutine of its own, turning a
// panic into an error event. Like the issuers' watchdog, it gives up on a
// call that has run for the stall timeout while no sample of p completed,
// or that is still running the interrupt grace after the run was
// cancelled, and then returns the "SUT blocked in FlushQueries for …"
// reason.
func (t *testRun) flush(p *pass) string {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		t.sut.FlushQueries()
	}()
	start := time.Now()
	stall := t.opts.stallTimeout()
	look := time.NewTimer(stall / watchdogLooks)
	defer look.Stop()
	lastDone, lastProgress := p.samplesDone.Load(), start
	var graceEnd time.Time
	cancelled := t.ctx.Done()
	for {
		select {
		case v := <-done:
			if v != nil {
				t.errorEvent("error_runtime", fmt.Sprintf("SUT panicked in FlushQueries: %v", v))
			}
			return ""
		case <-cancelled:
			cancelled = nil
			graceEnd = time.Now().Add(t.opts.interruptGrace())
			look.Reset(t.opts.interruptGrace())
		case <-look.C:
			now := time.Now()
			if d := p.samplesDone.Load(); d != lastDone {
				lastDone, lastProgress = d, now
			}
			overrun := now.Sub(lastProgress) >= stall
			if !graceEnd.IsZero() {
				overrun = !now.Before(graceEnd)
			}
			if overrun {
				reason := fmt.Sprintf("SUT blocked in FlushQueries for %v", now.Sub(start).Round(time.Millisecond))
				t.blockedSUT(reason)
				return reason
			}
			if graceEnd.IsZero() {
				look.Reset(stall / watchdogLooks)
			} else {
				look.Reset(time.Until(graceEnd))
			}
		}
	}
}

// drain waits until every issued sample has completed, the stall timeout
// expires, or the run is cancelled (then it waits the interrupt grace).
func (t *testRun) drain(p *pass) string {
	p.draining.Store(true)
	defer p.draining.Store(false)
	it := &issuer{t: t, p: p}
	for p.samplesDone.Load() < p.samplesIssued.Load() {
		if t.ctx.Err() != nil {
			return t.graceDrain(p)
		}
		if ok, reason, _ := it.block(-1); !ok {
			if t.ctx.Err() != nil {
				return t.graceDrain(p)
			}
			return reason
		}
	}
	if it.timer != nil {
		it.timer.Stop()
	}
	return ""
}

func (t *testRun) graceDrain(p *pass) string {
	reason := t.cancelReason()
	deadline := time.NewTimer(t.opts.interruptGrace())
	defer deadline.Stop()
	for p.samplesDone.Load() < p.samplesIssued.Load() {
		select {
		case <-p.wake:
		case <-deadline.C:
			return reason
		}
	}
	return reason
}

// closePass counts every still-outstanding sample as lost and waits for
// completions that already claimed their sample to finish writing.
func (t *testRun) closePass(p *pass) {
	for q := range p.prepared {
		// A query with nothing remaining has every sample ended: nothing
		// to give up on (an Offline query of millions ended this way
		// would cost a failed compare-and-swap a sample).
		if p.issuedAt(q) == NoTime || p.remaining.at(q).Load() == 0 {
			continue
		}
		s, e := p.gen.queryRange(q)
		for i := s; i < e; i++ {
			p.markLost(i)
		}
	}
	// Every issued sample ends once, counted in samplesDone: completed or
	// failed (by the completion that claimed it, once its record is
	// written) or lost (here, by the reaper or by a late completion).
	// Waiting for all of them waits for the completions that claimed
	// their sample before it could be given up.
	for p.samplesDone.Load() < p.samplesIssued.Load() {
		runtime.Gosched()
	}
	t.resp.cur.CompareAndSwap(p, nil)
}

// setupAccuracyLog decides which responses of the pass go to the accuracy
// log (loadgen-reference §7): all in accuracy mode; in performance mode
// those whose per-sample value (from the test's default-seeded engine) plus
// a per-pass offset, wrapped into [0, 1), is at most the probability.
func (t *testRun) setupAccuracyLog(p *pass, e *Effective, accuracy bool) {
	n := p.gen.n
	if accuracy {
		p.accuracyAll = true
		return
	}
	prob := e.AccuracyLogProbability
	if e.AccuracyLogSamplingTarget > 0 {
		expected := uint64(e.TargetQPS * float64(e.MinDurationMs) / 1000)
		minimum := e.MinQueryCount * e.SamplesPerQuery
		if e.Scenario != Offline {
			expected *= e.SamplesPerQuery
		} else {
			minimum = e.MinSampleCount
		}
		expected = max(expected, minimum)
		prob = float64(e.AccuracyLogSamplingTarget) / float64(expected)
	}
	if prob <= 0 {
		return
	}
	p.accuracyProb = prob
	p.accuracyOff = stdrand.New(e.AccuracyLogRNGSeed).UniformReal(0, 1)
	// Every generated sample of the test drew one value, in sequence order.
	if skip := p.seqBase - t.accPos; skip > 0 {
		t.accRNG.Discard(2 * skip)
	}
	// The values are drawn a page at a time as the pass prepares its
	// samples, in sequence order (all before issuing, or as an on-demand
	// pass reaches them).
	t.accPos = p.seqBase
	p.accVal = newPaged[float64](n)
	p.accDraw = func(pg *[pageLen]float64, first int) {
		m := min(pageLen, n-first)
		for k := range m {
			pg[k] = t.accRNG.UniformReal(0, 1)
		}
		t.accPos = p.seqBase + uint64(first+m)
	}
}

// startProgress reports progress of p until the returned function is called.
func (t *testRun) startProgress(p *pass) func() {
	if t.opts.Progress == nil {
		return func() {}
	}
	generated := p.gen.n
	if p.gen.extended() {
		generated = p.gen.logged * p.gen.spq // LoadGen's count, as logged
	}
	snapshot := func(done bool) Progress {
		return Progress{
			Pass: p.kind, Elapsed: time.Duration(t.now() - p.origin),
			Issued: p.samplesIssued.Load(), Completed: p.samplesDone.Load(),
			Lost: p.samplesLost.Load(), Failed: p.samplesFailed.Load(), Queries: p.queriesIssued.Load(), QueriesDone: p.queriesDone.Load(),
			Generated: int64(generated), Done: done,
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				t.opts.Progress(snapshot(false))
			}
		}
	}()
	return func() {
		close(stop)
		wg.Wait()
		t.opts.Progress(snapshot(true))
	}
}

// startReaper enforces Options.SampleTimeout: it walks the queries in
// issue order and, when a query has been out for the timeout, counts its
// outstanding samples lost (GB-7.6.2-TOUT, IN-63). It runs in every
// scenario: SingleStream and MultiStream also enforce the timeout in the
// issuer, to move on to the next query, but the issuer does not wait on
// the last query it issues, which only the reaper times out.
func (t *testRun) startReaper(p *pass) func() {
	timeout := int64(t.opts.SampleTimeout)
	if timeout <= 0 {
		return func() {}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		sleep := func(d time.Duration) bool {
			timer.Reset(d)
			select {
			case <-timer.C:
				return true
			case <-stop:
				return false
			}
		}
		for q := 0; q < p.gen.queries; q++ {
			if !p.owns(q) {
				continue // another shard's
			}
			issued := p.issuedAt(q)
			for issued == NoTime {
				if !sleep(time.Millisecond) {
					return
				}
				issued = p.issuedAt(q)
			}
			if p.remaining.at(q).Load() == 0 {
				continue // done: nothing to time out
			}
			if left := issued + timeout - (t.now() - p.origin); left > 0 && !sleep(time.Duration(left)) {
				return
			}
			p.loseQuery(q)
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}
