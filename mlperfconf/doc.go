// Package mlperfconf reads MLPerf LoadGen's config files — mlperf.conf,
// user.conf and audit.config — and applies them to loadgen.Settings with
// LoadGen's exact rules (mlperf::TestSettings::FromConfig in
// loadgen/test_settings_internal.cc, see loadgen-reference §11).
//
// Parse and ParseFile read one file with FromConfig's syntax: C whitespace
// tokens, "key = value" lines, values that must be whole C integers or C
// doubles, the last definition of a key winning. Each Entry keeps both
// readings LoadGen may make of its value (strtoull for integer settings,
// strtod for floating-point ones), so "1.5" is 1 where LoadGen reads an
// integer. Lines LoadGen silently ignores are kept as warnings instead, and
// so are values LoadGen reads in a surprising way (a negative integer that
// wraps, a fraction or exponent that strtoull cuts off, an integer that
// saturates at 2^64-1, a leading-0 octal, a ms → ns product that wraps):
// Load and Config.ApplyWarn return them. A UTF-8 byte-order mark at the start
// of a file is skipped with a warning, where LoadGen would lose line 1.
//
// Config.CheckStrict is the reading for values given where LoadGen's quirks
// are no excuse, such as aimeter's --set: it refuses a negative, fractional,
// exponent or out-of-range integer and a non-finite floating-point value,
// naming the key.
//
// Config.Apply sets the keys of one file on a loadgen.Settings for a model
// and scenario, with LoadGen's lookup precedence (model.scenario.key, then
// *.scenario.key, then model.*.key, then *.*.key) and its gates: the RNG seeds,
// accuracy_log_probability and the test05 keys are read only from
// mlperf.conf (Kind BuiltinConf), and an audit.config is applied with the
// model "*". LoadSettings runs the whole sequence a LoadGen harness and
// StartTest run: defaults, then the embedded mlperf.conf (Builtin) or a
// replacement, then user.conf, then audit.config if present.
//
// Cascade builds the settings of a whole run, as aimeter's CLI does: Load's
// files (or, with no model and no config file, aimeter's self-test defaults
// in place of mlperf.conf and user.conf, followed by audit.config all the
// same), then a caller's hook for values a mode or SUT imposes, then the
// explicit NAME=VALUE overrides of --set, read strictly. It records in
// Sources which Layer set each setting, so that callers decide from a
// typed provenance (Sources.Is, Sources.Impose) and print Source.String;
// every input it refuses is a *SettingError naming the option at fault.
package mlperfconf
