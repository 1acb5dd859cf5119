package benchmark

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut"
)

// Rule says where one field of a Plan applies: the one contract of a run
// (issue 39). Validate refuses a field that is set (not its zero value)
// where its rule says it does not apply, naming the field by its path, so
// that nothing a plan asks for is silently ignored. Rules returns the
// table; the command line maps each path to its flag.
type Rule struct {
	// Field is the field's path from the Plan, as UsageError.Field names
	// it: "SpinWindow", "SUT.OpenAI.CACert", "GBT.Input.SampleBytes".
	Field string
	// Where says in plain English where the field applies, naming other
	// fields by their paths; "" for a field that applies to every run
	// that has it (a field under a pointer, such as GBT, only to the runs
	// where that is set).
	Where string
	// applies reports whether the field applies to the run v sees; nil
	// for every run.
	applies func(v *view) bool
}

// Always reports whether the rule's field applies to every run.
func (r Rule) Always() bool { return r.applies == nil }

// Applies reports whether the rule's field applies to p as the plan alone
// tells: where the settings cascade decides (the test mode a config file
// may choose), it counts as applying, and the check after the cascade
// decides.
func (r Rule) Applies(p *Plan) bool {
	return r.applies == nil || r.applies(&view{p: p, assume: true})
}

// Rules returns the table of where each field of a Plan (and of the SUT
// configuration under Plan.SUT) applies, in the order Validate checks
// them. A field may have several rules; it applies where all of them say.
func Rules() []Rule { return slices.Clone(rules) }

// RuleOf returns the first rule of the field at path, and false when the
// table has none.
func RuleOf(path string) (Rule, bool) {
	for _, r := range rules {
		if r.Field == path {
			return r, true
		}
	}
	return Rule{}, false
}

// view is a run as the rules see it: the plan, and the settings the
// cascade resolved once they are known.
type view struct {
	p *Plan
	// s are the resolved settings; nil before the cascade.
	s *loadgen.Settings
	// assume is what a fact that only the cascade decides counts as
	// before it: true to validate (the check after the cascade decides),
	// false to clear a default (ClearInapplicable keeps only what surely
	// applies).
	assume bool
}

// gbtIn reports whether the run is a GB/T test in one of modes, where a
// mixed test (mode 5) counts as its underlying mode too.
func (v *view) gbtIn(modes ...gbt.ArrivalMode) bool {
	g := v.p.GBT
	if g == nil {
		return false
	}
	return slices.Contains(modes, g.Input.Arrival.Mode) || slices.Contains(modes, g.Input.MainMode())
}

// scenarioIs reports whether the run's LoadGen scenario is sc.
func (v *view) scenarioIs(sc loadgen.Scenario) bool {
	if v.s != nil {
		return v.s.Scenario == sc
	}
	if e := v.p.Settings.Explicit; e != nil {
		return e.Scenario == sc
	}
	got, err := loadgen.ParseScenario(v.p.plannedScenario())
	if err != nil {
		return v.assume // the cascade refuses it, naming it
	}
	return got == sc
}

// modeIs reports whether the run's test mode is m. Without
// Settings.Mode, a config file may choose it: the cascade decides.
func (v *view) modeIs(m loadgen.Mode) bool {
	if v.s != nil {
		return v.s.Mode == m
	}
	p := v.p
	switch {
	case p.Settings.Explicit != nil:
		return p.Settings.Explicit.Mode == m
	case p.GBT != nil:
		return m == loadgen.PerformanceOnly
	case p.Settings.Mode != "":
		got, err := loadgen.ParseMode(p.Settings.Mode)
		if err != nil {
			return v.assume
		}
		return got == m
	}
	return v.assume
}

// concurrency reports whether the run is aimeter's fixed-concurrency mode.
func (v *view) concurrency() bool {
	if v.s != nil {
		return v.s.Concurrency > 0
	}
	if e := v.p.Settings.Explicit; e != nil {
		return e.Concurrency > 0
	}
	return v.p.Settings.Concurrency > 0
}

// tokenLatencies reports whether the run can measure token latencies
// (time to first token, time per output token): a SUT that reports its
// first token.
func (v *view) tokenLatencies() bool {
	c := &v.p.SUT
	switch {
	case v.p.Custom != nil:
		return true // a program's SUT may report first tokens
	case c.Backend() == string(sut.OpenAI):
		return c.OpenAI == nil || !c.OpenAI.NoStream
	case c.Backend() == string(sut.KServe):
		return c.KServe != nil && c.KServe.Stream
	}
	return false
}

// The plain-English places of the rules, naming fields by their paths.
const (
	whereNetwork  = "a network SUT (SUT.Kind openai, kserve or dispatch)"
	whereOpenAI   = "SUT.Kind openai, or SUT.Kind dispatch with SUT.Dispatch.Backend openai"
	whereKServe   = "SUT.Kind kserve, or SUT.Kind dispatch with SUT.Dispatch.Backend kserve"
	whereDispatch = "SUT.Kind dispatch"
	whereONNX     = "SUT.Kind onnx"
	whereMLPerf   = "an MLPerf run, not a GB/T test (GBT)"
	whereCascade  = "settings the cascade resolves, not Settings.Explicit (used as they are)"
	// Table 10: the offline mode has no timeout-control threshold (IN-51).
	whereTimeout = "an arrival mode with a job timeout (GBT.Input.Arrival.Mode 0 to 3, or 5 over them): Table 10 gives the offline mode 4 none (IN-51)"
	whereTokens  = "a run that measures token latencies: an OpenAI-compatible server that streams its responses (SUT.Kind openai, or dispatch over openai nodes), a KServe server over one gRPC stream (SUT.KServe.Stream) or a Custom SUT"
)

// rules is the table Rules returns. Its order is Validate's.
var rules = func() []Rule {
	var out []Rule
	add := func(where string, applies func(v *view) bool, fields ...string) {
		for _, f := range fields {
			out = append(out, Rule{Field: f, Where: where, applies: applies})
		}
	}
	network := func(v *view) bool { return v.p.SUT.KindOrNull().IsNetwork() }
	backend := func(b sut.Kind) func(v *view) bool {
		return func(v *view) bool { return v.p.SUT.Backend() == string(b) }
	}
	kind := func(k sut.Kind) func(v *view) bool {
		return func(v *view) bool { return v.p.SUT.KindOrNull() == k }
	}
	gbtIn := func(modes ...gbt.ArrivalMode) func(v *view) bool {
		return func(v *view) bool { return v.gbtIn(modes...) }
	}
	mlperf := func(v *view) bool { return v.p.GBT == nil }
	cascade := func(v *view) bool { return v.p.Settings.Explicit == nil }

	// The system under test.
	add(whereNetwork, network, "SUT.Net.URLs", "SUT.Net.RequestTimeout", "SUT.Net.CheckTimeout", "SUT.Net.MaxConns",
		"ServerMetrics.URLs", "ServerMetrics.Interval", "ServerMetrics.Off", "InputDType", "OutputDType")
	add(whereOpenAI, backend(sut.OpenAI), "SUT.OpenAI.ServedModel", "SUT.OpenAI.API", "SUT.OpenAI.NoStream", "SUT.OpenAI.Prompts",
		"SUT.OpenAI.PromptsSHA256", "SUT.OpenAI.InputTokens", "SUT.OpenAI.InputLengths", "SUT.OpenAI.InputLengthsSHA256",
		"SUT.OpenAI.OutputLengths", "SUT.OpenAI.OutputLengthsSHA256", "SUT.OpenAI.Tokenizer", "SUT.OpenAI.TokenizerSHA256",
		"SUT.OpenAI.OutputTokens", "SUT.OpenAI.IgnoreEOS", "SUT.OpenAI.APIKeyEnv", "SUT.OpenAI.CACert", "SUT.OpenAI.InsecureSkipVerify",
		"SUT.OpenAI.Headers", "SUT.OpenAI.AllowHeaderOverride", "SUT.OpenAI.ExtraBody", "SUT.OpenAI.Temperature",
		"SUT.OpenAI.SaltSeed", "SUT.OpenAI.HTTPClient")
	add(whereKServe, backend(sut.KServe), "SUT.KServe.GRPC", "SUT.KServe.Model", "SUT.KServe.ModelVersion", "SUT.KServe.BinaryData",
		"SUT.KServe.Stream", "SUT.KServe.TokenEnv", "SUT.KServe.ServerTiming", "SUT.KServe.Shapes", "SUT.KServe.BatchSize",
		"SUT.KServe.InputData", "SUT.KServe.InputDataSHA256", "SUT.KServe.DataMode", "SUT.KServe.Seed", "SUT.KServe.Compression")
	add(whereDispatch, kind(sut.Dispatch), "SUT.Dispatch.Backend", "SUT.Dispatch.Policy", "SUT.Dispatch.AllowDownNodes")
	add(whereONNX, kind(sut.ONNX), "SUT.ONNX.Workload", "SUT.ONNX.Model", "SUT.ONNX.ModelSHA256", "SUT.ONNX.Library",
		"SUT.ONNX.Input", "SUT.ONNX.Output", "SUT.ONNX.IntraOpThreads", "SUT.ONNX.NoSpin", "SUT.ONNX.MaxBatch", "SUT.ONNX.Workers",
		"SUT.ONNX.Images", "SUT.ONNX.ImageSize", "SUT.ONNX.Seed")
	add("SUT.Kind reference, and the reference data set a KServe server is sent ("+whereKServe+")",
		func(v *view) bool {
			return v.p.SUT.KindOrNull() == sut.Reference || v.p.SUT.Backend() == string(sut.KServe)
		},
		"SUT.Reference.Dataset", "SUT.Reference.Weights")
	add("SUT.Kind null, null-async, dispatch, openai's synthetic prompts (no SUT.OpenAI.Prompts), kserve's own inputs and onnx's random inputs (no SUT.ONNX.Workload); "+
		"the reference SUT uses its data set's size, SUT.OpenAI.Prompts its lines",
		func(v *view) bool {
			c := &v.p.SUT
			switch c.KindOrNull() {
			case sut.Null, sut.NullAsync, sut.Dispatch, sut.KServe:
				return true
			case sut.OpenAI:
				return c.OpenAI == nil || c.OpenAI.Prompts == ""
			case sut.ONNX:
				return c.ONNX == nil || c.ONNX.Workload == ""
			}
			return false
		}, "SUT.QSLSize")
	add("", nil, "SUT.Kind", "SUT.PerformanceSampleCount", "SUT.Name")

	// How the run is driven.
	add("the find-peak mode (Settings.Mode find-peak)", func(v *view) bool { return v.modeIs(loadgen.FindPeakPerformance) },
		"FindPeakResolution", "KeepProbeRecords")

	// The GB/T 45087 arrival modes of Table 10 (GB-7.4.2).
	add("GBT.Input.Arrival.Mode 2 or 3 (the Poisson rate between bursts), or 5 over them", gbtIn(gbt.ModePoisson, gbt.ModePeak),
		"GBT.Input.Arrival.Lambda")
	add("GBT.Input.Arrival.Mode 1 (or 5 over 1)", gbtIn(gbt.ModeFixedPeriod), "GBT.Input.Arrival.Period", "GBT.Input.Arrival.N")
	add("GBT.Input.Arrival.Mode 4 (or 5 over 4)", gbtIn(gbt.ModeOffline), "GBT.Input.Arrival.Jobs")
	add("GBT.Input.Arrival.Mode 3 (or 5 over 3)", gbtIn(gbt.ModePeak), "GBT.Input.Arrival.Bursts", "GBT.Input.Arrival.BurstLength",
		"GBT.Input.Arrival.BurstPeriod", "GBT.Input.Arrival.BurstN", "GBT.Input.Arrival.BurstStarts")
	// The foreign jobs of a mixed test (GB-7.4.2-T10-mode5, IN-50).
	add("GBT.Input.Arrival.Mode 5", func(v *view) bool { return v.p.GBT != nil && v.p.GBT.Input.Arrival.Mode == gbt.ModeMixed },
		"GBT.Input.UnderlyingMode", "GBT.Input.Mixed.Lambda", "GBT.Input.Mixed.QSLSize", "GBT.Input.Mixed.Seed")
	add(whereTimeout, gbtIn(gbt.ModeContinuous, gbt.ModeFixedPeriod, gbt.ModePoisson, gbt.ModePeak),
		"GBT.Input.TimeoutClass", "GBT.Input.Timeout")
	// SampleBytes sizes the data volume of the peak mode's elasticity and
	// pressure tolerance (clause 7.6; gbt.Evaluate), nothing else.
	add("GBT.Input.Arrival.Mode 3 (or 5 over 3): the data volume of a peak test's elasticity and pressure tolerance", gbtIn(gbt.ModePeak),
		"GBT.Input.SampleBytes")
	// The offline mode's jobs all arrive at once: it has a jobs count, not
	// a duration (the foreign jobs of mode 5 over it arrive for one).
	add("an arrival mode with a duration (GBT.Input.Arrival.Mode 0 to 3, or 5, whose foreign jobs arrive for it)",
		func(v *view) bool {
			return v.gbtIn(gbt.ModeContinuous, gbt.ModeFixedPeriod, gbt.ModePoisson, gbt.ModePeak) ||
				v.p.GBT != nil && v.p.GBT.Input.Arrival.Mode == gbt.ModeMixed
		}, "GBT.Input.Arrival.Duration")
	add("", nil, "GBT.Input.Arrival.Mode", "GBT.Input.Arrival.Seed", "GBT.Input.Scenario", "GBT.Input.LossThreshold", "GBT.InfoFile")

	// The settings cascade.
	add(whereMLPerf+": a GB/T test counts failures as lost jobs against GBT.Input.LossThreshold", mlperf, "Settings.MaxErrorRate")
	add(whereMLPerf+": GBT.Input.Arrival.Mode chooses the LoadGen scenario and mode", mlperf, "Settings.Scenario", "Settings.Mode")
	add(whereMLPerf+": the arrival modes set their own load", mlperf, "Settings.Concurrency")
	add(whereCascade, cascade, "Settings.Model", "Settings.Scenario", "Settings.Mode", "Settings.MLPerfConf", "Settings.UserConf",
		"Settings.AuditConfig", "Settings.Set", "Settings.Concurrency", "Settings.MaxErrorRate")
	add("", nil, "Settings.Explicit")
	add("the fixed-concurrency mode (Settings.Concurrency N) or the Server scenario of an MLPerf run; "+
		"not a GB/T test (it measures from its first job), a replay (cut the trace instead) or sessions",
		func(v *view) bool {
			p := v.p
			return p.GBT == nil && p.Replay == nil && p.Sessions == nil && (v.concurrency() || v.scenarioIs(loadgen.Server))
		}, "Warmup")
	// Only a scheduled issuer waits for a query's time (loadgen.Options.
	// SpinWindow): the Server scenario, which carries the GB/T modes
	// 1 to 3 (Table 10), a replay's trace and sessions' chains.
	add("runs issued on a schedule: the Server scenario (an MLPerf Server run, GBT.Input.Arrival.Mode 1 to 3 or 5 over them, a replay, sessions)",
		func(v *view) bool { return v.scenarioIs(loadgen.Server) }, "SpinWindow")

	// What the run measures against.
	add(whereTokens, func(v *view) bool { return v.tokenLatencies() }, "SLO.TTFTNs", "SLO.TPOTNs")
	add("", nil, "SLO.E2ENs")
	add("a run with power sources to sample (Power)", func(v *view) bool { return len(v.p.Power) > 0 }, "PowerOptions")

	// Generated sessions only: a ShareGPT file brings its own.
	add("generated sessions (no Sessions.ShareGPT)", func(v *view) bool { return v.p.Sessions == nil || v.p.Sessions.ShareGPT == "" },
		"Sessions.MinTurns", "Sessions.MaxTurns", "Sessions.UserWords", "Sessions.AnswerTokens", "Sessions.Seed")
	add("", nil, "Sessions.ShareGPT", "Sessions.SHA256", "Sessions.Sessions", "Sessions.Think", "Sessions.Interval", "Sessions.History",
		"Replay.Path", "Replay.SHA256", "Replay.Speedup", "Replay.MaxRequests", "Replay.MaxDuration", "Replay.Seed")

	// A shard of a test split over load generators: one seeded schedule,
	// not chained turns that wait for each other's answers.
	add("a run of one seeded schedule: not sessions (Sessions), whose turns wait for each other's answers", func(v *view) bool { return v.p.Sessions == nil }, "Shard")
	add("", nil, "Shard.Index", "Shard.Count", "Shard.StartAt", "Shard.StartTolerance", "Shard.ClockRef")

	// MLPerf's network division, and the system description any result
	// may carry (docs/network-division.md).
	add(whereNetworkDivision, func(v *view) bool { return v.networkDivision() }, "Division")
	add("", nil, "SystemDesc")

	// Every run.
	add("", nil, "OutputDir", "Name", "Trace", "NoReport", "Timeout", "StallTimeout", "MaxMemory", "MaxMemorySource",
		"CommandLine", "Power", "Version", "SLO")
	return out
}()

// Validate checks what can be checked of p before anything runs: an output
// directory, every set field applying to the run (Rules), values in range,
// the SUT configuration and the GB/T scenario it may carry, the division
// and the system description file (read and checked, with its diagram).
// The error is a *UsageError naming the field by its path. Run calls it first, and checks the rules again once the
// settings cascade has resolved the scenario and the mode.
func (p *Plan) Validate() error {
	if strings.TrimSpace(p.OutputDir) == "" {
		return usage("OutputDir", "OutputDir: empty; name a directory for the logs")
	}
	if g := p.GBT; g != nil && !g.Input.Arrival.Mode.Valid() {
		return usage("GBT.Input.Arrival.Mode", "GBT.Input.Arrival.Mode %d: Table 10 defines modes 0 to 5", g.Input.Arrival.Mode)
	}
	if err := p.checkApplies(nil); err != nil {
		return err
	}
	if _, err := p.systemRecord(); err != nil {
		return err
	}
	if p.Shard != nil {
		if err := p.Shard.validateWith(p); err != nil {
			return err
		}
	}
	if err := p.validateBandwidth(); err != nil {
		return err
	}
	if p.FindPeakResolution < 0 || p.FindPeakResolution >= 1 {
		return usage("FindPeakResolution", "FindPeakResolution %v: want a fraction in [0, 1)", p.FindPeakResolution)
	}
	if p.Custom == nil {
		if err := p.SUT.Validate(); err != nil {
			return sutUsage(err)
		}
	}
	if g := p.GBT; g != nil {
		// A scenario's label only on a run of its workload (CheckGBTScenario).
		if err := CheckGBTScenario(g.Input.Scenario, p.SUT); err != nil {
			return err
		}
	}
	return nil
}

// checkApplies refuses the first set field of p that does not apply to
// it, by the plan alone (s nil) or with the settings the cascade
// resolved.
func (p *Plan) checkApplies(s *loadgen.Settings) error {
	v := &view{p: p, s: s, assume: true}
	for _, r := range rules {
		if r.applies == nil || !isSet(p, r.Field) || r.applies(v) {
			continue
		}
		return usage(r.Field, "%s applies only to %s; drop it", r.Field, r.Where)
	}
	return nil
}

// ClearInapplicable is for a caller that fills every field with a default
// of its own (the command line fills each flag's): it zeroes each set
// field of p that does not surely apply to it, except those given names
// (what its user set, which Validate then checks). given nil keeps none:
// a plan read back from a bundle drops what its run ignored.
func (p *Plan) ClearInapplicable(given func(field string) bool) {
	v := &view{p: p, assume: false}
	for _, r := range rules {
		if r.applies == nil || !isSet(p, r.Field) || r.applies(v) || (given != nil && given(r.Field)) {
			continue
		}
		if f, ok := fieldOf(p, r.Field); ok {
			f.SetZero()
		}
	}
}

// fieldOf is the field of p at path, through its pointers; false where a
// pointer on the way is nil.
func fieldOf(p *Plan, path string) (reflect.Value, bool) {
	v := reflect.ValueOf(p).Elem()
	for name := range strings.SplitSeq(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		v = v.FieldByName(name)
		if !v.IsValid() {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// isSet reports whether the field of p at path is set: not its zero value
// (a slice or map not empty, a pointer not nil).
func isSet(p *Plan, path string) bool {
	f, ok := fieldOf(p, path)
	if !ok {
		return false
	}
	switch f.Kind() {
	case reflect.Slice, reflect.Map:
		return f.Len() > 0
	}
	return !f.IsZero()
}

// checkRulePaths reports the paths of the table that name no field of a
// Plan (a test of the table).
func checkRulePaths() error {
	var bad []string
	for _, r := range rules {
		t := reflect.TypeFor[Plan]()
		for name := range strings.SplitSeq(r.Field, ".") {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			f, ok := t.FieldByName(name)
			if t.Kind() != reflect.Struct || !ok {
				bad = append(bad, r.Field)
				break
			}
			t = f.Type
		}
	}
	if len(bad) > 0 {
		return errors.New("benchmark: rules name no field of Plan: " + strings.Join(bad, ", "))
	}
	return nil
}

// sutFieldPaths are the Plan paths of the fields a sut.FieldError names
// (their names in sut.json).
var sutFieldPaths = map[string]string{
	"kind": "SUT.Kind", "qsl_size": "SUT.QSLSize", "url": "SUT.Net.URLs", "request_timeout": "SUT.Net.RequestTimeout",
	"check_timeout": "SUT.Net.CheckTimeout", "max_conns": "SUT.Net.MaxConns",
	"input_tokens": "SUT.OpenAI.InputTokens", "output_tokens": "SUT.OpenAI.OutputTokens", "temperature": "SUT.OpenAI.Temperature",
	"http_client": "SUT.OpenAI.HTTPClient", "input_lengths": "SUT.OpenAI.InputLengths", "output_lengths": "SUT.OpenAI.OutputLengths",
	"header": "SUT.OpenAI.Headers", "extra_body": "SUT.OpenAI.ExtraBody",
	"grpc_stream": "SUT.KServe.Stream", "batch_size": "SUT.KServe.BatchSize", "data_mode": "SUT.KServe.DataMode", "shapes": "SUT.KServe.Shapes",
	"dataset": "SUT.Reference.Dataset", "onnx_workload": "SUT.ONNX.Workload",
	"onnx_model": "SUT.ONNX.Model", "onnx_threads": "SUT.ONNX.IntraOpThreads",
	"onnx_batch": "SUT.ONNX.MaxBatch", "onnx_workers": "SUT.ONNX.Workers", "ocr_images": "SUT.ONNX.Images", "ocr_image_size": "SUT.ONNX.ImageSize",
}

// sutUsage makes a SUT configuration error a usage error naming its field
// by its Plan path.
func sutUsage(err error) error {
	var fe *sut.FieldError
	if errors.As(err, &fe) {
		path, ok := sutFieldPaths[fe.Field]
		if !ok {
			path = "SUT"
		}
		return &UsageError{Field: path, Err: err}
	}
	return &UsageError{Err: err}
}
