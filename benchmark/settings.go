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
const SelfTestConf = `# aimeter self-benchmark defaults (no model and no config file given)
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
	// userConf are the settings a user.conf set, for gbt.NewRunPlan's conflict
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

// settings runs the settings cascade of the plan and checks again that
// every field set applies (Rules), now that the cascade resolved the
// scenario and the mode (a warm-up, a spin window, the find-peak
// options).
func (r *runner) settings() (resolved, error) {
	st, err := r.cascade()
	if err != nil {
		return st, err
	}
	if err := r.plan.checkApplies(&st.settings); err != nil {
		return resolved{}, err
	}
	return st, nil
}

// cascade runs the settings cascade of the plan.
func (r *runner) cascade() (resolved, error) {
	p := r.plan
	in := &p.Settings
	if !(in.MaxErrorRate >= 0 && in.MaxErrorRate <= 1) {
		return resolved{}, usage("Settings.MaxErrorRate", "Settings.MaxErrorRate %v: want a fraction in [0, 1]", in.MaxErrorRate)
	}
	if in.Explicit != nil {
		s := *in.Explicit
		return resolved{settings: s, sources: mlperfconf.Sources{}, exactPrompts: exactPrompts(&s)}, nil
	}
	scenarioName, modeName := p.plannedScenario(), in.Mode
	if p.GBT != nil {
		// The mode and the concurrency do not apply (Rules): the arrival
		// mode chooses them.
		modeName = ""
		if !p.GBT.Input.Arrival.Mode.Valid() {
			return resolved{}, usage("GBT.Input.Arrival.Mode", "GBT.Input.Arrival.Mode %d: Table 10 defines modes 0 to 5", p.GBT.Input.Arrival.Mode)
		}
	}
	if in.Concurrency > 0 {
		if in.Concurrency > loadgen.MaxConcurrency {
			return resolved{}, usage("Settings.Concurrency", "Settings.Concurrency %d: at most %d", in.Concurrency, loadgen.MaxConcurrency)
		}
		if sc, err := loadgen.ParseScenario(scenarioName); err == nil && sc != loadgen.SingleStream {
			return resolved{}, usage("Settings.Concurrency", "Settings.Concurrency %d with Settings.Scenario %s: fixed concurrency is aimeter's own load mode and runs on SingleStream's issuing only; drop Settings.Scenario or use SingleStream", in.Concurrency, sc)
		}
	}
	modeSet := modeName != ""
	if modeName == "" {
		modeName = "performance"
	}
	scenario, err := loadgen.ParseScenario(scenarioName)
	if err != nil {
		return resolved{}, usage("Settings.Scenario", "Settings.Scenario: %v", err)
	}
	mode, err := loadgen.ParseMode(modeName)
	if err != nil {
		return resolved{}, usage("Settings.Mode", "Settings.Mode: %v", err)
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

// plannedScenario is the name of the LoadGen scenario the plan asks for,
// before the cascade: a GB/T test's main arrival mode's (Table 10), else
// Settings.Scenario, else the default: SingleStream's issuing for the
// fixed-concurrency mode, the Server scenario otherwise.
func (p *Plan) plannedScenario() string {
	switch {
	case p.GBT != nil:
		return gbt.Arrival{Mode: p.GBT.Input.MainMode()}.Scenario().String()
	case p.Settings.Scenario != "":
		return p.Settings.Scenario
	case p.Settings.Concurrency > 0:
		return loadgen.SingleStream.String()
	}
	return loadgen.Server.String()
}

// settingFields are the Plan paths of the mlperfconf.CascadeOptions
// fields.
var settingFields = map[string]string{"Scenario": "Settings.Scenario", "Mode": "Settings.Mode", "SelfTest": "", "MLPerfConfPath": "Settings.MLPerfConf",
	"UserConfPath": "Settings.UserConf", "AuditConfigPath": "Settings.AuditConfig", "Set": "Settings.Set"}

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
		src.Impose("use_token_latencies", "SUT.Kind openai, streaming")
	}
}

// defaultsBy begins the source of a setting that gentleDefaults chose.
const defaultsBy = "aimeter's defaults for SUT.Kind"

// gentleDefaults replaces, for a network server, the self-test defaults
// (sized for the null SUT: 100 000 queries/s, a 1 ms bound) with a load a
// real server can take and a bound it can meet: for an OpenAI-compatible
// server (an LLM) 10 queries/s for 10 s with a 1-minute bound; for a
// KServe v2 / Triton server 100 queries/s for 10 s with a 100 ms bound. A
// dispatcher gets its nodes' protocol's. An ONNX model in process (the
// OCR detector of GB/T scenario T13-1 takes 13–24 ms an image on 2 cores,
// 55 images/s) gets, for 10 s: SingleStream an expected latency of 5 ms
// and MultiStream of 20 ms a query of 8 (they only size the queries LoadGen
// generates, twice the duration at that latency, so a SUT up to twice as
// fast still fills it: SingleStream's 50 ms first written ran out after
// 401 queries, at 9.6 s, INVALID; issue 39); MultiStream min_query_count
// 662, which its early
// stopping at the 99th percentile needs (mlperf.conf's value; about 80 s
// of 120 ms queries here, which the length note says before the run);
// Server 25 queries/s for 20 s with a 1 s bound (the 460 queries its early
// stopping needs: 10 queries/s for 10 s gave 100, INVALID); Offline
// expects 100 samples/s (above what the detector does, so that the pass
// lasts min_duration: at 10, as first written, it ended in 3 s, INVALID).
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
		// serverDuration, if not 0, is the Server scenario's
		// min_duration instead of 10 s.
		serverDuration time.Duration
	}
	by := fmt.Sprintf("%s %s (no Settings.Model and no config file given)", defaultsBy, c.KindOrNull())
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
		g = gentle{qps: 25, offline: 100, bound: time.Second, ss: 5 * time.Millisecond, ms: 20 * time.Millisecond, minDuration: true,
			serverDuration: 20 * time.Second}
		// LoadGen's default min_query_count (the self-test conf sets none).
		if s.Scenario == loadgen.MultiStream && src.Is("min_duration", mlperfconf.LayerSelfTest) && src.Is("min_query_count", mlperfconf.LayerDefault) {
			s.MinQueryCount = 662
			src.Impose("min_query_count", by)
		}
	case !kind.IsNetwork():
		return
	case c.Backend() == string(sut.KServe):
		g = gentle{qps: 100, offline: 100, bound: 100 * time.Millisecond, ss: 10 * time.Millisecond, ms: 20 * time.Millisecond, minDuration: true}
	default:
		g = gentle{qps: 10, offline: 10, bound: time.Minute, ss: time.Second, ms: 2 * time.Second, minDuration: true}
	}
	if g.minDuration && selfTest("min_duration") {
		s.MinDurationMs = 10_000
		if s.Scenario == loadgen.Server && g.serverDuration > 0 {
			s.MinDurationMs = uint64(g.serverDuration.Milliseconds())
		}
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

// planGBT turns the plan's GB/T input into a run plan with gbt.NewRunPlan: a
// Settings.Set override or user.conf line that the arrival mode overrides
// is a usage error naming both.
func planGBT(g *GBT, st resolved) (*gbt.RunPlan, error) {
	var user []gbt.UserSetting
	bySet := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(st.sources)) {
		if src := st.sources[name]; src.Layer == mlperfconf.LayerSet {
			user = append(user, gbt.UserSetting{Key: name, Value: src.Value, Source: "Settings.Set"})
			bySet[name] = true
		}
	}
	// A user.conf line is a choice too, unless an override replaced it.
	userConf := slices.SortedFunc(slices.Values(st.userConf), func(a, b gbt.UserSetting) int { return strings.Compare(a.Key, b.Key) })
	for _, u := range userConf {
		if !bySet[u.Key] {
			user = append(user, u)
		}
	}
	in := g.Input
	in.Arrival = in.Arrival.WithDefaults()
	p, err := gbt.NewRunPlan(in, st.settings, user)
	if err != nil {
		if gbt.IsUsage(err) {
			return nil, gbtUsage(err)
		}
		return nil, err
	}
	return p, nil
}

// gbtUsage names the Plan field of a gbt.NewRunPlan parameter error.
func gbtUsage(err error) error {
	var ae *gbt.ParamError
	if errors.As(err, &ae) {
		field := map[string]string{"mode": "GBT.Input.Arrival.Mode", "lambda": "GBT.Input.Arrival.Lambda", "n": "GBT.Input.Arrival.N",
			"period": "GBT.Input.Arrival.Period", "timeout": "GBT.Input.Timeout", "duration": "GBT.Input.Arrival.Duration",
			"bursts": "GBT.Input.Arrival.Bursts", "burst_length": "GBT.Input.Arrival.BurstLength", "burst_period": "GBT.Input.Arrival.BurstPeriod",
			"burst_starts": "GBT.Input.Arrival.BurstStarts"}[ae.Param]
		return &UsageError{Field: field, Err: err}
	}
	var pe *gbt.PlanError
	if errors.As(err, &pe) {
		field := map[string]string{
			"arrival.mode": "GBT.Input.Arrival.Mode", "underlying_mode": "GBT.Input.UnderlyingMode", "mixed.lambda": "GBT.Input.Mixed.Lambda",
			"mixed.qsl_size": "GBT.Input.Mixed.QSLSize", "scenario": "GBT.Input.Scenario", "timeout_class": "GBT.Input.TimeoutClass",
			"loss_threshold": "GBT.Input.LossThreshold", "sample_bytes": "GBT.Input.SampleBytes", "arrival.jobs": "GBT.Input.Arrival.Jobs",
		}[pe.Param]
		if field != "" {
			return &UsageError{Field: field, Err: fmt.Errorf("%s %v: %s", field, pe.Value, pe.Why)}
		}
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
			return usage(field, "%s %s: no such file or directory (the example files of docs/first-runs.md are in examples/)", field, path)
		}
		return usage(field, "%s: %w", field, err)
	}
	return nil
}

// pinnedFile checks the file the field at path field names (needFile) and
// returns its SHA-256; recorded, if not "", is the digest an earlier run
// recorded (a plan from its bundle), and a file that no longer has it is a
// usage error: the run could not be repeated with it.
func pinnedFile(field, path, recorded string) (string, error) {
	if err := needFile(field, path); err != nil {
		return "", err
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return "", usage(field, "%s %s: %w", field, path, err)
	}
	if recorded != "" && recorded != sum {
		return "", usage(field, "%s %s: the file's SHA-256 is %s, not the %s the run recorded: it changed since, so the run cannot be repeated with it", field, path, sum, recorded)
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
