package cli

import (
	"aimeter/benchmark"
	"aimeter/derived"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/model"
	"aimeter/sut/reference/mlp"
	"aimeter/sysinfo"
	"aimeter/telemetry"
	"aimeter/train"
	"aimeter/train/collect"
	"aimeter/train/trainbundle"
)

// trainFlags are the flags of aimeter train.
type trainFlags struct {
	workload  string
	dataset   string
	trials    int
	epochs    int
	outputDir string
	quiet     bool
	store     storeFlags // --store, --no-store (results.go)
	name      string
	node      string

	listen         string
	ranks          int
	until          time.Duration
	untilRanksDone bool
	linger         time.Duration

	scenarioID      string
	infoFile        string
	trainingSetSize int64
	textGeneration  bool
	trainingSetMB   float64
	target          float64
	targetMetric    string
	lowerIsBetter   bool
	baselines       []string
	alpha           float64

	optimizer         string
	parallelism       int
	parallelAlgorithm string
	asyncUpdate       bool

	powerReplay string
	power       powerFlags

	logs    []string
	timeout time.Duration
}

// captureLimit is how many bytes of each of a child's output streams the
// bundle keeps (the first ones).
const captureLimit = 16 << 20

// defaultReferenceTrials is the number of trials of the reference workload
// when neither --trials nor --scenario-id says: a quick run. Tables 1–4
// ask 5 trials of a row with a quality threshold (--trials 5).
const defaultReferenceTrials = 3

// defaultReferenceEpochs is the epoch limit of a reference trial.
const defaultReferenceEpochs = 5

func newTrainCommand(st *State) *cobra.Command {
	f := &trainFlags{}
	cmd := &cobra.Command{
		Use:   "train [flags] [-- COMMAND [ARG...]]",
		Short: "Run the GB/T 45087 training test (clause 6, Annexes B and E.1) on a training program, a distributed job or the reference model",
		Long: `Measure a training run and compute every GB/T 45087 training metric
(Tables 6–9, Annex E.1) beside the MLPerf time-to-train score. Three ways in:

  aimeter train -- COMMAND [ARG...]
      runs a training program as a child process, shows its output (unless
      -q) and reads the MLPerf Training ":::MLLOG" lines it prints, with
      aimeter's own keys for what MLLOG lacks (docs/training-events.md).
  aimeter train --listen 127.0.0.1:9400 [--ranks N] [--until-ranks-done | --until 2h]
      serves the event endpoint (POST /v1/events, /v1/clock, /v1/offset,
      GET /v1/status) that the ranks of a distributed job post to, and
      ends when every expected rank has posted its train_end (then waits
      --linger for late events), at --until, or on Ctrl-C.
  aimeter train [--trials N] [--timeout D] -- COMMAND [ARG...]
      runs the program N times, one trial each (a failing or timed-out run
      is recorded as a trial that did not converge, and the next starts).
      Without --trials: the Tables 1–4 row's count with --scenario-id, else
      the run count MLPerf Training requires of the benchmark that the
      log's submission_benchmark names (5 for resnet, 10 for
      llama2_70b_lora), else one run.
  aimeter train --logs result_0.txt [result_1.txt ...] | --logs DIR
      reads existing MLPerf Training result logs (a directory: its
      result_*.txt) as the trials of one test, with the same results as
      running them: every time comes from the logged time_ms.
  aimeter train --workload reference [--trials N] [--epochs N]
      trains the reference model (an MLP on Fashion-MNIST or the synthetic
      set) through the Go API, each trial ending at the quality target or
      the epoch limit. Without --trials or --scenario-id it runs 3 trials, a
      quick run; Tables 1–4 ask 5 for a row with a quality threshold.

The run bundle in --output-dir holds training_run.json, training_events.jsonl
(and the child's output, at most 16 MiB of each stream), gbt_training.json,
gbt_training.log (the 6.3 c) 4) and Annex B lines) and report.html;
'aimeter report DIR' regenerates the last three.

With several trials the MLPerf time-to-train score is the olympic average
(mlperf-logging's: the fastest and the slowest dropped, a run that did not
converge counting as the slowest), with MLPerf's quality target for the
benchmark unless --target gives one.

Exit codes: 0 complete; 1 the child failed (non-zero exit or a signal) in
a single run, or aimeter failed; 2 bad usage; 3 the result is incomplete
(no trial with both training start and end, contradictory events, or more
trials that did not converge than the olympic average may drop); 4
interrupted (Ctrl-C, SIGTERM). The bundle is written in every case but 2.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var argv []string
			before := args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				before, argv = args[:dash], args[dash:]
			}
			switch {
			case len(before) > 0 && len(f.logs) > 0:
				// --logs result_*.txt: the shell's expansion puts every
				// file but the first after the flag.
				f.logs = append(f.logs, before...)
			case len(before) > 0 && cmd.ArgsLenAtDash() >= 0:
				return usageError("unexpected arguments before --: %q (the training command goes after --)", before)
			case len(before) > 0:
				return usageError("unexpected arguments %q: put the training command after --, as in aimeter train -- python train.py, or give result logs with --logs", before)
			}
			return runTrain(cmd.Context(), st, cmd.Flags(), f, argv)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workload, "workload", "", "train aimeter's own workload through the Go API: reference")
	fl.StringVar(&f.dataset, "dataset", "auto", "reference workload data set: fashion-mnist, synthetic, or auto (Fashion-MNIST if installed)")
	fl.IntVar(&f.trials, "trials", 0, "trials: runs of the command, or of the reference workload (default: the scenario's count, else MLPerf's run count for the logged benchmark, else 1; 3 for the reference workload)")
	fl.StringArrayVar(&f.logs, "logs", nil, "read MLPerf Training result logs as the trials of one test: files, or a directory of result_*.txt (repeatable; --logs result_*.txt works)")
	fl.DurationVar(&f.timeout, "timeout", 0, "with a command: end a run that takes longer (SIGTERM, then SIGKILL) and record it as not converged (0: no limit)")
	fl.IntVar(&f.epochs, "epochs", defaultReferenceEpochs, "reference workload epoch limit per trial")
	fl.StringVar(&f.outputDir, "output-dir", "aimeter-training", "directory for the run bundle")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not show the training program's output")
	addStoreFlags(cmd, &f.store)
	fl.StringVar(&f.name, "name", "", "label of the run in report.html")
	fl.StringVar(&f.node, "node", "", "node name of events that name none (default: this host's name)")
	fl.StringVar(&f.listen, "listen", "", "serve the event endpoint on this address (host:port) for the ranks of a distributed job")
	fl.IntVar(&f.ranks, "ranks", 0, "with --listen: the number of ranks expected; collection ends when all have posted train_end")
	fl.DurationVar(&f.until, "until", 0, "with --listen: end collection after this long (0: no limit)")
	fl.BoolVar(&f.untilRanksDone, "until-ranks-done", false, "with --listen: end when every rank seen (or --ranks) has posted train_end")
	fl.DurationVar(&f.linger, "linger", time.Second, "with --listen: after the last train_end, wait until no event has come for this long")
	fl.StringVar(&f.scenarioID, "scenario-id", "", "Tables 1–4 scenario row, such as T1-1 (docs/requirements.md and go doc aimeter/train Scenarios list them)")
	fl.StringVar(&f.infoFile, "info", "", "test information YAML (6.1 a) fields 1–20); detected facts fill what it leaves out")
	fl.StringVar(&f.powerReplay, "power-replay", "", "CSV of whole-machine power samples from an outside meter (header time,node,watts; RFC 3339 or Unix-seconds times), added to the events as power readings")
	addPowerFlags(fl, &f.power)
	fl.Int64Var(&f.trainingSetSize, "training-set-size", 0, "training set size in samples (tokens with --text-generation); 0: from the epoch counts")
	fl.BoolVar(&f.textGeneration, "text-generation", false, "the workload generates text: sizes and throughput in tokens")
	fl.Float64Var(&f.trainingSetMB, "training-set-mb", 0, "training set size in MB (10^6 bytes), for the E.1.1 energy efficiency")
	fl.Float64Var(&f.target, "target", 0, "quality target on the 0–1 scale (default: the scenario's threshold)")
	fl.StringVar(&f.targetMetric, "target-metric", "", "name of the quality metric, such as \"Top1 accuracy\"")
	fl.BoolVar(&f.lowerIsBetter, "lower-is-better", false, "the quality metric is better when lower (WER)")
	fl.StringArrayVar(&f.baselines, "baseline", nil, "a scenario of the effective computing power Th-bar: NAME=BASELINE[:WEIGHT[:THROUGHPUT]] (repeatable)")
	fl.Float64Var(&f.alpha, "alpha", 0, "adjustment coefficient α of Th-bar (0: 100)")
	fl.StringVar(&f.optimizer, "optimizer", "", "test information field 21: the optimizer's algorithm, such as LAMB")
	fl.IntVar(&f.parallelism, "parallelism", -1, "test information field 24: 0 none, 1 model, 2 data, 3 hybrid, 4 other parallel training (-1: not given)")
	fl.StringVar(&f.parallelAlgorithm, "parallel-algorithm", "", "the algorithm of --parallelism 4")
	fl.BoolVar(&f.asyncUpdate, "async-update", false, "test information field 25: parameters are updated asynchronously")
	groupFlags(cmd,
		flagGroup{"Trials", []string{"trials", "logs", "timeout"}},
		flagGroup{"Reference workload (--workload reference)", []string{"workload", "dataset", "epochs"}},
		flagGroup{"Event endpoint (--listen)", []string{"listen", "ranks", "until", "until-ranks-done", "linger"}},
		flagGroup{"Metrics configuration", []string{"scenario-id", "training-set-size", "text-generation", "training-set-mb", "target", "target-metric", "lower-is-better", "baseline", "alpha", "power-replay"}},
		flagGroup{"Power and energy", powerFlagNames},
		flagGroup{"Test information (6.1 a))", []string{"info", "optimizer", "parallelism", "parallel-algorithm", "async-update"}},
		flagGroup{"Output", []string{"output-dir", "quiet", "name", "node", "store", "no-store"}},
	)
	return cmd
}

// trainPlan is what the flags ask for, checked.
type trainPlan struct {
	cfg      train.Config
	training train.TrainingInfo
	scenario *train.CatalogueEntry
	info     gbt.TestInfo
	node     string
	// power are the sources of --power; nil without.
	power []telemetry.Source
	logs  []trialLog // --logs, read
}

func planTrain(fs *pflag.FlagSet, f *trainFlags, argv []string) (*trainPlan, error) {
	modes := 0
	for _, on := range []bool{f.workload != "", f.listen != "", len(argv) > 0, len(f.logs) > 0} {
		if on {
			modes++
		}
	}
	switch {
	case modes == 0:
		return nil, usageError("nothing to measure: give --workload reference, --listen ADDR, --logs FILE..., or a training command after --")
	case modes > 1:
		return nil, usageError("--workload, --listen, --logs and a command after -- are four ways in; give one")
	}
	if f.workload != "" && f.workload != "reference" {
		return nil, usageError("--workload %q: the only built-in workload is reference", f.workload)
	}
	if f.listen == "" {
		for _, name := range []string{"ranks", "until", "until-ranks-done", "linger"} {
			if fs.Changed(name) {
				return nil, usageError("--%s needs --listen", name)
			}
		}
	}
	if f.workload == "" {
		for _, name := range []string{"epochs", "dataset"} {
			if fs.Changed(name) {
				return nil, usageError("--%s applies to --workload reference only", name)
			}
		}
	}
	if fs.Changed("trials") && (f.listen != "" || len(f.logs) > 0) {
		return nil, usageError("--trials applies to a command or --workload reference: --listen collects one job, and --logs takes one trial a file")
	}
	if fs.Changed("timeout") && len(argv) == 0 {
		return nil, usageError("--timeout applies to a command after --")
	}
	if f.timeout < 0 {
		return nil, usageError("--timeout %v: must be ≥ 0", f.timeout)
	}
	switch {
	case f.trials < 0:
		return nil, usageError("--trials %d: must be ≥ 1", f.trials)
	case fs.Changed("trials") && f.trials == 0:
		return nil, usageError("--trials 0: must be ≥ 1")
	case f.epochs < 1:
		return nil, usageError("--epochs %d: must be ≥ 1", f.epochs)
	case f.ranks < 0:
		return nil, usageError("--ranks %d: must be ≥ 0", f.ranks)
	case f.until < 0:
		return nil, usageError("--until %v: must be ≥ 0", f.until)
	case f.linger < 0:
		return nil, usageError("--linger %v: must be ≥ 0", f.linger)
	case f.trainingSetSize < 0:
		return nil, usageError("--training-set-size %d: must be ≥ 0", f.trainingSetSize)
	case f.trainingSetMB < 0 || math.IsNaN(f.trainingSetMB) || math.IsInf(f.trainingSetMB, 0):
		return nil, usageError("--training-set-mb %v: must be a finite number ≥ 0", f.trainingSetMB)
	case fs.Changed("target") && (f.target < 0 || f.target > 1 || math.IsNaN(f.target)):
		return nil, usageError("--target %v: must be on the 0–1 scale (85 %% is 0.85)", f.target)
	case f.alpha < 0 || math.IsNaN(f.alpha) || math.IsInf(f.alpha, 0):
		return nil, usageError("--alpha %v: must be a finite number ≥ 0", f.alpha)
	}
	if f.listen != "" {
		if _, _, err := net.SplitHostPort(f.listen); err != nil {
			return nil, usageError("--listen %q: want host:port, such as 127.0.0.1:9400: %w", f.listen, err)
		}
		if f.ranks == 0 && !f.untilRanksDone && f.until == 0 {
			// Ctrl-C alone would end it; that is allowed, but say so.
			f.untilRanksDone = true
		}
	}
	if f.parallelism < -1 || f.parallelism > 4 {
		return nil, usageError("--parallelism %d: want 0 none, 1 model, 2 data, 3 hybrid or 4 other", f.parallelism)
	}
	p := &trainPlan{cfg: train.Config{TrainingSetSize: f.trainingSetSize, TextGeneration: f.textGeneration, TrainingSetMB: f.trainingSetMB, Alpha: f.alpha}}
	if f.scenarioID != "" {
		sc, ok := train.LookupScenario(f.scenarioID)
		if !ok {
			return nil, usageError("--scenario-id %q: no such row in Tables 1–4 (docs/requirements.md and go doc aimeter/train Scenarios list them)", f.scenarioID)
		}
		p.scenario = &sc
		p.cfg.Target = sc.Target()
		p.cfg.TextGeneration = p.cfg.TextGeneration || sc.TextGeneration
	}
	if fs.Changed("target") {
		p.cfg.Target = &train.Target{Value: f.target}
	}
	if p.cfg.Target != nil {
		if f.targetMetric != "" {
			p.cfg.Target.Metric = f.targetMetric
		}
		if fs.Changed("lower-is-better") {
			p.cfg.Target.LowerIsBetter = f.lowerIsBetter
		}
	} else if f.targetMetric != "" || fs.Changed("lower-is-better") {
		return nil, usageError("--target-metric and --lower-is-better describe a target: give --target or --scenario-id")
	}
	for _, s := range f.baselines {
		w, err := parseBaseline(s)
		if err != nil {
			return nil, usageError("--baseline %q: %w", s, err)
		}
		p.cfg.Workloads = append(p.cfg.Workloads, w)
	}
	if len(p.cfg.Workloads) == 1 && p.cfg.Workloads[0].Weight == 0 {
		p.cfg.Workloads[0].Weight = 1
	}
	if f.powerReplay != "" {
		// Read once now, so that a bad file fails before the run.
		if _, err := readPowerReplay(f.powerReplay, time.Time{}); err != nil {
			return nil, err
		}
	}
	if f.infoFile != "" {
		if err := needFile("--info", f.infoFile); err != nil {
			return nil, err
		}
		manual, err := gbt.LoadInfo(f.infoFile)
		if err != nil {
			return nil, usageError("--info: %w", err)
		}
		p.info = manual
	}
	p.info = gbt.Merge(gbt.Detect(), p.info)
	p.info.TaskType = gbt.TaskTraining
	if p.scenario != nil && p.info.ModelNo == "" {
		p.info.ModelNo = p.scenario.ID
	}
	p.training.Optimizer = f.optimizer
	if f.parallelism >= 0 {
		par := train.Parallelism(f.parallelism)
		p.training.Parallelism = &par
	}
	p.training.ParallelAlgorithm = f.parallelAlgorithm
	if fs.Changed("async-update") {
		p.training.AsyncUpdate = gbt.NotUsed
		if f.asyncUpdate {
			p.training.AsyncUpdate = gbt.Used
		}
	}
	if err := p.training.Validate(); err != nil {
		return nil, usageError("test information fields 21–25 (--optimizer, --parallelism, --parallel-algorithm, --async-update): %w", err)
	}
	p.node = f.node
	if p.node == "" {
		p.node, _ = os.Hostname()
	}
	if f.power.sources != "" && len(f.logs) > 0 {
		return nil, usageError("--power samples the meters while the training runs; for --logs of a past run give its power with --power-replay")
	}
	srcs, err := f.power.open(p.node)
	if err != nil {
		return nil, err
	}
	p.power = srcs
	if len(f.logs) > 0 {
		logs, err := readTrialLogs(f.logs, p.node)
		if err != nil {
			return nil, err
		}
		p.logs = logs
	}
	return p, nil
}

// parseBaseline parses NAME=BASELINE[:WEIGHT[:THROUGHPUT]].
func parseBaseline(s string) (train.Workload, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return train.Workload{}, errors.New("want NAME=BASELINE[:WEIGHT[:THROUGHPUT]], such as T1-1=1200:0.5")
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return train.Workload{}, errors.New("at most BASELINE:WEIGHT:THROUGHPUT after =")
	}
	var nums [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return train.Workload{}, fmt.Errorf("%q is not a finite number ≥ 0", p)
		}
		nums[i] = v
	}
	if nums[0] <= 0 {
		return train.Workload{}, errors.New("the baseline throughput must be > 0")
	}
	if nums[1] > 1 {
		return train.Workload{}, errors.New("the weight must be in [0, 1]")
	}
	return train.Workload{Name: name, Baseline: nums[0], Weight: nums[1], Throughput: nums[2]}, nil
}

func runTrain(parent context.Context, st *State, fs *pflag.FlagSet, f *trainFlags, argv []string) error {
	p, err := planTrain(fs, f, argv)
	if err != nil {
		return err
	}
	if err := benchmark.PrepareOutputDir(f.outputDir); err != nil {
		return withCode(ExitUsage, err)
	}
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	run := trainbundle.TrainingRun{Version: Version, Name: f.name, System: sysinfo.DetectSystem(), Info: p.info, Training: p.training, Scenario: p.scenario, Config: p.cfg}
	tr := &trainbundle.Training{}
	var sampler *telemetry.Sampler
	if p.power != nil {
		sampler = telemetry.Start(time.Now(), p.power, f.power.options())
	}
	var failure error // the child or the workload failed
	switch {
	case f.workload != "":
		failure = trainReference(ctx, st, f, p, &run, tr)
	case f.listen != "":
		failure = trainCollect(ctx, st, f, p, &run, tr)
	case len(p.logs) > 0:
		trainLogs(st, p, &run, tr)
	default:
		failure = trainTrials(ctx, st, fs, f, p, argv, &run, tr)
	}
	var startErr *trainStartError
	if errors.As(failure, &startErr) {
		return withCode(ExitFailure, startErr.err)
	}
	if sampler != nil {
		// On the training events' clock, that of a replay's t_ns too.
		if !run.Origin.IsZero() {
			sampler.SetOrigin(run.Origin)
		}
		l, err := sampler.Stop(context.WithoutCancel(ctx))
		if err == nil && !run.Origin.IsZero() {
			tr.Events = append(tr.Events, train.TelemetryEvents(l, p.node)...)
			if n := len(l.Gaps); n > 0 {
				fmt.Fprintf(st.Stderr, "aimeter: power: %d reads gave nothing (the first, of %s: %s)\n", n, l.Gaps[0].Source, l.Gaps[0].Reason)
			}
		}
	}
	if f.powerReplay != "" {
		// Checked before the run (planTrain); read now that the run's
		// clock origin is known.
		pw, err := readPowerReplay(f.powerReplay, run.Origin)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		tr.Events = append(tr.Events, pw...)
		run.PowerReplay = filepath.Base(f.powerReplay)
	}
	interrupted := ctx.Err() != nil
	if interrupted && run.Incomplete == "" {
		run.Incomplete = context.Cause(ctx).Error()
	}
	tr.Run = run
	b := &bundle.Bundle{Version: Version}
	trainbundle.Set(b, tr)
	d := derived.Of(b)
	writeErr := d.Write(f.outputDir)
	res, err := d.TrainingResult()
	if err != nil {
		return withCode(ExitFailure, errors.Join(err, writeErr))
	}
	printTraining(st.Stdout, res, &tr.Run, f.outputDir)
	if writeErr == nil {
		recordRun(ctx, st, f.store, f.outputDir, d, f.quiet)
	}
	switch {
	case writeErr != nil:
		return withCode(ExitFailure, fmt.Errorf("writing the training bundle: %w", writeErr))
	case interrupted:
		return withCode(ExitInterrupted, errors.New(run.Incomplete+"; the bundle holds what was measured"))
	case failure != nil:
		return withCode(ExitFailure, failure)
	}
	if run.Incomplete != "" {
		return withCode(ExitInvalid, fmt.Errorf("the result is incomplete: %s", run.Incomplete))
	}
	if why := incompleteReason(res); why != "" {
		return withCode(ExitInvalid, fmt.Errorf("the result is incomplete: %s", why))
	}
	if mp := res.Metrics.MLPerf; len(run.Trials) > 1 && mp.OlympicAverageMin == nil && mp.Failed > mp.Drop {
		return withCode(ExitInvalid, fmt.Errorf("no MLPerf score: %s", mp.Reason))
	}
	return nil
}

// trainStartError is a failure before anything was measured: no bundle.
type trainStartError struct{ err error }

func (e *trainStartError) Error() string { return e.err.Error() }

// incompleteReason says why a result is incomplete (exit code 3), or "".
func incompleteReason(res *train.ResultFile) string {
	m := res.Metrics
	for _, p := range m.Problems {
		if p.Severity == train.Error {
			return "contradictory events: " + p.Message
		}
	}
	for _, t := range m.Trials {
		if t.TTRMs != nil {
			return ""
		}
	}
	return "no trial has both a training start and a training end"
}

// printTraining writes the console summary: headline metrics and the log.
func printTraining(w io.Writer, res *train.ResultFile, run *trainbundle.TrainingRun, dir string) {
	m := res.Metrics
	ms := func(p *float64) string {
		if p == nil {
			return "--"
		}
		return strconv.FormatFloat(*p/1000, 'f', 3, 64) + " s"
	}
	num := func(p *float64, unit string) string {
		if p == nil {
			return "--"
		}
		return strings.TrimSpace(strconv.FormatFloat(*p, 'g', 6, 64) + " " + unit)
	}
	fmt.Fprintf(w, "GB/T 45087 training test: %s\n", run.SourceText())
	if run.Incomplete != "" {
		fmt.Fprintf(w, "Incomplete: %s\n", run.Incomplete)
	}
	fmt.Fprintf(w, "Trials:                 %d\n", len(m.Trials))
	fmt.Fprintf(w, "Mean T_TR:              %s\n", ms(m.MeanTTRMs))
	fmt.Fprintf(w, "Throughput Th:          %s\n", num(m.Throughput, m.Unit))
	fmt.Fprintf(w, "Cluster Th_CL:          %s\n", num(m.ClusterThroughput, m.Unit))
	if m.ThBar != nil {
		fmt.Fprintf(w, "Th-bar:                 %s\n", num(m.ThBar, ""))
	}
	fmt.Fprintf(w, "Training efficiency:    %s\n", num(m.TrainingEfficiency, "per kWh"))
	mp := m.MLPerf
	bench := ""
	if mp.Benchmark != "" {
		bench = mp.Benchmark + ", "
	}
	fmt.Fprintf(w, "MLPerf time-to-train:   %s (%solympic average of %d trials, dropping %d at each end; %d did not converge)\n", num(mp.OlympicAverageMin, "min"), bench, len(m.Trials), mp.Drop, mp.Failed)
	if mp.Reason != "" {
		fmt.Fprintf(w, "  -- %s\n", mp.Reason)
	}
	if mp.Note != "" {
		fmt.Fprintf(w, "  note: %s: %s\n", mp.Note, num(mp.MeanMin, "min"))
	}
	if m.Throughput == nil || m.ClusterThroughput == nil || m.TrainingEfficiency == nil || m.MeanTTRMs == nil {
		// Why the headline figures are absent: the trials' reasons, once
		// each.
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
		for _, r := range why {
			fmt.Fprintf(w, "  -- %s\n", r)
		}
	}
	for _, t := range m.Trials {
		status := t.Status
		if status == "" {
			status = "--"
		}
		util := "--"
		if t.Utilization != nil {
			util = strconv.FormatFloat(100**t.Utilization, 'f', 1, 64) + " %"
		}
		fmt.Fprintf(w, "  trial %d: %s, T_T %s, T_TR %s, Th %s, utilisation %s, final accuracy %s, time to train %s\n", t.Trial, status, ms(t.TTMs), ms(t.TTRMs), num(t.Throughput, m.Unit), util, train.FormatAccuracy(t.FinalAccuracy), num(t.TimeToTrainMin, "min"))
		if t.MLPerfFailure != "" {
			fmt.Fprintf(w, "    did not converge: %s\n", t.MLPerfFailure)
		}
	}
	if len(m.Problems) > 0 {
		fmt.Fprintf(w, "Problems (%d):\n", len(m.Problems))
		for i, p := range m.Problems {
			if i == 5 {
				fmt.Fprintf(w, "  … and %d more in %s\n", len(m.Problems)-5, train.ResultFileName)
				break
			}
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if len(res.Log) > 0 {
		fmt.Fprintln(w, "Training log:")
		for _, l := range res.Log {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "Results in %s (%s, %s, report.html)\n", dir, train.ResultFileName, train.LogFile)
}

// cappedBuffer keeps the first limit bytes written and counts them all.
type cappedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	total int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// redactArgv replaces the values of secret-looking options (--api-key X,
// --token=X) with REDACTED.
func redactArgv(argv []string) []string {
	out := make([]string, len(argv))
	// Words that mark an option whose value must not be stored.
	secretWords := []string{"key", "token", "secret", "password", "passwd", "auth", "credential"}
	secret := func(opt string) bool {
		opt = strings.ToLower(strings.TrimLeft(opt, "-"))
		for _, w := range secretWords {
			if strings.Contains(opt, w) {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		out[i] = a
		if !strings.HasPrefix(a, "-") || !secret(strings.SplitN(a, "=", 2)[0]) {
			continue
		}
		if name, _, ok := strings.Cut(a, "="); ok {
			out[i] = name + "=REDACTED"
		} else if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			i++
			out[i] = "REDACTED"
		}
	}
	return out
}

// trainCollect serves the event endpoint until the ranks are done.
func trainCollect(ctx context.Context, st *State, f *trainFlags, p *trainPlan, run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &trainStartError{fmt.Errorf("--listen %s: %w", f.listen, err)}
	}
	run.Origin = time.Now()
	srv := collect.NewServer(collect.Options{})
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(st.Stderr, "aimeter: collecting training events on http://%s (POST /v1/events); ", ln.Addr())
	switch {
	case f.ranks > 0:
		fmt.Fprintf(st.Stderr, "waiting for %d ranks to post train_end\n", f.ranks)
	case f.untilRanksDone:
		fmt.Fprintf(st.Stderr, "waiting for every rank to post train_end\n")
	default:
		fmt.Fprintf(st.Stderr, "collecting for %v\n", f.until)
	}
	// The endpoint stopping ends the wait as an interrupt would.
	wctx, stopWait := context.WithCancelCause(ctx)
	defer stopWait(nil)
	go func() { stopWait(fmt.Errorf("serving %s: %w", f.listen, <-served)) }()
	res := srv.Wait(wctx, collect.WaitOptions{Ranks: f.ranks, UntilRanksDone: f.untilRanksDone, Until: f.until, Linger: f.linger})
	var reason string
	switch res.End {
	case collect.WaitCancelled:
		if ctx.Err() == nil {
			return context.Cause(wctx) // the endpoint stopped
		}
		reason = context.Cause(ctx).Error()
	case collect.WaitUntil:
		reason = fmt.Sprintf("--until %v reached", f.until)
		if !res.RanksDone {
			run.Incomplete = reason + " before every rank posted train_end"
		}
	case collect.WaitRanksDone:
		reason = "every rank posted train_end"
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	status := srv.Status()
	run.Source = trainbundle.SourceCollector
	run.Collector = &trainbundle.TrainingCollector{Listen: ln.Addr().String(), ExpectedRanks: f.ranks, Status: status, EndReason: reason}
	run.SetLocation(time.Local)
	tr.Events = srv.Events()
	fmt.Fprintf(st.Stderr, "aimeter: collection ended (%s): %d events from %d ranks\n", reason, status.Events, len(status.Ranks))
	return nil
}

// trainReference trains the reference model through train.Recorder.
func trainReference(ctx context.Context, st *State, f *trainFlags, p *trainPlan, run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	rec := train.NewRecorder(train.RecorderOptions{Node: p.node})
	run.Origin = rec.Origin()
	run.SetLocation(time.Local)
	trials := f.trials
	if trials == 0 {
		trials = defaultReferenceTrials
		if p.scenario != nil {
			trials = p.scenario.TrialCount()
		}
	}
	rec.DataReadStart(1)
	data, err := loadDemoData(st, f.dataset)
	if err != nil {
		return &trainStartError{err}
	}
	target := &train.Target{Metric: "top-1 accuracy", Value: data.Target}
	if run.Config.Target == nil {
		run.Config.Target = target
	}
	target = run.Config.Target
	if run.Config.TrainingSetSize == 0 {
		run.Config.TrainingSetSize = int64(data.Train.Len())
	}
	if run.Config.TrainingSetMB == 0 {
		// One byte a pixel and one a label, as the data set is stored.
		run.Config.TrainingSetMB = float64(data.Train.Len()*(data.Train.Rows*data.Train.Cols+1)) / 1e6
	}
	layers := model.DefaultLayers()
	run.Source = trainbundle.SourceGoAPI
	run.Workload = &trainbundle.TrainingWorkload{Name: "reference", Dataset: data.Train.Name, Model: fmt.Sprintf("MLP %v", layers), Trials: trials, Epochs: f.epochs}
	// The reference trainer's own facts fill what the flags leave out.
	if run.Training.Optimizer == "" {
		run.Training.Optimizer = "SGD with momentum"
	}
	if run.Training.MixedPrecision == 0 {
		run.Training.MixedPrecision = gbt.NotUsed
	}
	if run.Training.AutoML == 0 {
		run.Training.AutoML = gbt.NotUsed
	}
	if run.Training.Parallelism == nil {
		none := train.ParallelNone
		run.Training.Parallelism = &none
	}
	if run.Info.ModelName == "" && run.Info.ModelNo == "" {
		run.Info.ModelName = mlp.ModelName
	}
	testX := data.Test.Floats()
	stopSampler := sampleCPU(rec, referenceSampleEvery)
	defer stopSampler()
	fmt.Fprintf(st.Stderr, "aimeter: training the reference model (MLP %v) on %s: %d trials of at most %d epochs, target %s > %g\n",
		layers, data.Train.Name, trials, f.epochs, target.Metric, target.Value)
	// One buffer holds the training set as floats; each trial's data read
	// converts the pixels into it again, so that memory stays at one copy.
	x := make([]float32, len(data.Train.Pixels))
	for trial := 1; trial <= trials; trial++ {
		if ctx.Err() != nil {
			break
		}
		if err := referenceTrial(ctx, st, f, rec, data, x, testX, target, trial); err != nil {
			tr.Events = rec.Events()
			return err
		}
	}
	tr.Events = rec.Events()
	return nil
}

// referenceTrial runs one trial of the reference workload.
func referenceTrial(ctx context.Context, st *State, f *trainFlags, rec *train.Recorder, data *mlp.Data, x, testX []float32, target *train.Target, trial int) error {
	rec.TrialStart(trial)
	if trial > 1 {
		rec.DataReadStart(trial)
	}
	// As dataset.Images.Floats does, into x.
	for i, p := range data.Train.Pixels {
		x[i] = float32(p) / 255
	}
	rec.DataReadEnd(trial)
	cfg := model.DefaultTrainConfig()
	cfg.Epochs = f.epochs
	cfg.Seed += uint64(trial)
	m := model.New(model.DefaultLayers(), cfg.Seed)
	tctx, stopTrial := context.WithCancel(ctx)
	defer stopTrial()
	reached := false
	rec.TrainStart(trial)
	hooks := model.TrainHooks{
		EpochStart: func(epoch int) {
			if reached {
				return // the target was met: training stops before this epoch runs
			}
			if epoch == 1 {
				rec.AcceleratorStart(trial, 0)
			}
			rec.EpochStart(trial, epoch)
		},
		EpochEnd: func(epoch, samples int, loss, acc float64) {
			rec.EpochEnd(trial, epoch, int64(samples))
			rec.ValidationStart(trial, epoch)
			a := m.Evaluate(testX, data.Test.Labels, data.Test.Len())
			rec.Validation(trial, epoch, a)
			if !f.quiet {
				fmt.Fprintf(st.Stderr, "  trial %d epoch %d: loss %.3f, validation top-1 %.4f\n", trial, epoch, loss, a)
			}
			if target.Reached(a) {
				reached = true
				stopTrial()
			}
		},
	}
	err := m.TrainWithHooks(tctx, x, data.Train.Labels, data.Train.Len(), cfg, hooks)
	status := "aborted"
	if reached {
		status = "success"
	}
	if err != nil && !reached {
		rec.TrainEnd(trial, status)
		rec.TrialEnd(trial, status)
		if ctx.Err() != nil {
			return nil // interrupted: the caller says so
		}
		return fmt.Errorf("trial %d: training: %w", trial, err)
	}
	rec.TrainEnd(trial, status)
	// Model conversion: the weights serialised to aimeter's format;
	// persistence: written and synced to a file beside the bundle, then
	// removed (the bundle does not keep models).
	rec.ConversionStart(trial)
	var buf bytes.Buffer
	convErr := m.Save(&buf)
	rec.ConversionEnd(trial)
	if convErr != nil {
		return fmt.Errorf("trial %d: converting the model: %w", trial, convErr)
	}
	rec.PersistStart(trial)
	if err := persist(filepath.Join(f.outputDir, fmt.Sprintf(".reference-trial%d.aimw", trial)), buf.Bytes()); err != nil {
		return fmt.Errorf("trial %d: persisting the model: %w", trial, err)
	}
	rec.PersistEnd(trial)
	rec.TrialEnd(trial, status)
	return nil
}

// persist writes data to path and syncs it to storage, then removes it.
func persist(path string, data []byte) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// referenceSampleEvery is how often the reference workload samples the
// CPU's utilisation: at least 3 samples in an epoch of 0.6 s or more
// (IN-34).
const referenceSampleEvery = 200 * time.Millisecond

// sampleCPU records, every period, the share of all the machine's CPU time
// that this process used since the last sample as utilisation samples of
// chip 0: the reference model's accelerator is the CPU. Where the CPU
// counters cannot be read (not Linux) it records nothing. The returned
// function stops the sampler and waits for it.
func sampleCPU(rec *train.Recorder, period time.Duration) (stop func()) {
	prev, err := sysinfo.ReadCPUUsage()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			cur, err := sysinfo.ReadCPUUsage()
			if err != nil {
				return
			}
			if total := cur.Total() - prev.Total(); total > 0 && cur.Self >= prev.Self {
				rec.Utilization(0, min(float64(cur.Self-prev.Self)/float64(total), 1))
			}
			prev = cur
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// readPowerReplay reads --power-replay (train.ReadPowerReplay) against the
// run's clock origin.
func readPowerReplay(path string, origin time.Time) ([]train.Event, error) {
	if err := needFile("--power-replay", path); err != nil {
		return nil, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, usageError("--power-replay: %w", err)
	}
	defer fh.Close()
	evs, err := train.ReadPowerReplay(fh, origin)
	if err != nil {
		return nil, usageError("--power-replay %s: %w", path, err)
	}
	return evs, nil
}
