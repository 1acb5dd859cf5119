package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/console"
	"aimeter/gbt"
)

// gbtFlags are the GB/T 45087 options of `aimeter run`: --arrival-mode
// (-1 for an MLPerf run), --info, and the others, each of which sets its
// field of gbt.NewRunPlan's input (in).
type gbtFlags struct {
	mode     int
	in       gbt.PlanInput
	infoFile string
}

func addGBTFlags(fl *pflag.FlagSet, g *gbtFlags) {
	fl.IntVar(&g.mode, "arrival-mode", -1, "GB/T 45087 arrival mode (Table 10): 0 continuous, 1 fixed period, 2 Poisson, 3 peak, 4 offline, 5 mixed; -1 = an MLPerf run")
	fl.Float64Var(&g.in.Arrival.Lambda, "lambda", gbt.DefaultLambda, "Poisson rate λ, jobs/s (modes 2, 3)")
	fl.DurationVar(&g.in.Arrival.Period, "period", gbt.DefaultPeriod, "fixed period T (mode 1)")
	fl.IntVar(&g.in.Arrival.N, "jobs-per-period", gbt.DefaultN, "jobs n arriving each period (mode 1)")
	fl.Uint64Var(&g.in.Arrival.Jobs, "jobs", 0, "jobs sent at once (mode 4); default the loaded data set, each sample once (or --set min_query_count)")
	fl.DurationVar(&g.in.Arrival.Duration, "duration", 10*time.Second, "how long jobs arrive (modes 0–3)")
	fl.IntVar(&g.in.Arrival.Bursts, "bursts", 2, "bursts j (mode 3)")
	fl.DurationVar(&g.in.Arrival.BurstLength, "burst-length", 5*time.Second, "burst length T_G (mode 3)")
	fl.DurationVar(&g.in.Arrival.BurstPeriod, "burst-period", 10*time.Millisecond, "period inside a burst (mode 3)")
	fl.IntVar(&g.in.Arrival.BurstN, "burst-jobs", 11, "jobs per burst period (mode 3); σ = burst-jobs / burst-period")
	fl.DurationSliceVar(&g.in.Arrival.BurstStarts, "burst-starts", nil, "burst start offsets (mode 3; default: placed at random from --seed)")
	fl.IntVar((*int)(&g.in.TimeoutClass), "timeout-class", 0, "Table 10 timeout-control threshold column, 1 or 2 (default 1)")
	fl.DurationVar(&g.in.Timeout, "job-timeout", 0, "override the Table 10 timeout-control threshold")
	fl.Float64Var(&g.in.LossThreshold, "loss-threshold", 0.01, "permissible loss rate, a fraction (GB-7.7.1-c-2; the standard sets none, IN-79)")
	fl.StringVar(&g.in.Scenario, "scenario-id", "", "GB/T scenario of Tables 11–14 whose workload to run: T13-1 (alias ocr-dbnet: DBNet text detection, --sut onnx); the others are refused until aimeter can run their workload (see aimeter scenarios)")
	fl.StringVar(&g.infoFile, "info", "", "test information YAML (7.1 a)); detected facts fill what it leaves out")
	fl.Uint64Var(&g.in.Arrival.Seed, "seed", 0, "seed of the arrival schedule (IN-53)")
	fl.Int64Var(&g.in.SampleBytes, "sample-bytes", 3136, "bytes of input per sample, for the data-volume metrics (elasticity, pressure tolerance)")
	fl.IntVar((*int)(&g.in.UnderlyingMode), "mixed-base-mode", int(gbt.ModePoisson), "mode 5: the underlying arrival mode of the main jobs")
	fl.Float64Var(&g.in.Mixed.Lambda, "mixed-lambda", 1, "mode 5: Poisson rate of the foreign jobs, jobs/s")
	fl.Uint64Var(&g.in.Mixed.QSLSize, "mixed-qsl-size", 256, "mode 5: samples in the foreign jobs' own QSL")
}

// planInput is gbt.NewRunPlan's input from the flags: the arrival mode,
// and the mixed test's foreign seed derived from --seed.
func (g *gbtFlags) planInput() gbt.PlanInput {
	in := g.in
	in.Arrival.Mode = gbt.ArrivalMode(g.mode)
	in.Mixed.Seed = gbt.ForeignSeed(in.Arrival.Seed)
	return in
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
