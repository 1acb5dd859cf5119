package cli

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/train"
	"aimeter/train/mllog"
	"aimeter/train/trainbundle"
)

// trialLog is one result log read as a trial (--logs).
type trialLog struct {
	path   string
	trial  mllog.Trial
	sha256 string
	size   int64
	data   []byte // the first captureLimit bytes
}

// logFiles expands --logs: files as given, a directory as its result_*.txt
// in numeric order.
func logFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, usageError("--logs %s: no such file or directory", a)
			}
			return nil, usageError("--logs: %w", err)
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "result_*.txt"))
		if err != nil {
			return nil, usageError("--logs %s: %w", a, err)
		}
		if len(found) == 0 {
			return nil, usageError("--logs %s: the directory holds no result_*.txt (an MLPerf Training submission keeps a benchmark's runs as result_0.txt, result_1.txt, …)", a)
		}
		slices.SortFunc(found, func(x, y string) int { return cmp.Or(cmp.Compare(resultIndex(x), resultIndex(y)), cmp.Compare(x, y)) })
		out = append(out, found...)
	}
	seen := map[string]bool{}
	for _, p := range out {
		abs, _ := filepath.Abs(p)
		if seen[abs] {
			return nil, usageError("--logs: %s is given twice; each log is one trial", p)
		}
		seen[abs] = true
	}
	return out, nil
}

// resultIndex is N of result_N.txt, or -1.
func resultIndex(path string) int {
	s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "result_"), ".txt")
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// readTrialLogs reads --logs before anything is written: a file that is
// not an MLPerf log, or logs of different benchmarks or systems, are usage
// errors.
func readTrialLogs(args []string, node string) ([]trialLog, error) {
	files, err := logFiles(args)
	if err != nil {
		return nil, err
	}
	out := make([]trialLog, 0, len(files))
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			return nil, usageError("--logs: %w", err)
		}
		h := sha256.New()
		capped := &cappedBuffer{limit: captureLimit}
		tr, err := mllog.ReadTrial(io.TeeReader(fh, io.MultiWriter(h, capped)), path, mllog.Options{Node: node})
		fh.Close()
		if err != nil {
			return nil, usageError("--logs %w", err)
		}
		out = append(out, trialLog{path: path, trial: tr, sha256: hex.EncodeToString(h.Sum(nil)), size: capped.total, data: capped.bytes()})
	}
	stats := make([]mllog.Stats, len(out))
	names := make([]string, len(out))
	for i, l := range out {
		stats[i], names[i] = l.trial.Stats, l.path
	}
	if why := mixedTrials(stats, names); why != "" {
		return nil, usageError("--logs: %s; give the logs of one benchmark on one system", why)
	}
	return out, nil
}

// identityKeys are the MLLOG keys that must agree between the trials of one
// test.
var identityKeys = []struct{ key, what string }{
	{"submission_benchmark", "benchmarks"},
	{"submission_platform", "systems"},
}

// mixedTrials says which identity key differs between the trials' logs, as
// "the logs name different benchmarks: resnet (result_0.txt, …), bert
// (result_3.txt)", or "" when they agree. A log that lacks a key does not
// count against it.
func mixedTrials(stats []mllog.Stats, names []string) string {
	for _, k := range identityKeys {
		by := map[string][]string{}
		var order []string
		for i, st := range stats {
			v := st.InfoValue(k.key)
			if v == "" {
				continue
			}
			if by[v] == nil {
				order = append(order, v)
			}
			by[v] = append(by[v], names[i])
		}
		if len(order) > 1 {
			parts := make([]string, len(order))
			for i, v := range order {
				parts[i] = fmt.Sprintf("%s (%s)", v, strings.Join(by[v], ", "))
			}
			return fmt.Sprintf("the logs name different %s in %s: %s", k.what, k.key, strings.Join(parts, "; "))
		}
	}
	return ""
}

// applyMLPerf fills the metrics configuration from the MLPerf Training rules
// of the benchmark the logs name: its run count, olympic drop and, unless
// the flags gave one, its quality target. It returns the benchmark's rules
// (ok false when the logs name none that is known).
func applyMLPerf(cfg *train.Config, benchmark string) (train.MLPerfBenchmark, bool) {
	b, ok := train.LookupMLPerf(benchmark)
	if !ok {
		return b, false
	}
	cfg.MLPerfBenchmark, cfg.MLPerfRuns = b.Name, b.Runs
	if cfg.MLPerfDrop == 0 {
		cfg.MLPerfDrop = b.Drop
	}
	if cfg.Target == nil && b.Target != nil {
		t := *b.Target
		cfg.Target = &t
	}
	return b, true
}

// trainLogs turns the logs read by planTrain into the run's trials.
func trainLogs(st *State, p *trainPlan, run *trainbundle.TrainingRun, tr *trainbundle.Training) {
	trials := make([]mllog.Trial, len(p.logs))
	run.Trials = make([]trainbundle.TrainingTrial, len(p.logs))
	tr.TrialOutputs = make([]trainbundle.TrialOutput, len(p.logs))
	for i, l := range p.logs {
		trials[i] = l.trial
		run.Trials[i] = trainbundle.TrainingTrial{Trial: i + 1, Log: l.path, LogSHA256: l.sha256, Stats: l.trial.Stats, StdoutBytes: l.size}
		tr.TrialOutputs[i] = trainbundle.TrialOutput{Stdout: l.data}
	}
	run.Source = trainbundle.SourceMLLOG
	tr.Events, run.Origin = mllog.MergeTrials(trials)
	run.SetLocation(time.Local)
	if benchmark := p.logs[0].trial.Stats.InfoValue("submission_benchmark"); benchmark != "" {
		if b, ok := applyMLPerf(&run.Config, benchmark); ok && b.Runs > len(p.logs) {
			fmt.Fprintf(st.Stderr, "aimeter: %d logs of %s; MLPerf Training requires %d runs\n", len(p.logs), benchmark, b.Runs)
		}
	}
	fmt.Fprintf(st.Stderr, "aimeter: read %d result logs as trials\n", len(p.logs))
}

// trainTrials runs argv as a child once per trial and reads its MLLOG
// lines; a single run keeps the one-run layout (Command's Exit and Stats,
// training_stdout.log, and a failing child is exit code 1).
func trainTrials(ctx context.Context, st *State, fs interface{ Changed(string) bool }, f *trainFlags, p *trainPlan, argv []string, run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	n, fixed := f.trials, fs.Changed("trials")
	if !fixed {
		n = 1
		if p.scenario != nil {
			n, fixed = p.scenario.TrialCount(), true
		}
	}
	run.Source = trainbundle.SourceMLLOG
	run.Command = &trainbundle.TrainingCommand{Argv: redactArgv(argv), CaptureLimit: captureLimit}
	var trials []mllog.Trial
	var stats []mllog.Stats
	var names []string
	for i := 1; i <= n; i++ {
		if ctx.Err() != nil {
			break
		}
		if n > 1 || fixed {
			fmt.Fprintf(st.Stderr, "aimeter: trial %d of %d: %s\n", i, n, strings.Join(run.Command.Argv, " "))
		}
		one, rec, out, err := runTrial(ctx, st, f, p, argv, i)
		if err != nil {
			if i == 1 {
				return &trainStartError{err}
			}
			// The program ran before: record the trial as failed.
			rec.Failure = err.Error()
		}
		trials, stats, names = append(trials, one), append(stats, one.Stats), append(names, fmt.Sprintf("trial %d", i))
		run.Trials = append(run.Trials, rec)
		tr.TrialOutputs = append(tr.TrialOutputs, out)
		if rec.Exit != nil && rec.Exit.Cancelled && ctx.Err() != nil {
			break // interrupted: the caller says so
		}
		if why := mixedTrials(stats, names); why != "" {
			run.Incomplete = "the trials are not of one test: " + why
			break
		}
		if i == 1 && !fixed {
			if benchmark := one.Stats.InfoValue("submission_benchmark"); benchmark != "" {
				if b, ok := train.LookupMLPerf(benchmark); ok && b.Runs > 1 {
					n = b.Runs
					fmt.Fprintf(st.Stderr, "aimeter: the log names MLPerf Training's %s, which requires %d runs: running %d more (--trials 1 for one)\n", benchmark, b.Runs, n-1)
				}
			}
		}
	}
	if benchmark := firstInfo(stats, "submission_benchmark"); benchmark != "" {
		applyMLPerf(&run.Config, benchmark)
	}
	if len(run.Trials) == 1 {
		// One run: the one-run layout, as before trials existed.
		rec := run.Trials[0]
		run.Command.Exit, run.Command.Stats = *rec.Exit, rec.Stats
		run.Command.StdoutBytes, run.Command.StderrBytes = rec.StdoutBytes, rec.StderrBytes
		tr.Stdout, tr.Stderr = tr.TrialOutputs[0].Stdout, tr.TrialOutputs[0].Stderr
		tr.TrialOutputs, run.Trials = nil, nil
		// Its own events only: no trial start and end of aimeter's.
		evs := trials[0].Events[:0:0]
		for _, e := range trials[0].Events {
			if e.Kind != train.TrialStart && e.Kind != train.TrialEnd || e.Node != trialMarkNode {
				evs = append(evs, e)
			}
		}
		tr.Events = evs
		setOrigin(run, evs, rec.Exit.Duration)
		run.SetLocation(time.Local)
		switch {
		case rec.Exit.Cancelled && ctx.Err() != nil:
			return nil
		case rec.Failure != "":
			run.Incomplete = "the training command " + rec.Failure
			return fmt.Errorf("the training command %s; the bundle holds what was measured", rec.Failure)
		}
		return nil
	}
	tr.Events, run.Origin = mllog.MergeTrials(trials)
	for i := range tr.Events {
		if tr.Events[i].Node == trialMarkNode {
			tr.Events[i].Node = p.node
		}
	}
	run.SetLocation(time.Local)
	return nil
}

// trialMarkNode marks, until the trials are merged, the trial start and end
// events that aimeter adds around each run.
const trialMarkNode = "\x00aimeter-trial"

// runTrial runs the program once as trial i. The returned Trial holds its
// MLLOG events between a TrialStart and a TrialEnd whose status says how the
// run ended; err is non-nil only when the program could not be started.
func runTrial(ctx context.Context, st *State, f *trainFlags, p *trainPlan, argv []string, i int) (mllog.Trial, trainbundle.TrainingTrial, trainbundle.TrialOutput, error) {
	rec := trainbundle.TrainingTrial{Trial: i}
	stdout, stderr := &cappedBuffer{limit: captureLimit}, &cappedBuffer{limit: captureLimit}
	var outW, errW io.Writer = stdout, stderr
	if !f.quiet {
		outW, errW = io.MultiWriter(stdout, st.Stdout), io.MultiWriter(stderr, st.Stderr)
	}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if f.timeout > 0 {
		tctx, cancel = context.WithTimeoutCause(ctx, f.timeout, fmt.Errorf("timed out after %v (--timeout)", f.timeout))
	}
	defer cancel()
	start := time.Now()
	res, err := mllog.RunCommand(tctx, argv, mllog.RunOptions{Parse: mllog.Options{Node: p.node}, Stdout: outW, Stderr: errW})
	end := time.Now()
	if err != nil {
		err = fmt.Errorf("starting the training command %q: %w", argv[0], err)
		rec.Failure = err.Error()
		mark := func(k train.Kind, at time.Time, status string) train.Event {
			return train.Event{Kind: k, Wall: at.Round(0), Node: trialMarkNode, Status: status}
		}
		return mllog.Trial{Events: []train.Event{mark(train.TrialStart, start, ""), mark(train.TrialEnd, end, "failed: "+err.Error())}}, rec, trainbundle.TrialOutput{}, err
	}
	exit := res.Exit
	rec.Exit, rec.Stats = &exit, res.Stats
	rec.StdoutBytes, rec.StderrBytes = stdout.total, stderr.total
	status := "success"
	switch {
	case exit.Cancelled && ctx.Err() == nil:
		rec.Failure = context.Cause(tctx).Error()
	case exit.Cancelled:
		rec.Failure = "interrupted: " + context.Cause(ctx).Error()
	case !exit.OK():
		rec.Failure = exit.Reason
	}
	if rec.Failure != "" {
		status = "failed: " + rec.Failure
	}
	fmt.Fprintf(st.Stderr, "aimeter: the training command %s\n", exit.Reason)
	if res.Stats.Malformed > 0 {
		fmt.Fprintf(st.Stderr, "aimeter: %d malformed MLLOG lines (the first are quoted in %s)\n", res.Stats.Malformed, bundle.TrainingRunFile)
	}
	if rec.Failure != "" && exit.Cancelled && ctx.Err() == nil {
		fmt.Fprintf(st.Stderr, "aimeter: trial %d %s: recorded as not converged\n", i, rec.Failure)
	}
	evs := make([]train.Event, 0, len(res.Events)+2)
	evs = append(evs, train.Event{Kind: train.TrialStart, Wall: start.Round(0), Node: trialMarkNode})
	evs = append(evs, res.Events...)
	evs = append(evs, train.Event{Kind: train.TrialEnd, Wall: end.Round(0), Node: trialMarkNode, Status: status})
	return mllog.Trial{Events: evs, Stats: res.Stats}, rec, trainbundle.TrialOutput{Stdout: stdout.bytes(), Stderr: stderr.bytes()}, nil
}

// setOrigin sets the run's clock origin from its first event with a wall
// time, or from the child's duration before now.
func setOrigin(run *trainbundle.TrainingRun, evs []train.Event, d time.Duration) {
	for _, e := range evs {
		if !e.Wall.IsZero() {
			run.Origin = e.Wall.Add(-time.Duration(e.Time))
			return
		}
	}
	run.Origin = time.Now().Add(-d)
}

// firstInfo is the first trial's value of an MLLOG information key.
func firstInfo(stats []mllog.Stats, key string) string {
	for _, s := range stats {
		if v := s.InfoValue(key); v != "" {
			return v
		}
	}
	return ""
}
