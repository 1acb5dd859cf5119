package benchmark

import (
	"aimeter/aisbench"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt/testinfo"
	"aimeter/sysinfo"
	"aimeter/telemetry"
	"aimeter/train"
	"aimeter/train/trainbundle"
	"aimeter/version"
)

// TrainPlan is one GB/T 45087 training test (clause 6, Annexes B and E.1),
// parallel to Plan for inference: exactly one of Reference, Command,
// Listen and Logs says what is measured; the rest configures the metrics
// and the bundle. A field's path (TrainPlan.Reference.Epochs) names it in
// a *UsageError.
type TrainPlan struct {
	// Reference trains aimeter's reference model (an MLP) through the Go
	// API.
	Reference *TrainReference
	// Command runs a training program as a child process, once a trial,
	// and reads the MLPerf Training ":::MLLOG" lines it prints.
	Command *TrainCommand
	// Listen serves the event endpoint that the ranks of a distributed
	// job post to (package train/collect).
	Listen *TrainListen
	// Logs are existing MLPerf Training result logs read as the trials of
	// one test: files, or directories of result_*.txt.
	Logs []string
	// AisBench runs an ais-bench workload package's code/benchmark.sh
	// unchanged (package aisbench).
	AisBench *TrainAisBench

	// ScenarioID is a Tables 1–4 row, such as T1-1 (train.Scenarios): its
	// target, trial count and model number.
	ScenarioID string
	// Target is the quality target on the 0–1 scale; nil takes the
	// scenario's, else MLPerf's for the logged benchmark.
	Target *float64
	// TargetMetric names the target's metric; LowerIsBetter, if set, says
	// which way it is better. Both need a target (Target or ScenarioID).
	TargetMetric  string
	LowerIsBetter *bool
	// TrainingSetSize in samples (tokens with TextGeneration); 0 takes it
	// from the epoch counts.
	TrainingSetSize int64
	TextGeneration  bool
	// TrainingSetMB is the training set's size in MB, for E.1.1.
	TrainingSetMB float64
	// Alpha is the adjustment coefficient α of Th-bar (0: 100).
	Alpha float64
	// Workloads are the scenarios of the effective computing power
	// Th-bar; a single one without a weight weighs 1.
	Workloads []train.Workload

	// Info is the test information given by hand (6.1 a)); the detected
	// facts fill what it leaves out.
	Info testinfo.Info
	// Training is test information fields 21–25.
	Training train.TrainingInfo
	// Node names this machine in the events that name none; "" is the
	// host's name.
	Node string
	// Host is the machine, detected once by Train when nil.
	Host *sysinfo.Host

	// Power are the power, energy and utilisation sources sampled while
	// the training runs (telemetry.Open); nil samples nothing. With Logs
	// only replayed sources (replay:FILE) apply: a past run's meters.
	Power []telemetry.Source
	// PowerOptions sets the sampling period and timeouts.
	PowerOptions telemetry.Options

	// OutputDir is the directory the bundle is written to. Required.
	OutputDir string
	// Name labels the run in report.html.
	Name string
	// Version is the aimeter version recorded; "" means version.String().
	Version string
	// Notify, if set, receives the run's messages as they arise; they are
	// also kept in TrainOutcome.Notices.
	Notify func(Notice)
	// Done, if set, is called once the bundle is written whole, before
	// Train returns.
	Done func(*TrainOutcome)
}

// TrainReference is the built-in reference workload.
type TrainReference struct {
	// Dataset is fashion-mnist, synthetic or auto ("": auto).
	Dataset string
	// Trials is the number of trials; 0 is the scenario's count, else
	// DefaultReferenceTrials.
	Trials int
	// Epochs is each trial's epoch limit; 0 is DefaultReferenceEpochs.
	Epochs int
	// Epoch, if set, is called after each epoch's validation.
	Epoch func(TrainEpoch)
}

// TrainEpoch is one epoch of a reference trial, as it ends.
type TrainEpoch struct {
	Trial, Epoch int
	Loss         float64
	// Accuracy is the validation top-1 accuracy.
	Accuracy float64
}

// DefaultReferenceTrials is the reference workload's trial count when
// neither TrainReference.Trials nor a scenario says: a quick run. Tables
// 1–4 ask 5 trials of a row with a quality threshold.
const DefaultReferenceTrials = 3

// DefaultReferenceEpochs is the epoch limit of a reference trial.
const DefaultReferenceEpochs = 5

// TrainCommand is a training program run as a child process.
type TrainCommand struct {
	// Argv is the program and its arguments. Required.
	Argv []string
	// Trials is the number of runs; 0 is the scenario's count, else the
	// run count MLPerf Training requires of the benchmark the first log
	// names, else 1.
	Trials int
	// Timeout ends a run that takes longer (SIGTERM, then SIGKILL), which
	// is recorded as not converged; 0 is no limit.
	Timeout time.Duration
	// Stdout and Stderr, if set, are shown the child's output as it comes;
	// the bundle keeps the first TrainCaptureLimit bytes of each anyway.
	Stdout, Stderr io.Writer
}

// TrainCaptureLimit is how many bytes of each of a child's output streams
// (and of each result log read) the bundle keeps: the first ones.
const TrainCaptureLimit = 16 << 20

// TrainListen is the event endpoint of a distributed job.
type TrainListen struct {
	// Addr is host:port.
	Addr string
	// Ranks is the number of ranks expected; collection ends when all
	// have posted train_end. 0 counts the ranks seen.
	Ranks int
	// Until ends collection after this long; 0 is no limit.
	Until time.Duration
	// UntilRanksDone ends collection when every rank seen (or Ranks) has
	// posted train_end; without Ranks and Until it is implied.
	UntilRanksDone bool
	// Linger is how long to wait, after the last train_end, until no
	// event has come.
	Linger time.Duration
}

// TrainOutcome is a training test that ran: its bundle, its result and
// what decides the exit code.
type TrainOutcome struct {
	// Dir is where the bundle was written.
	Dir string
	// Bundle is the run's bundle; Derived derives its files.
	Bundle  *bundle.Bundle
	Derived *derived.Set
	// Result is gbt_training.json: the metrics and the log.
	Result *train.ResultFile
	// Notices are every notice of the run, in order.
	Notices []Notice
	// WriteErr is the error of writing the bundle; nil when every file
	// was written.
	WriteErr error
	// Interrupted says the context ended the run early.
	Interrupted bool
	// Failure is the child's or the reference workload's failure in a
	// single run (a non-zero exit, a signal); nil otherwise.
	Failure error
	// Incomplete says why the result is incomplete (the run's own reason,
	// contradictory events, or no trial with both a training start and
	// end); "" for a complete result.
	Incomplete string
	// NoScore says why several trials have no MLPerf score: more did not
	// converge than the olympic average may drop; "" otherwise.
	NoScore string
}

// Run is the training run as training_run.json records it.
func (o *TrainOutcome) Run() *trainbundle.TrainingRun { return &trainbundle.Of(o.Bundle).Run }

// TrainAbsent says why the headline figures of a training result (T_TR,
// Th, Th_CL, the training efficiency) are absent: the trials' reasons, once
// each, in order; nil when every one is present.
func TrainAbsent(res *train.ResultFile) []string {
	m := res.Metrics
	if m.Throughput != nil && m.ClusterThroughput != nil && m.TrainingEfficiency != nil && m.MeanTTRMs != nil {
		return nil
	}
	seen := map[string]bool{}
	var why []string
	for _, t := range m.Trials {
		for _, k := range []string{"t_tr_ms", "th", "th_cl", "training_efficiency_per_kwh"} {
			if r := t.NotAvailable[k]; r != "" && !seen[r] {
				seen[r] = true
				why = append(why, r)
			}
		}
	}
	return why
}

// ErrTrainInterrupted is wrapped by Train's error for a run its context
// ended.
var ErrTrainInterrupted = errors.New("interrupted")

// Validate checks the plan without running anything; the error is a
// *UsageError naming the field by its path from TrainPlan.
func (p *TrainPlan) Validate() error {
	ways := 0
	for _, on := range []bool{p.Reference != nil, p.Command != nil, p.Listen != nil, len(p.Logs) > 0, p.AisBench != nil} {
		if on {
			ways++
		}
	}
	switch {
	case ways == 0:
		return usage("TrainPlan", "nothing to measure: give TrainPlan.Reference, TrainPlan.Listen, TrainPlan.Logs, TrainPlan.AisBench or TrainPlan.Command")
	case ways > 1:
		return usage("TrainPlan", "TrainPlan.Reference, TrainPlan.Listen, TrainPlan.Logs, TrainPlan.AisBench and TrainPlan.Command are five ways in; give one")
	}
	if p.OutputDir == "" {
		return usage("TrainPlan.OutputDir", "TrainPlan.OutputDir: empty; name a directory for the bundle")
	}
	if r := p.Reference; r != nil {
		switch {
		case r.Trials < 0:
			return usage("TrainPlan.Reference.Trials", "TrainPlan.Reference.Trials %d: must be ≥ 1", r.Trials)
		case r.Epochs < 0:
			return usage("TrainPlan.Reference.Epochs", "TrainPlan.Reference.Epochs %d: must be ≥ 1", r.Epochs)
		}
	}
	if c := p.Command; c != nil {
		switch {
		case len(c.Argv) == 0 || c.Argv[0] == "":
			return usage("TrainPlan.Command.Argv", "TrainPlan.Command.Argv: empty; name the training program")
		case c.Trials < 0:
			return usage("TrainPlan.Command.Trials", "TrainPlan.Command.Trials %d: must be ≥ 1", c.Trials)
		case c.Timeout < 0:
			return usage("TrainPlan.Command.Timeout", "TrainPlan.Command.Timeout %v: must be ≥ 0", c.Timeout)
		}
	}
	if a := p.AisBench; a != nil {
		switch {
		case a.Dir == "":
			return usage("TrainPlan.AisBench.Dir", "TrainPlan.AisBench.Dir: empty; name the workload package's folder")
		case a.Timeout < 0:
			return usage("TrainPlan.AisBench.Timeout", "TrainPlan.AisBench.Timeout %v: must be ≥ 0", a.Timeout)
		}
		if err := aisbench.Check(a.Dir); err != nil {
			return usage("TrainPlan.AisBench.Dir", "TrainPlan.AisBench.Dir: %w", err)
		}
	}
	if l := p.Listen; l != nil {
		switch {
		case l.Ranks < 0:
			return usage("TrainPlan.Listen.Ranks", "TrainPlan.Listen.Ranks %d: must be ≥ 0", l.Ranks)
		case l.Until < 0:
			return usage("TrainPlan.Listen.Until", "TrainPlan.Listen.Until %v: must be ≥ 0", l.Until)
		case l.Linger < 0:
			return usage("TrainPlan.Listen.Linger", "TrainPlan.Listen.Linger %v: must be ≥ 0", l.Linger)
		}
		if _, _, err := net.SplitHostPort(l.Addr); err != nil {
			return usage("TrainPlan.Listen.Addr", "TrainPlan.Listen.Addr %q: want host:port, such as 127.0.0.1:9400: %w", l.Addr, err)
		}
	}
	switch {
	case p.TrainingSetSize < 0:
		return usage("TrainPlan.TrainingSetSize", "TrainPlan.TrainingSetSize %d: must be ≥ 0", p.TrainingSetSize)
	case p.TrainingSetMB < 0 || math.IsNaN(p.TrainingSetMB) || math.IsInf(p.TrainingSetMB, 0):
		return usage("TrainPlan.TrainingSetMB", "TrainPlan.TrainingSetMB %v: must be a finite number ≥ 0", p.TrainingSetMB)
	case p.Target != nil && (*p.Target < 0 || *p.Target > 1 || math.IsNaN(*p.Target)):
		return usage("TrainPlan.Target", "TrainPlan.Target %v: must be on the 0–1 scale (85 %% is 0.85)", *p.Target)
	case p.Alpha < 0 || math.IsNaN(p.Alpha) || math.IsInf(p.Alpha, 0):
		return usage("TrainPlan.Alpha", "TrainPlan.Alpha %v: must be a finite number ≥ 0", p.Alpha)
	}
	if p.ScenarioID != "" {
		if _, ok := train.LookupScenario(p.ScenarioID); !ok {
			return usage("TrainPlan.ScenarioID", "TrainPlan.ScenarioID %q: no such row in Tables 1–4 (docs/requirements.md and go doc aimeter/train Scenarios list them)", p.ScenarioID)
		}
	}
	if p.Target == nil && p.ScenarioID == "" && (p.TargetMetric != "" || p.LowerIsBetter != nil) {
		return usage("TrainPlan.TargetMetric", "TrainPlan.TargetMetric and TrainPlan.LowerIsBetter describe a target: give TrainPlan.Target or TrainPlan.ScenarioID")
	}
	for _, w := range p.Workloads {
		if w.Name == "" || !(w.Baseline > 0) || w.Weight < 0 || w.Weight > 1 || w.Throughput < 0 || math.IsInf(w.Baseline, 0) || math.IsInf(w.Throughput, 0) || math.IsNaN(w.Throughput) {
			return usage("TrainPlan.Workloads", "TrainPlan.Workloads %+v: want a name, a finite baseline > 0, a weight in [0, 1] and a throughput ≥ 0", w)
		}
	}
	if err := p.Training.Validate(); err != nil {
		return usage("TrainPlan.Training", "test information fields 21–25 (TrainPlan.Training): %w", err)
	}
	if len(p.Logs) > 0 {
		for _, s := range p.Power {
			if s.Name() != "replay" {
				return usage("TrainPlan.Power", "TrainPlan.Power samples the meters while the training runs; for TrainPlan.Logs of a past run give only its replayed power (replay:FILE)")
			}
		}
	}
	return nil
}

// config is the plan's metrics configuration and scenario.
func (p *TrainPlan) config() (train.Config, *train.CatalogueEntry) {
	cfg := train.Config{TrainingSetSize: p.TrainingSetSize, TextGeneration: p.TextGeneration, TrainingSetMB: p.TrainingSetMB, Alpha: p.Alpha}
	var scenario *train.CatalogueEntry
	if p.ScenarioID != "" {
		sc, _ := train.LookupScenario(p.ScenarioID)
		scenario = &sc
		cfg.Target = sc.Target()
		cfg.TextGeneration = cfg.TextGeneration || sc.TextGeneration
	}
	if p.Target != nil {
		cfg.Target = &train.Target{Value: *p.Target}
	}
	if cfg.Target != nil {
		if p.TargetMetric != "" {
			cfg.Target.Metric = p.TargetMetric
		}
		if p.LowerIsBetter != nil {
			cfg.Target.LowerIsBetter = *p.LowerIsBetter
		}
	}
	cfg.Workloads = append(cfg.Workloads, p.Workloads...)
	if len(cfg.Workloads) == 1 && cfg.Workloads[0].Weight == 0 {
		cfg.Workloads[0].Weight = 1
	}
	return cfg, scenario
}

// trainer is the state of one Train.
type trainer struct {
	plan     *TrainPlan
	ctx      context.Context
	node     string
	scenario *train.CatalogueEntry
	logs     []trialLog
	notices  []Notice
}

func (t *trainer) notify(kind NoticeKind, format string, args ...any) {
	n := Notice{Kind: kind, Text: fmt.Sprintf(format, args...)}
	t.notices = append(t.notices, n)
	if t.plan.Notify != nil {
		t.plan.Notify(n)
	}
}

// startError is a failure before anything was measured: no bundle.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// Train runs the training test p and writes its bundle into p.OutputDir:
// training_run.json, training_events.jsonl, the child's output,
// gbt_training.json, gbt_training.log and report.html.
//
// It returns a nil outcome and a *UsageError when the plan cannot run, or
// another error when the training could not start (the program not found,
// the address taken, the data set missing); nothing is written then. Once
// the training has started the bundle is written whatever happens, and
// Train returns a TrainOutcome; its error is non-nil when the bundle could
// not be written whole, the run was interrupted (it wraps
// ErrTrainInterrupted), or the single run's child failed.
func Train(ctx context.Context, p TrainPlan) (*TrainOutcome, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := &trainer{plan: &p, ctx: ctx, node: p.Node}
	if t.node == "" {
		t.node, _ = os.Hostname()
	}
	cfg, scenario := p.config()
	t.scenario = scenario
	if len(p.Logs) > 0 {
		logs, err := readTrialLogs(p.Logs, t.node)
		if err != nil {
			return nil, err
		}
		t.logs = logs
	}
	if err := PrepareOutputDir(p.OutputDir); err != nil {
		if !IsUsage(err) {
			err = &UsageError{Field: "TrainPlan.OutputDir", Err: err}
		}
		return nil, err
	}
	host := p.Host
	if host == nil {
		h := sysinfo.Detect()
		host = &h
	}
	info := testinfo.Merge(testinfo.FromHost(*host), p.Info)
	info.TaskType = testinfo.TaskTraining
	if scenario != nil && info.ModelNo == "" {
		info.ModelNo = scenario.ID
	}
	ver := p.Version
	if ver == "" {
		ver = version.String()
	}
	run := trainbundle.TrainingRun{Version: ver, Name: p.Name, System: sysinfo.SystemOf(host.Hardware), Info: info, Training: p.Training, Scenario: scenario, Config: cfg}
	for _, src := range p.Power {
		if src.Name() == "replay" && run.PowerReplay == "" {
			// The file by its base name only: no machine paths in a bundle.
			run.PowerReplay = filepath.Base(strings.TrimPrefix(src.Spec(), "replay:"))
		}
	}
	tr := &trainbundle.Training{}
	recs := t.recorders()
	failure := besideTraining(ctx, recs, func() (time.Time, error) {
		var err error
		switch {
		case p.Reference != nil:
			err = t.reference(&run, tr)
		case p.Listen != nil:
			err = t.collect(&run, tr)
		case len(t.logs) > 0:
			t.readLogs(&run, tr)
		case p.AisBench != nil:
			err = t.aisBench(&run, tr)
		default:
			err = t.trials(&run, tr)
		}
		return run.Origin, err
	})
	var se *startError
	if errors.As(failure, &se) {
		return nil, se.err
	}
	out := &TrainOutcome{Dir: p.OutputDir, Failure: failure}
	out.Interrupted = ctx.Err() != nil
	if out.Interrupted && run.Incomplete == "" {
		run.Incomplete = context.Cause(ctx).Error()
	}
	tr.Run = run
	out.Bundle = &bundle.Bundle{Version: ver}
	trainbundle.Set(out.Bundle, tr)
	attachAll(recs, out.Bundle)
	out.Derived = derived.Of(out.Bundle)
	out.WriteErr = out.Derived.Write(p.OutputDir)
	out.Notices = t.notices
	res, err := out.Derived.TrainingResult()
	if err != nil {
		return out, errors.Join(err, out.WriteErr)
	}
	out.Result = res
	out.Incomplete, out.NoScore = incomplete(&tr.Run, res), noScore(&tr.Run, res)
	if out.WriteErr == nil && p.Done != nil {
		p.Done(out)
	}
	switch {
	case out.WriteErr != nil:
		return out, fmt.Errorf("writing the training bundle: %w", out.WriteErr)
	case out.Interrupted:
		return out, fmt.Errorf("%w: %s; the bundle holds what was measured", ErrTrainInterrupted, tr.Run.Incomplete)
	case failure != nil:
		return out, failure
	}
	return out, nil
}

// recorders are what runs beside the training: the power sampler, whose
// reads become events on the training's clock (trainPowerRecorder).
func (t *trainer) recorders() []recorder {
	if t.plan.Power == nil {
		return nil
	}
	return []recorder{&trainPowerRecorder{
		powerRecorder: powerRecorder{sources: t.plan.Power, opts: t.plan.PowerOptions, notify: t.notify},
		node:          t.node,
	}}
}

// TrainReasons are the reasons a training bundle's result is not a
// complete, scored one, from the bundle alone: what Train put in
// TrainOutcome.Incomplete and NoScore (exit code 3 of aimeter train, or
// 4 when interrupted, 1 when the program failed: the run's Incomplete
// names it), one line each; none for a complete result. aimeter check
// reports these, so that it says what aimeter train said. An error for a
// bundle that is no training run's, or whose result cannot be computed.
func TrainReasons(b *bundle.Bundle) ([]string, error) {
	tr := trainbundle.Of(b)
	if tr == nil {
		return nil, errors.New("not a training run's bundle")
	}
	res, err := derived.Of(b).TrainingResult()
	if err != nil {
		return nil, err
	}
	var out []string
	if s := incomplete(&tr.Run, res); s != "" {
		out = append(out, "the result is incomplete: "+s)
	}
	if s := noScore(&tr.Run, res); s != "" {
		out = append(out, "no MLPerf score: "+s)
	}
	return out, nil
}

// incomplete says why a result is incomplete (exit code 3), or "".
func incomplete(run *trainbundle.TrainingRun, res *train.ResultFile) string {
	if run.Incomplete != "" {
		return run.Incomplete
	}
	m := res.Metrics
	for _, p := range m.Problems {
		if p.Severity == train.Error {
			return "contradictory events: " + p.Message
		}
	}
	complete := false
	for _, tm := range m.Trials {
		if tm.TTRMs != nil {
			complete = true
			break
		}
	}
	if !complete {
		return "no trial has both a training start and a training end"
	}
	return ""
}

// noScore says why several trials have no MLPerf score, or "".
func noScore(run *trainbundle.TrainingRun, res *train.ResultFile) string {
	if mp := res.Metrics.MLPerf; len(run.Trials) > 1 && mp.OlympicAverageMin == nil && mp.Failed > mp.Drop {
		return mp.Reason
	}
	return ""
}
