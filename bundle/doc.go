// Package bundle owns a run directory: everything one benchmark run
// recorded, and every file derived from it.
//
// A bundle holds two kinds of files. The raw files are what the run
// recorded and are never rewritten:
//
//   - settings.json: the requested and effective LoadGen settings, the
//     passes and how each ended, the SUT-misbehaviour counters;
//   - run.json: the run's name, process, time zone, system, accuracy
//     check and, when measured, how busy the machine was (host_load);
//   - events.jsonl: the detail-log events, with their warning and error
//     flags;
//   - records.parquet: one row per issued sample (scheduled, issued, first
//     token and completion times, tokens, status), an Apache Parquet file
//     written by RecordWriter (docs/records.md); a format version 1 bundle
//     holds records.csv instead, which Read still reads;
//   - mlperf_log_accuracy.json: the responses LoadGen logged for accuracy;
//   - stages.parquet, when the SUT reported stage times: one row per
//     sample, joined to its record by sequence id;
//   - samples.parquet and errors.json, when the SUT reported bytes on the
//     wire, the node that served a sample or a failure: one row per sample
//     and the table of distinct failures (category, message, count);
//   - tokens.parquet, when the SUT reported token arrival times
//     (streaming): one row per token;
//   - telemetry.json, when the run had power sources (--power): every
//     power, energy and utilisation reading on the run's clock and the
//     reads that gave nothing (package telemetry, docs/power.md);
//   - gbt_test.json, for a GB/T 45087 inference test: its description
//     (arrival as scheduled, thresholds, test information, lifecycle);
//   - invocation.json: how the run was asked for (command line, system
//     under test, the plan's inputs, the client's figures);
//   - foreign/, for a GB/T mixed test (mode 5): the foreign jobs' run, laid
//     out the same way.
//
// stages, samples and tokens.parquet (format version 3) have the columns
// of the stages.csv, samples.csv and tokens.csv that versions 1 and 2
// held, which Read still reads; WriteTableCSV writes those CSV files from
// a bundle of any version (aimeter export --table).
//
// A GB/T 45087 training run (clause 6) is a bundle too, with its own raw
// files: training_run.json (configuration, scenario, test information,
// time zone and how the events came in: the Go API, an MLLOG child with
// its command line, exit status and parser counts, or the event endpoint
// with its ranks and their clock offsets), training_events.jsonl (every
// train.Event as received) and, for a child, training_stdout.log and
// training_stderr.log (its output, bounded). Its derived files are
// gbt_training.json, gbt_training.log and report.html; Read recognises it
// by training_run.json and returns a Bundle whose Result is nil, whose
// training run trainbundle.Of decodes.
//
// telemetry.json, gbt_test.json, invocation.json and a training run's
// files are raw parts of the packages that define them (telemetry, gbt,
// benchmark/invocation, train/trainbundle), which import this package,
// never the other way round: each declares a PartType or FileSetType and
// its accessors (telemetry.LogOf, gbt.TestOf, invocation.Of,
// trainbundle.Of and their setters). Read keeps the bytes of those files;
// a part is decoded when first asked for, and written back byte for byte
// when it never was. derived.Read checks every known part as it reads, so
// that a malformed one is an error naming its file. This package imports
// only loadgen, sysinfo, the standard library and its own codecs
// (internal/parquet).
//
// The derived files are functions of the raw files alone:
// mlperf_log_summary.txt, mlperf_log_detail.txt, mlperf_log_trace.json
// (when the run asked for it), report.html and, for a GB/T test,
// gbt_result.json and gbt_inference.log. Regenerate writes them
// again from a bundle that Read returned, byte for byte as the run wrote
// them, which is how `aimeter report` and a tester that trusts only raw
// records recompute every metric.
//
// manifest.json lists every file with its role, size and SHA-256. Read
// checks them all first and names any file that changed since the run
// wrote it (a *DigestError); a directory without a manifest, written
// before bundles existed, gives an error naming the aimeter version that
// wrote it and what it lacks. Read then refuses data no run can have
// written, even with ReadOptions.SkipVerify: a settings.json value outside
// its range (a *loadgen.FieldError naming the key) or a record
// whose sequence id is repeated or in no pass, whose sample index is
// outside the QSL, whose times are out of order (scheduled ≤ issued ≤
// first token ≤ completed) or disagree with its status (ok and error rows
// completed, lost rows not): a *RecordsError naming the row of
// records.parquet (or line of records.csv) and the field. A damaged
// records, stages, samples or tokens.parquet gives an error naming the
// file, the row group and the column.
//
// Write into a directory that holds an earlier run removes that run's
// manifest and every file a bundle can hold that the new bundle does not
// write (a trace, a GB/T result, a foreign/ run), so the directory never
// mixes two runs; files that no bundle holds are left alone.
//
// Every file is written through a temporary file renamed into place, with
// mode 0644, so a reader never sees half a file; the manifest is written
// last, so a directory with a manifest is a complete bundle.
package bundle
