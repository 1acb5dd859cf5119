package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/sweep"
)

// sweepFlags are the flags of aimeter sweep beside the run flags.
type sweepFlags struct {
	points  string
	cmin    int
	cmax    int
	count   int
	offline bool
	slo     metrics.SLO
	target  float64
	name    string
	minRate float64
	maxRate float64
	rateDec int
	// endpoints and submission are --endpoints OUT and --submission FILE.
	endpoints, submission string
}

func newSweepCommand(st *State) *cobra.Command {
	var f runFlags
	var g gbtFlags
	var s sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run a Pareto sweep by concurrency (MLPerf Endpoints' points) or search the highest concurrency meeting a goodput SLO",
		Long:  helpText("sweep"),
		Example: `  aimeter serve openai --addr 127.0.0.1:8000 --ttft 20ms --tpot 5ms &
  aimeter sweep --sut openai --url http://127.0.0.1:8000 --max-concurrency 64 --duration 20s
  aimeter sweep --sut openai --url http://127.0.0.1:8000 --points 1,2,4,8 --slo ttft=100ms,tpot=10ms --duration 10s
  aimeter sweep --sut openai --url http://127.0.0.1:8000 --slo tpot=8ms --goodput-target 0.9 --max-concurrency 256 --duration 10s
  aimeter sweep --sut openai --url http://127.0.0.1:8000 --max-concurrency 64 --duration 20s --set schedule_rng_seed=10487924139932647040 --set sample_index_rng_seed=586478644936801402 --endpoints submission --submission submission.yaml
  aimeter report aimeter-sweep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ep, err := endpointsFromFlags(s.endpoints, s.submission)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("max-rate") {
				if ep != nil {
					return usageError("--endpoints writes a Pareto sweep's points as an Endpoints submission, not a search over request rate (--max-rate)")
				}
				rp, err := rateSearchPlanFromFlags(cmd, st, &f, &g, &s)
				if err != nil {
					return err
				}
				f.goMemLimit.SetGoMemoryLimit()
				rp.Base.Done = recordDone(cmd.Context(), st, f.store, f.quiet)
				return runRateSearch(cmd.Context(), st, rp, f.quiet)
			}
			sp, err := sweepPlanFromFlags(cmd, st, &f, &g, &s)
			if err != nil {
				return err
			}
			if ep != nil {
				if sp.Search != nil {
					return usageError("--endpoints writes a Pareto sweep's points as an Endpoints submission, not a goodput search (--goodput-target)")
				}
				// Told now, not after the sweep: points run with other
				// seeds than the set's are refused by Endpoints' checker.
				if err := ep.checkSweepSeeds(&sp.Base); err != nil {
					return err
				}
			}
			f.goMemLimit.SetGoMemoryLimit()
			sp.Base.Done = recordDone(cmd.Context(), st, f.store, f.quiet)
			return runSweep(cmd.Context(), st, sp, f.quiet, ep)
		},
	}
	addRunFlags(cmd, &f, &g)
	addStoreFlags(cmd, &f.store)
	fl := cmd.Flags()
	fl.StringVar(&s.points, "points", "", "the concurrencies to run, comma-separated (e.g. 1,2,4,8); empty chooses them by MLPerf Endpoints' rule from --min-concurrency and --max-concurrency")
	fl.IntVar(&s.cmin, "min-concurrency", 1, "Cmin: the ultra-low point (1–32), and where a goodput search starts")
	fl.IntVar(&s.cmax, "max-concurrency", 0, "Cmax: the highest point (> 32 for Endpoints' regions), or the highest concurrency a goodput search probes")
	fl.IntVar(&s.count, "point-count", sweep.MinPoints, "number of fixed-concurrency points chosen automatically (7–31)")
	fl.BoolVar(&s.offline, "offline", true, "add the Offline point (the whole data set in flight, checked against 98 % of the Cmax point's system_tps); on by default for automatic points only")
	fl.Var(&s.slo, "slo", "per-request SLO for goodput: ttft=DURATION,tpot=DURATION,e2e=DURATION, any subset")
	fl.Float64Var(&s.target, "goodput-target", 0, "search the highest concurrency whose goodput fraction reaches this (0–1]; needs --slo and --max-concurrency")
	fl.StringVar(&s.name, "name", "", "label of the sweep in sweep.html (default: the SUT kind)")
	fl.Float64Var(&s.maxRate, "max-rate", 0, "search over request rate instead of concurrency: the highest Server target_qps a goodput search probes (needs --slo and --goodput-target)")
	fl.Float64Var(&s.minRate, "min-rate", 1, "the first request rate a rate search probes (requests/s, > 0)")
	fl.IntVar(&s.rateDec, "rate-decimals", 0, "a rate search bisects until its bounds agree to this many decimal places (0–6; LoadGen's server_find_peak_qps_decimals_of_precision)")
	fl.StringVar(&s.endpoints, "endpoints", "", "also write the sweep as an MLPerf Endpoints submission tree under this directory when it ends (as 'aimeter export --endpoints'); needs --submission")
	fl.StringVar(&s.submission, "submission", "", "with --endpoints: the YAML or JSON file of what aimeter cannot know (names, links, seed set, system, accuracy); its seed set's seeds are checked before the sweep starts")
	groupFlags(cmd, flagGroup{"Sweep", []string{"points", "min-concurrency", "max-concurrency", "point-count", "offline", "slo", "goodput-target", "name", "max-rate", "min-rate", "rate-decimals", "endpoints", "submission"}})
	return cmd
}

// sweepPlanFromFlags turns the flags into a sweep plan: the run flags make
// the plan of every point (as aimeter run reads them), the sweep flags the
// points.
func sweepPlanFromFlags(cmd *cobra.Command, st *State, f *runFlags, g *gbtFlags, s *sweepFlags) (*benchmark.SweepPlan, error) {
	changed := cmd.Flags().Changed
	for _, name := range []string{"concurrency", "arrival-mode", "mode", "from", "json"} {
		if changed(name) {
			return nil, usageError("--%s does not apply to a sweep: each point is a fixed-concurrency performance run that the sweep sets up", name)
		}
	}
	if changed("scenario") && f.scenario != loadgen.SingleStream.String() {
		return nil, usageError("--scenario %s: a sweep's points run at fixed concurrency on SingleStream's issuing; drop --scenario", f.scenario)
	}
	if !changed("output-dir") {
		f.plan.OutputDir = "aimeter-sweep"
	}
	// The run flags are read as for a fixed-concurrency run (so that
	// --warmup applies); each point sets its own concurrency.
	f.concurrency = 1
	p, err := planFromFlags(cmd, st, f, g)
	f.concurrency = 0
	if err != nil {
		return nil, err
	}
	p.Settings.Concurrency = 0
	p.Settings.Scenario = ""
	sp := &benchmark.SweepPlan{Base: *p, Dir: f.plan.OutputDir, Name: s.name, CMin: s.cmin, CMax: s.cmax, Count: s.count, SLO: s.slo}
	if changed("goodput-target") {
		if s.slo.IsZero() {
			return nil, usageError("--goodput-target needs --slo: the goodput fraction is of requests meeting it")
		}
		if s.cmax <= 0 {
			return nil, usageError("--goodput-target needs --max-concurrency: the highest concurrency the search may probe")
		}
		for _, name := range []string{"points", "point-count", "offline"} {
			if changed(name) {
				return nil, usageError("--%s applies to a sweep, not to a goodput search (--goodput-target)", name)
			}
		}
		sp.Search = &sweep.SearchOptions{Start: uint64(max(s.cmin, 1)), Max: uint64(s.cmax), Target: s.target}
		if s.cmin < 1 {
			return nil, usageError("--min-concurrency %d: must be ≥ 1", s.cmin)
		}
		return sp, nil
	}
	if s.points != "" {
		for _, name := range []string{"min-concurrency", "max-concurrency", "point-count"} {
			if changed(name) {
				return nil, usageError("--%s chooses points automatically; drop it or --points", name)
			}
		}
		if sp.Points, err = sweep.ParsePoints(s.points); err != nil {
			return nil, usageError("--points %v", err)
		}
		sp.Offline = changed("offline") && s.offline
		return sp, nil
	}
	if s.cmax <= 0 {
		return nil, usageError("give --points, or --max-concurrency (> 32) for Endpoints' automatic points")
	}
	sp.Offline = s.offline
	return sp, nil
}

// runSweep runs the sweep and prints its points; with ep, a sweep that ran
// to its end is written as an Endpoints submission tree too, whose
// failure (a rule of the checker broken) is the exit status.
func runSweep(parent context.Context, st *State, sp *benchmark.SweepPlan, quiet bool, ep *endpointsOutput) error {
	ctx, stop := interruptible(parent, st)
	defer stop()
	watchStudy(st, &sp.Base, quiet)
	sp.Log = st.Stderr
	sum, err := benchmark.RunSweep(ctx, *sp)
	if sum == nil {
		return notRunCode(ctx, err)
	}
	console.WriteSweep(st.Stdout, sum, sp.Dir)
	if err := studyEnded(ctx, err); err != nil {
		if ep != nil {
			fmt.Fprintf(st.Stderr, "no Endpoints submission written: the sweep did not run to its end (aimeter export --endpoints %s --submission FILE %s writes what it measured)\n", ep.Out, sp.Dir)
		}
		return err
	}
	if ep != nil {
		if err := ep.write(st, sp.Dir, "sweep"); err != nil {
			return err
		}
	}
	return sweepCode(sum)
}

// watchStudy prints the notices of a study's runs (a sweep's points, a
// search's probes) and, unless quiet, a progress line for the run under
// way.
func watchStudy(st *State, base *benchmark.Plan, quiet bool) {
	base.Notify = func(n benchmark.Notice) { printNotice(st, n, quiet) }
	if !quiet {
		base.Progress = (&console.ProgressLine{W: st.Stderr, Terminal: st.StderrIsTerminal}).Update
	}
}

// notRunCode is the exit of a run or study that measured nothing: a usage
// error, an interrupt or a failure to start.
func notRunCode(ctx context.Context, err error) error {
	switch {
	case benchmark.IsUsage(err):
		return withCode(ExitUsage, err)
	case ctx.Err() != nil:
		return withCode(ExitInterrupted, err)
	}
	return withCode(ExitFailure, err)
}

// studyEnded is the exit of a study whose results were printed, when it
// ended early (interrupted, or a run failed); nil when it ran to its end.
func studyEnded(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, loadgen.ErrInterrupted) || ctx.Err() != nil:
		return withCode(ExitInterrupted, err)
	case err != nil:
		return withCode(ExitFailure, err)
	}
	return nil
}

// sweepCode is the exit code of a finished sweep: 3 when it fell short
// (sweep.Summary.Shortfall), saying why unless a point was INVALID (its
// bundle says why).
func sweepCode(sum *sweep.Summary) error {
	switch err := sum.Shortfall(); {
	case errors.Is(err, sweep.ErrInvalidPoint):
		return withCode(ExitInvalid, nil)
	case err != nil:
		return withCode(ExitInvalid, err)
	}
	return nil
}

// regenerateSweeps is `aimeter report` over sweep directories: each gets
// its sweep.json and sweep.html again from its point bundles; several get
// one page side by side in outDir.
func regenerateSweeps(st *State, dirs []string, outDir string, ignoreDigests bool) error {
	if ignoreDigests {
		return usageError("--ignore-digests does not apply to sweeps: their summaries are computed from verified bundles only")
	}
	for _, d := range dirs {
		if !sweep.IsSweep(d) {
			return usageError("%s is not a sweep directory (no %s): 'aimeter report' takes one run bundle, or one or more sweeps", d, sweep.PlanFile)
		}
	}
	if len(dirs) > 1 && outDir == "" {
		return usageError("several sweeps: name the directory of their side-by-side page with --output-dir")
	}
	if len(dirs) == 1 && outDir != "" {
		return usageError("--output-dir with one sweep: its files are regenerated in the sweep directory itself; give several sweeps for a side-by-side page")
	}
	var sums []*sweep.Summary
	for _, d := range dirs {
		sum, err := benchmark.WriteSweepFiles(d)
		if err != nil {
			return withCode(ExitFailure, err)
		}
		fmt.Fprintf(st.Stderr, "regenerated %s, %s in %s\n", sweep.SummaryFile, sweep.PageFile, d)
		sums = append(sums, sum)
	}
	if len(dirs) == 1 {
		console.WriteSweep(st.Stdout, sums[0], dirs[0])
		return sweepCode(sums[0])
	}
	path, err := benchmark.WriteSweepsPage(outDir, sums)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stdout, "%d sweeps side by side in %s\n", len(sums), path)
	return nil
}
