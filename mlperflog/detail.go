package mlperflog

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"aimeter/loadgen"
	"aimeter/mlperfconf"
)

// DetailOptions controls the parts of mlperf_log_detail.txt that do not come
// from the Result.
type DetailOptions struct {
	// Version is aimeter's version; loadgen_version is logged as
	// "aimeter <Version>" (aimeter never claims to be MLPerf LoadGen). The
	// loadgen_build_* and loadgen_git_* keys are not written.
	Version string
	// PID and TID fill the metadata of every line; 0 means os.Getpid().
	PID, TID int
	// EndTimeNs is the time (since the start of the test) of the result_*
	// keys and num_errors; 0 means the time of the last event.
	EndTimeNs int64
	// Location is the time zone of test_datetime; nil means time.Local.
	// LoadGen formats the local time and appends a literal "Z".
	Location *time.Location
	// IntervalEventTypes writes "INTERVAL_START" and "INTERVAL_END" for
	// events of those kinds. LoadGen's MLPERF_LOG_INTERVAL_START/END write
	// "POINT_IN_TIME" like every other entry (power_begin and power_end
	// included), which is the default here.
	IntervalEventTypes bool
}

// C++ source files named in the metadata. LoadGen writes __FILE__ and
// __LINE__; aimeter writes the base name of the file the entry comes from
// in LoadGen and the line there that logs it (sourceLine), 0 where LoadGen
// has no such entry.
const (
	fileVersion  = "version.cc"
	fileLoadgen  = "loadgen.cc"
	fileSettings = "test_settings_internal.cc"
	fileResults  = "results.cc"
)

// WriteDetail writes mlperf_log_detail.txt: one ":::MLLOG {…}" line per
// entry, with LoadGen's key order and value formats. The order is
// loadgen_version, test_datetime, sut_name, get_sut_name_duration_ns,
// qsl_name, qsl_reported_total_count, qsl_reported_performance_count, the
// requested_* settings, the effective_* settings, r.Events in order and,
// when r.Summary is set, the result_* block of PerformanceSummary::LogDetail
// ending with num_errors.
//
// Values: strings in double quotes (escaped like LoadGen's EscapeStringJson
// where LoadGen would write invalid JSON), bools true/false, integers in
// decimal, doubles in the C++ default stream format ("1e+07", "83.5"), lists
// as "[a,b]". time_ms is the entry's time since the start of the test as
// whole milliseconds "." six digits of nanoseconds; the header and settings
// entries are at time 0, the results at opts.EndTimeNs.
func WriteDetail(w io.Writer, r *loadgen.Result, opts DetailOptions) error {
	d := newDetailWriter(w, opts)

	d.file = fileVersion
	d.str("loadgen_version", "aimeter "+opts.Version)
	d.file = fileLoadgen
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	d.str("test_datetime", r.StartTime.In(loc).Format("2006-01-02T15:04:05Z"))
	d.str("sut_name", r.SUTName)
	d.i64("get_sut_name_duration_ns", r.GetSUTNameDurationNs)
	d.str("qsl_name", r.QSLName)
	d.u64("qsl_reported_total_count", r.QSLTotalCount)
	d.u64("qsl_reported_performance_count", r.QSLPerformanceCount)
	pre, rest := splitPreTest(r.Events)
	for i := range pre {
		if isLoadGenWarning(&pre[i]) {
			d.event(&pre[i])
		}
	}
	for i := range pre {
		if ev := pre[i]; !isLoadGenWarning(&ev) {
			// aimeter's own note: kept, but not counted as a warning and
			// without the directories of the user's machine.
			ev.Warning = false
			if v, ok := ev.Value.(string); ok {
				ev.Value = stripPathPrefix(v)
			}
			d.event(&ev)
		}
	}

	d.file = fileSettings
	d.requested(&r.Requested)
	d.effective(&r.Effective)

	d.file = fileLoadgen
	var last int64
	for i := range pre {
		last = max(last, pre[i].TimeNs)
	}
	for i := range rest {
		ev := &rest[i]
		d.event(ev)
		last = max(last, ev.TimeNs)
	}

	if r.Summary != nil {
		d.time = opts.EndTimeNs
		if d.time == 0 {
			d.time = last
		}
		d.file = fileResults
		d.results(r.Summary)
		d.int("num_errors", r.ErrorCount())
	}
	return d.w.Flush()
}

// splitPreTest splits events into the warnings logged before the test
// (Options.Warnings and the TEST05 warning, the leading
// warning_generic_message events) and the rest.
func splitPreTest(events []loadgen.Event) (pre, rest []loadgen.Event) {
	n := 0
	for n < len(events) && events[n].Warning && events[n].Key == "warning_generic_message" {
		n++
	}
	return events[:n], events[n:]
}

// isLoadGenWarning says whether a warning logged before the test is one
// that LoadGen itself writes there (the audit.config and TEST05 warnings).
// aimeter's own warnings about the config files (ignored keys, model-specific
// audit.config lines, each with the file's path) are printed by the command
// line but kept out of the LoadGen files: they would change the warning
// count LoadGen reports and carry paths of the user's machine.
func isLoadGenWarning(ev *loadgen.Event) bool {
	v, _ := ev.Value.(string)
	return v == mlperfconf.AuditConfigWarning || v == loadgen.Test05Warning
}

// stripPathPrefix reduces a leading "FILE:LINE: " or "FILE: " whose FILE
// is an absolute path to the file's base name, so that a note such as
// "/home/me/audit.config:9: key …" is written as "audit.config:9: key …".
func stripPathPrefix(v string) string {
	head, tail, ok := strings.Cut(v, ": ")
	if !ok {
		return v
	}
	file, line := head, ""
	if i := strings.LastIndexByte(head, ':'); i >= 0 && isDigits(head[i+1:]) {
		file, line = head[:i], head[i:]
	}
	if !filepath.IsAbs(file) && !strings.HasPrefix(file, "/") {
		return v
	}
	return filepath.Base(file) + line + ": " + tail
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// warningCount is the number of warnings LoadGen would report for r:
// r.WarningCount without the pre-test warnings that are aimeter's own.
func warningCount(r *loadgen.Result) int {
	n := r.WarningCount()
	pre, _ := splitPreTest(r.Events)
	for i := range pre {
		if !isLoadGenWarning(&pre[i]) {
			n--
		}
	}
	return n
}

type detailWriter struct {
	w         *bufio.Writer
	buf       []byte
	pid, tid  int
	intervals bool
	// Defaults for entries written from the Result's fields.
	time int64
	file string
	// key and value of the entry being written, for its source line.
	key   string
	value any
}

func newDetailWriter(w io.Writer, opts DetailOptions) *detailWriter {
	d := &detailWriter{w: bufio.NewWriter(w), pid: opts.PID, tid: opts.TID, intervals: opts.IntervalEventTypes}
	if d.pid == 0 {
		d.pid = os.Getpid()
	}
	if d.tid == 0 {
		d.tid = d.pid
	}
	return d
}

// begin starts a line up to and including `"value": `.
func (d *detailWriter) begin(key string) {
	d.key, d.value = key, nil
	d.buf = append(d.buf[:0], `:::MLLOG {"key": `...)
	d.buf = appendQuoted(d.buf, key)
	d.buf = append(d.buf, `, "value": `...)
}

// end finishes the line after the value and writes it.
func (d *detailWriter) end(timeNs int64, kind loadgen.EventKind, isError, isWarning bool, file string) {
	b := append(d.buf, `, "time_ms": `...)
	b = appendTimeMs(b, timeNs)
	b = append(b, `, "namespace": "mlperf::logging", "event_type": "`...)
	switch {
	case d.intervals && kind == loadgen.EventIntervalStart:
		b = append(b, "INTERVAL_START"...)
	case d.intervals && kind == loadgen.EventIntervalEnd:
		b = append(b, "INTERVAL_END"...)
	default:
		b = append(b, "POINT_IN_TIME"...)
	}
	b = append(b, `", "metadata": {"is_error": `...)
	b = strconv.AppendBool(b, isError)
	b = append(b, `, "is_warning": `...)
	b = strconv.AppendBool(b, isWarning)
	b = append(b, `, "file": `...)
	file, line := sourceLine(file, d.key, d.value)
	b = appendQuoted(b, file)
	b = append(b, `, "line_no": `...)
	b = strconv.AppendInt(b, int64(line), 10)
	b = append(b, `, "pid": `...)
	b = strconv.AppendInt(b, int64(d.pid), 10)
	b = append(b, `, "tid": `...)
	b = strconv.AppendInt(b, int64(d.tid), 10)
	b = append(b, "}}\n"...)
	d.buf = b
	d.w.Write(b)
}

func (d *detailWriter) point() { d.end(d.time, loadgen.EventPoint, false, false, d.file) }

func (d *detailWriter) str(key, v string) {
	d.begin(key)
	d.buf = appendQuoted(d.buf, v)
	d.point()
}

func (d *detailWriter) i64(key string, v int64) {
	d.begin(key)
	d.buf = strconv.AppendInt(d.buf, v, 10)
	d.point()
}

func (d *detailWriter) int(key string, v int) { d.i64(key, int64(v)) }

func (d *detailWriter) u64(key string, v uint64) {
	d.begin(key)
	d.buf = strconv.AppendUint(d.buf, v, 10)
	d.point()
}

func (d *detailWriter) f64(key string, v float64) {
	d.begin(key)
	d.buf = appendDetailDouble(d.buf, v)
	d.point()
}

// appendDetailDouble is appendDouble, except that infinities and NaN are
// written as "Infinity", "-Infinity" and "NaN" (LoadGen's spelling in its
// double ArgValueTransform), which Python's json module, and so the
// submission checker, reads; glibc's "inf" would break the line.
func appendDetailDouble(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "Infinity"...)
	case math.IsInf(v, -1):
		return append(b, "-Infinity"...)
	}
	return appendDouble(b, v)
}

func (d *detailWriter) bool(key string, v bool) {
	d.begin(key)
	d.buf = strconv.AppendBool(d.buf, v)
	d.point()
}

func (d *detailWriter) event(ev *loadgen.Event) {
	d.begin(ev.Key)
	d.value = ev.Value
	d.buf = appendValue(d.buf, ev.Value)
	d.end(ev.TimeNs, ev.Kind, ev.Error, ev.Warning, d.file)
}

// appendValue formats an event value as LoadGen's ArgValueTransform does.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendQuoted(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int8:
		return strconv.AppendInt(b, int64(v), 10)
	case int16:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float32:
		return appendDetailDouble(b, float64(v))
	case float64:
		return appendDetailDouble(b, v)
	case time.Duration:
		return strconv.AppendInt(b, int64(v), 10)
	case []uint64:
		return appendList(b, v, func(b []byte, x uint64) []byte { return strconv.AppendUint(b, x, 10) })
	case []uint32:
		return appendList(b, v, func(b []byte, x uint32) []byte { return strconv.AppendUint(b, uint64(x), 10) })
	case []int64:
		return appendList(b, v, func(b []byte, x int64) []byte { return strconv.AppendInt(b, x, 10) })
	case []int:
		return appendList(b, v, func(b []byte, x int) []byte { return strconv.AppendInt(b, int64(x), 10) })
	case map[string]string:
		// std::map<string, string>: keys in byte order, {"k":"v",…}.
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendQuoted(b, k)
			b = append(b, ':')
			b = appendQuoted(b, v[k])
		}
		return append(b, '}')
	case nil:
		return append(b, `""`...)
	case error:
		return appendQuoted(b, v.Error())
	case fmt.Stringer:
		return appendQuoted(b, v.String())
	}
	return appendQuoted(b, fmt.Sprint(v))
}

// appendList writes "[a,b,c]" (LoadGen's vector<size_t> format; an empty
// list, which LoadGen garbles into "]", is written "[]").
func appendList[T any](b []byte, v []T, f func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = f(b, x)
	}
	return append(b, ']')
}

// requested is LogRequestedTestSettings: the scenario-specific block, the
// overrides, then the token keys when token latencies are on. The C++
// expected-latency hints are doubles, so they print as "1e+06".
func (d *detailWriter) requested(s *loadgen.Settings) {
	d.str("requested_scenario", s.Scenario.String())
	d.str("requested_test_mode", s.Mode.String())
	switch s.Scenario {
	case loadgen.SingleStream:
		d.f64("requested_single_stream_expected_latency_ns", float64(s.SingleStreamExpectedLatencyNs))
		d.f64("requested_single_stream_target_latency_percentile", s.SingleStreamTargetLatencyPercentile)
		if s.Concurrency > 0 {
			// aimeter's fixed-concurrency mode, not a LoadGen key: the
			// reason this SingleStream log is not a SingleStream result.
			d.u64("requested_aimeter_fixed_concurrency", s.Concurrency)
		}
		if s.MaxErrorRate > 0 {
			d.f64("requested_aimeter_max_error_rate", s.MaxErrorRate)
		}
	case loadgen.MultiStream:
		d.f64("requested_multi_stream_expected_latency_ns", float64(s.MultiStreamExpectedLatencyNs))
		d.f64("requested_multi_stream_target_latency_percentile", s.MultiStreamTargetLatencyPercentile)
		d.u64("requested_multi_stream_samples_per_query", s.MultiStreamSamplesPerQuery)
	case loadgen.Server:
		d.f64("requested_server_target_qps", s.ServerTargetQPS)
		d.u64("requested_server_target_latency_ns", s.ServerTargetLatencyNs)
		d.f64("requested_server_target_latency_percentile", s.ServerTargetLatencyPercentile)
		d.bool("requested_server_coalesce_queries", s.ServerCoalesceQueries)
		d.int("requested_server_find_peak_qps_decimals_of_precision", s.ServerFindPeakQPSDecimalsOfPrecision)
		d.f64("requested_server_find_peak_qps_boundary_step_size", s.ServerFindPeakQPSBoundaryStepSize)
		d.u64("requested_server_max_async_queries", s.ServerMaxAsyncQueries)
		d.u64("requested_server_num_issue_query_threads", s.ServerNumIssueQueryThreads)
	case loadgen.Offline:
		d.f64("requested_offline_expected_qps", s.OfflineExpectedQPS)
	}
	d.u64("requested_min_duration_ms", s.MinDurationMs)
	d.u64("requested_max_duration_ms", s.MaxDurationMs)
	d.u64("requested_min_query_count", s.MinQueryCount)
	d.u64("requested_max_query_count", s.MaxQueryCount)
	d.u64("requested_qsl_rng_seed", s.QSLRNGSeed)
	d.u64("requested_sample_index_rng_seed", s.SampleIndexRNGSeed)
	d.u64("requested_schedule_rng_seed", s.ScheduleRNGSeed)
	d.u64("requested_accuracy_log_rng_seed", s.AccuracyLogRNGSeed)
	d.f64("requested_accuracy_log_probability", s.AccuracyLogProbability)
	d.u64("requested_accuracy_log_sampling_target", s.AccuracyLogSamplingTarget)
	d.bool("requested_print_timestamps", s.PrintTimestamps)
	d.bool("requested_performance_issue_unique", s.PerformanceIssueUnique)
	d.bool("requested_performance_issue_same", s.PerformanceIssueSame)
	d.u64("requested_performance_issue_same_index", s.PerformanceIssueSameIndex)
	d.u64("requested_performance_sample_count_override", s.PerformanceSampleCountOverride)
	d.u64("requested_accuracy_sample_count_override", s.AccuracySampleCountOverride)
	d.bool("requested_sample_concatenate_permutation", s.SampleConcatenatePermutation)
	if s.UseTokenLatencies {
		d.bool("requested_use_token_latencies", s.UseTokenLatencies)
		if s.Scenario != loadgen.Offline {
			d.u64("requested_server_ttft_latency", s.ServerTTFTLatencyNs)
			d.u64("requested_server_tpot_latency", s.ServerTPOTLatencyNs)
		}
	}
}

// effective is TestSettingsInternal::LogEffectiveSettings.
func (d *detailWriter) effective(e *loadgen.Effective) {
	d.str("effective_scenario", e.Scenario.String())
	d.str("effective_test_mode", e.Mode.String())
	d.u64("effective_samples_per_query", e.SamplesPerQuery)
	d.f64("effective_target_qps", e.TargetQPS)
	d.i64("effective_target_latency_ns", e.TargetLatencyNs)
	d.f64("effective_target_latency_percentile", e.TargetLatencyPercentile)
	d.u64("effective_max_async_queries", e.MaxAsyncQueries)
	d.u64("effective_target_duration_ms", e.TargetDurationMs)
	d.u64("effective_min_duration_ms", e.MinDurationMs)
	d.u64("effective_max_duration_ms", e.MaxDurationMs)
	d.u64("effective_min_query_count", e.MinQueryCount)
	d.u64("effective_max_query_count", e.MaxQueryCount)
	d.u64("effective_min_sample_count", e.MinSampleCount)
	d.u64("effective_qsl_rng_seed", e.QSLRNGSeed)
	d.u64("effective_sample_index_rng_seed", e.SampleIndexRNGSeed)
	d.u64("effective_schedule_rng_seed", e.ScheduleRNGSeed)
	d.u64("effective_accuracy_log_rng_seed", e.AccuracyLogRNGSeed)
	d.f64("effective_accuracy_log_probability", e.AccuracyLogProbability)
	d.u64("effective_accuracy_log_sampling_target", e.AccuracyLogSamplingTarget)
	d.bool("effective_print_timestamps", e.PrintTimestamps)
	d.bool("effective_performance_issue_unique", e.PerformanceIssueUnique)
	d.bool("effective_performance_issue_same", e.PerformanceIssueSame)
	d.u64("effective_performance_issue_same_index", e.PerformanceIssueSameIndex)
	d.u64("effective_performance_sample_count", e.PerformanceSampleCount)
	d.u64("effective_accuracy_sample_count", e.AccuracySampleCount)
	d.bool("effective_sample_concatenate_permutation", e.SampleConcatenatePermutation)
}

// InvalidReason is the result_invalid_reason text: LoadGen's
// recommendations for the failed checks (each followed by a space, the
// early-exit sentence last), then aimeter's reasons, newlines replaced by
// spaces. LoadGen gives no reason for an early-stopping failure, so the text
// can be empty for an INVALID result.
func InvalidReason(s *loadgen.Summary) string {
	var b strings.Builder
	if !s.PerfConstraintsMet && s.PerfConstraintsRecommendation != "" {
		b.WriteString(s.PerfConstraintsRecommendation + " ")
	}
	if !s.MinDurationMet && s.MinDurationRecommendation != "" {
		b.WriteString(s.MinDurationRecommendation + " ")
	}
	if !s.MinQueriesMet && !s.FailuresDecided {
		b.WriteString("The test exited early, before enough queries were issued.")
	}
	for _, reason := range s.AimeterReasons {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
		b.WriteString(reason)
	}
	return strings.ReplaceAll(b.String(), "\n", " ")
}

// earlyStoppingText is an early-stopping recommendation as the detail log
// holds it: the lines joined, newlines replaced by spaces.
func earlyStoppingText(lines []string) string {
	return strings.ReplaceAll(strings.Join(lines, "\n"), "\n", " ")
}

// results is PerformanceSummary::LogDetail (without num_errors).
func (d *detailWriter) results(s *loadgen.Summary) {
	e := &s.Effective
	tm := tokenMetrics(s)

	d.str("result_validity", validity(s))
	if s.HasPerfConstraints() {
		d.bool("result_perf_constraints_met", s.PerfConstraintsMet)
	}
	d.bool("result_min_duration_met", s.MinDurationMet)
	d.bool("result_min_queries_met", s.MinQueriesMet)
	d.bool("early_stopping_met", s.EarlyStoppingMet)
	if !s.Valid {
		d.str("result_invalid_reason", InvalidReason(s))
	}
	if !e.UseTokenLatencies {
		d.str("early_stopping_result", earlyStoppingText(s.EarlyStoppingLines))
	} else {
		d.str("early_stopping_ttft_result", earlyStoppingText(s.EarlyStoppingTTFTLines))
		d.str("early_stopping_tpot_result", earlyStoppingText(s.EarlyStoppingTPOTLines))
	}
	d.u64("result_query_count", s.QueryCount)
	if e.Scenario == loadgen.Server {
		d.u64("result_overlatency_query_count", s.OverLatencyQueryCount)
	}

	switch e.Scenario {
	case loadgen.SingleStream:
		d.f64("result_qps_with_loadgen_overhead", s.QPSWithLoadgenOverhead())
		d.f64("result_qps_without_loadgen_overhead", s.QPSWithoutLoadgenOverhead())
		d.i64("early_stopping_latency_ss", s.EarlyStoppingLatencySS)
		d.i64("early_stopping_latency_ms", s.EarlyStoppingLatencyMS)
	case loadgen.MultiStream:
		d.i64("result_min_query_latency_ns", s.QueryLatencyMin)
		d.i64("result_max_query_latency_ns", s.QueryLatencyMax)
		d.i64("result_mean_query_latency_ns", s.QueryLatencyMean)
		for _, lp := range s.Percentiles {
			d.i64("result_"+percentileLabel(lp.Percentile)+"_percentile_per_query_latency_ns", lp.QueryLatency)
		}
		d.i64("early_stopping_latency_ms", s.EarlyStoppingLatencyMS)
	case loadgen.Server:
		d.f64("result_scheduled_samples_per_sec", s.ScheduledSamplesPerSecond())
		d.f64("result_completed_samples_per_sec", s.CompletedSamplesPerSecond())
	case loadgen.Offline:
		d.f64("result_samples_per_second", s.SamplesPerSecond())
	}

	d.i64("result_min_latency_ns", s.SampleLatencyMin)
	d.i64("result_max_latency_ns", s.SampleLatencyMax)
	d.i64("result_mean_latency_ns", s.SampleLatencyMean)
	for _, lp := range s.Percentiles {
		d.i64("result_"+percentileLabel(lp.Percentile)+"_percentile_latency_ns", lp.SampleLatency)
	}

	if e.UseTokenLatencies {
		if e.Scenario != loadgen.Offline {
			d.i64("result_first_token_min_latency_ns", s.FirstTokenLatencyMin)
			d.i64("result_first_token_max_latency_ns", s.FirstTokenLatencyMax)
			d.i64("result_first_token_mean_latency_ns", s.FirstTokenLatencyMean)
			for _, lp := range s.TokenPercentiles {
				d.i64("result_first_token_"+percentileLabel(lp.Percentile)+"_percentile_latency_ns", lp.SampleLatency)
			}
			d.f64("result_token_throughput_with_loadgen_overhead", tm.tpsWithLoadgenOverhead)
			d.f64("result_token_throughput", tm.tokenThroughputDetail)
			for _, lp := range s.TPOTPercentiles {
				d.i64("result_time_per_output_token_"+percentileLabel(lp.Percentile)+"_percentile_ns", lp.SampleLatency)
			}
			d.i64("result_time_to_output_token_min", s.TimePerOutputTokenMin)
			d.i64("result_time_to_output_token_max", s.TimePerOutputTokenMax)
			d.i64("result_time_to_output_token_mean", s.TimePerOutputTokenMean)
			d.f64("result_completed_tokens_per_second", tm.completedTokensPerSecond)
		} else {
			d.f64("result_tokens_per_second", tm.offlineTokensPerSecond)
		}
	}
	if e.InferTokenLatencies {
		switch e.Scenario {
		case loadgen.Server:
			d.f64("result_inferred_completed_tokens_per_second", tm.inferredCompletedTokensPerSecond)
		case loadgen.Offline:
			d.f64("result_inferred_tokens_per_second", tm.inferredOfflineTokensPerSecond)
		}
	}
}
