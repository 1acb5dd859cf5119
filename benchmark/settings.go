package benchmark

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/sut"
)

// SelfTestConf holds aimeter's defaults when no model and no config file is
// given: a benchmark of aimeter itself against the null SUT, sized so that
// each scenario produces a VALID result in seconds and its records.csv
// stays well under 100 MB. The null SUT completes millions of samples a
// second, so SingleStream, MultiStream and Offline last only 50 ms (about
// 0.5–1 M records on a 2-core machine, 60 bytes each); Server issues 100 k
// queries/s for 10 s (1 M records, about 56 MB).
const SelfTestConf = `# aimeter self-benchmark defaults (no --model and no config file given)
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

// resolved are a run's settings and where they came from.
type resolved struct {
	settings loadgen.Settings
	warnings []string
	sources  mlperfconf.Sources
	// userConf are the settings a user.conf set, for gbt.Plan's conflict
	// check.
	userConf []gbt.UserSetting
	// files are the config files read, with their digests.
	files []bundle.InputFile
	// exactPrompts: the responses are scored (accuracy, submission, or a
	// performance run that logs responses, as audit tests TEST01, TEST06,
	// TEST07 and TEST09 do), or a repeated sample must reach the server as
	// the same prompt (performance_issue_same: TEST04, which a nonce would
	// hide a result cache from), so prompts go out without their nonce.
	exactPrompts bool
}

// exactPrompts tells whether a run with settings s sends its prompts
// exactly (resolved.exactPrompts).
func exactPrompts(s *loadgen.Settings) bool {
	return s.Mode == loadgen.AccuracyOnly || s.Mode == loadgen.SubmissionRun ||
		s.AccuracyLogSamplingTarget > 0 || s.AccuracyLogProbability > 0 || s.PerformanceIssueSame
}

// settings runs the settings cascade of the plan and checks that its
// warm-up, if any, applies to the settings it resolved.
func (r *runner) settings() (resolved, error) {
	st, err := r.cascade()
	if err != nil || r.plan.Warmup == (Warmup{}) {
		return st, err
	}
	switch p := r.plan; {
	case p.GBT != nil:
		// Its Poisson modes run on the Server scenario: refused by name.
		return resolved{}, usage("warmup", "--warmup: a GB/T test (--arrival-mode) measures from its first job and has no warm-up")
	case p.Replay != nil:
		return resolved{}, usage("warmup", "--warmup: a replay has no warm-up; cut the trace instead")
	case p.Sessions != nil:
		return resolved{}, usage("warmup", "--warmup: a sessions run has no warm-up")
	}
	if s := st.settings; s.Concurrency == 0 && s.Scenario != loadgen.Server {
		return resolved{}, usage("warmup", "--warmup applies to the fixed-concurrency mode (--concurrency N) and the Server scenario, not %s", s.Scenario)
	}
	return st, nil
}

// cascade runs the settings cascade of the plan.
func (r *runner) cascade() (resolved, error) {
	p := r.plan
	in := &p.Settings
	if !(in.MaxErrorRate >= 0 && in.MaxErrorRate <= 1) {
		return resolved{}, usage("max-error-rate", "--max-error-rate %v: want a fraction in [0, 1]", in.MaxErrorRate)
	}
	if p.GBT != nil && in.MaxErrorRate != 0 {
		return resolved{}, usage("max-error-rate", "--max-error-rate: a GB/T test counts failures as lost jobs against --loss-threshold instead")
	}
	if in.Explicit != nil {
		s := *in.Explicit
		return resolved{settings: s, sources: mlperfconf.Sources{}, exactPrompts: exactPrompts(&s)}, nil
	}
	scenarioName, modeName := in.Scenario, in.Mode
	if p.GBT != nil {
		if scenarioName != "" || modeName != "" {
			return resolved{}, usage("scenario", "--scenario and --mode: a GB/T run (--arrival-mode) chooses the LoadGen scenario and mode itself")
		}
		if in.Concurrency > 0 {
			return resolved{}, usage("concurrency", "--concurrency cannot be combined with --arrival-mode: the GB/T arrival modes set their own load")
		}
		underlying := p.GBT.Input.Arrival.Mode
		if underlying == gbt.ModeMixed {
			underlying = p.GBT.Input.UnderlyingMode
		}
		if !p.GBT.Input.Arrival.Mode.Valid() {
			return resolved{}, usage("arrival-mode", "--arrival-mode %d: Table 10 defines modes 0 to 5", p.GBT.Input.Arrival.Mode)
		}
		scenarioName = gbt.Arrival{Mode: underlying}.Scenario().String()
	}
	if scenarioName == "" {
		scenarioName = "Server"
		if in.Concurrency > 0 {
			scenarioName = loadgen.SingleStream.String()
		}
	}
	if in.Concurrency > 0 {
		if in.Concurrency > loadgen.MaxConcurrency {
			return resolved{}, usage("concurrency", "--concurrency %d: at most %d", in.Concurrency, loadgen.MaxConcurrency)
		}
		if sc, err := loadgen.ParseScenario(scenarioName); err == nil && sc != loadgen.SingleStream {
			return resolved{}, usage("concurrency", "--concurrency %d with --scenario %s: fixed concurrency is aimeter's own load mode and runs on SingleStream's issuing only; drop --scenario or use SingleStream", in.Concurrency, sc)
		}
	}
	modeSet := modeName != ""
	if modeName == "" {
		modeName = "performance"
	}
	scenario, err := loadgen.ParseScenario(scenarioName)
	if err != nil {
		return resolved{}, usage("scenario", "--scenario: %v", err)
	}
	mode, err := loadgen.ParseMode(modeName)
	if err != nil {
		return resolved{}, usage("mode", "--mode: %v", err)
	}
	c, err := mlperfconf.Cascade(mlperfconf.CascadeOptions{
		Model: in.Model, Scenario: scenario, Mode: mode, ModeSet: modeSet,
		MLPerfConfPath: in.MLPerfConf, UserConfPath: in.UserConf, AuditConfigPath: in.AuditConfig,
		SelfTest: SelfTestConf, Set: in.Set,
		BeforeSet: func(s *loadgen.Settings, src mlperfconf.Sources) { tokenLatencies(&p.SUT, s, src) },
	})
	if err != nil {
		var se *mlperfconf.SettingError
		if errors.As(err, &se) {
			return resolved{}, &UsageError{Field: settingFields[se.Field], Err: err}
		}
		return resolved{}, &UsageError{Err: err}
	}
	out := resolved{settings: c.Settings, warnings: c.Warnings, sources: c.Sources}
	if !c.ModelKnown && in.Model != "" {
		out.warnings = append(out.warnings, unknownModelWarning(in.Model, in.MLPerfConf != "" || in.UserConf != ""))
	}
	for _, u := range c.UserConf {
		out.userConf = append(out.userConf, gbt.UserSetting{Key: u.Name, Value: u.Value, Source: fmt.Sprintf("user.conf %s, line %d:", baseName(u.File), u.Line)})
	}
	for _, f := range []struct{ role, path string }{{"mlperf.conf", in.MLPerfConf}, {"user.conf", in.UserConf}, {"audit.config", in.AuditConfig}} {
		if f.path != "" {
			out.files = append(out.files, inputFile(f.role, f.path))
		}
	}
	for _, w := range out.warnings {
		r.notify(Warning, "%s", w)
	}
	out.settings.Concurrency = in.Concurrency
	out.settings.MaxErrorRate = in.MaxErrorRate
	out.exactPrompts = exactPrompts(&out.settings)
	gentleDefaults(&p.SUT, &out.settings, out.sources)
	r.replaySettings(&out.settings, out.sources)
	return out, nil
}

// settingFields names the flag of each mlperfconf.CascadeOptions field.
var settingFields = map[string]string{"Scenario": "scenario", "Mode": "mode", "SelfTest": "", "MLPerfConfPath": "mlperf-conf",
	"UserConfPath": "user-conf", "AuditConfigPath": "audit-config", "Set": "set"}

// tokenLatencies turns token latencies on for a streaming OpenAI run
// (direct or dispatched) unless a config file chose. It applies before the
// overrides, as an earlier file would, so that ttft_latency and
// tpot_latency (which LoadGen reads only while token latencies are on)
// take effect when set.
func tokenLatencies(c *sut.Config, s *loadgen.Settings, src mlperfconf.Sources) {
	if c.Backend() != string(sut.OpenAI) || (c.OpenAI != nil && c.OpenAI.NoStream) {
		return
	}
	if _, set := src["use_token_latencies"]; !set {
		s.UseTokenLatencies = true
		src.Impose("use_token_latencies", "--sut openai --stream")
	}
}

// gentleDefaults replaces, for a network server, the self-test defaults
// (sized for the null SUT: 100 000 queries/s, a 1 ms bound) with a load a
// real server can take and a bound it can meet: for an OpenAI-compatible
// server (an LLM) 10 queries/s for 10 s with a 1-minute bound; for a
// KServe v2 / Triton server 100 queries/s for 10 s with a 100 ms bound. A
// dispatcher gets its nodes' protocol's. An ONNX model in process (the
// OCR detector takes 10–100 ms an image on 2 cores) gets 10 queries/s for
// 10 s and a 1 s bound, and Offline expects 100 samples/s (above what the
// detector does, so that the pass lasts min_duration: at 10, as first
// written, it ended in 3 s, INVALID).
//
// The in-process reference model gets a load sized for it in the same way:
// Offline expects 200 000 samples/s (the null SUT's 20 M/s made a
// 22 M-sample pass of about ten minutes; an expectation below what the
// model does would end the pass before min_duration), Server 1 000
// queries/s with a 100 ms bound, MultiStream 500 ms (the self-test's 50 ms
// of 8-sample queries ends before early stopping's 662 queries);
// SingleStream and MultiStream keep the self-test's expected latencies,
// which only size the pre-generated queries.
func gentleDefaults(c *sut.Config, s *loadgen.Settings, src mlperfconf.Sources) {
	type gentle struct {
		qps, offline  float64
		bound, ss, ms time.Duration
		minDuration   bool
	}
	by := fmt.Sprintf("aimeter's defaults for --sut %s (no --model and no config file given)", c.KindOrNull())
	selfTest := func(key string) bool {
		if !src.Is(key, mlperfconf.LayerSelfTest) {
			return false
		}
		src.Impose(key, by)
		return true
	}
	var g gentle
	switch kind := c.KindOrNull(); {
	case kind == sut.Reference:
		g = gentle{qps: 1000, offline: 200_000, bound: 100 * time.Millisecond}
		if s.Scenario == loadgen.MultiStream && selfTest("min_duration") {
			s.MinDurationMs = 500
		}
	case kind == sut.ONNX:
		g = gentle{qps: 10, offline: 100, bound: time.Second, ss: 50 * time.Millisecond, ms: 400 * time.Millisecond, minDuration: true}
	case !kind.IsNetwork():
		return
	case c.Backend() == string(sut.KServe):
		g = gentle{qps: 100, offline: 100, bound: 100 * time.Millisecond, ss: 10 * time.Millisecond, ms: 20 * time.Millisecond, minDuration: true}
	default:
		g = gentle{qps: 10, offline: 10, bound: time.Minute, ss: time.Second, ms: 2 * time.Second, minDuration: true}
	}
	if g.minDuration && selfTest("min_duration") {
		s.MinDurationMs = 10_000
	}
	if selfTest("target_qps") {
		s.ServerTargetQPS, s.OfflineExpectedQPS = g.qps, g.offline
	}
	if (g.ss > 0 || s.Scenario == loadgen.Server) && selfTest("target_latency") {
		s.ServerTargetLatencyNs = uint64(g.bound)
		if g.ss > 0 {
			s.SingleStreamExpectedLatencyNs = uint64(g.ss)
			s.MultiStreamExpectedLatencyNs = uint64(g.ms)
		}
	}
}

// planGBT turns the plan's GB/T input into a run plan with gbt.Plan: a
// --set or user.conf line that the arrival mode overrides is a usage error
// naming both.
func planGBT(g *GBT, st resolved) (*gbt.RunPlan, error) {
	var user []gbt.UserSetting
	bySet := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(st.sources)) {
		if src := st.sources[name]; src.Layer == mlperfconf.LayerSet {
			user = append(user, gbt.UserSetting{Key: name, Value: src.Value, Source: "--set"})
			bySet[name] = true
		}
	}
	// A user.conf line is a choice too, unless a --set replaced it.
	userConf := slices.SortedFunc(slices.Values(st.userConf), func(a, b gbt.UserSetting) int { return strings.Compare(a.Key, b.Key) })
	for _, u := range userConf {
		if !bySet[u.Key] {
			user = append(user, u)
		}
	}
	in := g.Input
	in.Arrival = in.Arrival.WithDefaults()
	p, err := gbt.Plan(in, st.settings, user)
	if err != nil {
		if gbt.IsUsage(err) {
			return nil, gbtUsage(err)
		}
		return nil, err
	}
	return p, nil
}

// gbtUsage names the flag of a gbt.Plan parameter error.
func gbtUsage(err error) error {
	var ae *gbt.ParamError
	if errors.As(err, &ae) {
		flag := map[string]string{"mode": "arrival-mode", "lambda": "lambda", "n": "jobs-per-period", "period": "period", "timeout": "job-timeout",
			"duration": "duration", "bursts": "bursts", "burst_length": "burst-length", "burst_period": "burst-period", "burst_starts": "burst-starts"}[ae.Param]
		return &UsageError{Field: flag, Err: err}
	}
	var pe *gbt.PlanError
	if errors.As(err, &pe) {
		flag := map[string]string{
			"arrival.mode": "arrival-mode", "underlying_mode": "mixed-base-mode", "mixed.lambda": "mixed-lambda",
			"mixed.qsl_size": "mixed-qsl-size", "scenario": "scenario-id", "timeout_class": "timeout-class",
			"loss_threshold": "loss-threshold", "sample_bytes": "sample-bytes",
		}[pe.Param]
		if flag != "" {
			return &UsageError{Field: flag, Err: fmt.Errorf("--%s %v: %s", flag, pe.Value, pe.Why)}
		}
	}
	return &UsageError{Err: err}
}

// sutUsage makes a SUT configuration error a usage error naming its flag.
func sutUsage(err error) error {
	var fe *sut.FieldError
	if errors.As(err, &fe) {
		return &UsageError{Field: strings.TrimPrefix(fe.Flag(), "--"), Err: err}
	}
	return &UsageError{Err: err}
}

// needFile checks that the file a field names exists, so that a mistyped
// path is a usage error naming it. An empty path is not checked.
func needFile(field, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usage(field, "--%s %s: no such file or directory (the README's example files are in examples/)", field, path)
		}
		return usage(field, "--%s: %w", field, err)
	}
	return nil
}

// pinnedFile checks the file flag --field names (needFile) and returns
// its SHA-256; recorded, if not "", is the digest an earlier run recorded
// (run --from), and a file that no longer has it is a usage error: the run
// could not be repeated with it.
func pinnedFile(field, path, recorded string) (string, error) {
	if err := needFile(field, path); err != nil {
		return "", err
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return "", usage(field, "--%s %s: %w", field, path, err)
	}
	if recorded != "" && recorded != sum {
		return "", usage(field, "--%s %s: the file's SHA-256 is %s, not the %s the run recorded: it changed since, so the run cannot be repeated with it", field, path, sum, recorded)
	}
	return sum, nil
}

// inputFile is a file the run read, with its digest ("" when it cannot
// be read: an optional audit.config that is not there).
func inputFile(role, path string) bundle.InputFile {
	sum, _ := fileSHA256(path)
	return bundle.InputFile{Role: role, Path: path, SHA256: sum}
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
