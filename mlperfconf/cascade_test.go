package mlperfconf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// testSelfTest is a self-test text like aimeter's CLI's.
const testSelfTest = `# self-test defaults
*.SingleStream.target_latency = 0.0001
*.SingleStream.min_duration = 50
*.Server.target_qps = 100000
*.Server.target_latency = 1
*.Server.min_duration = 10000
*.Offline.min_duration = 50
`

// writeConf writes text to a file named name in a new temporary directory
// and returns its path.
func writeConf(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func minDuration(s loadgen.Settings) any { return s.MinDurationMs }

// TestCascadeLayers checks, one layer at a time, that each layer wins over
// the one before it and is named as the source of the value it set.
func TestCascadeLayers(t *testing.T) {
	user := writeConf(t, "user.conf", "*.Server.min_duration = 1000\n")
	audit := writeConf(t, "audit.config", "*.Server.min_duration = 2000\n")
	mlperf := writeConf(t, "mlperf.conf", "*.Server.min_duration = 7000\n*.*.qsl_rng_seed = 5\n")
	impose := func(s *loadgen.Settings, src Sources) {
		s.MinDurationMs = 3000
		src.Impose("min_duration", "arrival mode 2 (duration 3 s)")
	}
	rows := []struct {
		reason    string
		opts      CascadeOptions
		name      string
		get       func(loadgen.Settings) any
		want      any
		wantLayer Layer
		wantText  string
	}{
		{"nothing sets performance_issue_unique: LoadGen's default stays and has no source",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server}, "performance_issue_unique",
			func(s loadgen.Settings) any { return s.PerformanceIssueUnique }, loadgen.DefaultSettings().PerformanceIssueUnique,
			LayerDefault, "LoadGen's defaults"},
		{"the built-in mlperf.conf wins over LoadGen's default",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server}, "min_duration", minDuration, uint64(600000),
			LayerMLPerfConf, "the built-in mlperf.conf (line 89: *.Server.min_duration = 600000)"},
		{"with SelfTest empty and no model the built-in mlperf.conf applies, as Load does",
			CascadeOptions{Scenario: loadgen.Server}, "min_duration", minDuration, uint64(600000),
			LayerMLPerfConf, "the built-in mlperf.conf (line 89: *.Server.min_duration = 600000)"},
		{"a given mlperf.conf replaces the built-in one and is named by its path",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, MLPerfConfPath: mlperf}, "min_duration", minDuration, uint64(7000),
			LayerMLPerfConf, mlperf + " (line 1: *.Server.min_duration = 7000)"},
		{"user.conf wins over mlperf.conf",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, UserConfPath: user}, "min_duration", minDuration, uint64(1000),
			LayerUserConf, "user.conf " + user + " (line 1: *.Server.min_duration = 1000)"},
		{"audit.config wins over user.conf",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, UserConfPath: user, AuditConfigPath: audit}, "min_duration", minDuration, uint64(2000),
			LayerAuditConfig, audit + " (line 1: *.Server.min_duration = 2000)"},
		{"a value BeforeSet imposes wins over audit.config",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, UserConfPath: user, AuditConfigPath: audit, BeforeSet: impose}, "min_duration", minDuration, uint64(3000),
			LayerImposed, "arrival mode 2 (duration 3 s)"},
		{"--set wins over everything before it, an imposed value included",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, UserConfPath: user, AuditConfigPath: audit, BeforeSet: impose, Set: []string{"min_duration=4000"}}, "min_duration", minDuration, uint64(4000),
			LayerSet, "--set min_duration=4000"},
		{"the last --set of a name wins",
			CascadeOptions{Scenario: loadgen.Server, Set: []string{"min_duration=4000", " min_duration = 5000 "}}, "min_duration", minDuration, uint64(5000),
			LayerSet, "--set min_duration=5000"},
		{"--set may set a seed, which only mlperf.conf may",
			CascadeOptions{Scenario: loadgen.Offline, Set: []string{"qsl_rng_seed=42"}}, "qsl_rng_seed",
			func(s loadgen.Settings) any { return s.QSLRNGSeed }, uint64(42), LayerSet, "--set qsl_rng_seed=42"},
		{"a given mlperf.conf may set a seed",
			CascadeOptions{Scenario: loadgen.Offline, MLPerfConfPath: mlperf}, "qsl_rng_seed",
			func(s loadgen.Settings) any { return s.QSLRNGSeed }, uint64(5), LayerMLPerfConf, mlperf + " (line 2: *.*.qsl_rng_seed = 5)"},
		{"the self-test defaults replace mlperf.conf when no model and no file is given",
			CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest}, "min_duration", minDuration, uint64(10000),
			LayerSelfTest, SelfTestSource},
		{"the self-test defaults set only their scenario's keys",
			CascadeOptions{Scenario: loadgen.MultiStream, SelfTest: testSelfTest}, "min_duration", minDuration, loadgen.DefaultSettings().MinDurationMs,
			LayerDefault, "LoadGen's defaults"},
		{"a model turns the self-test defaults off",
			CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, SelfTest: testSelfTest}, "min_duration", minDuration, uint64(600000),
			LayerMLPerfConf, "the built-in mlperf.conf (line 89: *.Server.min_duration = 600000)"},
		{"a user.conf turns the self-test defaults off",
			CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest, UserConfPath: user}, "target_qps",
			func(s loadgen.Settings) any { return s.ServerTargetQPS }, 1.0, LayerMLPerfConf, "the built-in mlperf.conf (line 199: *.Server.target_qps = 1.0)"},
		{"audit.config wins over the self-test defaults",
			CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest, AuditConfigPath: audit}, "min_duration", minDuration, uint64(2000),
			LayerAuditConfig, audit + " (line 1: *.Server.min_duration = 2000)"},
		{"a self-test run takes --set",
			CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest, Set: []string{"target_qps=12.5"}}, "target_qps",
			func(s loadgen.Settings) any { return s.ServerTargetQPS }, 12.5, LayerSet, "--set target_qps=12.5"},
		{"ttft_latency takes effect when BeforeSet turned token latencies on",
			CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest, Set: []string{"ttft_latency=100"},
				BeforeSet: func(s *loadgen.Settings, src Sources) {
					s.UseTokenLatencies = true
					src.Impose("use_token_latencies", "--sut openai --stream")
				}}, "ttft_latency",
			func(s loadgen.Settings) any { return s.ServerTTFTLatencyNs }, uint64(100_000_000), LayerSet, "--set ttft_latency=100"},
	}
	for _, r := range rows {
		c, err := Cascade(r.opts)
		if err != nil {
			t.Errorf("%s: %v", r.reason, err)
			continue
		}
		if got := r.get(c.Settings); got != r.want {
			t.Errorf("%s: %s = %v, want %v", r.reason, r.name, got, r.want)
		}
		if got := c.Sources.From(r.name); got != r.wantLayer || !c.Sources.Is(r.name, r.wantLayer) {
			t.Errorf("%s: %s from %v, want %v", r.reason, r.name, got, r.wantLayer)
		}
		if got := c.Sources.Describe(r.name); got != r.wantText {
			t.Errorf("%s: %s described as %q, want %q", r.reason, r.name, got, r.wantText)
		}
		if src, ok := c.Sources[r.name]; ok && src.Name != r.name {
			t.Errorf("%s: source of %s names %q", r.reason, r.name, src.Name)
		}
		if err := c.Settings.Validate(); err != nil {
			t.Errorf("%s: invalid settings: %v", r.reason, err)
		}
	}
}

// TestCascadeSetErrors checks each refusal of an override: a typed error
// for the field Set with the CLI's text.
func TestCascadeSetErrors(t *testing.T) {
	rows := []struct {
		reason   string
		scenario loadgen.Scenario
		set      []string
		want     string // the whole text, or its start when it ends in "…"
		wantName string
		wantLine bool // the error wraps a *Error naming the key
	}{
		{"an item without '=' is not NAME=VALUE", loadgen.Server, []string{"min_duration"},
			`--set "min_duration": want NAME=VALUE with a config key name such as min_duration or target_qps`, "", false},
		{"an empty name is refused", loadgen.Server, []string{"=5"},
			`--set "=5": want NAME=VALUE with a config key name such as min_duration or target_qps`, "", false},
		{"an empty value is refused", loadgen.Server, []string{"min_duration= "},
			`--set "min_duration= ": want NAME=VALUE with a config key name such as min_duration or target_qps`, "", false},
		{"a name with a dot would be a whole key: refused", loadgen.Server, []string{"*.Server.min_duration=5"},
			`--set "*.Server.min_duration=5": want NAME=VALUE with a config key name such as min_duration or target_qps`, "", false},
		{"a name with a blank is refused", loadgen.Server, []string{"min duration=5"},
			`--set "min duration=5": want NAME=VALUE with a config key name such as min_duration or target_qps`, "", false},
		{"a later bad item is refused too", loadgen.Server, []string{"min_duration=5", "x"},
			`--set "x": want NAME=VALUE with a config key name such as min_duration or target_qps`, "", false},
		{"two values would be read as the last one: refused", loadgen.Server, []string{"min_duration=1 2"},
			`--set min_duration: the value "1 2" is not one number`, "min_duration", false},
		{"a '#' value would be a comment that sets nothing: refused", loadgen.Server, []string{"min_duration=#"},
			`--set min_duration: the value "#" is not one number`, "min_duration", false},
		{"a value that is no number is a parse error naming the item", loadgen.Server, []string{"min_duration=abc"},
			`--set:1: key "*.Server.min_duration": value "abc" needs to be an integer or a double`, "", true},
		{"the line of the error is the item's position", loadgen.Server, []string{"min_duration=5", "target_qps=fast"},
			`--set:2: key "*.Server.target_qps": value "fast" needs to be an integer or a double`, "", true},
		{"a negative integer is refused strictly", loadgen.Server, []string{"min_duration=-1"},
			`--set:1: key "*.Server.min_duration": min_duration = -1 is negative…`, "", true},
		{"a fraction for an integer setting is refused strictly", loadgen.Server, []string{"min_query_count=1.5"},
			`--set:1: key "*.Server.min_query_count": min_query_count = 1.5 is not a whole number…`, "", true},
		{"an invalid mode is Apply's error", loadgen.Server, []string{"mode=7"},
			`--set:1: key "*.Server.mode": invalid mode 7…`, "", true},
		{"a name LoadGen does not read is refused", loadgen.Server, []string{"min_durations=5"},
			`--set: *.Server.min_durations is not a setting LoadGen reads for Server`, "", false},
		{"a setting of another scenario is refused", loadgen.SingleStream, []string{"target_qps=5"},
			`--set: *.SingleStream.target_qps is not a setting LoadGen reads for SingleStream`, "", false},
		{"ttft_latency without token latencies would be ignored: refused", loadgen.Server, []string{"ttft_latency=100"},
			`--set ttft_latency: LoadGen reads it only with token latencies on; add --set use_token_latencies=1 (--sut openai turns them on when it streams)`, "ttft_latency", false},
		{"tpot_latency with token latencies turned off by --set is refused", loadgen.Server, []string{"use_token_latencies=0", "tpot_latency=10"},
			`--set tpot_latency: LoadGen reads it only with token latencies on…`, "tpot_latency", false},
	}
	for _, r := range rows {
		_, err := Cascade(CascadeOptions{Scenario: r.scenario, SelfTest: testSelfTest, Set: r.set})
		var se *SettingError
		if !errors.As(err, &se) {
			t.Errorf("%s: want a *SettingError, got %T %v", r.reason, err, err)
			continue
		}
		if se.Field != "Set" || se.Name != r.wantName {
			t.Errorf("%s: Field %q Name %q", r.reason, se.Field, se.Name)
		}
		got := err.Error()
		if prefix, ok := strings.CutSuffix(r.want, "…"); ok {
			if !strings.HasPrefix(got, prefix) {
				t.Errorf("%s:\n got %s\nwant %s", r.reason, got, r.want)
			}
		} else if got != r.want {
			t.Errorf("%s:\n got %s\nwant %s", r.reason, got, r.want)
		}
		var fe *Error
		if errors.As(err, &fe) != r.wantLine {
			t.Errorf("%s: wraps a *Error: %v, want %v", r.reason, !r.wantLine, r.wantLine)
		}
	}
	// Accepted: the same settings with token latencies on.
	c, err := Cascade(CascadeOptions{Scenario: loadgen.Server, Set: []string{"use_token_latencies=1", "ttft_latency=100", "tpot_latency=10"}})
	if err != nil || c.Settings.ServerTPOTLatencyNs != 10_000_000 || !c.Sources.Is("use_token_latencies", LayerSet) {
		t.Errorf("ttft/tpot with use_token_latencies=1: %v, %+v", err, c.Settings)
	}
}

// TestCascadeAuditConfig checks that audit.config is read the same way
// whether the self-test defaults or mlperf.conf and user.conf came before.
func TestCascadeAuditConfig(t *testing.T) {
	const modelLine = `model-specific audit.config lines are ignored`
	rows := []struct {
		reason    string
		audit     string // "" = no file
		wantMinQ  uint64
		wantAudit bool // AuditConfigWarning given
		wantModel bool // the model-specific line warned about
	}{
		{"a generic line for the scenario applies", "*.SingleStream.min_query_count = 1234\n", 1234, true, false},
		{"a line for another scenario does not apply, but the file is found", "*.Server.min_query_count = 1234\n", 0, true, false},
		{"a model-specific line is ignored with a warning (LoadGen reads model \"*\")", "resnet50.SingleStream.min_query_count = 1234\n", 0, true, true},
		{"a missing file is skipped silently, like LoadGen", "", 0, false, false},
	}
	branches := []struct {
		name  string
		opts  CascadeOptions
		layer Layer // where min_query_count comes from without audit.config
	}{
		{"self-test", CascadeOptions{Scenario: loadgen.SingleStream, SelfTest: testSelfTest}, LayerDefault},
		{"model", CascadeOptions{Model: "resnet50", Scenario: loadgen.SingleStream, SelfTest: testSelfTest}, LayerDefault},
	}
	for _, b := range branches {
		base, err := Cascade(b.opts)
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		for _, r := range rows {
			opts := b.opts
			opts.AuditConfigPath = filepath.Join(t.TempDir(), "audit.config")
			if r.audit != "" {
				opts.AuditConfigPath = writeConf(t, "audit.config", r.audit)
			}
			c, err := Cascade(opts)
			if err != nil {
				t.Errorf("%s branch, %s: %v", b.name, r.reason, err)
				continue
			}
			want, wantLayer := base.Settings.MinQueryCount, b.layer
			if r.wantMinQ != 0 {
				want, wantLayer = r.wantMinQ, LayerAuditConfig
			}
			if c.Settings.MinQueryCount != want || c.Sources.From("min_query_count") != wantLayer {
				t.Errorf("%s branch, %s: min_query_count %d from %v, want %d from %v", b.name, r.reason,
					c.Settings.MinQueryCount, c.Sources.From("min_query_count"), want, wantLayer)
			}
			if got := slices.Contains(c.Warnings, AuditConfigWarning); got != r.wantAudit {
				t.Errorf("%s branch, %s: AuditConfigWarning %v: %q", b.name, r.reason, got, c.Warnings)
			}
			got := slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, modelLine) })
			if got != r.wantModel {
				t.Errorf("%s branch, %s: model-line warning %v: %q", b.name, r.reason, got, c.Warnings)
			}
		}
	}
}

// TestCascadeResult checks the other parts of Cascaded.
func TestCascadeResult(t *testing.T) {
	user := writeConf(t, "user.conf", "*.Server.target_qps = 250\n*.Server.min_duration = 1000\n*.*.min_query_count = 100\n")
	audit := writeConf(t, "audit.config", "*.Server.min_query_count = 7\n")

	c, err := Cascade(CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, UserConfPath: user, AuditConfigPath: audit,
		Set: []string{"target_qps=10"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.UserConf {
		names = append(names, s.Name)
		if s.Layer != LayerUserConf || s.File != user || s.Line == 0 || s.Value == "" {
			t.Errorf("user.conf setting %+v lacks its file, line or value", s)
		}
	}
	// min_query_count is audit.config's now; --set target_qps does not
	// remove the user.conf line (a caller compares them).
	if want := []string{"min_duration", "target_qps"}; !slices.Equal(names, want) {
		t.Errorf("UserConf names %q, want %q (sorted, without what audit.config overrode)", names, want)
	}
	if !c.ModelKnown || c.SelfTest {
		t.Errorf("ModelKnown %v SelfTest %v, want true false", c.ModelKnown, c.SelfTest)
	}

	c, err = Cascade(CascadeOptions{Model: "resnet-50", Scenario: loadgen.Server, SelfTest: testSelfTest})
	if err != nil {
		t.Fatalf("an unknown model is no error: %v", err)
	}
	if c.ModelKnown || c.SelfTest || !c.Sources.Is("min_duration", LayerMLPerfConf) {
		t.Errorf("unknown model: ModelKnown %v SelfTest %v, min_duration from %v; want false, false, the generic mlperf.conf line",
			c.ModelKnown, c.SelfTest, c.Sources.From("min_duration"))
	}

	c, err = Cascade(CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest, Mode: loadgen.AccuracyOnly, ModeSet: true})
	if err != nil || !c.ModelKnown || !c.SelfTest || c.UserConf != nil || c.Settings.Mode != loadgen.AccuracyOnly {
		t.Errorf("self-test run: %v, ModelKnown %v SelfTest %v UserConf %v mode %v", err, c.ModelKnown, c.SelfTest, c.UserConf, c.Settings.Mode)
	}

	// An imposed value, as aimeter's --sut openai records it in place of
	// a self-test default, after Cascade.
	if c.Sources.Is("min_duration", LayerSelfTest) {
		c.Settings.MinDurationMs = 10_000
		c.Sources.Impose("min_duration", "aimeter's defaults for --sut openai (no --model and no config file given)")
	}
	src := c.Sources["min_duration"]
	if src.Layer != LayerImposed || src.Name != "min_duration" || src.By == "" || src.Line != 0 ||
		src.String() != "aimeter's defaults for --sut openai (no --model and no config file given)" {
		t.Errorf("imposed source %+v, %q", src, src)
	}
}

// TestCascadeFileErrors checks that a bad input names its field.
func TestCascadeFileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.conf")
	bad := writeConf(t, "bad.conf", "*.Server.min_duration = soon\n")
	badMode := writeConf(t, "mode.conf", "*.*.mode = 9\n")
	called := false
	before := func(*loadgen.Settings, Sources) { called = true }
	rows := []struct {
		reason    string
		opts      CascadeOptions
		field     string
		value     string
		notExist  bool
		wantEntry bool
	}{
		{"a missing user.conf", CascadeOptions{UserConfPath: missing}, "UserConfPath", missing, true, false},
		{"a missing mlperf.conf", CascadeOptions{MLPerfConfPath: missing}, "MLPerfConfPath", missing, true, false},
		{"a user.conf that does not parse", CascadeOptions{Scenario: loadgen.Server, UserConfPath: bad}, "UserConfPath", bad, false, true},
		{"an audit.config that does not parse, in the self-test branch", CascadeOptions{Scenario: loadgen.Server, SelfTest: testSelfTest, AuditConfigPath: bad}, "AuditConfigPath", bad, false, true},
		{"an audit.config that does not parse, in the model branch", CascadeOptions{Model: "resnet50", Scenario: loadgen.Server, AuditConfigPath: bad}, "AuditConfigPath", bad, false, true},
		{"an audit.config with an invalid mode", CascadeOptions{Scenario: loadgen.Server, AuditConfigPath: badMode}, "AuditConfigPath", badMode, false, true},
		{"a self-test text that does not parse", CascadeOptions{Scenario: loadgen.Server, SelfTest: "*.Server.min_duration = soon\n"}, "SelfTest", "", false, true},
		{"an unknown scenario", CascadeOptions{Scenario: loadgen.Scenario(9)}, "Scenario", "", false, false},
		{"an unknown mode", CascadeOptions{Mode: loadgen.Mode(9), ModeSet: true}, "Mode", loadgen.Mode(9).String(), false, false},
	}
	for _, r := range rows {
		called = false
		r.opts.BeforeSet = before
		c, err := Cascade(r.opts)
		var se *SettingError
		if !errors.As(err, &se) {
			t.Errorf("%s: want a *SettingError, got %T %v", r.reason, err, err)
			continue
		}
		if se.Field != r.field || se.Value != r.value {
			t.Errorf("%s: Field %q Value %q, want %q %q", r.reason, se.Field, se.Value, r.field, r.value)
		}
		if errors.Is(err, fs.ErrNotExist) != r.notExist {
			t.Errorf("%s: not-exist %v: %v", r.reason, !r.notExist, err)
		}
		var fe *Error
		if errors.As(err, &fe) != r.wantEntry {
			t.Errorf("%s: wraps a *Error %v: %v", r.reason, !r.wantEntry, err)
		}
		if r.value != "" && r.field != "Mode" && !strings.Contains(err.Error(), r.value) {
			t.Errorf("%s: the error does not name the file: %v", r.reason, err)
		}
		if called {
			t.Errorf("%s: BeforeSet was called after a failed input", r.reason)
		}
		if c.Sources == nil {
			t.Errorf("%s: Sources is nil", r.reason)
		}
	}
}

// TestLayerAndSourceString checks the words of each layer and source.
func TestLayerAndSourceString(t *testing.T) {
	e := Entry{Key: "*.Server.min_duration", Value: "600000", Line: 89}
	rows := []struct {
		reason string
		got    string
		want   string
	}{
		{"LayerDefault", LayerDefault.String(), "LoadGen's defaults"},
		{"LayerSelfTest", LayerSelfTest.String(), "self-test defaults"},
		{"LayerMLPerfConf", LayerMLPerfConf.String(), "mlperf.conf"},
		{"LayerUserConf", LayerUserConf.String(), "user.conf"},
		{"LayerAuditConfig", LayerAuditConfig.String(), "audit.config"},
		{"LayerSet", LayerSet.String(), "--set"},
		{"LayerImposed", LayerImposed.String(), "imposed"},
		{"an unknown layer", Layer(42).String(), "Layer(42)"},
		{"the zero Source is LoadGen's default", Source{}.String(), "LoadGen's defaults"},
		{"the self-test text is the CLI's", Source{Layer: LayerSelfTest, Name: "min_duration", Entry: e}.String(), "aimeter's self-test defaults (no --model and no config file given)"},
		{"the built-in mlperf.conf with its line", Source{Layer: LayerMLPerfConf, Name: "min_duration", File: "mlperf.conf", Builtin: true, Entry: e}.String(), "the built-in mlperf.conf (line 89: *.Server.min_duration = 600000)"},
		{"a given mlperf.conf by its path", Source{Layer: LayerMLPerfConf, Name: "min_duration", File: "/x/mlperf.conf", Entry: e}.String(), "/x/mlperf.conf (line 89: *.Server.min_duration = 600000)"},
		{"a user.conf says so before its path", Source{Layer: LayerUserConf, Name: "min_duration", File: "u.conf", Kind: UserConf, Entry: e}.String(), "user.conf u.conf (line 89: *.Server.min_duration = 600000)"},
		{"an audit.config by its path", Source{Layer: LayerAuditConfig, Name: "min_duration", File: "/w/audit.config", Kind: AuditConf, Entry: e}.String(), "/w/audit.config (line 89: *.Server.min_duration = 600000)"},
		{"--set as typed", Source{Layer: LayerSet, Name: "min_duration", File: "--set", Entry: Entry{Value: "1000"}}.String(), "--set min_duration=1000"},
		{"an imposed value by its reason", Source{Layer: LayerImposed, Name: "use_token_latencies", By: "--sut openai --stream"}.String(), "--sut openai --stream"},
		{"an imposed value without a reason", Source{Layer: LayerImposed}.String(), "imposed"},
		{"an absent name in Sources", Sources(nil).Describe("x"), "LoadGen's defaults"},
	}
	for _, r := range rows {
		if r.got != r.want {
			t.Errorf("%s: %q, want %q", r.reason, r.got, r.want)
		}
	}
}
