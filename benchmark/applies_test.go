package benchmark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut"
)

// TestRulePaths: every rule names a field of a Plan.
func TestRulePaths(t *testing.T) {
	if err := checkRulePaths(); err != nil {
		t.Fatal(err)
	}
}

// setField sets the field of p at path to a value that is not its zero
// value, making the pointers on the way.
func setField(t *testing.T, p *Plan, path string) {
	t.Helper()
	v := reflect.ValueOf(p).Elem()
	for name := range strings.SplitSeq(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.FieldByName(name)
		if !v.IsValid() {
			t.Fatalf("%s names no field of Plan", path)
		}
	}
	setNonZero(t, path, v)
}

func setNonZero(t *testing.T, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setNonZero(t, path, v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setNonZero(t, path, v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		setNonZero(t, path, k)
		setNonZero(t, path, e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		setNonZero(t, path, v.Field(0))
	default:
		t.Fatalf("%s: cannot set a %v", path, v.Kind())
	}
}

// TestInapplicableFieldRefused: for every rule of the table, a plan that
// sets its field where the rule says it does not apply is refused by Run
// with a *UsageError whose Field is the field's path and whose message
// says where it applies, before anything is written. Most are refused by
// Validate; the find-peak options (the mode a config file may choose) by
// the check after the settings cascade.
func TestInapplicableFieldRefused(t *testing.T) {
	null := func() Plan { return Plan{} }
	kind := func(k sut.Kind) func() Plan { return func() Plan { return Plan{SUT: sut.Config{Kind: k}} } }
	mode := func(m gbt.ArrivalMode) func() Plan {
		return func() Plan {
			a := gbt.Arrival{Mode: m, Duration: time.Second}
			if m == gbt.ModeOffline {
				a.Duration = 0 // its jobs all arrive at once
			}
			return Plan{GBT: &GBT{Input: gbt.PlanInput{Arrival: a}}}
		}
	}
	scenario := func(sc string) func() Plan { return func() Plan { return Plan{Settings: Settings{Scenario: sc}} } }
	explicit := func() Plan { s := loadgen.DefaultSettings(); return Plan{Settings: Settings{Explicit: &s}} }
	shareGPT := func() Plan {
		return Plan{SUT: sut.Config{Kind: sut.OpenAI}, Sessions: &Sessions{ShareGPT: "conversations.json"}}
	}
	rows := []struct {
		field, why string
		base       func() Plan
	}{
		{"SUT.Net.URLs", "the null SUT runs in process: no server to send to", null},
		{"SUT.Net.RequestTimeout", "no request leaves the process", null},
		{"SUT.Net.CheckTimeout", "no server to check", null},
		{"SUT.Net.MaxConns", "no connection to bound", kind(sut.Reference)},
		{"InputDType", "an in-process SUT puts no input on a wire", null},
		{"OutputDType", "an in-process SUT puts no output on a wire", kind(sut.Reference)},
		{"SUT.KServe.Compression", "an OpenAI server is sent prompts, not the QSL's tensors", kind(sut.OpenAI)},
		{"ServerMetrics.URLs", "an in-process SUT has no server metrics", null},
		{"ServerMetrics.Interval", "nothing is scraped", kind(sut.NullAsync)},
		{"ServerMetrics.Off", "nothing would be scraped anyway", null},
		{"SUT.OpenAI.ServedModel", "a KServe server is no OpenAI-compatible one", kind(sut.KServe)},
		{"SUT.OpenAI.API", "the null SUT has no API", null},
		{"SUT.OpenAI.NoStream", "nothing streams from the null SUT", null},
		{"SUT.OpenAI.Prompts", "the null SUT takes no prompts", null},
		{"SUT.OpenAI.PromptsSHA256", "no prompts file is read", null},
		{"SUT.OpenAI.InputTokens", "no synthetic prompts are made", null},
		{"SUT.OpenAI.InputLengths", "no synthetic prompts are made", null},
		{"SUT.OpenAI.InputLengthsSHA256", "no histogram file is read", null},
		{"SUT.OpenAI.OutputLengths", "no max_tokens is sent", null},
		{"SUT.OpenAI.OutputLengthsSHA256", "no histogram file is read", null},
		{"SUT.OpenAI.Tokenizer", "nothing is tokenized", kind(sut.ONNX)},
		{"SUT.OpenAI.TokenizerSHA256", "no tokenizer file is read", null},
		{"SUT.OpenAI.OutputTokens", "no max_tokens is sent", null},
		{"SUT.OpenAI.IgnoreEOS", "no generation to extend", null},
		{"SUT.OpenAI.APIKeyEnv", "no request carries a key", null},
		{"SUT.OpenAI.CACert", "no https client to trust it", null},
		{"SUT.OpenAI.InsecureSkipVerify", "no certificate to check", null},
		{"SUT.OpenAI.Headers", "no HTTP request", null},
		{"SUT.OpenAI.AllowHeaderOverride", "no HTTP request", null},
		{"SUT.OpenAI.ExtraBody", "no request body", null},
		{"SUT.OpenAI.Temperature", "no sampling to tune", null},
		{"SUT.OpenAI.SaltSeed", "no prompt to salt", null},
		{"SUT.OpenAI.HTTPClient", "no HTTP client", null},
		{"SUT.KServe.GRPC", "an OpenAI-compatible server is no KServe one", kind(sut.OpenAI)},
		{"SUT.KServe.Model", "no KServe model", null},
		{"SUT.KServe.ModelVersion", "no KServe model", null},
		{"SUT.KServe.BinaryData", "no tensors are sent", null},
		{"SUT.KServe.Stream", "no gRPC stream", null},
		{"SUT.KServe.TokenEnv", "no bearer token is sent", null},
		{"SUT.KServe.ServerTiming", "no Server-Timing header", null},
		{"SUT.KServe.Shapes", "no model inputs to shape", null},
		{"SUT.KServe.BatchSize", "no batch dimension", null},
		{"SUT.KServe.InputData", "no KServe inputs", null},
		{"SUT.KServe.InputDataSHA256", "no input data file is read", null},
		{"SUT.KServe.DataMode", "no generated inputs", null},
		{"SUT.KServe.Seed", "no random inputs", null},
		{"SUT.Dispatch.Backend", "one server, no dispatcher", kind(sut.OpenAI)},
		{"SUT.Dispatch.Policy", "no nodes to share the load", null},
		{"SUT.Dispatch.AllowDownNodes", "no nodes to leave out", null},
		{"SUT.ONNX.Workload", "no ONNX model", null},
		{"SUT.ONNX.Model", "no ONNX model", null},
		{"SUT.ONNX.ModelSHA256", "no model file is read", null},
		{"SUT.ONNX.Library", "ONNX Runtime is not loaded", null},
		{"SUT.ONNX.Input", "no model input", null},
		{"SUT.ONNX.Output", "no model output", null},
		{"SUT.ONNX.IntraOpThreads", "no ONNX Runtime threads", null},
		{"SUT.ONNX.NoSpin", "no ONNX Runtime threads", null},
		{"SUT.ONNX.MaxBatch", "no model calls", null},
		{"SUT.ONNX.Workers", "no model calls", null},
		{"SUT.ONNX.Images", "no OCR images are generated", null},
		{"SUT.ONNX.ImageSize", "no OCR images are generated", null},
		{"SUT.ONNX.Seed", "no generated inputs", null},
		{"SUT.Reference.Dataset", "the null SUT loads no data set", null},
		{"SUT.Reference.Weights", "the null SUT has no model", kind(sut.OpenAI)},
		{"SUT.QSLSize", "the reference SUT uses its data set's size", kind(sut.Reference)},
		{"FindPeakResolution", "a performance run searches no peak (decided after the cascade)", null},
		{"KeepProbeRecords", "a performance run has no probes (decided after the cascade)", null},
		{"GBT.Input.Arrival.Lambda", "mode 0 has no Poisson rate", mode(gbt.ModeContinuous)},
		{"GBT.Input.Arrival.Period", "mode 2 has no fixed period", mode(gbt.ModePoisson)},
		{"GBT.Input.Arrival.N", "mode 2 has no jobs per period", mode(gbt.ModePoisson)},
		{"GBT.Input.Arrival.Bursts", "mode 2 has no bursts", mode(gbt.ModePoisson)},
		{"GBT.Input.Arrival.BurstLength", "mode 1 has no bursts", mode(gbt.ModeFixedPeriod)},
		{"GBT.Input.Arrival.BurstPeriod", "mode 0 has no bursts", mode(gbt.ModeContinuous)},
		{"GBT.Input.Arrival.BurstN", "mode 4 has no bursts", mode(gbt.ModeOffline)},
		{"GBT.Input.Arrival.BurstStarts", "mode 2 has no bursts", mode(gbt.ModePoisson)},
		{"GBT.Input.UnderlyingMode", "only a mixed test has an underlying mode", mode(gbt.ModePoisson)},
		{"GBT.Input.Mixed.Lambda", "only a mixed test has foreign jobs", mode(gbt.ModeFixedPeriod)},
		{"GBT.Input.Mixed.QSLSize", "only a mixed test has foreign jobs", mode(gbt.ModePoisson)},
		{"GBT.Input.Mixed.Seed", "only a mixed test has foreign jobs", mode(gbt.ModeContinuous)},
		{"GBT.Input.TimeoutClass", "Table 10 gives the offline mode no timeout (IN-51)", mode(gbt.ModeOffline)},
		{"GBT.Input.Timeout", "Table 10 gives the offline mode no timeout (IN-51): every job would be lost", mode(gbt.ModeOffline)},
		{"GBT.Input.SampleBytes", "only a peak test's elasticity and pressure tolerance use the data volume", mode(gbt.ModeContinuous)},
		{"GBT.Input.Arrival.Duration", "the offline mode's jobs all arrive at once", mode(gbt.ModeOffline)},
		{"GBT.Input.Arrival.Jobs", "a mode with a duration sends jobs for it", mode(gbt.ModePoisson)},
		{"Settings.MaxErrorRate", "a GB/T test counts failures as lost jobs", mode(gbt.ModePoisson)},
		{"Settings.Scenario", "the arrival mode chooses the scenario", mode(gbt.ModeOffline)},
		{"Settings.Mode", "the arrival mode chooses the mode", mode(gbt.ModeContinuous)},
		{"Settings.Concurrency", "the arrival modes set their own load", mode(gbt.ModePoisson)},
		{"Settings.Model", "explicit settings skip the cascade", explicit},
		{"Settings.Scenario", "explicit settings skip the cascade", explicit},
		{"Settings.Mode", "explicit settings skip the cascade", explicit},
		{"Settings.MLPerfConf", "explicit settings skip the cascade", explicit},
		{"Settings.UserConf", "explicit settings skip the cascade", explicit},
		{"Settings.AuditConfig", "explicit settings skip the cascade", explicit},
		{"Settings.Set", "explicit settings skip the cascade", explicit},
		{"Settings.Concurrency", "explicit settings skip the cascade", explicit},
		{"Settings.MaxErrorRate", "explicit settings skip the cascade", explicit},
		{"Warmup", "Offline issues everything at once: nothing to warm up at a rate", scenario("Offline")},
		{"SpinWindow", "Offline is issued at once, on no schedule", scenario("Offline")},
		{"SLO.TTFTNs", "the null SUT reports no first token", null},
		{"SLO.TPOTNs", "a KServe server over HTTP reports no tokens", func() Plan {
			return Plan{SUT: sut.Config{Kind: sut.KServe, KServe: &sut.KServeConfig{GRPC: true}}}
		}},
		{"PowerOptions", "no power source to sample", null},
		{"Sessions.MinTurns", "a ShareGPT file brings its turns", shareGPT},
		{"Sessions.MaxTurns", "a ShareGPT file brings its turns", shareGPT},
		{"Sessions.UserWords", "a ShareGPT file brings its messages", shareGPT},
		{"Sessions.AnswerTokens", "a ShareGPT file brings its answers", shareGPT},
		{"Sessions.Seed", "a ShareGPT file is not generated", shareGPT},
		{"Shard", "sessions' turns wait for each other's answers, which another shard would receive", shareGPT},
		{"Division", "the null SUT runs in process: no network between LoadGen and it", null},
	}
	tested := map[string]bool{} // the rules (field, where) whose refusal a row saw
	for _, row := range rows {
		p := row.base()
		setField(t, &p, row.field)
		dir := filepath.Join(t.TempDir(), "out")
		p.OutputDir = dir
		out, err := Run(context.Background(), p)
		var ue *UsageError
		switch {
		case out != nil || !errors.As(err, &ue):
			t.Errorf("%s (%s): got %v, %v; want a usage error", row.field, row.why, out, err)
		case ue.Field != row.field:
			t.Errorf("%s (%s): a usage error naming %q: %v", row.field, row.why, ue.Field, err)
		default:
			for _, r := range Rules() {
				if r.Field == row.field && !r.Always() && strings.Contains(err.Error(), "applies only to "+r.Where) {
					tested[r.Field+"\x00"+r.Where] = true
				}
			}
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s (%s): the output directory was made for a refused plan", row.field, row.why)
		}
	}
	for _, r := range Rules() {
		if !r.Always() && !tested[r.Field+"\x00"+r.Where] {
			t.Errorf("no row refuses %s where it does not apply (the rule: %s)", r.Field, r.Where)
		}
	}
}

// TestFieldsApplyWhereTheirRulesSay: the rules accept what the issue 39
// reproductions refuse, where it applies.
func TestFieldsApplyWhereTheirRulesSay(t *testing.T) {
	peak := &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePeak}, SampleBytes: 100, TimeoutClass: 2, Timeout: time.Second}}
	mixedOverPeak := &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModeMixed}, UnderlyingMode: gbt.ModePeak, SampleBytes: 100, Timeout: time.Second}}
	for _, c := range []struct {
		why  string
		plan Plan
	}{
		{"a peak test's data volume and timeout", Plan{GBT: peak}},
		{"a mixed test over the peak mode", Plan{GBT: mixedOverPeak}},
		{"a spin window on the Server scenario", Plan{SpinWindow: time.Millisecond, Settings: Settings{Scenario: "Server"}}},
		{"a spin window in a Poisson GB/T test (Server)", Plan{SpinWindow: time.Millisecond, GBT: &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson}}}}},
		{"a TTFT bound on a streaming OpenAI server", Plan{SUT: sut.Config{Kind: sut.OpenAI, Net: sut.Net{URLs: []string{"http://h:1"}}}, SLO: &bundle.SLO{TTFTNs: 1}}},
		{"an end-to-end bound on the null SUT", Plan{SLO: &bundle.SLO{E2ENs: 1}}},
	} {
		c.plan.OutputDir = "x"
		if err := c.plan.checkApplies(nil); err != nil {
			t.Errorf("%s: %v", c.why, err)
		}
	}
}

// TestClearInapplicable: the defaults a caller filled in where they do not
// apply are dropped; what its user gave stays, for Validate to refuse.
func TestClearInapplicable(t *testing.T) {
	p := Plan{OutputDir: "x", SpinWindow: time.Millisecond, FindPeakResolution: 0.01,
		GBT: &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModeOffline, Lambda: 5, Duration: time.Second}, SampleBytes: 3136, LossThreshold: 0.01}}}
	p.ClearInapplicable(func(field string) bool { return field == "GBT.Input.SampleBytes" })
	in := p.GBT.Input
	if p.SpinWindow != 0 || p.FindPeakResolution != 0 || in.Arrival.Lambda != 0 || in.Arrival.Duration != 0 {
		t.Errorf("defaults kept where they do not apply: %+v", p)
	}
	if in.SampleBytes != 3136 || in.LossThreshold != 0.01 {
		t.Errorf("a given field or one that applies was dropped: %+v", in)
	}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "GBT.Input.SampleBytes applies only to") {
		t.Errorf("Validate: %v, want the given sample bytes refused", err)
	}
}
