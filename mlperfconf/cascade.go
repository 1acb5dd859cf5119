package mlperfconf

// This file owns the settings cascade of a run: LoadGen's defaults, then
// either aimeter's self-test defaults or mlperf.conf and user.conf, then
// audit.config, then a caller's hook, then the explicit overrides (aimeter's
// --set), with a typed record of where each setting came from.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"aimeter/loadgen"
)

// Layer is one step of the settings cascade, in the order Cascade applies
// them; a later layer wins over an earlier one. The zero value is
// LayerDefault.
type Layer int

// The layers of the cascade, earliest first.
const (
	// LayerDefault is LoadGen's default (loadgen.DefaultSettings with the
	// scenario and mode): nothing else set the value.
	LayerDefault Layer = iota
	// LayerSelfTest is aimeter's self-test defaults
	// (CascadeOptions.SelfTest), used in place of mlperf.conf and user.conf
	// when no model and no config file is given.
	LayerSelfTest
	// LayerMLPerfConf is mlperf.conf: the one built into aimeter or the file
	// given in its place.
	LayerMLPerfConf
	// LayerUserConf is a user.conf.
	LayerUserConf
	// LayerAuditConfig is an audit.config.
	LayerAuditConfig
	// LayerSet is an explicit override (CascadeOptions.Set, aimeter's --set).
	LayerSet
	// LayerImposed is a value a mode, an arrival mode or a SUT imposes, with
	// the reason in Source.By (see Sources.Impose). Cascade itself imposes
	// nothing; callers record it from CascadeOptions.BeforeSet or after
	// Cascade.
	LayerImposed
)

// String returns "LoadGen's defaults", "self-test defaults", "mlperf.conf",
// "user.conf", "audit.config", "--set" or "imposed".
func (l Layer) String() string {
	switch l {
	case LayerDefault:
		return "LoadGen's defaults"
	case LayerSelfTest:
		return "self-test defaults"
	case LayerMLPerfConf:
		return "mlperf.conf"
	case LayerUserConf:
		return "user.conf"
	case LayerAuditConfig:
		return "audit.config"
	case LayerSet:
		return "--set"
	case LayerImposed:
		return "imposed"
	}
	return fmt.Sprintf("Layer(%d)", int(l))
}

// SelfTestSource is what Source.String says of a value from aimeter's
// self-test defaults.
const SelfTestSource = "aimeter's self-test defaults (no --model and no config file given)"

// selfTestName names the self-test text in warnings and errors.
const selfTestName = "self-test defaults"

// setName names the overrides of CascadeOptions.Set in warnings and errors,
// as aimeter's CLI spells the flag that fills it.
const setName = "--set"

// Source says where the value of one setting came from. The zero value is
// LayerDefault: LoadGen's default.
type Source struct {
	// Layer is the step of the cascade that set the value last.
	Layer Layer
	// Name is the setting name as config files write it ("min_duration");
	// "" in the zero value.
	Name string
	// File is the config file's name (Config.Name) for LayerMLPerfConf,
	// LayerUserConf and LayerAuditConfig: its path as given, or
	// "mlperf.conf" for the one built into aimeter (then Builtin is true).
	// It is "--set" for LayerSet and "" for the other layers.
	File string
	// Kind is the kind of file the line was read as: BuiltinConf for
	// mlperf.conf and for LayerSet (an override may set what only
	// mlperf.conf may), UserConf for user.conf and the self-test defaults,
	// AuditConf for audit.config. It is BuiltinConf (0) for LayerDefault and
	// LayerImposed, where it means nothing.
	Kind Kind
	// Builtin says the line is in the mlperf.conf built into aimeter; false
	// for every other source.
	Builtin bool
	// Entry is the line that set the value: Key as written
	// ("*.Server.min_duration"; for LayerSet "*.SCENARIO.NAME"), Value as
	// written, Line (1-based; for LayerSet the position of the override
	// in CascadeOptions.Set) and LoadGen's readings. It is the zero Entry
	// for LayerDefault and LayerImposed.
	Entry
	// By is, for LayerImposed, what imposed the value and why, in words
	// ("--sut openai --stream"); "" for the other layers.
	By string
}

// String describes the source in the words aimeter prints:
//
//   - LayerDefault: "LoadGen's defaults"
//   - LayerSelfTest: SelfTestSource
//   - LayerMLPerfConf: "the built-in mlperf.conf (line 89: *.Server.min_duration = 600000)"
//     or "PATH (line N: key = value)" for a file given in its place
//   - LayerUserConf: "user.conf PATH (line N: key = value)"
//   - LayerAuditConfig: "PATH (line N: key = value)"
//   - LayerSet: "--set min_duration=1000"
//   - LayerImposed: By (or "imposed" when By is "")
func (s Source) String() string {
	line := func(file string) string {
		return fmt.Sprintf("%s (line %d: %s = %s)", file, s.Line, s.Key, s.Value)
	}
	switch s.Layer {
	case LayerDefault:
		return "LoadGen's defaults"
	case LayerSelfTest:
		return SelfTestSource
	case LayerMLPerfConf:
		if s.Builtin {
			return line("the built-in mlperf.conf")
		}
		return line(s.File)
	case LayerUserConf:
		return line("user.conf " + s.File)
	case LayerAuditConfig:
		return line(s.File)
	case LayerSet:
		return setName + " " + s.Name + "=" + s.Value
	case LayerImposed:
		if s.By == "" {
			return "imposed"
		}
		return s.By
	}
	return fmt.Sprintf("%v %s", s.Layer, s.Name)
}

// Sources maps a setting name as config files write it ("min_duration",
// "target_qps") to where its value came from. A setting that nothing set
// (LoadGen's default) is absent. The zero value is a nil map: reading it
// works, Impose panics.
type Sources map[string]Source

// From returns the layer that set name last: LayerDefault when absent.
func (s Sources) From(name string) Layer { return s[name].Layer }

// Is reports whether layer set name last; Is(name, LayerDefault) is true
// exactly when nothing set it.
func (s Sources) Is(name string, layer Layer) bool { return s.From(name) == layer }

// Describe returns Source.String of name, "LoadGen's defaults" when absent.
func (s Sources) Describe(name string) string {
	src, ok := s[name]
	if !ok {
		return LayerDefault.String()
	}
	return src.String()
}

// Impose records that by (a mode, an arrival mode or a SUT, with its
// reason, e.g. "--sut openai --stream") set name, replacing what was
// recorded. The caller sets the value on the settings itself.
func (s Sources) Impose(name, by string) {
	s[name] = Source{Layer: LayerImposed, Name: name, By: by}
}

// Loaded is what Load returns: the settings, the warnings of every file
// read, and where each setting that a file set came from.
type Loaded struct {
	// Settings are the settings built, as LoadSettings returns them.
	Settings loadgen.Settings
	// Warnings are the warnings of every file read (see LoadSettings), each
	// naming its file as given (an absolute path stays absolute: these are
	// for aimeter's own output). Of them only AuditConfigWarning is a
	// warning LoadGen logs; package mlperflog writes the others into the
	// LoadGen files as notes, not warnings, under the file's base name.
	Warnings []string
	// Sources maps a setting name as the config files write it
	// ("min_duration", "target_qps") to the file line that set it last.
	// Settings that no file set (LoadGen's defaults) are absent.
	Sources Sources
	// ModelKnown says some file read has a line for Model specifically
	// (a key "Model.scenario.name"); when false, only the generic "*" lines
	// applied. Always true when Model is "" or "*".
	ModelKnown bool
}

// Load is LoadSettings that also tells where each setting came from and
// whether the model key is known to any of the files read.
func Load(opts LoadOptions) (Loaded, error) {
	l, _, err := loadFiles(opts, nil)
	return l, err
}

// loadFiles runs the file layers of the cascade: LoadGen's defaults, then
// selfTest if not nil (in place of mlperf.conf and user.conf, which opts
// must then not name), otherwise mlperf.conf and user.conf, then
// audit.config. On error it also returns the LoadOptions/CascadeOptions
// field whose input failed ("Scenario", "SelfTest", "MLPerfConfPath",
// "UserConfPath", "AuditConfigPath").
func loadFiles(opts LoadOptions, selfTest *Config) (Loaded, string, error) {
	l := Loaded{Sources: Sources{}, ModelKnown: opts.Model == "" || opts.Model == "*"}
	s := &l.Settings
	*s = loadgen.DefaultSettings()
	s.Scenario = opts.Scenario
	if opts.ModeSet {
		s.Mode = opts.Mode
	}
	if opts.Scenario < loadgen.SingleStream || opts.Scenario > loadgen.Offline {
		return l, "Scenario", fmt.Errorf("unknown scenario %v", opts.Scenario)
	}
	warn := func(w string) { l.Warnings = append(l.Warnings, w) }

	applyFile := func(c *Config, kind Kind, layer Layer, builtin bool) error {
		l.Warnings = append(l.Warnings, c.Warnings...)
		before := s.Mode
		model := opts.Model
		if model == "" || kind == AuditConf {
			model = "*"
		}
		if !l.ModelKnown && kind != AuditConf {
			l.ModelKnown = slices.Contains(c.Models(), opts.Model)
		}
		file := c.Name
		if layer == LayerSelfTest {
			file = ""
		}
		seen := func(k settingKey) {
			if k.builtin && kind != BuiltinConf {
				return
			}
			sc := opts.Scenario.String()
			if k.scenario != "" && k.scenario != sc {
				return
			}
			if e, ok := c.Lookup(model, sc, k.name); ok {
				l.Sources[k.name] = Source{Layer: layer, Name: k.name, File: file, Kind: kind, Builtin: builtin, Entry: e}
			}
		}
		if err := c.apply(s, opts.Model, opts.Scenario, kind, warn, seen); err != nil {
			return err
		}
		if opts.ModeSet && s.Mode != before {
			e, _ := c.Lookup(model, opts.Scenario.String(), "mode")
			warn(fmt.Sprintf("%s:%d: key %q: mode %v chosen explicitly is overridden by %v, as LoadGen does",
				c.Name, e.Line, e.Key, before, s.Mode))
		}
		return nil
	}

	if selfTest != nil {
		if err := applyFile(selfTest, UserConf, LayerSelfTest, false); err != nil {
			return l, "SelfTest", err
		}
	} else {
		mlperf := Builtin()
		if opts.MLPerfConfPath != "" {
			data, err := os.ReadFile(opts.MLPerfConfPath)
			if err != nil {
				return l, "MLPerfConfPath", err
			}
			if mlperf, err = Parse(bytes.NewReader(data), opts.MLPerfConfPath); err != nil {
				return l, "MLPerfConfPath", err
			}
			if !bytes.Equal(data, builtinConfText) {
				warn(fmt.Sprintf("%s: replaces the built-in mlperf.conf; results are valid for a submission only if its settings equal the official ones", opts.MLPerfConfPath))
			}
		}
		if err := applyFile(mlperf, BuiltinConf, LayerMLPerfConf, opts.MLPerfConfPath == ""); err != nil {
			return l, "MLPerfConfPath", err
		}

		if opts.UserConfPath != "" {
			user, err := ParseFile(opts.UserConfPath)
			if err != nil {
				return l, "UserConfPath", err
			}
			if err := applyFile(user, UserConf, LayerUserConf, false); err != nil {
				return l, "UserConfPath", err
			}
		}
	}

	if opts.AuditConfigPath != "" {
		if _, err := os.Stat(opts.AuditConfigPath); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return l, "", nil
			}
			return l, "AuditConfigPath", err
		}
		audit, err := ParseFile(opts.AuditConfigPath)
		if err != nil {
			return l, "AuditConfigPath", err
		}
		warn(AuditConfigWarning)
		for _, e := range audit.Entries() {
			if m, _, _, ok := splitKey(e.Key); ok && m != "*" {
				warn(fmt.Sprintf("%s:%d: key %q: model-specific audit.config lines are ignored (LoadGen applies audit.config with model \"*\")",
					audit.Name, e.Line, e.Key))
			}
		}
		if err := applyFile(audit, AuditConf, LayerAuditConfig, false); err != nil {
			return l, "AuditConfigPath", err
		}
	}
	return l, "", nil
}

// CascadeOptions says which layers Cascade applies and for what test. The
// zero value is a PerformanceOnly SingleStream test with the generic ("*")
// lines of the built-in mlperf.conf, no audit.config and no override.
type CascadeOptions struct {
	// Model is the model key of the config files ("resnet50"); "" means
	// "*" (only generic lines apply).
	Model string
	// Scenario is the scenario to configure; the zero value is
	// SingleStream.
	Scenario loadgen.Scenario
	// Mode is the test mode when ModeSet is true; otherwise (the zero
	// value) the LoadGen default, PerformanceOnly, is the starting point.
	Mode loadgen.Mode
	// ModeSet says Mode was chosen explicitly; false by default. As in
	// LoadGen, a `mode` key in a config file still overrides it, with a
	// warning.
	ModeSet bool
	// MLPerfConfPath, if not empty, replaces the built-in mlperf.conf,
	// read as a BuiltinConf (seeds included); "" (the default) uses the
	// built-in one.
	MLPerfConfPath string
	// UserConfPath, if not empty, is a user.conf applied after
	// mlperf.conf; "" (the default) means none.
	UserConfPath string
	// AuditConfigPath, if not empty, is an audit.config, applied after
	// every other file whichever the branch (self-test defaults or
	// mlperf.conf and user.conf), exactly as Load does: a missing file is
	// skipped silently, like LoadGen; a file present adds
	// AuditConfigWarning (the warning LoadGen logs) and a warning for each
	// model-specific line, which is ignored because LoadGen applies
	// audit.config with the model "*". A relative path is relative to the
	// process's working directory (aimeter's CLI resolves it against its
	// own). "" (the default) reads none.
	AuditConfigPath string
	// SelfTest is a config text (the syntax of a user.conf, read as one)
	// applied in place of mlperf.conf and user.conf when Model,
	// MLPerfConfPath and UserConfPath are all empty: aimeter's defaults for
	// a benchmark of itself. Its values come from LayerSelfTest. "" (the
	// default) means no self-test layer: the built-in mlperf.conf applies,
	// as LoadGen's harnesses and Load do.
	SelfTest string
	// BeforeSet, if not nil, is called after the config files and before
	// Set, with the settings and sources built so far, for values that a
	// mode or SUT imposes but that an explicit override may still change
	// (record them with Sources.Impose). aimeter's --sut openai turns token
	// latencies on here, so that --set ttft_latency and tpot_latency, which
	// LoadGen reads only while token latencies are on, take effect. It is
	// not called when a config file fails. nil (the default) does nothing.
	BeforeSet func(*loadgen.Settings, Sources)
	// Set are explicit overrides, "NAME=VALUE" each (aimeter's --set),
	// applied last, in order (a later one for the same NAME wins), to
	// Scenario as the line "*.SCENARIO.NAME = VALUE" of a file read like
	// mlperf.conf, so that they may also set the seeds and
	// accuracy_log_probability. Unlike a config file they are read
	// strictly (Config.CheckStrict). Cascade refuses, with a
	// *SettingError whose Field is "Set": an item without "=", with an
	// empty NAME or VALUE, or with a NAME containing a dot or a blank; a
	// VALUE that is not one number; a value CheckStrict refuses; a NAME
	// that LoadGen does not read for Scenario; ttft_latency or
	// tpot_latency while use_token_latencies is off. nil (the default)
	// overrides nothing.
	Set []string
}

// Cascaded is what Cascade returns.
type Cascaded struct {
	// Settings are the settings built. Cascade does not call Validate. On
	// an error found before any layer (an unknown Mode, a SelfTest that
	// does not parse) they are the zero Settings.
	Settings loadgen.Settings
	// Warnings are the warnings of every file read (see Loaded.Warnings).
	// Of them only AuditConfigWarning is one LoadGen logs. nil when there
	// are none.
	Warnings []string
	// Sources says where each setting came from; a setting at LoadGen's
	// default is absent. Never nil.
	Sources Sources
	// UserConf are the settings whose value a user.conf gave, as they stood
	// after the config files (a user.conf line that audit.config overrides
	// is left out; Set and BeforeSet do not remove any), sorted by Name.
	// Each has Layer LayerUserConf, File, Line, Key and Value. nil when no
	// user.conf was read or it set nothing.
	UserConf []Source
	// ModelKnown says some file read has a line for Model specifically;
	// when false, only the generic "*" lines applied. True when Model is
	// "" or "*"; false too when Cascade failed before reading a file.
	ModelKnown bool
	// SelfTest says the self-test layer replaced mlperf.conf and user.conf
	// (CascadeOptions.SelfTest was used); false otherwise.
	SelfTest bool
}

// SettingError is an input of CascadeOptions that Cascade refuses: an
// override of Set, a config file that cannot be read or parsed or that
// sets an invalid mode, or an unknown scenario or mode. Every error
// Cascade returns is one, so a caller can report them all as usage
// errors.
type SettingError struct {
	// Field is the CascadeOptions field at fault: "Scenario", "Mode",
	// "SelfTest", "MLPerfConfPath", "UserConfPath", "AuditConfigPath" or
	// "Set".
	Field string
	// Value is the input at fault as given: the file's path, or the
	// "NAME=VALUE" item of Set; "" when the error is about several
	// items or none.
	Value string
	// Name is the setting name when the error is about one setting
	// ("ttft_latency"); "" otherwise.
	Name string
	// Why says what is wrong; "" when Err says it all.
	Why string
	// Err is the underlying error, nil when there is none: from os (a
	// file that cannot be read), or a *Error or several joined (errors.As
	// finds them) from Parse, Apply or CheckStrict, which name the file or
	// "--set" and the line.
	Err error
}

// Error returns Err's text when Why is "", otherwise "FIELD NAME: WHY",
// "FIELD "VALUE": WHY" or "FIELD: WHY", where FIELD is Field but "--set"
// for "Set" (the flag of aimeter's CLI that fills it), e.g. `--set
// "min_duration": want NAME=VALUE …`.
func (e *SettingError) Error() string {
	if e.Why == "" && e.Err != nil {
		return e.Err.Error()
	}
	label := e.Field
	if label == "Set" {
		label = setName
	}
	switch {
	case e.Name != "":
		return label + " " + e.Name + ": " + e.Why
	case e.Value != "":
		return fmt.Sprintf("%s %q: %s", label, e.Value, e.Why)
	}
	return label + ": " + e.Why
}

// Unwrap returns Err.
func (e *SettingError) Unwrap() error { return e.Err }

// Cascade builds the settings of a test from every layer, each winning
// over the ones before:
//
//  1. LoadGen's defaults (loadgen.DefaultSettings), with Scenario and, if
//     ModeSet, Mode (LayerDefault);
//  2. when Model, MLPerfConfPath and UserConfPath are all empty and
//     SelfTest is not, the SelfTest text, read as a user.conf with model
//     "*" (LayerSelfTest); otherwise mlperf.conf, built in or
//     MLPerfConfPath (LayerMLPerfConf), then the user.conf at UserConfPath
//     if given (LayerUserConf);
//  3. the audit.config at AuditConfigPath, if given and present, in
//     either branch (LayerAuditConfig);
//  4. BeforeSet, if given (LayerImposed, as it records them);
//  5. Set (LayerSet).
//
// Steps 1 to 3 are Load's. It returns what it built, with the warnings and
// sources so far also on error; every error is a *SettingError naming the
// CascadeOptions field at fault. A model unknown to the files read is no
// error: ModelKnown is false. Cascade does not call Validate.
func Cascade(opts CascadeOptions) (Cascaded, error) {
	lo := LoadOptions{Model: opts.Model, Scenario: opts.Scenario, Mode: opts.Mode, ModeSet: opts.ModeSet,
		MLPerfConfPath: opts.MLPerfConfPath, UserConfPath: opts.UserConfPath, AuditConfigPath: opts.AuditConfigPath}
	var c Cascaded
	if opts.ModeSet && (opts.Mode < loadgen.SubmissionRun || opts.Mode > loadgen.FindPeakPerformance) {
		c.Sources = Sources{}
		return c, &SettingError{Field: "Mode", Value: opts.Mode.String(),
			Why: "want 0 SubmissionRun, 1 AccuracyOnly, 2 PerformanceOnly or 3 FindPeakPerformance"}
	}
	var selfTest *Config
	if opts.SelfTest != "" && opts.Model == "" && opts.MLPerfConfPath == "" && opts.UserConfPath == "" {
		var err error
		if selfTest, err = Parse(strings.NewReader(opts.SelfTest), selfTestName); err != nil {
			c.Sources = Sources{}
			return c, &SettingError{Field: "SelfTest", Err: err}
		}
		c.SelfTest = true
	}
	l, field, err := loadFiles(lo, selfTest)
	c.Settings, c.Warnings, c.Sources, c.ModelKnown = l.Settings, l.Warnings, l.Sources, l.ModelKnown
	if err != nil {
		value := ""
		switch field {
		case "MLPerfConfPath":
			value = opts.MLPerfConfPath
		case "UserConfPath":
			value = opts.UserConfPath
		case "AuditConfigPath":
			value = opts.AuditConfigPath
		}
		return c, &SettingError{Field: field, Value: value, Err: err}
	}
	for _, src := range c.Sources {
		if src.Layer == LayerUserConf {
			c.UserConf = append(c.UserConf, src)
		}
	}
	slices.SortFunc(c.UserConf, func(a, b Source) int { return strings.Compare(a.Name, b.Name) })
	if opts.BeforeSet != nil {
		opts.BeforeSet(&c.Settings, c.Sources)
	}
	return c, applySet(&c.Settings, c.Sources, opts.Scenario, opts.Set)
}

// applySet applies the overrides of CascadeOptions.Set to s and records
// them in src; see CascadeOptions.Set for what it refuses.
func applySet(s *loadgen.Settings, src Sources, scenario loadgen.Scenario, set []string) error {
	if len(set) == 0 {
		return nil
	}
	var b strings.Builder
	names := make([]string, 0, len(set))
	for _, kv := range set {
		name, value, ok := strings.Cut(kv, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" || strings.ContainsAny(name, ". \t") {
			return &SettingError{Field: "Set", Value: kv,
				Why: "want NAME=VALUE with a config key name such as min_duration or target_qps"}
		}
		// A config file would read "1 2" as 2 and "#" as a comment that
		// sets nothing; an override means one value.
		if len(cTokens(value)) != 1 || value == "#" {
			return &SettingError{Field: "Set", Value: kv, Name: name,
				Why: fmt.Sprintf("the value %q is not one number", value)}
		}
		fmt.Fprintf(&b, "*.%s.%s = %s\n", scenario, name, value)
		names = append(names, name)
	}
	c, err := Parse(strings.NewReader(b.String()), setName)
	if err != nil {
		return &SettingError{Field: "Set", Err: err}
	}
	for _, name := range names {
		if e, ok := c.Get("*." + scenario.String() + "." + name); ok {
			src[name] = Source{Layer: LayerSet, Name: name, File: setName, Kind: BuiltinConf, Entry: e}
		}
	}
	// Unlike a config file, an override refuses what LoadGen would misread
	// (a negative, fractional or out-of-range integer).
	if err := c.CheckStrict("*", scenario, BuiltinConf); err != nil {
		return &SettingError{Field: "Set", Err: err}
	}
	// An override is the operator's own, read like mlperf.conf so that it
	// can also set what only mlperf.conf may (the seeds,
	// accuracy_log_probability).
	if err := c.Apply(s, "*", scenario, BuiltinConf); err != nil {
		return &SettingError{Field: "Set", Err: err}
	}
	if unused := c.Unused("*", scenario, BuiltinConf); len(unused) > 0 {
		return &SettingError{Field: "Set",
			Why: fmt.Sprintf("%s is not a setting LoadGen reads for %s", strings.Join(unused, ", "), scenario)}
	}
	// LoadGen reads these only while token latencies are on: set without
	// them they would be silently ignored.
	for _, name := range []string{"ttft_latency", "tpot_latency"} {
		if src.Is(name, LayerSet) && !s.UseTokenLatencies {
			return &SettingError{Field: "Set", Name: name,
				Why: "LoadGen reads it only with token latencies on; add --set use_token_latencies=1 (--sut openai turns them on when it streams)"}
		}
	}
	return nil
}
