package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/mlperflog"
	"aimeter/sut/null"
)

// gbtFlags are the GB/T 45087 options of `aimeter run`.
type gbtFlags struct {
	mode          int
	lambda        float64
	period        time.Duration
	n             int
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
	fl.DurationVar(&g.duration, "duration", 10*time.Second, "how long jobs arrive (modes 0–3)")
	fl.IntVar(&g.bursts, "bursts", 2, "bursts j (mode 3)")
	fl.DurationVar(&g.burstLength, "burst-length", 5*time.Second, "burst length T_G (mode 3)")
	fl.DurationVar(&g.burstPeriod, "burst-period", 10*time.Millisecond, "period inside a burst (mode 3)")
	fl.IntVar(&g.burstN, "burst-jobs", 11, "jobs per burst period (mode 3); σ = burst-jobs / burst-period")
	fl.DurationSliceVar(&g.burstStarts, "burst-starts", nil, "burst start offsets (mode 3; default: placed at random from --seed)")
	fl.IntVar(&g.timeoutClass, "timeout-class", 0, "Table 10 timeout-control threshold column, 1 or 2 (default: from --scenario-id, else 1)")
	fl.DurationVar(&g.timeout, "job-timeout", 0, "override the Table 10 timeout-control threshold")
	fl.Float64Var(&g.lossThreshold, "loss-threshold", 0.01, "permissible loss rate, a fraction (GB-7.7.1-c-2; the standard sets none, IN-79)")
	fl.StringVar(&g.scenarioID, "scenario-id", "", "GB/T scenario of Tables 11–14, e.g. T11-2 (see aimeter scenarios)")
	fl.StringVar(&g.infoFile, "info", "", "test information YAML (7.1 a)); detected facts fill what it leaves out")
	fl.Uint64Var(&g.seed, "seed", 0, "seed of the arrival schedule (IN-53)")
	fl.Int64Var(&g.sampleBytes, "sample-bytes", 3136, "bytes of input per sample, for the data-volume metrics (elasticity, pressure tolerance)")
	fl.IntVar(&g.mixedBase, "mixed-base-mode", gbt.ModePoisson, "mode 5: the underlying arrival mode of the main jobs")
	fl.Float64Var(&g.mixedLambda, "mixed-lambda", 1, "mode 5: Poisson rate of the foreign jobs, jobs/s")
	fl.Uint64Var(&g.mixedQSLSize, "mixed-qsl-size", 256, "mode 5: samples in the foreign jobs' own QSL")
}

// gbtPlan is a validated GB/T run: the arrival, the LoadGen settings that
// carry it and the options.
type gbtPlan struct {
	arrival  gbt.Arrival
	class    gbt.TimeoutClass
	spec     *gbt.ScenarioSpec
	settings loadgen.Settings
	arrivals []int64 // modes 1 and 3
	timeout  time.Duration
}

// planGBT turns the flags into a run plan, failing before anything runs
// with the parameter named.
func planGBT(g *gbtFlags, base loadgen.Settings, setFlags []string) (*gbtPlan, error) {
	mode := g.mode
	underlying := mode
	if mode == gbt.ModeMixed {
		underlying = g.mixedBase
		if underlying < 0 || underlying >= gbt.ModeMixed {
			return nil, usageError("--mixed-base-mode %d: want 0 to 4", underlying)
		}
	}
	p := &gbtPlan{class: gbt.Threshold1}
	if g.scenarioID != "" {
		spec, ok := gbt.Lookup(g.scenarioID)
		if !ok {
			return nil, usageError("--scenario-id %q: not in Tables 11–14 (see aimeter scenarios)", g.scenarioID)
		}
		p.spec = &spec
		p.class = spec.TimeoutClass
	}
	switch g.timeoutClass {
	case 0:
	case 1, 2:
		p.class = gbt.TimeoutClass(g.timeoutClass)
	default:
		return nil, usageError("--timeout-class %d: Table 10 has thresholds 1 and 2", g.timeoutClass)
	}
	a := gbt.Arrival{
		Mode: underlying, Lambda: g.lambda, Period: g.period, N: g.n, Duration: g.duration,
		Bursts: g.bursts, BurstLength: g.burstLength, BurstPeriod: g.burstPeriod, BurstN: g.burstN,
		BurstStarts: g.burstStarts, Seed: g.seed,
	}
	if a.Mode != gbt.ModePeak {
		a.Bursts, a.BurstLength, a.BurstPeriod, a.BurstN, a.BurstStarts = 0, 0, 0, 0, nil
	}
	p.timeout = g.timeout
	if p.timeout == 0 {
		p.timeout, _ = gbt.Timeout(underlying, p.class) // none for offline
	}
	a.Timeout = p.timeout
	// The flags carry the standard's defaults, so a zero here was asked
	// for: validate it as given (WithDefaults would replace it).
	if err := a.Validate(); err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if !(g.lossThreshold >= 0 && g.lossThreshold <= 1) {
		return nil, usageError("--loss-threshold %v: want a fraction in [0, 1]", g.lossThreshold)
	}
	if g.sampleBytes < 0 {
		return nil, usageError("--sample-bytes %d: want ≥ 0", g.sampleBytes)
	}
	arrivals, placed, err := a.Schedule()
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	p.arrivals, p.arrival = arrivals, placed
	p.arrival.Mode = mode

	s := base
	s.Scenario = a.Scenario()
	s.Mode = loadgen.PerformanceOnly
	s.MinDurationMs = uint64(g.duration.Milliseconds())
	switch underlying {
	case gbt.ModeContinuous:
		// One job outstanding at a time; the duration ends the run.
		s.MinQueryCount = 1
	case gbt.ModePoisson:
		s.ServerTargetQPS = a.Lambda
		s.ScheduleRNGSeed = g.seed
	case gbt.ModeFixedPeriod, gbt.ModePeak:
		s.ServerTargetQPS = float64(len(arrivals)) / g.duration.Seconds()
	case gbt.ModeOffline:
		s.MinDurationMs = 0
	}
	p.settings = s
	return p, nil
}

// gbtMetrics are the clause 7.6 metrics of one run.
type gbtMetrics struct {
	breakdown  gbt.Breakdown
	throughput gbt.Throughput
	loss       gbt.LossCheck
	lost       int
	total      int
	lossPerSec []int
	elasticity *gbt.Elasticity
	pressure   *gbt.PressureTolerance
}

func computeGBT(res *loadgen.Result, p *gbtPlan, g *gbtFlags) (*gbtMetrics, error) {
	recs := slices.Collect(res.Records())
	var stages []loadgen.StageTimes
	if res.HasStages() {
		stages = slices.Collect(res.Stages())
	}
	m := &gbtMetrics{}
	m.breakdown = gbt.ComputeBreakdown(recs, stages, gbt.BreakdownOptions{Timeout: p.timeout})
	m.throughput = gbt.InferenceThroughput(recs, stages, gbt.ThroughputOptions{})
	var rate float64
	m.lost, m.total, rate = gbt.LossRate(recs)
	var err error
	if m.loss, err = gbt.LossVerdict(rate, g.lossThreshold); err != nil {
		return nil, err
	}
	m.lossPerSec = gbt.LossPerSecond(recs, p.timeout)
	if p.arrival.Mode == gbt.ModePeak || (p.arrival.Mode == gbt.ModeMixed && g.mixedBase == gbt.ModePeak) {
		run := gbt.PeakRun{Records: recs, Stages: stages, RequestBytes: make([]int64, len(recs))}
		for i := range run.RequestBytes {
			run.RequestBytes[i] = g.sampleBytes
		}
		for _, start := range p.arrival.BurstStarts {
			run.Bursts = append(run.Bursts, gbt.Burst{StartNs: int64(start), EndNs: int64(start + p.arrival.BurstLength)})
		}
		el := gbt.ComputeElasticity(run, gbt.ElasticityOptions{})
		m.elasticity = &el
		pt, err := gbt.ComputePressureTolerance(run, gbt.PressureOptions{Sigma: p.arrival.Concurrency()})
		if err != nil {
			return nil, err
		}
		m.pressure = &pt
	}
	return m, nil
}

// runGBTCommand checks the flags that a GB/T run decides itself and runs it.
func runGBTCommand(cmd *cobra.Command, st *State, f *runFlags, g *gbtFlags) error {
	if g.mode > gbt.ModeMixed {
		return usageError("--arrival-mode %d: Table 10 defines modes 0 to 5", g.mode)
	}
	for _, name := range []string{"scenario", "mode"} {
		if cmd.Flags().Changed(name) {
			return usageError("--%s: a GB/T run (--arrival-mode) chooses the LoadGen scenario and mode itself", name)
		}
	}
	underlying := g.mode
	if underlying == gbt.ModeMixed {
		underlying = g.mixedBase
	}
	f.scenario = gbt.Arrival{Mode: underlying}.Scenario().String()
	f.mode = "performance"
	base, warnings, err := buildSettings(st, f, false)
	if err != nil {
		return err
	}
	return runGBT(cmd.Context(), st, f, g, base, warnings)
}

// runGBT runs a GB/T 45087 inference test (clause 7) on the null SUT and
// writes the MLPerf logs, the inference log and gbt_result.json.
func runGBT(parent context.Context, st *State, f *runFlags, g *gbtFlags, base loadgen.Settings, warnings []string) error {
	p, err := planGBT(g, base, f.set)
	if err != nil {
		return err
	}
	info := gbt.Detect()
	if g.infoFile != "" {
		manual, err := gbt.LoadInfo(g.infoFile)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		info = gbt.Merge(info, manual)
	}
	if parent == nil {
		parent = context.Background()
	}
	sut, qsl, closeSUT, err := chooseSUT(parent, st, f)
	if err != nil {
		return err
	}
	defer closeSUT()
	if _, err := loadgen.NewEffective(p.settings, qsl.TotalSampleCount(), qsl.PerformanceSampleCount()); err != nil {
		return withCode(ExitUsage, err)
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	if err := os.MkdirAll(f.outputDir, 0o755); err != nil {
		return withCode(ExitFailure, err)
	}

	var life gbt.Lifecycle
	life.Mark(gbt.EventTestStart)
	// The null QSL has nothing to load; a real data set loads between these.
	life.Mark(gbt.EventDatasetLoadStart)
	life.Mark(gbt.EventDatasetLoadEnd)

	// The inference log of 7.3 f), one line a second from live progress.
	logFile, err := os.Create(filepath.Join(f.outputDir, "gbt_inference.log"))
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer logFile.Close()
	var latest atomic.Pointer[loadgen.Progress]
	logger := &gbt.Logger{W: logFile, Snapshot: func() gbt.Snapshot {
		pr := latest.Load()
		if pr == nil {
			return gbt.Snapshot{}
		}
		returned := pr.Completed - pr.Lost
		return gbt.Snapshot{Jobs: pr.QueriesDone, Samples: returned, Lost: pr.Lost}
	}}
	pl := &progressLine{w: st.Stderr, terminal: st.StderrIsTerminal && !f.quiet, target: g.duration}
	opts := &loadgen.Options{
		Timeout: f.timeout, StallTimeout: f.stallTimeout, Warnings: warnings, SpinWindow: f.spinWindow,
		SampleTimeout: p.timeout, Arrivals: p.arrivals,
		Progress: func(pr loadgen.Progress) {
			latest.Store(&pr)
			pl.update(pr)
		},
	}
	if err := logger.Start(); err != nil {
		return withCode(ExitFailure, err)
	}

	// Mode 5: foreign jobs of another workload, with their own QSL and
	// accounting, run beside the main jobs on the same SUT (IN-50).
	var foreign *loadgen.Result
	var foreignErr error
	var wg sync.WaitGroup
	if p.arrival.Mode == gbt.ModeMixed {
		fs := loadgen.DefaultSettings()
		fs.Scenario = loadgen.Server
		fs.ServerTargetQPS = g.mixedLambda
		fs.MinDurationMs = uint64(g.duration.Milliseconds())
		fs.ScheduleRNGSeed = g.seed + 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			foreign, foreignErr = loadgen.Run(ctx, sut, null.QSL{Total: g.mixedQSLSize}, fs,
				&loadgen.Options{SampleTimeout: p.timeout, SpinWindow: -1, StallTimeout: f.stallTimeout})
		}()
	}
	res, runErr := loadgen.Run(ctx, sut, qsl, p.settings, opts)
	wg.Wait()
	logger.Stop()
	life.Mark(gbt.EventTestEnd)
	if res == nil {
		return withCode(ExitUsage, runErr)
	}
	if err := mlperflog.WriteAll(f.outputDir, res, mlperflog.WriteOptions{Trace: f.trace, Version: Version}); err != nil {
		return withCode(ExitFailure, fmt.Errorf("writing logs: %w", err))
	}
	m, err := computeGBT(res, p, g)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	out := gbt.Result{
		Generator: "aimeter " + Version,
		Info:      info,
		Arrival:   p.arrival,
		Metrics: map[string]any{
			gbt.ResultKeyTime:       m.breakdown,
			gbt.ResultKeyThroughput: m.throughput,
			gbt.ResultKeyLoss: map[string]any{
				"lost_samples": m.lost, "sent_samples": m.total, "rate": m.loss.Rate,
				"threshold": m.loss.Threshold, "valid": m.loss.Valid, "lost_per_second": m.lossPerSec,
			},
		},
		Lifecycle:    life.Events(),
		Schedule:     gbt.ScheduleInfo{Seed: g.seed},
		LogUTCOffset: gbt.UTCOffset(time.Now()),
		Notes:        []string{"Precision: the null SUT computes nothing; the precision of a real SUT comes from --info."},
	}
	if p.spec != nil {
		out.Scenario = p.spec.ID
	}
	if p.class != 0 {
		out.TimeoutClass = p.class
	}
	if p.arrival.Mode == gbt.ModeMixed {
		base := g.mixedBase
		out.UnderlyingMode = &base
	}
	// One scheduled time per job (query): a job's samples share it.
	var sched []int64
	lastQuery := uint64(0)
	for r := range res.Records() {
		if len(sched) == 0 || r.QueryID != lastQuery {
			sched = append(sched, r.ScheduledNs)
			lastQuery = r.QueryID
		}
	}
	out.Schedule.Hash = gbt.ScheduleHash(sched)
	if m.elasticity != nil {
		out.Metrics[gbt.ResultKeyElasticity] = m.elasticity
		out.Metrics[gbt.ResultKeyPressureTolerance] = m.pressure
	}
	if foreign != nil {
		fm, err := computeGBT(foreign, &gbtPlan{timeout: p.timeout, arrival: gbt.Arrival{Mode: gbt.ModePoisson}}, g)
		if err == nil {
			out.Metrics["foreign_jobs"] = map[string]any{"time": fm.breakdown, "throughput": fm.throughput,
				"loss": map[string]any{"lost_samples": fm.lost, "sent_samples": fm.total, "rate": fm.loss.Rate}}
		}
	}
	if !res.HasStages() {
		out.Notes = append(out.Notes, "The SUT reported no stage times: only tester-side time metrics are available.")
	}
	if err := writeFile(filepath.Join(f.outputDir, "gbt_result.json"), func(w *bufio.Writer) error { return gbt.WriteResult(w, out) }); err != nil {
		return withCode(ExitFailure, err)
	}
	printGBT(st.Stdout, res, p, m, f.outputDir)
	switch {
	case errors.Is(runErr, loadgen.ErrInterrupted):
		return withCode(ExitInterrupted, runErr)
	case runErr != nil:
		return withCode(ExitFailure, runErr)
	case foreignErr != nil && !errors.Is(foreignErr, loadgen.ErrInterrupted):
		return withCode(ExitFailure, fmt.Errorf("foreign jobs: %w", foreignErr))
	case !m.loss.Valid:
		return withCode(ExitInvalid, nil)
	}
	return nil
}

func printGBT(w io.Writer, res *loadgen.Result, p *gbtPlan, m *gbtMetrics, dir string) {
	fmt.Fprintf(w, "GB/T 45087 arrival mode %d (%s), %s carried by LoadGen's %s scenario\n",
		p.arrival.Mode, gbt.ModeName(p.arrival.Mode), timeoutText(p.timeout), res.Effective.Scenario)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tn\tmin\tmean\tp50\tp90\tp99\tmax\t(ms)")
	for _, row := range []struct {
		name string
		s    gbt.TimeStat
	}{{"T_TI", m.breakdown.TTI}, {"T_DIS", m.breakdown.TDIS}, {"T_IPR", m.breakdown.TIPR}, {"T_IN", m.breakdown.TIN},
		{"T_IPO", m.breakdown.TIPO}, {"T_IP", m.breakdown.TIP}, {"T_DIP", m.breakdown.TDIP}} {
		if !row.s.Available {
			fmt.Fprintf(tw, "%s\t-\t%s\n", row.name, row.s.Reason)
			continue
		}
		s := row.s.Stat
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", row.name, s.N, s.Min, s.Mean, s.P50, s.P90, s.P99, s.Max)
	}
	tw.Flush()
	if m.breakdown.TI.Available {
		fmt.Fprintf(w, "T_I (total inference latency): %.3f ms\n", m.breakdown.TI.Ms)
	}
	fmt.Fprintf(w, "Throughput: %.2f samples/s (%s)\n", m.throughput.SamplesPerSecond, m.throughput.Basis)
	verdict := "PASS"
	if !m.loss.Valid {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "Lost: %d of %d samples (rate %.4f, threshold %.4f): %s\n", m.lost, m.total, m.loss.Rate, m.loss.Threshold, verdict)
	if m.elasticity != nil {
		if m.elasticity.Available {
			fmt.Fprintf(w, "Elasticity: %.4f %%/MB\n", m.elasticity.PercentPerMB)
		} else {
			fmt.Fprintf(w, "Elasticity: not available: %s\n", m.elasticity.Reason)
		}
		if m.pressure.Available {
			fmt.Fprintf(w, "Pressure tolerance: %.4f MB/s\n", m.pressure.MBPerSecond)
		} else {
			fmt.Fprintf(w, "Pressure tolerance: not available: %s\n", m.pressure.Reason)
		}
	}
	fmt.Fprintf(w, "Wrote %s (gbt_result.json, gbt_inference.log and the MLPerf logs)\n", dir)
}

func timeoutText(d time.Duration) string {
	if d == 0 {
		return "no timeout"
	}
	return "timeout " + d.String()
}

func newScenariosCommand(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List the GB/T 45087 inference scenarios of Tables 11–14 and the arrival modes of Table 10",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(st.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tType\tModel\tData set\tArrival modes\tTimeout class")
			for _, s := range gbt.Catalogue() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%d\n", s.ID, s.Type, s.Model, s.Dataset, s.ArrivalModes, s.TimeoutClass)
			}
			tw.Flush()
			fmt.Fprintln(st.Stdout, "\nArrival modes (Table 10): timeout thresholds 1 / 2")
			for _, m := range gbt.ArrivalModes() {
				t1, ok1 := gbt.Timeout(m.Mode, gbt.Threshold1)
				t2, _ := gbt.Timeout(m.Mode, gbt.Threshold2)
				tt := "N/A"
				if ok1 {
					tt = fmt.Sprintf("%v / %v", t1, t2)
				}
				if m.Mode == gbt.ModeMixed {
					tt = "those of the underlying mode"
				}
				fmt.Fprintf(st.Stdout, "  %d  %-14s %s\n", m.Mode, gbt.ModeName(m.Mode), tt)
			}
			return nil
		},
	}
}
