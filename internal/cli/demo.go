package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/report"
	"aimeter/sut/reference"
	"aimeter/sut/reference/mlp"
)

type demoFlags struct {
	dataset    string
	outputDir  string
	weights    string
	retrain    bool
	duration   time.Duration
	quiet      bool
	spinWindow time.Duration
	store      storeFlags // --store, --no-store (results.go)
}

func newDemoCommand(st *State) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Benchmark the built-in reference model on real data: accuracy and all four scenarios, with an HTML report",
		Long:  helpText("demo"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), st, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dataset, "dataset", "auto", "fashion-mnist, synthetic, or auto (Fashion-MNIST if installed)")
	fl.StringVar(&f.outputDir, "output-dir", "aimeter-demo", "directory for the logs and report.html")
	fl.StringVar(&f.weights, "weights", "", "trained weights file (default: in the user cache directory)")
	fl.BoolVar(&f.retrain, "retrain", false, "train even if cached weights exist")
	fl.DurationVar(&f.duration, "duration", 5*time.Second, "minimum duration of the SingleStream and MultiStream runs (Server: 4x, Offline: 0.4x)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bars")
	addStoreFlags(cmd, &f.store)
	fl.DurationVar(&f.spinWindow, "spin-window", loadgen.DefaultSpinWindow, "Server: busy-wait this close to each scheduled query (negative = never spin; default: never on fewer than 4 cores; see aimeter run --help)")
	cmd.PreRun = func(cmd *cobra.Command, _ []string) {
		f.spinWindow = demoSpinWindow(f.spinWindow, cmd.Flags().Changed("spin-window"), runtime.NumCPU())
	}
	return cmd
}

// demoSpinWindow returns the Server spin window of the demo: the flag's
// value where it was given, else the default on 4 cores or more and never
// spinning (-1) on fewer. A spinning issuer takes one of two cores from the
// model and, with any other process running, leaves the Server latency to
// the scheduler (p99 over 100 ms seen on a 2-core machine with one busy
// neighbour, under 10 ms without spinning).
func demoSpinWindow(flag time.Duration, given bool, cpus int) time.Duration {
	if given || cpus >= 4 {
		return flag
	}
	return -1
}

// loadDemoData loads the data set --dataset names (mlp.LoadData), with a
// note on stderr where "auto" falls back to the synthetic set.
func loadDemoData(st *State, name string) (*mlp.Data, error) {
	data, err := mlp.LoadData(name, mlp.DataOptions{Notify: func(note string) {
		fmt.Fprintf(st.Stderr, "note: %s\n", note)
	}})
	if errors.Is(err, mlp.ErrUnknownData) {
		return nil, fmt.Errorf("--dataset %q: want fashion-mnist, synthetic or auto", name)
	}
	return data, err
}

// obtainModel obtains the reference model (mlp.ObtainModel) with a
// training progress bar, and says where it came from.
func obtainModel(ctx context.Context, st *State, f *demoFlags, data *mlp.Data) (*model.MLP, string, error) {
	bar := newBar(st, f.quiet, "training", model.DefaultTrainConfig().Epochs)
	m, got, err := mlp.ObtainModel(ctx, data.Train, mlp.ModelOptions{
		Weights: f.weights,
		Retrain: f.retrain,
		Progress: func(epoch, _ int, loss, acc float64) {
			bar.set(epoch, fmt.Sprintf("loss %.3f  train top-1 %.1f%%", loss, 100*acc))
		},
	})
	bar.done()
	if we := (*mlp.WeightsError)(nil); errors.As(err, &we) {
		if we.Err == nil {
			return nil, "", fmt.Errorf("%w: delete it or run with --retrain", err)
		}
		return nil, "", fmt.Errorf("%w: delete the file or run `aimeter demo --retrain`", err)
	}
	if err != nil {
		return nil, "", err
	}
	if got.SaveErr != nil {
		fmt.Fprintf(st.Stderr, "warning: could not cache the weights: %v\n", got.SaveErr)
	}
	return m, got.String(), nil
}

// demoRun is one benchmark run of the demo.
type demoRun struct {
	name   string
	out    *benchmark.Outcome
	stages reference.StageStats
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
	// The training set is no longer needed: let it go before the runs,
	// which keep every record in memory for the report.
	data.Train = nil
	fmt.Fprintf(st.Stdout, "Reference model: MLP %v, %d parameters, %s\n", m.Layers(), m.NumParams(), how)
	fmt.Fprintf(st.Stdout, "Data set: %s (%d test images, %d classes)\n", data.Test.Name, data.Test.Len(), len(data.Test.Classes))

	// The demo keeps no per-sample stage times (no stages.parquet): the
	// report gives each stage's mean from the SUT's sums.
	qsl := dataset.NewQSL(data.Test, mlp.QSLPerformanceSamples)
	sut, err := mlp.Serve(m, qsl, mlp.ServeOptions{NoStageTimes: true})
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer sut.Close()
	// In Server the issuer may keep one core busy to issue on time, so
	// that run gets a SUT whose model uses the other cores only.
	serverSUT, err := mlp.Serve(m, qsl, mlp.ServeOptions{Threads: max(1, runtime.NumCPU()-1), NoStageTimes: true})
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer serverSUT.Close()

	co := benchmark.DemoCalibration()
	cal := calibrate(m, data.Test, co)
	plan := benchmark.PlanDemo(cal, f.duration)
	console.WriteDemoPlan(st.Stdout, cal, co, plan)
	var runs []demoRun
	var interrupted error
	// do runs one scenario through the one run path (benchmark.Run) and
	// writes its bundle; an accuracy run is scored against the labels
	// there, so the bundle keeps the outcome.
	do := func(name string, s loadgen.Settings) {
		if interrupted != nil {
			return
		}
		sut := sut
		if s.Scenario == loadgen.Server {
			sut = serverSUT
		}
		sut.ResetStats()
		p := benchmark.Plan{
			Custom:    &benchmark.Custom{SUT: sut, QSL: qsl, Labels: qsl.Label, Target: data.Target},
			Settings:  benchmark.Settings{Explicit: &s},
			OutputDir: filepath.Join(f.outputDir, strings.ToLower(strings.ReplaceAll(name, " ", "-"))),
			Name:      name, StallTimeout: time.Minute,
			CommandLine: append([]string{"aimeter"}, st.Args...),
			Done:        recordDone(ctx, st, f.store, f.quiet),
			Notify: func(n benchmark.Notice) {
				n.Text = "the " + name + " run: " + n.Text
				printNotice(st, n, f.quiet)
			},
		}
		if s.Scenario == loadgen.Server { // a spin window applies to a schedule only
			p.SpinWindow = f.spinWindow
		}
		if !f.quiet {
			pl := &progressLine{w: st.Stderr, terminal: st.StderrIsTerminal}
			p.Progress = func(pr benchmark.Progress) {
				pl.target = pr.Target
				pr.Pass = loadgen.PassKind(name)
				pl.update(pr.Progress)
			}
		}
		out, err := benchmark.Run(ctx, p)
		if err != nil {
			interrupted = err
		}
		if out != nil {
			runs = append(runs, demoRun{name: name, out: out, stages: sut.Stats()})
		}
	}

	// Accuracy: every test image once, Offline (one batched query per set).
	acc := loadgen.DefaultSettings()
	acc.Scenario, acc.Mode = loadgen.Offline, loadgen.AccuracyOnly
	do("Accuracy", acc)
	do("SingleStream", plan.SingleStream)
	do("MultiStream", plan.MultiStream)
	do("Server", plan.Server)
	do("Offline", plan.Offline)

	table := make([]console.DemoRun, len(runs))
	for i, r := range runs {
		table[i] = console.DemoRun{Name: r.name, Outcome: r.out}
	}
	console.WriteDemoTable(st.Stdout, table)
	if err := writeDemoReport(f.outputDir, data, m, runs); err != nil {
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
		if r.out.Verdict.Kind != benchmark.VerdictNone && !r.out.Verdict.Pass {
			return withCode(ExitInvalid, nil)
		}
	}
	return nil
}

// calibrate measures the model as the demo sizes its runs from it
// (benchmark.Calibrate with benchmark.DemoCalibration): single samples and
// batches of the options' size, on the test set's first images.
func calibrate(m *model.MLP, set *dataset.Images, o benchmark.CalibrateOptions) benchmark.Calibration {
	inf := m.NewInferencer(o.Batch)
	px := set.Rows * set.Cols
	x := set.Floats()[:o.Batch*px]
	var out []int
	return benchmark.Calibrate(func(n int) { out = inf.Predict(out[:0], x[:n*px], n) }, o)
}

func writeDemoReport(dir string, data *mlp.Data, m *model.MLP, runs []demoRun) error {
	rep := &report.Report{
		Title:     "aimeter demo: reference MLP on " + data.Test.Name,
		Generated: time.Now(),
	}
	if len(runs) > 0 {
		rep.System = runs[0].out.Bundle.System
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("Model: pure-Go MLP %v, %d parameters, %d FLOP per sample.", m.Layers(), m.NumParams(), m.FLOPsPerSample()))
	for _, r := range runs {
		sc, err := r.out.Derived.ReportRun()
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, sc)
		if l := r.out.Bundle.HostLoad; l != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: during the run %s.", r.name, l))
		}
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
