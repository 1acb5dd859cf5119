package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/console"
	"aimeter/gbt"
)

// gbtFlags are the GB/T 45087 options of `aimeter run`.
type gbtFlags struct {
	mode          int
	lambda        float64
	period        time.Duration
	n             int
	jobs          uint64
	duration      time.Duration
	bursts        int
	burstLength   time.Duration
	burstPeriod   time.Duration
	burstN        int
	burstStarts   []time.Duration
	timeoutClass  int
	timeout       time.Duration
	lossThreshold float64
	scenarioID    string
	infoFile      string
	seed          uint64
	sampleBytes   int64
	mixedBase     int
	mixedLambda   float64
	mixedQSLSize  uint64
}

func addGBTFlags(fl *pflag.FlagSet, g *gbtFlags) {
	fl.IntVar(&g.mode, "arrival-mode", -1, "GB/T 45087 arrival mode (Table 10): 0 continuous, 1 fixed period, 2 Poisson, 3 peak, 4 offline, 5 mixed; -1 = an MLPerf run")
	fl.Float64Var(&g.lambda, "lambda", gbt.DefaultLambda, "Poisson rate λ, jobs/s (modes 2, 3)")
	fl.DurationVar(&g.period, "period", gbt.DefaultPeriod, "fixed period T (mode 1)")
	fl.IntVar(&g.n, "jobs-per-period", gbt.DefaultN, "jobs n arriving each period (mode 1)")
	fl.Uint64Var(&g.jobs, "jobs", 0, "jobs sent at once (mode 4); default the loaded data set, each sample once (or --set min_query_count)")
	fl.DurationVar(&g.duration, "duration", 10*time.Second, "how long jobs arrive (modes 0–3)")
	fl.IntVar(&g.bursts, "bursts", 2, "bursts j (mode 3)")
	fl.DurationVar(&g.burstLength, "burst-length", 5*time.Second, "burst length T_G (mode 3)")
	fl.DurationVar(&g.burstPeriod, "burst-period", 10*time.Millisecond, "period inside a burst (mode 3)")
	fl.IntVar(&g.burstN, "burst-jobs", 11, "jobs per burst period (mode 3); σ = burst-jobs / burst-period")
	fl.DurationSliceVar(&g.burstStarts, "burst-starts", nil, "burst start offsets (mode 3; default: placed at random from --seed)")
	fl.IntVar(&g.timeoutClass, "timeout-class", 0, "Table 10 timeout-control threshold column, 1 or 2 (default 1)")
	fl.DurationVar(&g.timeout, "job-timeout", 0, "override the Table 10 timeout-control threshold")
	fl.Float64Var(&g.lossThreshold, "loss-threshold", 0.01, "permissible loss rate, a fraction (GB-7.7.1-c-2; the standard sets none, IN-79)")
	fl.StringVar(&g.scenarioID, "scenario-id", "", "GB/T scenario of Tables 11–14 whose workload to run: T13-1 (alias ocr-dbnet: DBNet text detection, --sut onnx); the others are refused until aimeter can run their workload (see aimeter scenarios)")
	fl.StringVar(&g.infoFile, "info", "", "test information YAML (7.1 a)); detected facts fill what it leaves out")
	fl.Uint64Var(&g.seed, "seed", 0, "seed of the arrival schedule (IN-53)")
	fl.Int64Var(&g.sampleBytes, "sample-bytes", 3136, "bytes of input per sample, for the data-volume metrics (elasticity, pressure tolerance)")
	fl.IntVar(&g.mixedBase, "mixed-base-mode", int(gbt.ModePoisson), "mode 5: the underlying arrival mode of the main jobs")
	fl.Float64Var(&g.mixedLambda, "mixed-lambda", 1, "mode 5: Poisson rate of the foreign jobs, jobs/s")
	fl.Uint64Var(&g.mixedQSLSize, "mixed-qsl-size", 256, "mode 5: samples in the foreign jobs' own QSL")
}

// planInput is gbt.NewRunPlan's input from the flags.
func (g *gbtFlags) planInput() gbt.PlanInput {
	return gbt.PlanInput{
		Arrival: gbt.Arrival{
			Mode: gbt.ArrivalMode(g.mode), Lambda: g.lambda, Period: g.period, N: g.n, Duration: g.duration, Jobs: g.jobs,
			Bursts: g.bursts, BurstLength: g.burstLength, BurstPeriod: g.burstPeriod, BurstN: g.burstN,
			BurstStarts: g.burstStarts, Seed: g.seed,
		},
		UnderlyingMode: gbt.ArrivalMode(g.mixedBase),
		Mixed:          gbt.Mixed{Lambda: g.mixedLambda, QSLSize: g.mixedQSLSize, Seed: gbt.ForeignSeed(g.seed)},
		Scenario:       g.scenarioID,
		TimeoutClass:   gbt.TimeoutClass(g.timeoutClass),
		Timeout:        g.timeout,
		LossThreshold:  g.lossThreshold,
		SampleBytes:    g.sampleBytes,
	}
}

func newScenariosCommand(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List the GB/T 45087 inference scenarios of Tables 11–14 and the arrival modes of Table 10",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			console.WriteScenarios(st.Stdout)
			return nil
		},
	}
}
