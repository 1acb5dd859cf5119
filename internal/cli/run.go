package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/mlperflog"
	"aimeter/report"
	"aimeter/sut/null"
	"aimeter/sysinfo"
)

// selfTestConf holds aimeter's defaults when no --model and no config file
// is given: a benchmark of aimeter itself against the null SUT, sized so
// that each scenario produces a VALID result in seconds and its records.csv
// stays well under 100 MB. The null SUT completes millions of samples a
// second, so SingleStream, MultiStream and Offline last only 50 ms (about
// 0.5–1 M records on a 2-core machine, 60 bytes each); Server issues 100 k
// queries/s for 10 s (1 M records, about 56 MB).
const selfTestConf = `# aimeter self-benchmark defaults (no --model and no config file given)
*.SingleStream.target_latency = 0.0001
*.SingleStream.min_duration = 50
*.MultiStream.target_latency = 0.0005
*.MultiStream.min_duration = 50
*.Server.target_qps = 100000
*.Server.target_latency = 1
*.Server.min_duration = 10000
*.Offline.target_qps = 20000000
*.Offline.min_duration = 50
`

type runFlags struct {
	// userConfSettings are the settings a user.conf set, for gbt.Plan's
	// conflict check (filled by buildSettingsInto).
	userConfSettings []gbt.UserSetting

	scenario     string
	mode         string
	model        string
	mlperfConf   string
	userConf     string
	auditConfig  string
	outputDir    string
	sut          string
	qslSize      uint64
	perfSamples  uint64
	set          []string
	timeout      time.Duration
	stallTimeout time.Duration
	trace        bool
	quiet        bool
	spinWindow   time.Duration
	// peakResolution is Options.FindPeakResolution.
	peakResolution float64
	// keepProbes is Options.KeepProbeRecords.
	keepProbes bool
	// maxMemory is Options.MaxMemory.
	maxMemory memoryFlag
	// dispatch holds the flags of --sut dispatch (sut_dispatch.go).
	dispatch dispatchFlags
	// concurrency is Settings.Concurrency (--concurrency).
	concurrency uint64
	// openai holds the flags of --sut openai (sut_openai.go).
	openai openaiFlags
	// net holds the flags every network SUT shares (netflags.go).
	net netFlags
	// kserve holds the flags of --sut kserve.
	kserve kserveFlags
}

func newRunCommand(st *State) *cobra.Command {
	var f runFlags
	var g gbtFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a benchmark (default: aimeter's Server self-benchmark with the null SUT)",
		Long: `Run one test as LoadGen's StartTest does and write its logs.

Settings come, in this order, from LoadGen's defaults, the built-in mlperf.conf
(or --mlperf-conf), --user-conf, an audit.config in the working directory, and
--set. With no --model, --mlperf-conf or --user-conf, aimeter benchmarks itself
instead: its self-test defaults replace mlperf.conf (600-second runs) so that
every scenario finishes in seconds against the null SUT.`,
		Example: `  aimeter run
  aimeter run --scenario Offline --sut null-async
  aimeter run --model resnet50 --scenario Server --user-conf examples/user.conf
  aimeter run --scenario SingleStream --set min_duration=1000 --set target_latency=0.001`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseScenarioID(g.scenarioID, f.sut); err != nil {
				return err
			}
			if err := concurrencyScenario(cmd, &f, g.mode); err != nil {
				return err
			}
			if g.mode >= 0 {
				return runGBTCommand(cmd, st, &f, &g)
			}
			return runTest(cmd.Context(), st, &f, cmd.Flags().Changed("mode"))
		},
	}
	fl := cmd.Flags()
	gbtSet := pflag.NewFlagSet("GB/T 45087", pflag.ContinueOnError)
	addGBTFlags(gbtSet, &g)
	fl.AddFlagSet(gbtSet)
	fl.StringVar(&f.scenario, "scenario", "Server", "SingleStream, MultiStream, Server or Offline")
	fl.StringVar(&f.mode, "mode", "performance", "performance, accuracy, submission or find-peak")
	fl.StringVar(&f.model, "model", "", "model key of the config files (e.g. resnet50); applies the built-in mlperf.conf")
	fl.StringVar(&f.mlperfConf, "mlperf-conf", "", "mlperf.conf to use instead of the built-in one")
	fl.StringVar(&f.userConf, "user-conf", "", "user.conf applied after mlperf.conf")
	fl.StringVar(&f.auditConfig, "audit-config", "audit.config", "audit.config applied last if it exists (LoadGen looks in the working directory)")
	fl.StringVar(&f.outputDir, "output-dir", "aimeter-results", "directory for the logs")
	fl.StringVar(&f.sut, "sut", "null", "system under test: null (completes inside IssueQuery), null-async (completes from a worker goroutine), reference (the demo's model on its data set), openai (an OpenAI-compatible server at --url), kserve (a KServe v2 / Triton server at --url, sent the demo's data set) or dispatch (network servers, one --url per node)")
	fl.Uint64Var(&f.qslSize, "qsl-size", 1024, "number of samples in the (null) QSL")
	fl.Uint64Var(&f.perfSamples, "performance-sample-count", 0, "performance sample count the QSL reports (0 = --qsl-size)")
	fl.StringArrayVar(&f.set, "set", nil, "override one config key for this scenario: NAME=VALUE as in mlperf.conf (e.g. min_duration=1000, qsl_rng_seed=42); repeatable, applied last")
	fl.DurationVar(&f.timeout, "timeout", 0, "end the run after this long; outstanding samples are lost and the result INVALID (0 = no limit)")
	fl.DurationVar(&f.stallTimeout, "stall-timeout", loadgen.DefaultStallTimeout, "give up on outstanding samples when none completes for this long")
	fl.Var(&f.maxMemory, "max-memory", "refuse, before generating anything, a run whose estimated memory exceeds this size (e.g. 4GiB, 500MB; auto = half of the machine's memory; none = no limit)")
	fl.DurationVar(&f.spinWindow, "spin-window", loadgen.DefaultSpinWindow, "Server: busy-wait this close to each scheduled query instead of sleeping (precise issue times, one busy core); negative = never spin")
	fl.Float64Var(&f.peakResolution, "find-peak-resolution", 0.01, "find-peak: end the search once the bounds are within this fraction of the peak (0 = LoadGen's decimals of precision only)")
	fl.BoolVar(&f.keepProbes, "keep-probe-records", false, "find-peak: keep every probe's records, not only the reported probe's")
	fl.BoolVar(&f.trace, "trace", false, "also write mlperf_log_trace.json")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress line")
	addNetFlags(fl, &f.net)
	addDispatchFlags(fl, &f)
	addOpenAIFlags(fl, &f.openai)
	addKServeFlags(fl, &f.kserve)
	groupFlags(cmd,
		flagGroup{"MLPerf LoadGen test flags", []string{"scenario", "concurrency", "mode", "model", "mlperf-conf", "user-conf", "audit-config", "set", "find-peak-resolution", "keep-probe-records"}},
		flagGroup{"System under test", []string{"sut", "qsl-size", "performance-sample-count"}},
		flagGroup{"Network servers (--sut openai, dispatch)", append(append([]string(nil), netFlagNames...), dispatchFlagNames...)},
		flagGroup{"OpenAI-compatible server (--sut openai, --backend openai)", openaiFlagNames},
		flagGroup{"KServe v2 / Triton server (--sut kserve, --backend kserve)", kserveFlagNames},
		flagGroup{"GB/T 45087 inference test flags (--arrival-mode ≥ 0)", flagNames(gbtSet)},
		flagGroup{"Run control", []string{"timeout", "stall-timeout", "spin-window", "max-memory"}},
		flagGroup{"Output", []string{"output-dir", "trace", "quiet"}},
	)
	return cmd
}

func usageError(format string, args ...any) error {
	return withCode(ExitUsage, fmt.Errorf(format, args...))
}

// settingSources maps a config setting name ("min_duration") to where its
// value came from, in words ("the built-in mlperf.conf (line 89:
// *.Server.min_duration = 600000)"). A name that nothing set is absent.
type settingSources map[string]string

// buildSettingsFrom assembles the settings of a run and the warnings to log,
// and says where each setting came from.
func buildSettingsFrom(st *State, f *runFlags, modeSet bool) (loadgen.Settings, []string, settingSources, error) {
	sources := settingSources{}
	s, warnings, err := buildSettingsInto(st, f, modeSet, sources)
	adjustOpenAISettings(f, &s, sources)
	return s, warnings, sources, err
}

func buildSettingsInto(st *State, f *runFlags, modeSet bool, sources settingSources) (loadgen.Settings, []string, error) {
	scenario, err := loadgen.ParseScenario(f.scenario)
	if err != nil {
		return loadgen.Settings{}, nil, usageError("--scenario: %v", err)
	}
	mode, err := loadgen.ParseMode(f.mode)
	if err != nil {
		return loadgen.Settings{}, nil, usageError("--mode: %v", err)
	}
	audit := f.auditConfig
	if audit != "" && !filepath.IsAbs(audit) {
		wd, err := st.Getwd()
		if err != nil {
			return loadgen.Settings{}, nil, withCode(ExitFailure, err)
		}
		audit = filepath.Join(wd, audit)
	}
	var s loadgen.Settings
	var warnings []string
	if f.model != "" || f.mlperfConf != "" || f.userConf != "" {
		if err := needFile("--mlperf-conf", f.mlperfConf); err != nil {
			return s, nil, err
		}
		if err := needFile("--user-conf", f.userConf); err != nil {
			return s, nil, err
		}
		l, err := mlperfconf.Load(mlperfconf.LoadOptions{
			Model: f.model, Scenario: scenario, Mode: mode, ModeSet: modeSet,
			MLPerfConfPath: f.mlperfConf, UserConfPath: f.userConf, AuditConfigPath: audit,
		})
		s, warnings = l.Settings, l.Warnings
		if err != nil {
			return s, warnings, withCode(ExitUsage, err)
		}
		if !l.ModelKnown {
			warnings = append(warnings, unknownModelWarning(f.model, f.mlperfConf != "" || f.userConf != ""))
		}
		f.userConfSettings = nil
		for name, src := range l.Sources {
			file := src.File
			switch {
			case src.Builtin:
				file = "the built-in mlperf.conf"
			case src.Kind == mlperfconf.UserConf:
				file = "user.conf " + src.File
				f.userConfSettings = append(f.userConfSettings, gbt.UserSetting{Key: name, Value: src.Entry.Value,
					Source: fmt.Sprintf("user.conf %s, line %d:", filepath.Base(src.File), src.Entry.Line)})
			}
			sources[name] = fmt.Sprintf("%s (line %d: %s = %s)", file, src.Entry.Line, src.Entry.Key, src.Entry.Value)
		}
	} else {
		s = loadgen.DefaultSettings()
		s.Scenario, s.Mode = scenario, mode
		selfTest, err := mlperfconf.Parse(strings.NewReader(selfTestConf), "self-test defaults")
		if err != nil {
			return s, nil, withCode(ExitFailure, err)
		}
		if err := selfTest.Apply(&s, "*", scenario, mlperfconf.UserConf); err != nil {
			return s, nil, withCode(ExitFailure, err)
		}
		for _, e := range selfTest.Entries() {
			if parts := strings.Split(e.Key, "."); len(parts) == 3 && parts[1] == scenario.String() {
				sources[parts[2]] = "aimeter's self-test defaults (no --model and no config file given)"
			}
		}
		if audit != "" {
			if c, err := mlperfconf.ParseFile(audit); err == nil {
				warnings = append(warnings, mlperfconf.AuditConfigWarning)
				w, err := c.ApplyWarn(&s, "*", scenario, mlperfconf.AuditConf)
				warnings = append(warnings, w...)
				if err != nil {
					return s, warnings, withCode(ExitUsage, err)
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return s, warnings, withCode(ExitUsage, err)
			}
		}
	}
	openaiTokenLatencies(f, &s, sources)
	if len(f.set) > 0 {
		var b strings.Builder
		for _, kv := range f.set {
			name, value, ok := strings.Cut(kv, "=")
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if !ok || name == "" || value == "" || strings.ContainsAny(name, ". \t") {
				return s, warnings, usageError("--set %q: want NAME=VALUE with a config key name such as min_duration or target_qps", kv)
			}
			fmt.Fprintf(&b, "*.%s.%s = %s\n", scenario, name, value)
			sources[name] = "--set " + name + "=" + value
		}
		c, err := mlperfconf.Parse(strings.NewReader(b.String()), "--set")
		if err != nil {
			return s, warnings, usageError("%v", err)
		}
		// Unlike a config file, --set refuses what LoadGen would misread
		// (a negative, fractional or out-of-range integer).
		if err := c.CheckStrict("*", scenario, mlperfconf.BuiltinConf); err != nil {
			return s, warnings, usageError("%v", err)
		}
		// --set is the operator's own override, read like mlperf.conf so
		// that it can also set what only mlperf.conf may (the seeds,
		// accuracy_log_probability).
		if err := c.Apply(&s, "*", scenario, mlperfconf.BuiltinConf); err != nil {
			return s, warnings, usageError("%v", err)
		}
		if unused := c.Unused("*", scenario, mlperfconf.BuiltinConf); len(unused) > 0 {
			return s, warnings, usageError("--set: %s is not a setting LoadGen reads for %s", strings.Join(unused, ", "), scenario)
		}
		// LoadGen reads these only while token latencies are on: set
		// without them they would be silently ignored.
		for _, name := range []string{"ttft_latency", "tpot_latency"} {
			if strings.HasPrefix(sources[name], "--set ") && !s.UseTokenLatencies {
				return s, warnings, usageError("--set %s: LoadGen reads it only with token latencies on; add --set use_token_latencies=1 (--sut openai turns them on when it streams)", name)
			}
		}
	}
	s.Concurrency = f.concurrency
	return s, warnings, nil
}

func runTest(parent context.Context, st *State, f *runFlags, modeSet bool) error {
	settings, warnings, sources, err := buildSettingsFrom(st, f, modeSet)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(st.Stderr, "warning:", w)
	}
	if parent == nil {
		parent = context.Background()
	}
	sut, qsl, closeSUT, err := chooseSUT(parent, st, f, nil)
	if err != nil {
		return err
	}
	defer closeSUT()
	eff, err := loadgen.NewEffective(settings, qsl.TotalSampleCount(), qsl.PerformanceSampleCount())
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if n := longRunNotice(eff, f.model, sources); n != "" {
		fmt.Fprintln(st.Stderr, "aimeter:", n)
	}

	if f.peakResolution < 0 || f.peakResolution >= 1 {
		return usageError("--find-peak-resolution %v: want a fraction in [0, 1)", f.peakResolution)
	}
	// Last of the checks, so that a refused setting leaves no directory.
	if err := prepareOutputDir(f.outputDir); err != nil {
		return err
	}

	ctx, stop := interruptible(parent, st)
	defer stop()
	opts := &loadgen.Options{Timeout: f.timeout, StallTimeout: f.stallTimeout, Warnings: warnings, SpinWindow: f.spinWindow,
		FindPeakResolution: f.peakResolution, KeepProbeRecords: f.keepProbes, MaxMemory: f.maxMemory.limit()}
	if !f.quiet {
		pl := &progressLine{w: st.Stderr, terminal: st.StderrIsTerminal, target: time.Duration(settings.MinDurationMs) * time.Millisecond}
		opts.Progress = pl.update
	}
	stopLoad := startLoad()
	res, runErr := loadgen.Run(ctx, sut, qsl, settings, opts)
	load := stopLoad()
	if res == nil {
		return withCode(ExitUsage, runErr)
	}
	b := &bundle.Bundle{Result: res, Version: Version, System: sysinfo.DetectSystem(), Trace: f.trace, HostLoad: load, Nodes: dispatchNodes(sut, f)}
	writeErr := derived.Write(f.outputDir, b)
	printOutcome(st, res, f.outputDir, writeErr)
	printNetworkOutcome(st.Stdout, res, b.Nodes)
	printClientStats(st, sut)
	if w := loadWarning(res.Effective.Scenario.String(), res, load); w != "" {
		fmt.Fprintln(st.Stderr, w)
	}
	switch {
	case writeErr != nil:
		return withCode(ExitFailure, writeFailure(f.outputDir, writeErr, runErr))
	case errors.Is(runErr, loadgen.ErrInterrupted):
		return withCode(ExitInterrupted, runErr)
	case runErr != nil:
		return withCode(ExitFailure, runErr)
	case res.Summary != nil && !res.Summary.Valid:
		return withCode(ExitInvalid, nil)
	}
	return nil
}

// printOutcome prints the result of a run; writeErr is the error of writing
// its bundle into dir (nil when every file was written).
func printOutcome(st *State, res *loadgen.Result, dir string, writeErr error) {
	w := st.Stdout
	fmt.Fprintf(w, "SUT %s, QSL %s (%d samples), %s, %s\n", res.SUTName, res.QSLName, res.QSLTotalCount, scenarioLabel(res.Effective), res.Effective.Mode)
	if res.Interrupted != "" && res.Summary == nil {
		// A summary says it itself ("Issuing stopped early: …").
		fmt.Fprintf(w, "Interrupted: %s\n", res.Interrupted)
	}
	if s := res.Summary; s != nil {
		verdict := "VALID"
		if !s.Valid {
			verdict = "INVALID"
		}
		name, value := s.Metric()
		fmt.Fprintf(w, "Result is : %s\n%s : %s\n", verdict, name, mlperflog.FormatDouble(value))
		if line := tokenLatencyLine(s); line != "" {
			fmt.Fprintln(w, line)
		}
		if s.HasPerfConstraints() {
			fmt.Fprintf(w, "  Performance constraints satisfied : %s\n", yesNo(s.PerfConstraintsMet))
		}
		fmt.Fprintf(w, "  Min duration satisfied : %s\n  Min queries satisfied : %s\n  Early stopping satisfied: %s\n",
			yesNo(s.MinDurationMet), yesNo(s.MinQueriesMet), yesNo(s.EarlyStoppingMet))
		if r := recommendation(res); r != "" {
			fmt.Fprintf(w, "  * %s\n", r)
		}
		for _, r := range s.AimeterReasons {
			fmt.Fprintf(w, "  * %s\n", r)
		}
	}
	if res.Effective.PrintTimestamps {
		// LoadGen prints the measurement interval against the system clock
		// for comparison with an external timer.
		for _, p := range res.Passes {
			if p.Kind == loadgen.PassAccuracy {
				continue
			}
			start := time.Unix(0, p.StartUnixNs)
			fmt.Fprintf(w, "Loadgen :: Perf mode start. system_clock Timestamp = %d\n", start.Unix())
			fmt.Fprintf(w, "Loadgen :: Perf mode stop. system_clock Timestamp = %d\n", start.Add(time.Duration(p.EndNs)).Unix())
		}
	}
	printProbes(w, res)
	if n := len(res.Accuracy); n > 0 {
		fmt.Fprintf(w, "Accuracy log: %d responses\n", n)
	}
	if n := res.ErrorCount(); n > 0 {
		fmt.Fprintf(w, "%d errors logged, see %s\n", n, filepath.Join(dir, "mlperf_log_detail.txt"))
	}
	if writeErr != nil {
		fmt.Fprintf(w, "Logs NOT all written to %s: see the error below\n", dir)
		return
	}
	fmt.Fprintf(w, "Logs written to %s\n", dir)
}

// tokenLatencyLine gives the time to first token and time per output token
// at the target percentile of a token-latency run, with their bounds in
// Server (what LoadGen judges it by), for the console: the summary file
// has every percentile. Empty for other runs.
func tokenLatencyLine(s *loadgen.Summary) string {
	e := &s.Effective
	if !e.UseTokenLatencies || e.Scenario == loadgen.Offline || s.FirstTokenLatencyMax <= 0 {
		return ""
	}
	p := "p" + strconv.FormatFloat(s.TokenTargetPercentile.Percentile*100, 'f', -1, 64)
	bound := func(ns int64) string {
		if e.Scenario != loadgen.Server || ns <= 0 {
			return ""
		}
		return " (bound " + report.FormatDuration(ns) + ")"
	}
	return fmt.Sprintf("  TTFT %s %s%s, TPOT %s %s%s", p, report.FormatDuration(s.TokenTargetPercentile.SampleLatency), bound(e.TTFTLatencyNs),
		p, report.FormatDuration(s.TPOTTargetPercentile.SampleLatency), bound(e.TPOTLatencyNs))
}

// writeFailure is the error of a run whose bundle could not be written
// whole: it names the directory and, through the joined errors of
// bundle.Write, every file that failed, and keeps the run's own error.
func writeFailure(dir string, writeErr, runErr error) error {
	err := fmt.Errorf("writing the run bundle to %s (the result above was printed but its files are incomplete): %w", dir, writeErr)
	if runErr != nil {
		err = fmt.Errorf("%w; the run itself: %w", err, runErr)
	}
	return err
}

// prepareOutputDir creates dir and checks that a file can be written in it,
// so that an unusable --output-dir (empty, a file, a device, read-only, or a
// path under a file) is refused before anything runs rather than after the
// run, when its result would be lost.
func prepareOutputDir(dir string) error {
	if strings.TrimSpace(dir) == "" {
		return usageError("--output-dir: empty; name a directory for the logs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError("--output-dir %s: cannot create the directory: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".aimeter-write-test-*")
	if err != nil {
		return usageError("--output-dir %s: cannot write in the directory: %w", dir, err)
	}
	name := probe.Name()
	_, werr := probe.Write([]byte("aimeter\n"))
	cerr := probe.Close()
	rerr := os.Remove(name)
	if err := errors.Join(werr, cerr, rerr); err != nil {
		return usageError("--output-dir %s: cannot write in the directory: %w", dir, err)
	}
	return nil
}

// recommendation is the one piece of advice printed for a result, in
// LoadGen's words: none for an interrupted run (its figures say nothing
// about the target), else the performance-constraint advice when that
// check failed, else the minimum-duration advice. LoadGen's summary can
// hold both at once when a run both missed its latency bound and ran out
// of queries; they then pull the target QPS in opposite directions, and
// the latency bound is what a longer run would not fix.
func recommendation(res *loadgen.Result) string {
	s := res.Summary
	if s == nil || res.Interrupted != "" {
		return ""
	}
	if s.PerfConstraintsRecommendation != "" {
		return s.PerfConstraintsRecommendation
	}
	return s.MinDurationRecommendation
}

// printProbes lists the probes of a find-peak search, one line each.
func printProbes(w io.Writer, res *loadgen.Result) {
	var n int
	for _, p := range res.Passes {
		if p.Probe != nil {
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "Find-peak probes (%d; records kept for the reported one):\n", n)
	for _, p := range res.Passes {
		if p.Probe == nil {
			continue
		}
		verdict := "met"
		if !p.Probe.PerfConstraintsMet {
			verdict = "missed"
		}
		mark := ""
		if p.Reported {
			mark = "  <- reported"
		}
		fmt.Fprintf(w, "  target_qps %-12s %8d samples  p%g latency %s (%s)%s\n",
			formatQPS(p.TargetQPS), p.Probe.Samples, res.Effective.TargetLatencyPercentile*100,
			time.Duration(p.Probe.TargetPercentileLatencyNs), verdict, mark)
	}
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "NO"
}

// chooseSUT builds the SUT and QSL named by --sut: the null SUTs over a
// null QSL of --qsl-size samples, or the reference model on its data set.
// onClassified, if not nil, sees the class the reference SUT predicts for
// each sample (the null SUTs predict nothing).
func chooseSUT(ctx context.Context, st *State, f *runFlags, onClassified func(uint64, uint8)) (loadgen.SUT, loadgen.QSL, func(), error) {
	if f.sut != "reference" && f.sut != "kserve" && f.qslSize == 0 {
		return nil, nil, nil, usageError("--qsl-size must be ≥ 1")
	}
	qsl := null.QSL{Total: f.qslSize, Performance: f.perfSamples}
	switch f.sut {
	case "null":
		return null.SUT{}, qsl, func() {}, nil
	case "null-async":
		async := null.NewAsync()
		return async, qsl, async.Close, nil
	case "reference":
		sut, dq, err := newReferenceSUT(ctx, st, f.quiet, onClassified)
		if err != nil {
			return nil, nil, nil, withCode(ExitFailure, err)
		}
		return sut, dq, sut.Close, nil
	case "openai":
		return newOpenAISUT(ctx, st, f)
	case "kserve":
		return newKServeSUT(ctx, st, f)
	case "dispatch":
		return newDispatchSUT(ctx, st, f)
	}
	return nil, nil, nil, usageError("--sut %q: want null, null-async, reference, openai, kserve or dispatch", f.sut)
}

// needFile checks that the file a flag or argument names exists, so that a
// mistyped path is a usage error naming the flag (exit 2, nothing ran). An
// empty path is not checked.
func needFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageError("%s %s: no such file or directory (the README's example files are in examples/)", flag, path)
		}
		return usageError("%s: %w", flag, err)
	}
	return nil
}

// refuseScenarioID refuses --scenario-id: a GB/T scenario of Tables 11–14
// names a workload (model and data set), and a run may carry the scenario's
// label only if it ran that workload. None of aimeter's SUTs (the null SUTs
// and the reference MLP on Fashion-MNIST) is the workload of any catalogue
// row yet, so every ID is refused, naming what is missing.
func refuseScenarioID(id, sut string) error {
	if id == "" {
		return nil
	}
	spec, ok := gbt.Lookup(id)
	if !ok {
		return usageError("--scenario-id %q: no such scenario in Tables 11–14 (see aimeter scenarios)", id)
	}
	model, data := spec.Model, spec.Dataset
	if model == "" {
		model = "a model of the tested party's choice (open mode)"
	}
	if data == "" {
		data = "the tester's data set"
	}
	return usageError("--scenario-id %s: that scenario's workload is %s on %s, which aimeter cannot run yet; --sut %s is not that workload, so its results may not carry the scenario's label. Run without --scenario-id (use --timeout-class for the Table 10 threshold)", spec.ID, model, data, sut)
}
