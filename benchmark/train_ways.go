package benchmark

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"aimeter/bundle"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/sut/reference/mlp"
	"aimeter/sysinfo"
	"aimeter/train"
	"aimeter/train/collect"
	"aimeter/train/mllog"
	"aimeter/train/trainbundle"
)

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
func (t *trainer) collect(run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	ctx, l := t.ctx, t.plan.Listen
	untilRanksDone := l.UntilRanksDone || l.Ranks == 0 && l.Until == 0
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return &startError{fmt.Errorf("TrainPlan.Listen.Addr %s: %w", l.Addr, err)}
	}
	run.Origin = time.Now()
	srv := collect.NewServer(collect.Options{})
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	wait := fmt.Sprintf("collecting for %v", l.Until)
	switch {
	case l.Ranks > 0:
		wait = fmt.Sprintf("waiting for %d ranks to post train_end", l.Ranks)
	case untilRanksDone:
		wait = "waiting for every rank to post train_end"
	}
	t.notify(Info, "collecting training events on http://%s (POST /v1/events); %s", ln.Addr(), wait)
	// The endpoint stopping ends the wait as an interrupt would.
	wctx, stopWait := context.WithCancelCause(ctx)
	defer stopWait(nil)
	go func() { stopWait(fmt.Errorf("serving %s: %w", l.Addr, <-served)) }()
	res := srv.Wait(wctx, collect.WaitOptions{Ranks: l.Ranks, UntilRanksDone: untilRanksDone, Until: l.Until, Linger: l.Linger})
	var reason string
	switch res.End {
	case collect.WaitCancelled:
		if ctx.Err() == nil {
			return context.Cause(wctx) // the endpoint stopped
		}
		reason = context.Cause(ctx).Error()
	case collect.WaitUntil:
		reason = fmt.Sprintf("the time limit of %v reached", l.Until)
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
	run.Collector = &trainbundle.TrainingCollector{Listen: ln.Addr().String(), ExpectedRanks: l.Ranks, Status: status, EndReason: reason}
	run.SetLocation(time.Local)
	tr.Events = srv.Events()
	t.notify(Info, "collection ended (%s): %d events from %d ranks", reason, status.Events, len(status.Ranks))
	return nil
}

// trainReference trains the reference model through train.Recorder.
func (t *trainer) reference(run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	ctx, ref := t.ctx, t.plan.Reference
	epochs := cmp.Or(ref.Epochs, DefaultReferenceEpochs)
	rec := train.NewRecorder(train.RecorderOptions{Node: t.node})
	run.Origin = rec.Origin()
	run.SetLocation(time.Local)
	trials := ref.Trials
	if trials == 0 {
		trials = DefaultReferenceTrials
		if t.scenario != nil {
			trials = t.scenario.TrialCount()
		}
	}
	rec.DataReadStart(1)
	data, err := mlp.LoadData(cmp.Or(ref.Dataset, "auto"), mlp.DataOptions{Notify: func(s string) { t.notify(Note, "%s", s) }})
	if errors.Is(err, mlp.ErrUnknownData) {
		return &startError{fmt.Errorf("TrainPlan.Reference.Dataset %q: want fashion-mnist, synthetic or auto", ref.Dataset)}
	}
	if err != nil {
		return &startError{err}
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
	run.Workload = &trainbundle.TrainingWorkload{Name: "reference", Dataset: data.Train.Name, Model: fmt.Sprintf("MLP %v", layers), Trials: trials, Epochs: epochs}
	// The reference trainer's own facts fill what the flags leave out.
	if run.Training.Optimizer == "" {
		run.Training.Optimizer = "SGD with momentum"
	}
	if run.Training.MixedPrecision == 0 {
		run.Training.MixedPrecision = testinfo.NotUsed
	}
	if run.Training.AutoML == 0 {
		run.Training.AutoML = testinfo.NotUsed
	}
	if run.Training.Parallelism == nil {
		none := train.ParallelNone
		run.Training.Parallelism = &none
	}
	if run.Info.ModelName == "" && run.Info.ModelNo == "" {
		run.Info.ModelName = mlp.ModelName
	}
	testX := data.Test.Floats()
	t.notify(Info, "training the reference model (MLP %v) on %s: %d trials of at most %d epochs, target %s > %g",
		layers, data.Train.Name, trials, epochs, target.Metric, target.Value)
	// One buffer holds the training set as floats; each trial's data read
	// converts the pixels into it again, so that memory stays at one copy.
	x := make([]float32, len(data.Train.Pixels))
	err = besideTraining(ctx, []recorder{&cpuRecorder{rec: rec, period: referenceSampleEvery}}, func() (time.Time, error) {
		for trial := 1; trial <= trials; trial++ {
			if ctx.Err() != nil {
				break
			}
			if err := t.referenceTrial(rec, data, x, testX, target, trial, epochs); err != nil {
				return run.Origin, err
			}
		}
		return run.Origin, nil
	})
	tr.Events = rec.Events()
	return err
}

// referenceTrial runs one trial of the reference workload.
func (t *trainer) referenceTrial(rec *train.Recorder, data *mlp.Data, x, testX []float32, target *train.Target, trial, epochs int) error {
	ctx := t.ctx
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
	cfg.Epochs = epochs
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
			if t.plan.Reference.Epoch != nil {
				t.plan.Reference.Epoch(TrainEpoch{Trial: trial, Epoch: epoch, Loss: loss, Accuracy: a})
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
	if err := persist(filepath.Join(t.plan.OutputDir, fmt.Sprintf(".reference-trial%d.aimw", trial)), buf.Bytes()); err != nil {
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

// cpuRecorder records, every period, the share of all the machine's CPU
// time that this process used since the last sample as utilisation
// samples of chip 0 on rec (train.Recorder.Utilization): the reference
// model's accelerator is the CPU. It runs beside the reference trials
// (besideTraining), from after the data load to the last trial's end, and
// its part is in rec's events, which the reference way puts into the
// bundle: its Attach does nothing. Where the CPU counters cannot be read
// (not Linux) it records nothing.
type cpuRecorder struct {
	rec    *train.Recorder
	period time.Duration
	done   chan struct{}
	wg     sync.WaitGroup
}

func (c *cpuRecorder) Start(context.Context) error {
	prev, err := sysinfo.ReadCPUUsage()
	if err != nil {
		return nil
	}
	c.done = make(chan struct{})
	c.wg.Go(func() {
		tick := time.NewTicker(c.period)
		defer tick.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-tick.C:
			}
			cur, err := sysinfo.ReadCPUUsage()
			if err != nil {
				return
			}
			if total := cur.Total() - prev.Total(); total > 0 && cur.Self >= prev.Self {
				c.rec.Utilization(0, min(float64(cur.Self-prev.Self)/float64(total), 1))
			}
			prev = cur
		}
	})
	return nil
}

// Stop stops the sampler and waits for it.
func (c *cpuRecorder) Stop(*loadgen.Result) {
	if c.done != nil {
		close(c.done)
		c.wg.Wait()
	}
}

func (c *cpuRecorder) Attach(*bundle.Bundle) {}

// trialLog is one result log read as a trial (TrainPlan.Logs).
type trialLog struct {
	path   string
	trial  mllog.Trial
	sha256 string
	size   int64
	data   []byte // the first TrainCaptureLimit bytes
}

// logFiles expands TrainPlan.Logs: files as given, a directory as its result_*.txt
// in numeric order.
func logFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, usage("TrainPlan.Logs", "TrainPlan.Logs %s: no such file or directory", a)
			}
			return nil, usage("TrainPlan.Logs", "TrainPlan.Logs: %w", err)
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "result_*.txt"))
		if err != nil {
			return nil, usage("TrainPlan.Logs", "TrainPlan.Logs %s: %w", a, err)
		}
		if len(found) == 0 {
			return nil, usage("TrainPlan.Logs", "TrainPlan.Logs %s: the directory holds no result_*.txt (an MLPerf Training submission keeps a benchmark's runs as result_0.txt, result_1.txt, …)", a)
		}
		slices.SortFunc(found, func(x, y string) int { return cmp.Or(cmp.Compare(resultIndex(x), resultIndex(y)), cmp.Compare(x, y)) })
		out = append(out, found...)
	}
	seen := map[string]bool{}
	for _, p := range out {
		abs, _ := filepath.Abs(p)
		if seen[abs] {
			return nil, usage("TrainPlan.Logs", "TrainPlan.Logs: %s is given twice; each log is one trial", p)
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

// readTrialLogs reads TrainPlan.Logs before anything is written: a file that is
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
			return nil, usage("TrainPlan.Logs", "TrainPlan.Logs: %w", err)
		}
		h := sha256.New()
		capped := &cappedBuffer{limit: TrainCaptureLimit}
		tr, err := mllog.ReadTrial(io.TeeReader(fh, io.MultiWriter(h, capped)), path, mllog.Options{Node: node})
		fh.Close()
		if err != nil {
			return nil, usage("TrainPlan.Logs", "TrainPlan.Logs %w", err)
		}
		out = append(out, trialLog{path: path, trial: tr, sha256: hex.EncodeToString(h.Sum(nil)), size: capped.total, data: capped.bytes()})
	}
	stats := make([]mllog.Stats, len(out))
	names := make([]string, len(out))
	for i, l := range out {
		stats[i], names[i] = l.trial.Stats, l.path
	}
	if why := mixedTrials(stats, names); why != "" {
		return nil, usage("TrainPlan.Logs", "TrainPlan.Logs: %s; give the logs of one benchmark on one system", why)
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

// readLogs turns the logs read before the run into its trials.
func (t *trainer) readLogs(run *trainbundle.TrainingRun, tr *trainbundle.Training) {
	p := t
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
			t.notify(Info, "%d logs of %s; MLPerf Training requires %d runs", len(p.logs), benchmark, b.Runs)
		}
	}
	t.notify(Info, "read %d result logs as trials", len(p.logs))
}

// trainTrials runs argv as a child once per trial and reads its MLLOG
// lines; a single run keeps the one-run layout (Command's Exit and Stats,
// training_stdout.log, and a failing child is exit code 1).
func (t *trainer) trials(run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	ctx, c := t.ctx, t.plan.Command
	argv := c.Argv
	n, fixed := c.Trials, c.Trials > 0
	if !fixed {
		n = 1
		if t.scenario != nil {
			n, fixed = t.scenario.TrialCount(), true
		}
	}
	run.Source = trainbundle.SourceMLLOG
	run.Command = &trainbundle.TrainingCommand{Argv: redactArgv(argv), CaptureLimit: TrainCaptureLimit}
	var trials []mllog.Trial
	var stats []mllog.Stats
	var names []string
	for i := 1; i <= n; i++ {
		if ctx.Err() != nil {
			break
		}
		if n > 1 || fixed {
			t.notify(Info, "trial %d of %d: %s", i, n, strings.Join(run.Command.Argv, " "))
		}
		one, rec, out, err := t.runTrial(argv, i)
		if err != nil {
			if i == 1 {
				return &startError{err}
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
					t.notify(Info, "the log names MLPerf Training's %s, which requires %d runs: running %d more (TrainPlan.Command.Trials 1 for one)", benchmark, b.Runs, n-1)
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
			tr.Events[i].Node = t.node
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
func (t *trainer) runTrial(argv []string, i int) (mllog.Trial, trainbundle.TrainingTrial, trainbundle.TrialOutput, error) {
	ctx, c := t.ctx, t.plan.Command
	rec := trainbundle.TrainingTrial{Trial: i}
	stdout, stderr := &cappedBuffer{limit: TrainCaptureLimit}, &cappedBuffer{limit: TrainCaptureLimit}
	var outW, errW io.Writer = stdout, stderr
	if c.Stdout != nil {
		outW = io.MultiWriter(stdout, c.Stdout)
	}
	if c.Stderr != nil {
		errW = io.MultiWriter(stderr, c.Stderr)
	}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		tctx, cancel = context.WithTimeoutCause(ctx, c.Timeout, fmt.Errorf("timed out after %v (the trial timeout)", c.Timeout))
	}
	defer cancel()
	start := time.Now()
	res, err := mllog.RunCommand(tctx, argv, mllog.RunOptions{Parse: mllog.Options{Node: t.node}, Stdout: outW, Stderr: errW})
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
	t.notify(Info, "the training command %s", exit.Reason)
	if res.Stats.Malformed > 0 {
		t.notify(Info, "%d malformed MLLOG lines (the first are quoted in %s)", res.Stats.Malformed, bundle.TrainingRunFile)
	}
	if rec.Failure != "" && exit.Cancelled && ctx.Err() == nil {
		t.notify(Info, "trial %d %s: recorded as not converged", i, rec.Failure)
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
