package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/derived/metrics"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut"
)

type runFlags struct {
	// plan holds the fields of the plan that flags set as they are given
	// (the settings' files and overrides, the output, the run's control);
	// planFromFlags starts from it.
	plan        benchmark.Plan
	scenario    string
	mode        string
	auditConfig string
	sut         string
	qslSize     uint64
	perfSamples uint64
	quiet       bool
	spinWindow  time.Duration
	// maxMemory is Options.MaxMemory.
	maxMemory benchmark.MemorySetting
	// goMemLimit is the budget planFromFlags took, for its SetGoMemoryLimit.
	goMemLimit benchmark.MemoryBudget
	// dispatch holds the flags of --sut dispatch (sut_dispatch.go).
	dispatch sut.DispatchConfig
	// concurrency is Settings.Concurrency (--concurrency).
	concurrency uint64
	// openai holds the flags of --sut openai (sut_openai.go).
	openai openaiFlags
	// net holds the flags every network SUT shares (netflags.go).
	net netFlags
	// kserve holds the flags of --sut kserve.
	kserve kserveFlags
	// from is a bundle whose run to repeat (--from).
	from string
	// warmup is --warmup: a request count or a duration.
	warmup string
	// json prints result.json on stdout, the rest on stderr.
	json bool
	// power holds --power and --power-period (power.go).
	power powerFlags
	// store holds --store and --no-store (results.go).
	store storeFlags
	// onnx holds the flags of --sut onnx (sut_onnx.go).
	onnx onnxFlags
}

func newRunCommand(st *State) *cobra.Command {
	var f runFlags
	var slo metrics.SLO
	var g gbtFlags
	var up uploadFlags
	var sf shardFlags
	var aisBench string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a benchmark (default: aimeter's Server self-benchmark with the null SUT)",
		Long:  helpText("run"),
		Example: `  aimeter run
  aimeter run --scenario Offline --sut null-async
  aimeter run --model resnet50 --scenario Server --user-conf examples/user.conf
  aimeter run --scenario SingleStream --set min_duration=1000 --set target_latency=0.001
  aimeter run --arrival-mode 2 --lambda 500 --duration 5s
  aimeter run --sut openai --url http://localhost:8000 --concurrency 8 --warmup 20 --duration 60s
  aimeter run --from aimeter-results --output-dir again`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if aisBench != "" {
				return runAisBench(cmd, aisBench)
			}
			if f.from != "" {
				if up.server != "" || up.config != "" {
					return usageError("--from with --server: repeat the run first, then 'aimeter submit' its bundle")
				}
				return runFrom(cmd, st, &f)
			}
			if err := up.onlyWithServer(cmd); err != nil {
				return err
			}
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			if p.Shard, err = sf.plan(cmd.Flags().Changed); err != nil {
				return err
			}
			p.SLO = slo.Bundle()
			// A flag that does not apply is refused before anything
			// starts (an upload's test record included).
			if err := p.Validate(); err != nil {
				return withCode(ExitUsage, err)
			}
			f.goMemLimit.SetGoMemoryLimit()
			if up.server != "" || up.config != "" { // aimeter run --server (server.go)
				return runAndSubmit(cmd.Context(), st, &up, func(phase func(benchmark.Phase)) error {
					p.Phase = phase
					return runPlan(cmd.Context(), st, p, f.quiet, f.json, f.store)
				}, p.OutputDir, p.Shard)
			}
			return runPlan(cmd.Context(), st, p, f.quiet, f.json, f.store)
		},
	}
	addRunFlags(cmd, &f, &g)
	bindShardFlags(cmd, &sf)
	addStoreFlags(cmd, &f.store)
	up.add(cmd)
	addSLOFlag(cmd, &slo)
	cmd.Flags().StringVar(&aisBench, "ais-bench", "", "an ais-bench inference workload package: checked and refused, saying why (docs/ais-bench.md); training packages run with aimeter train --ais-bench")
	return cmd
}

// addRunFlags adds the flags of aimeter run to cmd (aimeter audit takes
// them too), bound to f and g.
func addRunFlags(cmd *cobra.Command, f *runFlags, g *gbtFlags) {
	fl := cmd.Flags()
	gbtSet := pflag.NewFlagSet("GB/T 45087", pflag.ContinueOnError)
	addGBTFlags(gbtSet, g)
	fl.AddFlagSet(gbtSet)
	fl.StringVar(&f.scenario, "scenario", "Server", "SingleStream, MultiStream, Server or Offline")
	fl.StringVar(&f.mode, "mode", "performance", "performance, accuracy, submission or find-peak")
	fl.StringVar(&f.plan.Settings.Model, "model", "", "model key of the config files (e.g. resnet50); applies the built-in mlperf.conf")
	fl.StringVar(&f.plan.Settings.MLPerfConf, "mlperf-conf", "", "mlperf.conf to use instead of the built-in one")
	fl.StringVar(&f.plan.Settings.UserConf, "user-conf", "", "user.conf applied after mlperf.conf")
	fl.StringVar(&f.auditConfig, "audit-config", "audit.config", "audit.config applied last if it exists (LoadGen looks in the working directory)")
	fl.StringVar(&f.plan.OutputDir, "output-dir", "aimeter-results", "directory for the logs")
	fl.StringVar(&f.sut, "sut", "null", "system under test: null (completes inside IssueQuery), null-async (completes from a worker goroutine), reference (the demo's model on its data set), openai (an OpenAI-compatible server at --url), kserve (a KServe v2 / Triton server at --url, sent the demo's data set), dispatch (network servers, one --url per node) or onnx (an ONNX model in process; a build with -tags onnx)")
	fl.Uint64Var(&f.qslSize, "qsl-size", 1024, "number of samples in the null QSL, or of synthetic prompts (--sut null, null-async, openai, dispatch)")
	fl.Uint64Var(&f.perfSamples, "performance-sample-count", 0, "performance sample count the QSL reports (0 = its size)")
	fl.StringArrayVar(&f.plan.Settings.Set, "set", nil, "override one config key for this scenario: NAME=VALUE as in mlperf.conf (e.g. min_duration=1000, qsl_rng_seed=42); repeatable, applied last")
	fl.DurationVar(&f.plan.Timeout, "timeout", 0, "end the run after this long; outstanding samples are lost and the result INVALID (0 = no limit)")
	fl.DurationVar(&f.plan.StallTimeout, "stall-timeout", loadgen.DefaultStallTimeout, "give up on outstanding samples when none completes for this long")
	fl.Var(&f.maxMemory, "max-memory", "refuse, before generating anything, a run whose estimated memory exceeds this size, and stop a closed-loop run cleanly when its records reach it (e.g. 4GiB, 500MB; none = no limit; auto = a share of the smallest of the machine's memory (half), the cgroup v2/v1 memory limit of the process's cgroup and its parents (a quarter), and the soft RLIMIT_AS and RLIMIT_DATA (half of what they leave beside the address space already mapped and a 300 MB reserve; a run is refused when that is under 32 MB); when a cgroup or rlimit binds, auto also sets Go's soft memory limit to 3/4 of it unless GOMEMLIMIT is set)")
	fl.DurationVar(&f.spinWindow, "spin-window", loadgen.DefaultSpinWindow, "Server: busy-wait this close to each scheduled query instead of sleeping (precise issue times, one busy core); negative = never spin")
	fl.Float64Var(&f.plan.FindPeakResolution, "find-peak-resolution", 0.01, "find-peak: end the search once the bounds are within this fraction of the peak (0 = LoadGen's decimals of precision only)")
	fl.BoolVar(&f.plan.KeepProbeRecords, "keep-probe-records", false, "find-peak: keep every probe's records, not only the reported probe's")
	fl.BoolVar(&f.plan.Trace, "trace", false, "also write mlperf_log_trace.json")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress line")
	fl.BoolVar(&f.json, "json", false, "print the run's result.json (verdict, headline metric, success and error counts, latency and token statistics; schema in docs/result-json.md) on stdout, and everything else on stderr")
	fl.StringVar(&f.from, "from", "", "repeat the run the bundle in this directory recorded, into --output-dir")
	fl.Float64Var(&f.plan.Settings.MaxErrorRate, "max-error-rate", 0, "fraction of samples that may fail (HTTP errors, resets, malformed answers) with the run still VALID; failures never count as completions either way (0 = any failure is INVALID)")
	fl.StringVar(&f.warmup, "warmup", "", "--concurrency or Server: warm up first with N requests (e.g. 100) or for a duration (e.g. 10s), at the same concurrency or target rate (connections opened, caches filled); excluded from the results and recorded in invocation.json")
	fl.StringVar(&f.plan.InputDType, "input-dtype", "", "network SUTs: the data type of the inputs on the wire for the MLPerf datacenter bandwidth check of --model (fp32, int8, …; DLRMv2: numerical,categorical as fp16,int32); empty = a KServe model's declared input datatype (docs/bandwidth.md)")
	fl.StringVar(&f.plan.OutputDType, "output-dtype", "", "network SUTs: the data type of the outputs for the bandwidth check of 3D U-Net and SDXL (empty = --input-dtype's)")
	fl.StringVar(&f.plan.Division, "division", "", "network: declare the result one of MLPerf's network division (a network SUT, Server or Offline), which needs --system-desc with a diagram (aimeter check reports one without; docs/network-division.md)")
	fl.StringVar(&f.plan.SystemDesc, "system-desc", "", "a system description (JSON or YAML: the SUT nodes' NICs, the switches and load balancers between, fabric, protocol layers 1-4, data path, diagram; docs/network-division.md), checked before the run and stored in the bundle with its diagram")
	addNetFlags(fl, &f.net)
	addDispatchFlags(fl, f)
	addOpenAIFlags(fl, &f.openai)
	addKServeFlags(fl, &f.kserve)
	addONNXFlags(fl, &f.onnx)
	addPowerFlags(fl, &f.power)
	groupFlags(cmd,
		flagGroup{"MLPerf LoadGen test flags", []string{"scenario", "concurrency", "warmup", "mode", "model", "mlperf-conf", "user-conf", "audit-config", "set", "max-error-rate", "find-peak-resolution", "keep-probe-records"}},
		flagGroup{"System under test", []string{"sut", "qsl-size", "performance-sample-count"}},
		flagGroup{"Network servers (--sut openai, kserve, dispatch)", append(append(append([]string(nil), netFlagNames...), dispatchFlagNames...), "input-dtype", "output-dtype")},
		flagGroup{"OpenAI-compatible server (--sut openai, --backend openai)", openaiFlagNames},
		flagGroup{"KServe v2 / Triton server (--sut kserve, --backend kserve)", kserveFlagNames},
		flagGroup{"ONNX model in process (--sut onnx; a build with -tags onnx)", onnxFlagNames},
		flagGroup{"GB/T 45087 inference test flags (--arrival-mode ≥ 0)", flagNames(gbtSet)},
		flagGroup{"Run control", []string{"timeout", "stall-timeout", "spin-window", "max-memory"}},
		flagGroup{"Shards of one test across load generators (docs/sharding.md)", shardFlagNames},
		flagGroup{"Power and energy", powerFlagNames},
		flagGroup{"Output", []string{"output-dir", "trace", "quiet", "json", "from", "store", "no-store"}},
		flagGroup{"MLPerf division and system description (docs/network-division.md)", []string{"division", "system-desc"}},
		flagGroup{"Network test: the tester's service (aimeter server)", []string{"server", "config", "token", "key", "ca"}},
	)
}

func usageError(format string, args ...any) error {
	return withCode(ExitUsage, fmt.Errorf(format, args...))
}

// planFromFlags turns the flags of `aimeter run` into a benchmark plan.
// Every flag the user gave goes into its field (planFlags), and the
// defaults of the others only where they apply, so that the library's
// rules (benchmark.Rules) refuse (exit 2) a flag that does not apply to
// what was chosen; the checks of flags without a field of their own are
// the command line's (cliOnlyChecks).
func planFromFlags(cmd *cobra.Command, st *State, f *runFlags, g *gbtFlags) (*benchmark.Plan, error) {
	changed := cmd.Flags().Changed
	applyScenarioID(changed, f, g)
	if err := cliOnlyChecks(changed, f, g); err != nil {
		return nil, err
	}
	cfg, err := sutConfig(changed, f)
	if err != nil {
		return nil, err
	}
	if g.mode < 0 { // a scenario that chooses the workload of a run without a GB/T test (Plan.Validate checks a GB/T test's)
		if err := benchmark.CheckGBTScenario(g.in.Scenario, cfg); err != nil {
			return nil, withCode(ExitUsage, err)
		}
	}
	audit := f.auditConfig
	if audit != "" && !filepath.IsAbs(audit) {
		wd, err := st.Getwd()
		if err != nil {
			return nil, withCode(ExitFailure, err)
		}
		audit = filepath.Join(wd, audit)
	}
	if err := needFile("--mlperf-conf", f.plan.Settings.MLPerfConf); err != nil {
		return nil, err
	}
	if err := needFile("--user-conf", f.plan.Settings.UserConf); err != nil {
		return nil, err
	}
	mb, err := f.maxMemory.Budget("--max-memory")
	if err != nil {
		return nil, usageError("%v", err)
	}
	f.goMemLimit = mb
	p := new(benchmark.Plan)
	*p = f.plan
	p.SUT = cfg
	p.Settings.AuditConfig, p.Settings.Concurrency = audit, f.concurrency
	p.MaxMemory, p.MaxMemorySource = mb.Bytes, mb.Source
	p.CommandLine = append([]string{"aimeter"}, st.Args...)
	p.Backends = st.Backends
	if p.ServerMetrics, err = f.net.metrics.plan(); err != nil {
		return nil, err
	}
	if changed("scenario") {
		p.Settings.Scenario = f.scenario
	}
	if changed("spin-window") { // its default is the library's (0)
		p.SpinWindow = f.spinWindow
	}
	if f.warmup != "" {
		if p.Warmup, err = benchmark.ParseWarmup(f.warmup); err != nil {
			return nil, usageError("--warmup %v", err)
		}
	}
	if changed("mode") {
		p.Settings.Mode = f.mode
	}
	if err := f.power.apply(p); err != nil {
		return nil, err
	}
	if p.Power == nil && changed("power-period") {
		p.PowerOptions = f.power.options() // refused: it applies to --power
	}
	if g.mode >= 0 {
		in := g.planInput()
		// The flags give every arrival parameter: a zero is refused here,
		// where the library would take the standard's default.
		if err := in.Arrival.Validate(); err != nil && gbt.ArrivalMode(g.mode).Valid() {
			return nil, usageError("%v", err)
		}
		p.GBT = &benchmark.GBT{Input: in, InfoFile: g.infoFile}
	} else if changed("duration") {
		// An MLPerf run: --duration is its minimum duration.
		p.Settings.Set = append([]string{fmt.Sprintf("min_duration=%d", g.in.Arrival.Duration.Milliseconds())}, p.Settings.Set...)
	}
	clearDefaults(changed, p)
	return p, nil
}

// sutConfig is the SUT of the flags.
func sutConfig(changed func(string) bool, f *runFlags) (cfg sut.Config, err error) {
	cfg = sut.Config{Kind: sut.Kind(f.sut), PerformanceSampleCount: f.perfSamples}
	if changed("qsl-size") {
		if f.qslSize == 0 {
			return cfg, usageError("--qsl-size must be ≥ 1")
		}
		cfg.QSLSize = f.qslSize
	}
	cfg.Net = f.net.cfg
	if cfg.Net.RequestTimeout < 0 || cfg.Net.CheckTimeout <= 0 {
		return cfg, usageError("--request-timeout must be ≥ 0 and --check-timeout > 0")
	}
	// A sub-configuration is built for the kind that uses it, and for a
	// flag of it the user gave to another kind, which the library's rules
	// then refuse (clearDefaults keeps only what was given there).
	if cfg.Kind == sut.Dispatch || anyChanged(changed, dispatchFlagNames) {
		d := f.dispatch
		cfg.Dispatch = &d
	}
	backend := cfg.Backend()
	if backend == string(sut.OpenAI) || anyChanged(changed, openaiFlagNames) {
		if cfg.OpenAI, err = f.openai.config(changed); err != nil {
			return cfg, err
		}
	}
	if backend == string(sut.KServe) || anyChanged(changed, kserveFlagNames) {
		if cfg.KServe, err = f.kserve.config(changed); err != nil {
			return cfg, err
		}
	}
	if cfg.Kind == sut.ONNX || anyChanged(changed, onnxFlagNames) {
		if cfg.ONNX, err = f.onnx.config(); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// cliOnlyChecks are the command line's own checks: of flags that set no
// field of the plan by themselves (--salt-seed seeds --salt, --duration is
// an MLPerf run's min_duration), of a GB/T flag without the --arrival-mode
// that makes the plan's GB/T test, and of values the flags cannot carry.
// Where a flag applies is the library's rule (benchmark.Rules).
func cliOnlyChecks(changed func(string) bool, f *runFlags, g *gbtFlags) error {
	if err := gbtOnly(changed, g); err != nil {
		return err
	}
	if changed("salt-seed") && !f.openai.salt {
		return usageError("--salt-seed applies only to --salt; drop it")
	}
	if changed("concurrency") && f.concurrency == 0 {
		return usageError("--concurrency 0: the fixed-concurrency mode needs at least 1 request in flight; leave the flag out for the scenario's own load")
	}
	if changed("duration") && g.mode < 0 {
		for _, kv := range f.plan.Settings.Set {
			if name, _, _ := strings.Cut(kv, "="); strings.TrimSpace(name) == "min_duration" {
				return usageError("--duration and --set min_duration both set an MLPerf run's minimum duration; give one")
			}
		}
	}
	if changed("duration") && g.in.Arrival.Duration <= 0 {
		return usageError("--duration %v: must be > 0", g.in.Arrival.Duration)
	}
	return nil
}

// runPlan runs p and prints its outcome; with asJSON, result.json goes to
// stdout and everything else to stderr. The bundle is then recorded into
// the results store that sf names (a failure to record is a warning).
func runPlan(parent context.Context, st *State, p *benchmark.Plan, quiet, asJSON bool, sf storeFlags) error {
	ctx, stop := interruptible(parent, st)
	defer stop()
	p.Notify = func(n benchmark.Notice) { printNotice(st, n, quiet) }
	if !quiet && p.Progress == nil {
		p.Progress = (&console.ProgressLine{W: st.Stderr, Terminal: st.StderrIsTerminal}).Update
	}
	out, err := benchmark.Run(ctx, *p)
	if out == nil {
		return notRunCode(ctx, err)
	}
	if note := shardNote(out); note != "" && out.Result.Summary == nil && out.GBT == nil {
		// One shard is not the test: its verdict is none, whose reason
		// the console prints under a summary; here there is none.
		fmt.Fprintln(st.Stderr, note)
	}
	if asJSON {
		console.WriteRun(st.Stderr, out)
		if jerr := console.WriteResultJSON(st.Stdout, out); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		console.WriteRun(st.Stdout, out)
	}
	if out.WriteErr == nil {
		recordRun(ctx, st, sf, out.Dir, out.Derived, quiet)
	}
	return outcomeCode(out, err)
}

// printNotice prints a notice of a run on stderr, naming the plan fields
// it names by their flags: warnings always, notes and information unless
// quiet asks for silence (notes stay: they say why a run lasts longer
// than asked).
func printNotice(st *State, n benchmark.Notice, quiet bool) {
	text := flagText(n.Text) // the plan fields it names, as flags
	switch n.Kind {
	case benchmark.Warning:
		fmt.Fprintln(st.Stderr, "warning:", text)
	case benchmark.Note:
		fmt.Fprintln(st.Stderr, "aimeter:", text)
	default:
		if !quiet {
			fmt.Fprintln(st.Stderr, "aimeter:", text)
		}
	}
}

// outcomeCode is the exit code of a run that ran: its verdict, unless the
// bundle could not be written, the run was interrupted or failed.
func outcomeCode(out *benchmark.Outcome, err error) error {
	switch {
	case out.WriteErr != nil:
		return withCode(ExitFailure, err)
	case errors.Is(err, loadgen.ErrInterrupted):
		return withCode(ExitInterrupted, err)
	case err != nil:
		return withCode(ExitFailure, err)
	case out.Verdict.Kind == benchmark.VerdictNone:
		return nil
	case !out.Verdict.Pass:
		return withCode(ExitInvalid, nil)
	}
	return nil
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
			return usageError("%s %s: no such file or directory (the example files of docs/first-runs.md are in examples/)", flag, path)
		}
		return usageError("%s: %w", flag, err)
	}
	return nil
}
