package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/loadgen"
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
		f.spinWindow = benchmark.DemoSpinWindow(f.spinWindow, cmd.Flags().Changed("spin-window"), runtime.NumCPU())
	}
	return cmd
}

// obtainReference obtains the reference model and its data set
// (benchmark.ObtainReference) with a training progress bar, a note on
// stderr where "auto" falls back to the synthetic set, and a warning where
// the weights could not be cached.
func obtainReference(ctx context.Context, st *State, f *demoFlags) (*benchmark.Reference, error) {
	var b *bar
	ref, err := benchmark.ObtainReference(ctx, benchmark.ReferenceOptions{
		Dataset: f.dataset, Weights: f.weights, Retrain: f.retrain,
		Notify: func(note string) { fmt.Fprintf(st.Stderr, "note: %s\n", note) },
		Progress: func(epoch, epochs int, loss, acc float64) {
			if b == nil {
				b = newBar(st, f.quiet, "training", epochs)
			}
			b.set(epoch, fmt.Sprintf("loss %.3f  train top-1 %.1f%%", loss, 100*acc))
		},
	})
	if b != nil {
		b.done()
	}
	var ue *benchmark.UsageError
	var we *benchmark.WeightsError
	switch {
	case errors.As(err, &ue) && ue.Field == "ReferenceOptions.Dataset":
		return nil, fmt.Errorf("--dataset %w", ue.Err)
	case errors.As(err, &we) && we.Err == nil:
		return nil, fmt.Errorf("%w: delete it or run with --retrain", err)
	case errors.As(err, &we):
		return nil, fmt.Errorf("%w: delete the file or run `aimeter demo --retrain`", err)
	case err != nil:
		return nil, err
	}
	if ref.SaveErr != nil {
		fmt.Fprintf(st.Stderr, "warning: could not cache the weights: %v\n", ref.SaveErr)
	}
	return ref, nil
}

func runDemo(parent context.Context, st *State, f *demoFlags) error {
	ctx, stop := interruptible(parent, st)
	defer stop()
	if f.duration <= 0 {
		return usageError("--duration must be > 0")
	}

	ref, err := obtainReference(ctx, st, f)
	if err != nil {
		if ctx.Err() != nil {
			return withCode(ExitInterrupted, err)
		}
		return withCode(ExitFailure, err)
	}
	m, data := ref.Model, ref.Data
	fmt.Fprintf(st.Stdout, "Reference model: MLP %v, %d parameters, %s\n", m.Layers(), m.NumParams(), ref.How)
	fmt.Fprintf(st.Stdout, "Data set: %s (%d test images, %d classes)\n", data.Test.Name, data.Test.Len(), len(data.Test.Classes))

	demo, err := benchmark.NewDemo(benchmark.DemoPlan{
		Data: data, Model: m, OutputDir: f.outputDir, Duration: f.duration, SpinWindow: f.spinWindow,
		Prepare: func(name string, p *benchmark.Plan) {
			p.CommandLine = append([]string{"aimeter"}, st.Args...)
			p.Done = recordDone(ctx, st, f.store, f.quiet)
			p.Notify = func(n benchmark.Notice) {
				n.Text = "the " + name + " run: " + n.Text
				printNotice(st, n, f.quiet)
			}
			if !f.quiet {
				pl := &console.ProgressLine{W: st.Stderr, Terminal: st.StderrIsTerminal}
				p.Progress = func(pr benchmark.Progress) {
					pr.Pass = loadgen.PassKind(name)
					pl.Update(pr)
				}
			}
		},
	})
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer demo.Close()
	console.WriteDemoPlan(st.Stdout, demo.Calibration, demo.CalibrateOptions, demo.Plans)
	out, interrupted := demo.Run(ctx)

	table := make([]console.DemoRun, len(out.Runs))
	for i, r := range out.Runs {
		table[i] = console.DemoRun{Name: r.Name, Outcome: r.Outcome}
	}
	console.WriteDemoTable(st.Stdout, table)
	path, err := out.WriteReport(f.outputDir)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stdout, "Logs in %s/<run>/, report in %s\n", f.outputDir, path)
	if interrupted != nil {
		if errors.Is(interrupted, loadgen.ErrInterrupted) {
			return withCode(ExitInterrupted, interrupted)
		}
		return withCode(ExitFailure, interrupted)
	}
	if out.Invalid() {
		return withCode(ExitInvalid, nil)
	}
	return nil
}
