package cli

import (
	"slices"
	"strings"

	"aimeter/benchmark"
)

// planFlags is the one table of the fields of a plan and the flags that
// set them: package benchmark names a field by its path
// (benchmark.UsageError.Field, its messages and notices), and the console
// names its flag instead (flagText). Where two flags set one field, the
// first names it. Where a field applies is the library's rule
// (benchmark.Rules), never the command line's.
var planFlags = []struct{ field, flag string }{
	// The system under test (sut.Config).
	{"SUT.Kind", "sut"},
	{"SUT.QSLSize", "qsl-size"},
	{"SUT.PerformanceSampleCount", "performance-sample-count"},
	{"SUT.Net.URLs", "url"},
	{"SUT.Net.RequestTimeout", "request-timeout"},
	{"SUT.Net.CheckTimeout", "check-timeout"},
	{"SUT.Net.MaxConns", "max-conns"},
	{"ServerMetrics.URLs", "server-metrics"},
	{"ServerMetrics.Interval", "server-metrics-interval"},
	{"ServerMetrics.Off", "no-server-metrics"},
	{"SUT.OpenAI.ServedModel", "served-model"},
	{"SUT.OpenAI.API", "api"},
	{"SUT.OpenAI.NoStream", "stream"},
	{"SUT.OpenAI.Prompts", "prompts"},
	{"SUT.OpenAI.InputTokens", "input-tokens"},
	{"SUT.OpenAI.InputLengths", "input-lengths"},
	{"SUT.OpenAI.OutputLengths", "output-lengths"},
	{"SUT.OpenAI.Tokenizer", "tokenizer"},
	{"SUT.OpenAI.OutputTokens", "output-tokens"},
	{"SUT.OpenAI.IgnoreEOS", "ignore-eos"},
	{"SUT.OpenAI.APIKeyEnv", "api-key-env"},
	{"SUT.OpenAI.CACert", "ca-cert"},
	{"SUT.OpenAI.InsecureSkipVerify", "insecure-skip-verify"},
	{"SUT.OpenAI.Headers", "header"},
	{"SUT.OpenAI.AllowHeaderOverride", "allow-header-override"},
	{"SUT.OpenAI.ExtraBody", "extra-body"},
	{"SUT.OpenAI.Temperature", "temperature"},
	{"SUT.OpenAI.SaltSeed", "salt"},
	{"SUT.OpenAI.SaltSeed", "salt-seed"},
	{"SUT.OpenAI.HTTPClient", "http-client"},
	{"SUT.KServe.GRPC", "grpc"},
	{"SUT.KServe.Model", "model-name"},
	{"SUT.KServe.ModelVersion", "model-version"},
	{"SUT.KServe.BinaryData", "binary-data"},
	{"SUT.KServe.Stream", "grpc-stream"},
	{"SUT.KServe.TokenEnv", "token-env"},
	{"SUT.KServe.ServerTiming", "server-timing"},
	{"SUT.KServe.Shapes", "shape"},
	{"SUT.KServe.BatchSize", "batch-size"},
	{"SUT.KServe.InputData", "input-data"},
	{"SUT.KServe.DataMode", "input-data-mode"},
	{"SUT.KServe.Seed", "input-data-seed"},
	{"SUT.KServe.Compression", "compression"},
	{"InputDType", "input-dtype"},
	{"OutputDType", "output-dtype"},
	{"SUT.Dispatch.Backend", "backend"},
	{"SUT.Dispatch.Policy", "policy"},
	{"SUT.Dispatch.AllowDownNodes", "allow-down-nodes"},
	{"SUT.ONNX.Model", "onnx-model"},
	{"SUT.ONNX.Library", "onnx-library"},
	{"SUT.ONNX.Input", "onnx-input"},
	{"SUT.ONNX.Output", "onnx-output"},
	{"SUT.ONNX.Workload", "onnx-workload"},
	{"SUT.ONNX.IntraOpThreads", "onnx-threads"},
	{"SUT.ONNX.NoSpin", "onnx-no-spin"},
	{"SUT.ONNX.MaxBatch", "onnx-batch"},
	{"SUT.ONNX.Workers", "onnx-workers"},
	{"SUT.ONNX.Images", "ocr-images"},
	{"SUT.ONNX.ImageSize", "ocr-image-size"},
	{"SUT.ONNX.Seed", "ocr-seed"},
	{"SUT.Reference.Dataset", "dataset"},
	{"SUT.Reference.Weights", "weights"},

	// The settings cascade.
	{"Settings.Scenario", "scenario"},
	{"Settings.Mode", "mode"},
	{"Settings.Model", "model"},
	{"Settings.MLPerfConf", "mlperf-conf"},
	{"Settings.UserConf", "user-conf"},
	{"Settings.AuditConfig", "audit-config"},
	{"Settings.Set", "set"},
	{"Settings.Concurrency", "concurrency"},
	{"Settings.MaxErrorRate", "max-error-rate"},
	{"Warmup", "warmup"},

	// A GB/T 45087 test (clause 7).
	{"GBT", "arrival-mode"},
	{"GBT.Input.Arrival.Mode", "arrival-mode"},
	{"GBT.Input.Arrival.Lambda", "lambda"},
	{"GBT.Input.Arrival.Period", "period"},
	{"GBT.Input.Arrival.N", "jobs-per-period"},
	{"GBT.Input.Arrival.Duration", "duration"},
	{"GBT.Input.Arrival.Jobs", "jobs"},
	{"GBT.Input.Arrival.Bursts", "bursts"},
	{"GBT.Input.Arrival.BurstLength", "burst-length"},
	{"GBT.Input.Arrival.BurstPeriod", "burst-period"},
	{"GBT.Input.Arrival.BurstN", "burst-jobs"},
	{"GBT.Input.Arrival.BurstStarts", "burst-starts"},
	{"GBT.Input.Arrival.Seed", "seed"},
	{"GBT.Input.UnderlyingMode", "mixed-base-mode"},
	{"GBT.Input.Mixed.Lambda", "mixed-lambda"},
	{"GBT.Input.Mixed.QSLSize", "mixed-qsl-size"},
	{"GBT.Input.Scenario", "scenario-id"},
	{"GBT.Input.TimeoutClass", "timeout-class"},
	{"GBT.Input.Timeout", "job-timeout"},
	{"GBT.Input.LossThreshold", "loss-threshold"},
	{"GBT.Input.SampleBytes", "sample-bytes"},
	{"GBT.InfoFile", "info"},

	// A replay (aimeter replay TRACE) and sessions (aimeter sessions).
	{"Replay.Speedup", "speedup"},
	{"Replay.MaxRequests", "max-requests"},
	{"Replay.MaxDuration", "max-duration"},
	{"Replay.Seed", "prompt-seed"},
	{"Sessions.ShareGPT", "sharegpt"},
	{"Sessions.Sessions", "sessions"},
	{"Sessions.MinTurns", "turns"},
	{"Sessions.MaxTurns", "turns"},
	{"Sessions.UserWords", "user-words"},
	{"Sessions.AnswerTokens", "answer-tokens"},
	{"Sessions.Think", "think"},
	{"Sessions.Interval", "interval"},
	{"Sessions.Seed", "session-seed"},
	{"Sessions.History", "history"},

	// The run's control and output.
	{"SLO.TTFTNs", "slo"},
	{"SLO.TPOTNs", "slo"},
	{"SLO.E2ENs", "slo"},
	{"OutputDir", "output-dir"},
	{"Trace", "trace"},
	{"Division", "division"},
	{"SystemDesc", "system-desc"},
	{"Timeout", "timeout"},
	{"StallTimeout", "stall-timeout"},
	{"SpinWindow", "spin-window"},
	{"MaxMemory", "max-memory"},
	{"FindPeakResolution", "find-peak-resolution"},
	{"KeepProbeRecords", "keep-probe-records"},
	{"Power", "power"},
	{"PowerOptions", "power-period"},
	{"Power", "power-max-w"}, // the sources' ceiling (telemetry.SpecOptions.MaxPowerW)
	{"PlanFromBundle", "from"},
	{"Shard", "shard"},
	{"Shard.Index", "shard"},
	{"Shard.Count", "shard"},
	{"Shard.Count", "shards"},
	{"Shard.StartAt", "start-at"},
	{"Shard.StartTolerance", "start-tolerance"},
	{"Shard.ClockRef", "clock-ref"},

	// The study plans of aimeter sweep and aimeter video-streams: their
	// UsageErrors name these (benchmark.SweepPlan, RateSearchPlan,
	// StreamsPlan); a study's base plan is named as a Plan.
	{"SweepPlan.Dir", "output-dir"},
	{"SweepPlan.Name", "name"},
	{"SweepPlan.Points", "points"},
	{"SweepPlan.CMin", "min-concurrency"},
	{"SweepPlan.CMax", "max-concurrency"},
	{"SweepPlan.Count", "point-count"},
	{"SweepPlan.Offline", "offline"},
	{"SweepPlan.SLO", "slo"},
	{"SweepPlan.Search.Target", "goodput-target"},
	{"SweepPlan.Search.Max", "max-concurrency"},
	{"SweepPlan.Base.GBT", "arrival-mode"},
	{"RateSearchPlan.Dir", "output-dir"},
	{"RateSearchPlan.SLO", "slo"},
	{"RateSearchPlan.Search", "goodput-target"},
	{"RateSearchPlan.Search.Start", "min-rate"},
	{"RateSearchPlan.Search.Max", "max-rate"},
	{"RateSearchPlan.Search.Target", "goodput-target"},
	{"RateSearchPlan.Base.GBT", "arrival-mode"},
	{"StreamsPlan.FPS", "fps"},
	{"StreamsPlan.Duration", "duration"},
	{"StreamsPlan.Timeout", "job-timeout"},
	{"StreamsPlan.Search.Limit", "max-streams"},
	{"StreamsPlan.Search.Resolution", "resolution"},

	// The test-specific options of aimeter audit (compliance.Options):
	// compliance.CheckGiven names these.
	{"Options.DType", "dtype"},
	{"Options.EOSTokenID", "eos-token-id"},
	{"Options.SamplingTarget", "sampling-target"},
	{"Options.AccuracyThreshold", "accuracy-threshold"},
	{"Options.MinOutputTokens", "min-output-tokens"},
	{"Options.MaxOutputTokens", "max-output-tokens"},
	{"Options.AccuracyDelta", "accuracy-delta"},
}

// studyBases are the prefixes of a base plan's fields in a study plan's
// UsageError: the field after them is a Plan's.
var studyBases = []string{"SweepPlan.Base.", "RateSearchPlan.Base."}

// flagOf is the flag that sets the plan field at path, without dashes;
// false for a field no flag sets.
func flagOf(path string) (string, bool) {
	for _, e := range planFlags {
		if e.field == path {
			return e.flag, true
		}
	}
	for _, base := range studyBases {
		if rest, ok := strings.CutPrefix(path, base); ok {
			return flagOf(rest)
		}
	}
	for _, e := range trainPlanFlags {
		if e.field == path {
			return e.flag, true
		}
	}
	return "", false
}

// fieldsOf are the plan fields the flag sets.
func fieldsOf(flag string) []string {
	var out []string
	for _, e := range planFlags {
		if e.flag == flag {
			out = append(out, e.field)
		}
	}
	return out
}

// flagText is s with every plan field named by its path (as package
// benchmark names them) named by its flag instead: "SpinWindow applies
// only to …" reads "--spin-window applies only to …".
func flagText(s string) string {
	isPath := func(c byte) bool {
		return c == '.' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isPath(s[j]) {
			j++
		}
		if j == i {
			b.WriteByte(s[i])
			i++
			continue
		}
		word := s[i:j]
		path := strings.TrimRight(word, ".")
		if flag, ok := flagOf(path); ok && path[0] >= 'A' && path[0] <= 'Z' {
			b.WriteString("--" + flag + word[len(path):])
		} else {
			b.WriteString(word)
		}
		i = j
	}
	return b.String()
}

// givenFields reports, for a plan field, whether the user gave one of the
// flags that set it.
func givenFields(changed func(string) bool) func(field string) bool {
	return func(field string) bool {
		for _, e := range planFlags {
			if e.field == field && changed(e.flag) {
				return true
			}
		}
		return false
	}
}

// clearDefaults drops from p the defaults of the flags the user did not
// give where they do not apply (benchmark.Plan.ClearInapplicable): every
// flag fills its field, and only what the user gave is refused where it
// does not apply.
func clearDefaults(changed func(string) bool, p *benchmark.Plan) {
	p.ClearInapplicable(givenFields(changed))
}

// gbtOnly refuses, without --arrival-mode, a flag that sets a field of
// the plan's GB/T test (benchmark.Plan.GBT): only --arrival-mode makes
// one, so this is the command line's own check, with the library rule's
// place. --scenario-id also chooses a workload, and --duration is an
// MLPerf run's minimum duration.
func gbtOnly(changed func(string) bool, g *gbtFlags) error {
	if g.mode >= 0 {
		return nil
	}
	for _, e := range planFlags {
		if !strings.HasPrefix(e.field, "GBT.") || e.flag == "scenario-id" || e.flag == "duration" || e.flag == "arrival-mode" || !changed(e.flag) {
			continue
		}
		where := "a GB/T test (GBT)"
		if r, ok := benchmark.RuleOf(e.field); ok && !r.Always() {
			where = r.Where
		}
		return usageError("%s", flagText(e.field+" applies only to "+where+"; drop it"))
	}
	return nil
}

// anyChanged reports whether the user gave one of the flags.
func anyChanged(changed func(string) bool, flags []string) bool {
	return slices.ContainsFunc(flags, changed)
}
