// Package mlperflog formats the output files of an aimeter test in MLPerf
// LoadGen's formats, byte for byte where LoadGen's own tools and the MLPerf
// submission checker parse them. It writes to an io.Writer; package bundle
// owns the run directory, aimeter's own files (records.parquet, settings.json,
// stages.parquet) and decides which files a run has.
//
// LoadGen-compatible files (see loadgen-reference §10):
//
//   - mlperf_log_summary.txt: WriteSummary
//   - mlperf_log_detail.txt: WriteDetail (":::MLLOG {…}" lines)
//   - mlperf_log_accuracy.json: bundle.WriteAccuracyLog (with its reader)
//   - mlperf_log_trace.json: WriteTrace (Chrome trace, per-sample events only)
//
// LoadGen's config files (mlperf.conf, user.conf, audit.config) are read by
// package mlperfconf.
// Numbers follow the C++ rules LoadGen relies on: FormatDouble is a default std::ostream (six significant
// digits, "1e+07"), DoubleToString is LoadGen's fixed-decimals helper.
//
// Where aimeter differs from LoadGen, on purpose: loadgen_version names
// aimeter; strings are JSON-escaped; aimeter's extra invalidity reasons
// (lost or failed samples, interrupted runs) appear in the summary's
// recommendations and in result_invalid_reason.
//
// The metadata "file" is the base name of the LoadGen source file that logs
// the same entry (LoadGen writes its compile-time path, which names a
// directory of the build machine), and "line_no" the line of that file in
// LoadGen 6.0.17 (mlperf-inference commit b66003e10e2d) at which the entry is
// logged: the line of the MLPERF_LOG macro, as __LINE__ gives it. Keys
// logged at several places (generic_message, error_runtime) are told apart by
// their message. The value is stable across aimeter's runs and versions
// until the table moves to another LoadGen version; an entry LoadGen has no
// counterpart for (aimeter's own messages) has line_no 0.
//
// Keys LoadGen writes and aimeter does not, and why:
//
//   - loadgen_build_date_local, loadgen_build_date_utc, loadgen_git_commit_date,
//     loadgen_git_log_message, loadgen_git_status_message,
//     error_uncommitted_loadgen_changes, loadgen_file_sha1: facts about the
//     build of LoadGen's C++ library (its build time, its git state, the
//     SHA-1 of each of its source files); aimeter is not that library, and
//     writing LoadGen's values would be a false claim. loadgen_version names
//     aimeter's version instead.
//   - logger_swap_request_slots_retry_count and the other logger_* keys:
//     counters of the lock-free buffers of LoadGen's logging thread, which
//     aimeter does not have.
//
// MLPerf's tools (the submission checker, log_parser) read none of these
// keys. TestDetailMatchesLoadGen compares a detail log key by key, in
// order, with logs written by the C++ LoadGen for the same settings
// (testdata/lgbench), with only these keys and the values that depend on the
// clock left out.
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
