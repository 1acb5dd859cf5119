package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"aimeter/accuracy"
	"aimeter/bundle"
	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/mlperflog"
	"aimeter/model"
	"aimeter/report"
	"aimeter/sut/reference"
)

// Quality targets of the reference model, top-1 on the test split.
const (
	fashionMNISTTarget = 0.85
	syntheticTarget    = 0.95
)

type demoFlags struct {
	dataset    string
	outputDir  string
	weights    string
	retrain    bool
	duration   time.Duration
	quiet      bool
	spinWindow time.Duration
}

func newDemoCommand(st *State) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Benchmark the built-in reference model on real data: accuracy and all four scenarios, with an HTML report",
		Long: `Benchmark aimeter's reference model, a pure-Go image classifier, end to end.

The command:
  1. trains the model, if no trained weights are cached (seconds);
  2. runs an accuracy test on the whole test set, scored top-1 against the
     ground truth;
  3. runs short performance tests in SingleStream, MultiStream, Server and
     Offline against the in-process reference SUT, which batches dynamically;
  4. prints a table, writes every log, and writes one HTML report.

It uses Fashion-MNIST from the Debian package dataset-fashion-mnist
(/usr/share/datasets/fashion-mnist), or, if that is missing, a seeded
synthetic image set generated in the manner of GB/T 45087 clause 7.4.3.

Quality targets: top-1 >= 85 % on Fashion-MNIST, >= 95 % on the synthetic set.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), st, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dataset, "dataset", "auto", "fashion-mnist, synthetic, or auto (Fashion-MNIST if installed)")
	fl.StringVar(&f.outputDir, "output-dir", "aimeter-demo", "directory for the logs and report.html")
	fl.StringVar(&f.weights, "weights", "", "trained weights file (default: in the user cache directory)")
	fl.BoolVar(&f.retrain, "retrain", false, "train even if cached weights exist")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "minimum duration of each performance run")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bars")
	fl.DurationVar(&f.spinWindow, "spin-window", loadgen.DefaultSpinWindow, "Server: busy-wait this close to each scheduled query (negative = never spin; see aimeter run --help)")
	return cmd
}

// demoData is the chosen data set.
type demoData struct {
	train, test *dataset.Images
	target      float64
}

func loadDemoData(st *State, name string) (*demoData, error) {
	useSynthetic := func() *demoData {
		return &demoData{train: dataset.Synthetic(20000, 1), test: dataset.Synthetic(5000, 2), target: syntheticTarget}
	}
	switch name {
	case "synthetic":
		return useSynthetic(), nil
	case "fashion-mnist", "auto":
		train, err := dataset.LoadFashionMNIST(dataset.FashionMNISTDir, dataset.Train)
		if err == nil {
			var test *dataset.Images
			if test, err = dataset.LoadFashionMNIST(dataset.FashionMNISTDir, dataset.Test); err == nil {
				return &demoData{train: train, test: test, target: fashionMNISTTarget}, nil
			}
		}
		if name == "auto" && errors.Is(err, dataset.ErrMissing) {
			fmt.Fprintf(st.Stderr, "note: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist); using the synthetic image set\n")
			return useSynthetic(), nil
		}
		return nil, err
	}
	return nil, fmt.Errorf("--dataset %q: want fashion-mnist, synthetic or auto", name)
}

// weightsPath returns where the trained weights of this data set are cached.
func weightsPath(flag string, data *demoData) (string, error) {
	if flag != "" {
		return flag, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	layers := strings.Trim(strings.ReplaceAll(fmt.Sprint(model.DefaultLayers()), " ", "-"), "[]")
	return filepath.Join(dir, "aimeter", fmt.Sprintf("reference-%s-%s.aimw", data.train.Name, layers)), nil
}

// obtainModel loads cached weights or trains the model and caches it.
func obtainModel(ctx context.Context, st *State, f *demoFlags, data *demoData) (*model.MLP, string, error) {
	path, err := weightsPath(f.weights, data)
	if err != nil {
		return nil, "", err
	}
	if !f.retrain {
		m, err := model.LoadFile(path)
		switch {
		case err == nil:
			if m.Inputs() != data.train.Rows*data.train.Cols || m.Classes() != len(data.train.Classes) {
				return nil, path, fmt.Errorf("weights file %s is for %d inputs and %d classes, not this data set: delete it or run with --retrain", path, m.Inputs(), m.Classes())
			}
			return m, "loaded from " + path, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, path, fmt.Errorf("%w: delete the file or run `aimeter demo --retrain`", err)
		}
	}
	cfg := model.DefaultTrainConfig()
	m := model.New(model.DefaultLayers(), cfg.Seed)
	bar := newBar(st, f.quiet, "training", cfg.Epochs)
	start := time.Now()
	err = m.Train(ctx, data.train.Floats(), data.train.Labels, data.train.Len(), cfg, func(epoch int, loss, acc float64) {
		bar.set(epoch, fmt.Sprintf("loss %.3f  train top-1 %.1f%%", loss, 100*acc))
	})
	bar.done()
	if err != nil {
		return nil, path, fmt.Errorf("training: %w", err)
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		if err := m.SaveFile(path); err != nil {
			fmt.Fprintf(st.Stderr, "warning: could not cache the weights: %v\n", err)
		}
	}
	return m, fmt.Sprintf("trained in %v (%d epochs) and saved to %s", took, cfg.Epochs, path), nil
}

// mlpPredictor adapts the model to the reference SUT.
type mlpPredictor struct {
	inf *model.Inferencer
	out []int
}

func (p *mlpPredictor) Predict(x []float32, batch int, classes []uint8) {
	p.out = p.inf.Predict(p.out[:0], x, batch)
	for i, c := range p.out {
		classes[i] = uint8(c)
	}
}

// demoRun is one benchmark run of the demo.
type demoRun struct {
	name     string
	res      *loadgen.Result
	accuracy *report.AccuracyInfo
	stages   reference.StageStats
}

func runDemo(parent context.Context, st *State, f *demoFlags) error {
	ctx, stop := interruptible(parent, st)
	defer stop()
	if f.duration <= 0 {
		return usageError("--duration must be > 0")
	}

	data, err := loadDemoData(st, f.dataset)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	m, how, err := obtainModel(ctx, st, f, data)
	if err != nil {
		if ctx.Err() != nil {
			return withCode(ExitInterrupted, err)
		}
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stdout, "Reference model: MLP %v, %d parameters, %s\n", m.Layers(), m.NumParams(), how)
	fmt.Fprintf(st.Stdout, "Data set: %s (%d test images, %d classes)\n", data.test.Name, data.test.Len(), len(data.test.Classes))

	sut, qsl, err := serveModel(m, data.test, 0)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer sut.Close()
	// In Server the issuer keeps one core busy to issue on time, so that
	// run gets a SUT whose model uses the other cores only.
	serverSUT, _, err := serveModelOn(m, qsl, max(1, runtime.NumCPU()-1))
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer serverSUT.Close()

	single, batchRate := calibrate(m, data.test)
	var runs []demoRun
	var interrupted error
	system := report.DetectSystem()
	system.AimeterVersion = Version
	// do runs one scenario and writes its bundle; check, if set, scores
	// the accuracy log before the bundle is written, so the bundle keeps
	// the outcome.
	do := func(name string, s loadgen.Settings, check func(*loadgen.Result) (*report.AccuracyInfo, error)) *loadgen.Result {
		if interrupted != nil {
			return nil
		}
		sut := sut
		if s.Scenario == loadgen.Server {
			sut = serverSUT
		}
		sut.ResetStats()
		pl := &progressLine{w: st.Stderr, terminal: st.StderrIsTerminal, target: time.Duration(s.MinDurationMs) * time.Millisecond}
		opts := &loadgen.Options{StallTimeout: time.Minute, SpinWindow: f.spinWindow}
		if !f.quiet {
			opts.Progress = func(p loadgen.Progress) {
				p.Pass = loadgen.PassKind(name)
				pl.update(p)
			}
		}
		res, err := loadgen.Run(ctx, sut, qsl, s, opts)
		if err != nil {
			interrupted = err
			if res == nil {
				return nil
			}
		}
		run := demoRun{name: name, res: res, stages: sut.Stats()}
		if check != nil && len(res.Accuracy) > 0 {
			if run.accuracy, err = check(res); err != nil && interrupted == nil {
				interrupted = err
			}
		}
		dir := filepath.Join(f.outputDir, strings.ToLower(strings.ReplaceAll(name, " ", "-")))
		b := &bundle.Bundle{Result: res, Version: Version, Name: name, System: system, AccuracyCheck: run.accuracy}
		if err := bundle.Write(dir, b); err != nil && interrupted == nil {
			interrupted = err
		}
		runs = append(runs, run)
		return res
	}

	// Accuracy: every test image once, Offline (one batched query per set).
	acc := loadgen.DefaultSettings()
	acc.Scenario, acc.Mode = loadgen.Offline, loadgen.AccuracyOnly
	do("Accuracy", acc, func(res *loadgen.Result) (*report.AccuracyInfo, error) {
		score, err := accuracy.Top1(res.Accuracy, data.test.Len(), qsl.Label)
		if err != nil {
			return nil, err
		}
		return &report.AccuracyInfo{Metric: "top-1 accuracy (%)", Value: 100 * score.Value, Target: 100 * data.target, Pass: score.Value >= data.target}, nil
	})

	minMs := uint64(f.duration.Milliseconds())
	// SingleStream: one sample at a time; the hint only sizes the schedule.
	ss := loadgen.DefaultSettings()
	ss.MinDurationMs = minMs
	ss.SingleStreamExpectedLatencyNs = uint64(max(single/2, 1000))
	do("SingleStream", ss, nil)

	// MultiStream: 8 samples per query, p99 over at least 662 queries.
	ms := loadgen.DefaultSettings()
	ms.Scenario = loadgen.MultiStream
	ms.MinDurationMs = minMs
	ms.MinQueryCount = 662
	ms.MultiStreamExpectedLatencyNs = uint64(max((single+8*int64(1e9/batchRate))/4, 1000))
	do("MultiStream", ms, nil)

	// Server: Poisson arrivals at 10 % of the batched rate (the issuer spins
	// on one core to keep the schedule), 15 ms p99 bound.
	sv := loadgen.DefaultSettings()
	sv.Scenario = loadgen.Server
	// Twice as long as the others: on a small shared machine a stall of
	// the host (tens of ms, seen on 2-core VMs) must not weigh 1 % of a
	// short run.
	sv.MinDurationMs = 2 * minMs
	sv.ServerTargetQPS = float64(int(0.1 * batchRate))
	sv.ServerTargetLatencyNs = 15_000_000
	do("Server", sv, nil)

	// Offline: one query sized for 1.5× the calibrated rate.
	off := loadgen.DefaultSettings()
	off.Scenario = loadgen.Offline
	off.MinDurationMs = minMs / 2
	off.OfflineExpectedQPS = 1.5 * batchRate
	do("Offline", off, nil)

	printDemoTable(st.Stdout, runs)
	if err := writeDemoReport(f.outputDir, data, m, system, runs); err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stdout, "Logs in %s/<run>/, report in %s\n", f.outputDir, filepath.Join(f.outputDir, "report.html"))
	if interrupted != nil {
		if errors.Is(interrupted, loadgen.ErrInterrupted) {
			return withCode(ExitInterrupted, interrupted)
		}
		return withCode(ExitFailure, interrupted)
	}
	for _, r := range runs {
		if (r.res.Summary != nil && !r.res.Summary.Valid) || (r.accuracy != nil && !r.accuracy.Pass) {
			return withCode(ExitInvalid, nil)
		}
	}
	return nil
}

// calibrate measures the single-sample latency (ns) and the batched
// throughput (samples/s) of the model, to size the scenarios.
func calibrate(m *model.MLP, set *dataset.Images) (singleNs int64, batchPerSec float64) {
	const batch = 64
	inf := m.NewInferencer(batch)
	x := set.Floats()[:batch*set.Rows*set.Cols]
	var out []int
	start := time.Now()
	n := 0
	for time.Since(start) < 200*time.Millisecond {
		out = inf.Predict(out[:0], x[:set.Rows*set.Cols], 1)
		n++
	}
	singleNs = int64(time.Since(start)) / int64(n)
	start, n = time.Now(), 0
	for time.Since(start) < 300*time.Millisecond {
		out = inf.Predict(out[:0], x, batch)
		n += batch
	}
	return singleNs, float64(n) / time.Since(start).Seconds()
}

func printDemoTable(w io.Writer, runs []demoRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nScenario\tMetric\tValue\tResult\tAccuracy")
	for _, r := range runs {
		metric, value, verdict := "-", "-", "-"
		if s := r.res.Summary; s != nil {
			name, v := s.Metric()
			metric, value = name, mlperflog.FormatDouble(v)
			verdict = "VALID"
			if !s.Valid {
				verdict = "INVALID"
			}
		}
		accText := "-"
		if a := r.accuracy; a != nil {
			pass := "PASS"
			if !a.Pass {
				pass = "FAIL"
			}
			accText = fmt.Sprintf("%.2f%% top-1 (target %.0f%%) %s", a.Value, a.Target, pass)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.name, metric, value, verdict, accText)
	}
	tw.Flush()
}

func writeDemoReport(dir string, data *demoData, m *model.MLP, system report.SystemInfo, runs []demoRun) error {
	rep := &report.Report{
		Title:     "aimeter demo: reference MLP on " + data.test.Name,
		Generated: time.Now(),
		System:    system,
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("Model: pure-Go MLP %v, %d parameters, %d FLOP per sample.", m.Layers(), m.NumParams(), m.FLOPsPerSample()))
	for _, r := range runs {
		rep.Scenarios = append(rep.Scenarios, report.Scenario{Name: r.name, Result: r.res, Accuracy: r.accuracy})
		if r.stages.Samples > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: SUT stage times per sample: preprocess %v, inference %v, postprocess %v (mean batch %.1f).",
				r.name, r.stages.MeanPerSample(reference.Preprocess), r.stages.MeanPerSample(reference.Inference),
				r.stages.MeanPerSample(reference.Postprocess), r.stages.MeanBatch()))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "report.html")
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.Write(out, rep); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return out.Close()
}

// newReferenceSUT builds the reference SUT on the demo's data and model
// (trained or loaded from the cache) for `aimeter run --sut reference`.
func newReferenceSUT(ctx context.Context, st *State, quiet bool) (*reference.SUT, *dataset.QSL, error) {
	data, err := loadDemoData(st, "auto")
	if err != nil {
		return nil, nil, err
	}
	m, how, err := obtainModel(ctx, st, &demoFlags{quiet: quiet}, data)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(st.Stderr, "reference SUT: MLP %v %s\n", m.Layers(), how)
	return serveModel(m, data.test, 0)
}

// serveModel starts the reference SUT serving m over a new QSL of set; the
// model uses at most threads goroutines per batch (0 = all cores).
func serveModel(m *model.MLP, set *dataset.Images, threads int) (*reference.SUT, *dataset.QSL, error) {
	return serveModelOn(m, dataset.NewQSL(set, 1024), threads)
}

// serveModelOn is serveModel over an existing QSL.
func serveModelOn(m *model.MLP, qsl *dataset.QSL, threads int) (*reference.SUT, *dataset.QSL, error) {
	set := qsl.Set()
	const maxBatch = 64
	sut, err := reference.New(reference.Options{
		Name:      "ReferenceSUT (pure-Go MLP)",
		InputSize: set.Rows * set.Cols,
		NewPredictor: func() reference.Predictor {
			inf := m.NewInferencer(maxBatch)
			inf.SetThreads(threads)
			return &mlpPredictor{inf: inf}
		},
		Samples:  qsl,
		MaxBatch: maxBatch,
	})
	return sut, qsl, err
}
