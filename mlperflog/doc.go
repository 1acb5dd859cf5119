// Package mlperflog formats the output files of an aimeter test in MLPerf
// LoadGen's formats, byte for byte where LoadGen's own tools and the MLPerf
// submission checker parse them. It writes to an io.Writer; package bundle
// owns the run directory, aimeter's own files (records.csv, settings.json,
// stages.csv) and decides which files a run has.
//
// LoadGen-compatible files (see loadgen-reference §10):
//
//   - mlperf_log_summary.txt: WriteSummary
//   - mlperf_log_detail.txt: WriteDetail (":::MLLOG {…}" lines)
//   - mlperf_log_accuracy.json: WriteAccuracy
//   - mlperf_log_trace.json: WriteTrace (Chrome trace, per-sample events only)
//
// LoadGen's config files (mlperf.conf, user.conf, audit.config) are read by
// package mlperfconf.
// Numbers follow the C++ rules LoadGen relies on: FormatDouble is a default std::ostream (six significant
// digits, "1e+07"), DoubleToString is LoadGen's fixed-decimals helper.
//
// Where aimeter differs from LoadGen, on purpose: loadgen_version names
// aimeter; the metadata "file" is the C++ file the entry would come from and
// "line_no" is 0; the build and git keys are not written; strings are
// JSON-escaped; aimeter's extra invalidity reasons (lost or failed samples,
// interrupted runs) appear in the summary's recommendations and in
// result_invalid_reason.
//
// Warnings logged before the test (loadgen.Options.Warnings) are written
// where LoadGen's StartTest writes its own, right after
// qsl_reported_performance_count and before requested_scenario. Only
// LoadGen's two (mlperfconf.AuditConfigWarning, loadgen.Test05Warning) are
// warnings there ("is_warning": true, counted in the summary's "N warnings
// encountered"); aimeter's own notes about the config files (a value read
// in a surprising way, a model-specific audit.config line that LoadGen
// ignores, …) follow them as warning_generic_message entries with
// "is_warning": false, so that a run with TEST04's audit.config reports one
// warning as LoadGen does. A leading absolute file path in such a note is
// reduced to the file's base name: result files never carry the
// directories of the user's machine (the command line prints the full
// note on stderr).
package mlperflog
