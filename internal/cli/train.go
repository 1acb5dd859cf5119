package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/gbt/testinfo"
	"aimeter/train"
)

// trainFlags are the flags of aimeter train. Most set their field of the
// plan (plan: the metrics configuration, test information fields 21 and
// 24's algorithm, the logs, the node and the output), of the reference
// workload (ref; --trials also counts a command's runs) or of the event
// endpoint (listen); trainPlan puts the others in.
type trainFlags struct {
	plan     benchmark.TrainPlan
	ref      benchmark.TrainReference
	listen   benchmark.TrainListen
	workload string
	aisBench string
	timeout  time.Duration
	quiet    bool
	store    storeFlags // --store, --no-store (results.go)
	infoFile string

	target        float64
	lowerIsBetter bool
	baselines     []string
	parallelism   int
	asyncUpdate   bool

	powerReplay string
	power       powerFlags
}

func newTrainCommand(st *State) *cobra.Command {
	f := &trainFlags{}
	cmd := &cobra.Command{
		Use:   "train [flags] [-- COMMAND [ARG...]]",
		Short: "Run the GB/T 45087 training test (clause 6, Annexes B and E.1) on a training program, a distributed job or the reference model",
		Long:  helpText("train"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var argv []string
			before := args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				before, argv = args[:dash], args[dash:]
			}
			switch {
			case len(before) > 0 && len(f.plan.Logs) > 0:
				// --logs result_*.txt: the shell's expansion puts every
				// file but the first after the flag.
				f.plan.Logs = append(f.plan.Logs, before...)
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
	fl.StringVar(&f.ref.Dataset, "dataset", "auto", "reference workload data set: fashion-mnist, synthetic, or auto (Fashion-MNIST if installed)")
	fl.IntVar(&f.ref.Trials, "trials", 0, "trials: runs of the command, or of the reference workload (default: the scenario's count, else MLPerf's run count for the logged benchmark, else 1; 3 for the reference workload)")
	fl.StringVar(&f.aisBench, "ais-bench", "", "run an ais-bench workload package (the folder holding code/benchmark.sh) unchanged, in a copy, with aimeter's ais_utils.py (docs/ais-bench.md)")
	fl.StringArrayVar(&f.plan.Logs, "logs", nil, "read MLPerf Training result logs as the trials of one test: files, or a directory of result_*.txt (repeatable; --logs result_*.txt works)")
	fl.DurationVar(&f.timeout, "timeout", 0, "with a command or --ais-bench: end a run that takes longer (SIGTERM, then SIGKILL) and record it as not converged (0: no limit)")
	fl.IntVar(&f.ref.Epochs, "epochs", benchmark.DefaultReferenceEpochs, "reference workload epoch limit per trial")
	fl.StringVar(&f.plan.OutputDir, "output-dir", "aimeter-training", "directory for the run bundle")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not show the training program's output")
	addStoreFlags(cmd, &f.store)
	fl.StringVar(&f.plan.Name, "name", "", "label of the run in report.html")
	fl.StringVar(&f.plan.Node, "node", "", "node name of events that name none (default: this host's name)")
	fl.StringVar(&f.listen.Addr, "listen", "", "serve the event endpoint on this address (host:port) for the ranks of a distributed job")
	fl.IntVar(&f.listen.Ranks, "ranks", 0, "with --listen: the number of ranks expected; collection ends when all have posted train_end")
	fl.DurationVar(&f.listen.Until, "until", 0, "with --listen: end collection after this long (0: no limit)")
	fl.BoolVar(&f.listen.UntilRanksDone, "until-ranks-done", false, "with --listen: end when every rank seen (or --ranks) has posted train_end")
	fl.DurationVar(&f.listen.Linger, "linger", time.Second, "with --listen: after the last train_end, wait until no event has come for this long")
	fl.StringVar(&f.plan.ScenarioID, "scenario-id", "", "Tables 1–4 scenario row, such as T1-1 (docs/requirements.md and go doc aimeter/train Scenarios list them)")
	fl.StringVar(&f.infoFile, "info", "", "test information YAML (6.1 a) fields 1–20); detected facts fill what it leaves out")
	addPowerFlags(fl, &f.power)
	// The old form of --power replay:FILE, kept for scripts that use it.
	fl.StringVar(&f.powerReplay, "power-replay", "", "CSV of whole-machine power samples from an outside meter")
	_ = fl.MarkHidden("power-replay")
	fl.Int64Var(&f.plan.TrainingSetSize, "training-set-size", 0, "training set size in samples (tokens with --text-generation); 0: from the epoch counts")
	fl.BoolVar(&f.plan.TextGeneration, "text-generation", false, "the workload generates text: sizes and throughput in tokens")
	fl.Float64Var(&f.plan.TrainingSetMB, "training-set-mb", 0, "training set size in MB (10^6 bytes), for the E.1.1 energy efficiency")
	fl.Float64Var(&f.target, "target", 0, "quality target on the 0–1 scale (default: the scenario's threshold)")
	fl.StringVar(&f.plan.TargetMetric, "target-metric", "", "name of the quality metric, such as \"Top1 accuracy\"")
	fl.BoolVar(&f.lowerIsBetter, "lower-is-better", false, "the quality metric is better when lower (WER)")
	fl.StringArrayVar(&f.baselines, "baseline", nil, "a scenario of the effective computing power Th-bar: NAME=BASELINE[:WEIGHT[:THROUGHPUT]] (repeatable)")
	fl.Float64Var(&f.plan.Alpha, "alpha", 0, "adjustment coefficient α of Th-bar (0: 100)")
	fl.StringVar(&f.plan.Training.Optimizer, "optimizer", "", "test information field 21: the optimizer's algorithm, such as LAMB")
	fl.IntVar(&f.parallelism, "parallelism", -1, "test information field 24: 0 none, 1 model, 2 data, 3 hybrid, 4 other parallel training (-1: not given)")
	fl.StringVar(&f.plan.Training.ParallelAlgorithm, "parallel-algorithm", "", "the algorithm of --parallelism 4")
	fl.BoolVar(&f.asyncUpdate, "async-update", false, "test information field 25: parameters are updated asynchronously")
	groupFlags(cmd,
		flagGroup{"Trials", []string{"trials", "logs", "ais-bench", "timeout"}},
		flagGroup{"Reference workload (--workload reference)", []string{"workload", "dataset", "epochs"}},
		flagGroup{"Event endpoint (--listen)", []string{"listen", "ranks", "until", "until-ranks-done", "linger"}},
		flagGroup{"Metrics configuration", []string{"scenario-id", "training-set-size", "text-generation", "training-set-mb", "target", "target-metric", "lower-is-better", "baseline", "alpha"}},
		flagGroup{"Power and energy", powerFlagNames},
		flagGroup{"Test information (6.1 a))", []string{"info", "optimizer", "parallelism", "parallel-algorithm", "async-update"}},
		flagGroup{"Output", []string{"output-dir", "quiet", "name", "node", "store", "no-store"}},
	)
	return cmd
}

// trainPlanFlags maps the fields of a benchmark.TrainPlan to the flags
// that set them, as planFlags does for a Plan (flagOf reads both).
var trainPlanFlags = []struct{ field, flag string }{
	{"TrainPlan.Reference", "workload"},
	{"TrainPlan.Reference.Dataset", "dataset"},
	{"TrainPlan.Reference.Trials", "trials"},
	{"TrainPlan.Reference.Epochs", "epochs"},
	{"TrainPlan.Command.Trials", "trials"},
	{"TrainPlan.Command.Timeout", "timeout"},
	{"TrainPlan.Listen", "listen"},
	{"TrainPlan.Listen.Addr", "listen"},
	{"TrainPlan.Listen.Ranks", "ranks"},
	{"TrainPlan.Listen.Until", "until"},
	{"TrainPlan.Listen.UntilRanksDone", "until-ranks-done"},
	{"TrainPlan.Listen.Linger", "linger"},
	{"TrainPlan.Logs", "logs"},
	{"TrainPlan.AisBench", "ais-bench"},
	{"TrainPlan.AisBench.Dir", "ais-bench"},
	{"TrainPlan.AisBench.Timeout", "timeout"},
	{"TrainPlan.ScenarioID", "scenario-id"},
	{"TrainPlan.Target", "target"},
	{"TrainPlan.TargetMetric", "target-metric"},
	{"TrainPlan.LowerIsBetter", "lower-is-better"},
	{"TrainPlan.TrainingSetSize", "training-set-size"},
	{"TrainPlan.TextGeneration", "text-generation"},
	{"TrainPlan.TrainingSetMB", "training-set-mb"},
	{"TrainPlan.Alpha", "alpha"},
	{"TrainPlan.Workloads", "baseline"},
	{"TrainPlan.Info", "info"},
	{"TrainPlan.Node", "node"},
	{"TrainPlan.Power", "power"},
	{"TrainPlan.OutputDir", "output-dir"},
	{"TrainPlan.Name", "name"},
}

// trainPlan turns the flags into a plan: what only the command line knows
// (which flags were given, files to read) is checked here, the values and
// the one way in by benchmark.TrainPlan.Validate.
func trainPlan(st *State, fs *pflag.FlagSet, f *trainFlags, argv []string) (*benchmark.TrainPlan, error) {
	if f.workload != "" && f.workload != "reference" {
		return nil, usageError("--workload %q: the only built-in workload is reference", f.workload)
	}
	for _, c := range []struct {
		names []string
		ok    bool
		why   string
	}{
		{[]string{"ranks", "until", "until-ranks-done", "linger"}, f.listen.Addr != "", "--%s needs --listen"},
		{[]string{"epochs", "dataset"}, f.workload != "", "--%s applies to --workload reference only"},
		{[]string{"trials"}, f.listen.Addr == "" && len(f.plan.Logs) == 0 && f.aisBench == "", "--%s applies to a command or --workload reference: --listen collects one job, --logs takes one trial a file, and --ais-bench runs the package once"},
		{[]string{"timeout"}, len(argv) > 0 || f.aisBench != "", "--%s applies to a command after -- or to --ais-bench"},
	} {
		for _, name := range c.names {
			if fs.Changed(name) && !c.ok {
				return nil, usageError(c.why, name)
			}
		}
	}
	switch {
	case fs.Changed("trials") && f.ref.Trials < 1:
		return nil, usageError("--trials %d: must be ≥ 1", f.ref.Trials)
	case f.ref.Epochs < 1:
		return nil, usageError("--epochs %d: must be ≥ 1", f.ref.Epochs)
	case f.parallelism < -1 || f.parallelism > 4:
		return nil, usageError("--parallelism %d: want 0 none, 1 model, 2 data, 3 hybrid or 4 other", f.parallelism)
	}
	p := new(benchmark.TrainPlan)
	*p = f.plan
	// Each way in the flags give goes into the plan: that there is one is
	// the library's rule (benchmark.TrainPlan.Validate).
	if f.workload != "" {
		r := f.ref
		p.Reference = &r
		if !f.quiet {
			p.Reference.Epoch = func(e benchmark.TrainEpoch) {
				fmt.Fprintf(st.Stderr, "  trial %d epoch %d: loss %.3f, validation top-1 %.4f\n", e.Trial, e.Epoch, e.Loss, e.Accuracy)
			}
		}
	}
	if f.listen.Addr != "" {
		l := f.listen
		p.Listen = &l
	}
	if f.aisBench != "" {
		p.AisBench = &benchmark.TrainAisBench{Dir: f.aisBench, Timeout: f.timeout}
		if !f.quiet {
			p.AisBench.Stdout, p.AisBench.Stderr = st.Stdout, st.Stderr
		}
	}
	if len(argv) > 0 {
		p.Command = &benchmark.TrainCommand{Argv: argv, Trials: f.ref.Trials, Timeout: f.timeout}
		if !f.quiet {
			p.Command.Stdout, p.Command.Stderr = st.Stdout, st.Stderr
		}
	}
	if fs.Changed("target") {
		p.Target = &f.target
	}
	if fs.Changed("lower-is-better") {
		p.LowerIsBetter = &f.lowerIsBetter
	}
	for _, s := range f.baselines {
		w, err := benchmark.ParseTrainWorkload(s)
		if err != nil {
			return nil, usageError("--baseline %q: %w", s, err)
		}
		p.Workloads = append(p.Workloads, w)
	}
	if f.infoFile != "" {
		if err := needFile("--info", f.infoFile); err != nil {
			return nil, err
		}
		manual, err := testinfo.Load(f.infoFile)
		if err != nil {
			return nil, usageError("--info: %w", err)
		}
		p.Info = manual
	}
	if f.parallelism >= 0 {
		par := train.Parallelism(f.parallelism)
		p.Training.Parallelism = &par
	}
	if fs.Changed("async-update") {
		p.Training.AsyncUpdate = testinfo.NotUsed
		if f.asyncUpdate {
			p.Training.AsyncUpdate = testinfo.Used
		}
	}
	if p.Node == "" {
		p.Node, _ = os.Hostname()
	}
	if f.powerReplay != "" {
		fmt.Fprintln(st.Stderr, "aimeter: --power-replay FILE is deprecated: use --power replay:FILE")
		f.power.sources = strings.TrimPrefix(f.power.sources+",replay:"+f.powerReplay, ",")
	}
	srcs, err := f.power.open(p.Node)
	if err != nil {
		return nil, err
	}
	p.Power, p.PowerOptions = srcs, f.power.options()
	return p, nil
}

// trainUsage is a library usage error with the plan's fields named by
// their flags.
func trainUsage(err error) error {
	var ue *benchmark.UsageError
	switch {
	case errors.As(err, &ue) && ue.Field == "TrainPlan.Training":
		return usageError("test information fields 21–25 (--optimizer, --parallelism, --parallel-algorithm, --async-update): %w", errors.Unwrap(ue.Err))
	case errors.As(err, &ue) && ue.Field == "TrainPlan": // the ways in; a command has no flag
		return usageError("%s", flagText(strings.ReplaceAll(err.Error(), "TrainPlan.Command", "a training command after --")))
	}
	return usageError("%s", flagText(err.Error()))
}

func runTrain(parent context.Context, st *State, fs *pflag.FlagSet, f *trainFlags, argv []string) error {
	p, err := trainPlan(st, fs, f, argv)
	if err != nil {
		return err
	}
	p.Notify = func(n benchmark.Notice) {
		switch n.Kind {
		case benchmark.Note:
			fmt.Fprintln(st.Stderr, "note:", n.Text)
		case benchmark.Warning:
			fmt.Fprintln(st.Stderr, "warning:", flagText(n.Text))
		default:
			fmt.Fprintln(st.Stderr, "aimeter:", flagText(n.Text))
		}
	}
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	out, err := benchmark.Train(ctx, *p)
	switch {
	case out == nil && benchmark.IsUsage(err):
		return trainUsage(err)
	case out == nil:
		return withCode(ExitFailure, errors.New(flagText(err.Error())))
	case out.Result == nil:
		return withCode(ExitFailure, err)
	}
	console.WriteTraining(st.Stdout, out.Result, out.Run(), f.plan.OutputDir)
	if rep := out.Result.Reported; rep != nil {
		writeReported(st.Stdout, rep)
	}
	if out.WriteErr == nil {
		recordRun(ctx, st, f.store, f.plan.OutputDir, out.Derived, f.quiet)
	}
	switch {
	case out.WriteErr != nil:
		return withCode(ExitFailure, err)
	case out.Interrupted:
		return withCode(ExitInterrupted, errors.New(out.Run().Incomplete+"; the bundle holds what was measured"))
	case out.Failure != nil:
		return withCode(ExitFailure, out.Failure)
	case out.Incomplete != "":
		return withCode(ExitInvalid, fmt.Errorf("the result is incomplete: %s", out.Incomplete))
	case out.NoScore != "":
		return withCode(ExitInvalid, fmt.Errorf("no MLPerf score: %s", out.NoScore))
	}
	return nil
}
