package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut/null"
	"aimeter/sut/reference/mlp"
	"aimeter/sysinfo"
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
	fl.IntVar(&g.timeoutClass, "timeout-class", 0, "Table 10 timeout-control threshold column, 1 or 2 (default 1)")
	fl.DurationVar(&g.timeout, "job-timeout", 0, "override the Table 10 timeout-control threshold")
	fl.Float64Var(&g.lossThreshold, "loss-threshold", 0.01, "permissible loss rate, a fraction (GB-7.7.1-c-2; the standard sets none, IN-79)")
	fl.StringVar(&g.scenarioID, "scenario-id", "", "GB/T scenario of Tables 11–14, e.g. T11-2 (see aimeter scenarios); refused until aimeter can run the scenario's workload (model and data set)")
	fl.StringVar(&g.infoFile, "info", "", "test information YAML (7.1 a)); detected facts fill what it leaves out")
	fl.Uint64Var(&g.seed, "seed", 0, "seed of the arrival schedule (IN-53)")
	fl.Int64Var(&g.sampleBytes, "sample-bytes", 3136, "bytes of input per sample, for the data-volume metrics (elasticity, pressure tolerance)")
	fl.IntVar(&g.mixedBase, "mixed-base-mode", int(gbt.ModePoisson), "mode 5: the underlying arrival mode of the main jobs")
	fl.Float64Var(&g.mixedLambda, "mixed-lambda", 1, "mode 5: Poisson rate of the foreign jobs, jobs/s")
	fl.Uint64Var(&g.mixedQSLSize, "mixed-qsl-size", 256, "mode 5: samples in the foreign jobs' own QSL")
}

// planGBT turns the flags into a run plan with gbt.Plan, failing before
// anything runs with the parameter named: a --set that the arrival mode
// overrides is a usage error naming both.
func planGBT(g *gbtFlags, base loadgen.Settings, set []string, userConf []gbt.UserSetting) (*gbt.RunPlan, error) {
	in := gbt.PlanInput{
		Arrival: gbt.Arrival{
			Mode: gbt.ArrivalMode(g.mode), Lambda: g.lambda, Period: g.period, N: g.n, Duration: g.duration,
			Bursts: g.bursts, BurstLength: g.burstLength, BurstPeriod: g.burstPeriod, BurstN: g.burstN,
			BurstStarts: g.burstStarts, Seed: g.seed,
		},
		UnderlyingMode: gbt.ArrivalMode(g.mixedBase),
		Mixed:          gbt.Mixed{Lambda: g.mixedLambda, QSLSize: g.mixedQSLSize, Seed: g.seed + 1},
		Scenario:       g.scenarioID,
		TimeoutClass:   gbt.TimeoutClass(g.timeoutClass),
		Timeout:        g.timeout,
		LossThreshold:  g.lossThreshold,
		SampleBytes:    g.sampleBytes,
	}
	var user []gbt.UserSetting
	bySet := map[string]bool{}
	for _, kv := range set {
		name, value, _ := strings.Cut(kv, "=")
		user = append(user, gbt.UserSetting{Key: strings.TrimSpace(name), Value: strings.TrimSpace(value), Source: "--set"})
		bySet[strings.TrimSpace(name)] = true
	}
	// A user.conf line is a choice too, unless a --set replaced it.
	userConf = slices.SortedFunc(slices.Values(userConf), func(a, b gbt.UserSetting) int { return strings.Compare(a.Key, b.Key) })
	for _, u := range userConf {
		if !bySet[u.Key] {
			user = append(user, u)
		}
	}
	p, err := gbt.Plan(in, base, user)
	if err != nil {
		if gbt.IsUsage(err) {
			return nil, withCode(ExitUsage, gbtFlagError(err))
		}
		return nil, withCode(ExitFailure, err)
	}
	return p, nil
}

// gbtFlagError names the flag of a gbt.Plan parameter error.
func gbtFlagError(err error) error {
	var pe *gbt.PlanError
	if errors.As(err, &pe) {
		flag := map[string]string{
			"arrival.mode": "--arrival-mode", "underlying_mode": "--mixed-base-mode", "mixed.lambda": "--mixed-lambda",
			"mixed.qsl_size": "--mixed-qsl-size", "scenario": "--scenario-id", "timeout_class": "--timeout-class",
			"loss_threshold": "--loss-threshold", "sample_bytes": "--sample-bytes",
		}[pe.Param]
		if flag != "" {
			return fmt.Errorf("%s %v: %s", flag, pe.Value, pe.Why)
		}
	}
	return err
}

// runGBTCommand checks the flags that a GB/T run decides itself and runs it.
func runGBTCommand(cmd *cobra.Command, st *State, f *runFlags, g *gbtFlags) error {
	if !gbt.ArrivalMode(g.mode).Valid() {
		return usageError("--arrival-mode %d: Table 10 defines modes 0 to 5", g.mode)
	}
	for _, name := range []string{"scenario", "mode"} {
		if cmd.Flags().Changed(name) {
			return usageError("--%s: a GB/T run (--arrival-mode) chooses the LoadGen scenario and mode itself", name)
		}
	}
	underlying := gbt.ArrivalMode(g.mode)
	if underlying == gbt.ModeMixed {
		underlying = gbt.ArrivalMode(g.mixedBase)
	}
	f.scenario = gbt.Arrival{Mode: underlying}.Scenario().String()
	f.mode = "performance"
	base, warnings, sources, err := buildSettingsFrom(st, f, false)
	if err != nil {
		return err
	}
	return runGBT(cmd.Context(), st, f, g, base, warnings, sources)
}

// runGBT runs a GB/T 45087 inference test (clause 7) and writes the MLPerf
// logs, the test description, the inference log and gbt_result.json.
func runGBT(parent context.Context, st *State, f *runFlags, g *gbtFlags, base loadgen.Settings, warnings []string, sources settingSources) error {
	p, err := planGBT(g, base, f.set, f.userConfSettings)
	if err != nil {
		return err
	}
	var manual gbt.TestInfo
	if g.infoFile != "" {
		if err := needFile("--info", g.infoFile); err != nil {
			return err
		}
		if manual, err = gbt.LoadInfo(g.infoFile); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	if parent == nil {
		parent = context.Background()
	}
	var scorer onlineScorer
	sut, qsl, closeSUT, err := chooseSUT(parent, st, f, scorer.classified)
	if err != nil {
		return err
	}
	defer closeSUT()
	// Detected, then what the SUT and its data set tell, then --info.
	info := gbt.Merge(gbt.Merge(gbt.Detect(), sutInfo(f.sut, qsl.Name())), manual)
	eff, err := loadgen.NewEffective(p.Settings, qsl.TotalSampleCount(), qsl.PerformanceSampleCount())
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if p.Test.Arrival.Mode != gbt.ModeOffline {
		if n := durationNotice(eff, g.duration, sources); n != "" {
			fmt.Fprintln(st.Stderr, "aimeter:", n)
		}
	}
	// Last of the checks, so that a refused setting leaves no directory.
	if err := prepareOutputDir(f.outputDir); err != nil {
		return err
	}
	ctx, stop := interruptible(parent, st)
	defer stop()

	var life gbt.Lifecycle
	life.Mark(gbt.EventTestStart)
	// The null QSL has nothing to load; a real data set loads between these.
	life.Mark(gbt.EventDatasetLoadStart)
	life.Mark(gbt.EventDatasetLoadEnd)

	opts := p.Options()
	opts.Timeout, opts.StallTimeout, opts.Warnings, opts.SpinWindow = f.timeout, f.stallTimeout, warnings, f.spinWindow
	opts.MaxMemory = f.maxMemory.limit()
	if !f.quiet {
		pl := &progressLine{w: st.Stderr, terminal: st.StderrIsTerminal, target: g.duration}
		opts.Progress = pl.update
	}

	// Mode 5: foreign jobs of another workload, with their own QSL and
	// accounting, run beside the main jobs on the same SUT (IN-50).
	var foreign *loadgen.Result
	var foreignErr error
	var wg sync.WaitGroup
	if p.Foreign != nil {
		fopts := p.ForeignOptions()
		fopts.SpinWindow, fopts.StallTimeout = -1, f.stallTimeout
		fopts.MaxMemory = opts.MaxMemory
		wg.Add(1)
		go func() {
			defer wg.Done()
			foreign, foreignErr = loadgen.Run(ctx, sut, null.QSL{Total: p.Test.Mixed.QSLSize}, *p.Foreign, &fopts)
		}()
	}
	res, runErr := loadgen.Run(ctx, sut, qsl, p.Settings, &opts)
	wg.Wait()
	life.Mark(gbt.EventTestEnd)
	if res == nil {
		return withCode(ExitUsage, runErr)
	}
	test := p.Test
	test.Generator = "aimeter " + Version
	test.Info = info
	test.Lifecycle = life.Events()
	if labelled, ok := qsl.(interface{ Label(uint64) uint8 }); ok {
		// A data set with labels: the answers were scored online, so the
		// inference log carries the cumulative accuracy (GB-7.3-f-2).
		test.Correct = scorer.score(qsl.TotalSampleCount(), labelled.Label)
	}
	test.Start, test.EndNs = reportedPassSpan(res)
	// The precision actually used (GB-7.3-c): the reference SUT's FP32,
	// or what --info declares for another SUT.
	test.Precision = info.Precision
	test.Notes = []string{sutInfoNote(f.sut, info)}
	if !res.HasStages() {
		test.Notes = append(test.Notes, "The SUT reported no stage times: only tester-side time metrics are available.")
	}
	system := sysinfo.DetectSystem()
	b := &bundle.Bundle{Result: res, Version: Version, System: system, Trace: f.trace, GBT: &test}
	if foreign != nil {
		b.Foreign = &bundle.Bundle{Result: foreign, Version: Version, System: system, NoReport: true}
	}
	d := derived.Of(b)
	m, err := d.GBTMetrics()
	if err != nil {
		return withCode(ExitFailure, err)
	}
	// The results are "uploaded" when the bundle is written: the event is
	// marked just before bundle.Write, so that the result file carries it
	// (GB-7.7.1-j-1). A tester service would mark it again on upload.
	life.Mark(gbt.EventResultUploadComplete)
	test.Lifecycle = life.Events()
	writeErr := d.Write(f.outputDir)
	printGBT(st.Stdout, res, &test, &m, f.outputDir, writeErr)
	switch {
	case writeErr != nil:
		return withCode(ExitFailure, writeFailure(f.outputDir, writeErr, runErr))
	case errors.Is(runErr, loadgen.ErrInterrupted):
		return withCode(ExitInterrupted, runErr)
	case runErr != nil:
		return withCode(ExitFailure, runErr)
	case foreignErr != nil && !errors.Is(foreignErr, loadgen.ErrInterrupted):
		return withCode(ExitFailure, fmt.Errorf("foreign jobs: %w", foreignErr))
	case !m.Loss.Valid:
		return withCode(ExitInvalid, nil)
	}
	return nil
}

// onlineScorer keeps the class the SUT predicted for each QSL index, so
// that a run over a labelled data set is scored as it returns (GB-7.3-f-2).
// Its zero value is ready; it is safe for concurrent use.
type onlineScorer struct {
	mu sync.Mutex
	// class holds the predicted class + 1 by QSL index; 0 is unscored.
	class []uint16
}

// classified records the class predicted for sample index (the
// reference.Options.OnClassified hook).
func (s *onlineScorer) classified(index uint64, class uint8) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if index >= uint64(len(s.class)) {
		s.class = append(s.class, make([]uint16, index+1-uint64(len(s.class)))...)
	}
	s.class[index] = uint16(class) + 1
}

// score returns the gbt.Test.Correct string of total samples: '1' where
// the predicted class is label(i), '0' where it is not, '-' where nothing
// was predicted. It returns "" when no sample was classified (the SUT
// predicts nothing, so no scorer applies).
func (s *onlineScorer) score(total uint64, label func(uint64) uint8) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.class) == 0 {
		return ""
	}
	b := make([]byte, total)
	for i := range b {
		switch {
		case i >= len(s.class) || s.class[i] == 0:
			b[i] = '-'
		case s.class[i]-1 == uint16(label(uint64(i))):
			b[i] = '1'
		default:
			b[i] = '0'
		}
	}
	return string(b)
}

// sutInfo returns the test information (GB-7.1-a) that aimeter knows of the
// SUT it runs: for the reference SUT the framework and its version, the
// model, the precision it computes in (FP32, GB-7.3-c), its dynamic batching
// up to 64 samples (GB-7.2-e) and the data set (fixed; its name, under
// extra.dataset). The null SUTs compute nothing, so nothing is known of them. --info
// overrides any of these field by field.
func sutInfo(sut, dataset string) gbt.TestInfo {
	if sut != "reference" {
		return gbt.TestInfo{}
	}
	return gbt.TestInfo{
		ModelName:     mlp.ModelName,
		DatasetType:   gbt.DatasetFixed,
		Framework:     gbt.Component{Name: mlp.Framework, Version: Version},
		BatchVariable: gbt.Used,
		BatchSize:     mlp.MaxBatch,
		Precision:     gbt.PrecisionList{mlp.Precision},
		Extra:         map[string]any{"dataset": dataset},
	}
}

// sutInfoNote returns the result note that says where the SUT's
// information comes from and which of the fields that can be known
// (framework, model, precision, batch size) were not provided.
func sutInfoNote(sut string, info gbt.TestInfo) string {
	var missing []string
	if info.Framework.Name == "" {
		missing = append(missing, "framework")
	}
	if info.ModelName == "" && info.ModelNo == "" {
		missing = append(missing, "model")
	}
	if len(info.Precision) == 0 {
		missing = append(missing, "precision")
	}
	if info.BatchSize == 0 {
		missing = append(missing, "batch size")
	}
	var from string
	switch sut {
	case "reference":
		from = "Test information: framework, model, precision (FP32), batch size (dynamic, at most 64) and data set come from the reference SUT; --info overrides them."
	default:
		from = "Test information: the " + sut + " SUT computes nothing, so framework, model, precision and batch size come only from --info."
	}
	if len(missing) == 0 {
		return from
	}
	return from + " Not provided: " + strings.Join(missing, ", ") + "."
}

// reportedPassSpan returns the wall-clock start of the reported pass (the
// records' time zero) and its length in ns.
func reportedPassSpan(res *loadgen.Result) (time.Time, int64) {
	for _, ps := range res.Passes {
		if ps.Reported {
			return time.Unix(0, ps.StartUnixNs), ps.EndNs
		}
	}
	if len(res.Passes) > 0 {
		ps := res.Passes[len(res.Passes)-1]
		return time.Unix(0, ps.StartUnixNs), ps.EndNs
	}
	return time.Now(), 0
}

// printGBT prints the result of a GB/T test; writeErr is the error of
// writing its bundle into dir (nil when every file was written).
func printGBT(w io.Writer, res *loadgen.Result, t *gbt.Test, m *gbt.Metrics, dir string, writeErr error) {
	fmt.Fprintf(w, "GB/T 45087 arrival mode %d (%s), %s carried by LoadGen's %s scenario\n",
		t.Arrival.Mode, t.Arrival.Mode, timeoutText(t.Arrival.Timeout), res.Effective.Scenario)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tn\tmin\tmean\tp50\tp90\tp99\tmax\t(ms)")
	for _, row := range []struct {
		name string
		s    gbt.TimeStat
	}{{"T_TI", m.Time.TTI}, {"T_DIS", m.Time.TDIS}, {"T_IPR", m.Time.TIPR}, {"T_IN", m.Time.TIN},
		{"T_IPO", m.Time.TIPO}, {"T_IP", m.Time.TIP}, {"T_DIP", m.Time.TDIP}} {
		if !row.s.Available {
			fmt.Fprintf(tw, "%s\t-\t%s\n", row.name, row.s.Reason)
			continue
		}
		s := row.s.Stat
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", row.name, s.N, s.Min, s.Mean, s.P50, s.P90, s.P99, s.Max)
	}
	tw.Flush()
	if m.Time.TI.Available {
		fmt.Fprintf(w, "T_I (total inference latency): %.3f ms\n", m.Time.TI.Ms)
	}
	fmt.Fprintf(w, "Throughput: %.2f samples/s (%s)\n", m.Throughput.SamplesPerSecond, m.Throughput.Basis)
	verdict := "PASS"
	if !m.Loss.Valid {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "Lost: %d of %d samples (rate %.4f, threshold %.4f): %s\n", m.Loss.Lost, m.Loss.Sent, m.Loss.Rate, m.Loss.Threshold, verdict)
	if res.LateCompletions > 0 {
		fmt.Fprintf(w, "  of which %d returned after their timeout and were counted lost (GB-7.4.1-d)\n", res.LateCompletions)
	}
	if m.Elasticity != nil {
		if m.Elasticity.Available {
			// The standard's Table 19 value under its name; IN-76's
			// non-standard %/MB variant labelled as such.
			fmt.Fprintf(w, "Elasticity (EL, Table 19): %.4f %%\n", m.Elasticity.Percent)
			fmt.Fprintf(w, "Elasticity variant (IN-76, non-standard): %.4f %%/MB\n", m.Elasticity.PercentPerMB)
		} else {
			fmt.Fprintf(w, "Elasticity: not available: %s\n", m.Elasticity.Reason)
		}
		if m.PressureTolerance.Available {
			fmt.Fprintf(w, "Pressure tolerance: %.4f MB/s\n", m.PressureTolerance.MBPerSecond)
		} else {
			fmt.Fprintf(w, "Pressure tolerance: not available: %s\n", m.PressureTolerance.Reason)
		}
	}
	if writeErr != nil {
		fmt.Fprintf(w, "Files NOT all written to %s: see the error below\n", dir)
		return
	}
	fmt.Fprintf(w, "Wrote %s (gbt_result.json, gbt_test.json, gbt_inference.log and the MLPerf logs)\n", dir)
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
				fmt.Fprintf(st.Stdout, "  %d  %-14s %s\n", m.Mode, m.Mode, tt)
			}
			return nil
		},
	}
}
