package mlperflog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/mlperfconf"
)

var testDetailOpts = DetailOptions{Version: "1.2.3", PID: 4242, TID: 4243, Location: time.UTC}

func TestDetailGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteDetail(&buf, f.build(t), testDetailOpts); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, f.name+".detail.txt", buf.Bytes())
		})
	}
}

// mllogLine is one parsed detail-log line.
type mllogLine struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	TimeMs    json.Number     `json:"time_ms"`
	Namespace string          `json:"namespace"`
	EventType string          `json:"event_type"`
	Metadata  struct {
		IsError   bool   `json:"is_error"`
		IsWarning bool   `json:"is_warning"`
		File      string `json:"file"`
		LineNo    int    `json:"line_no"`
		PID       int    `json:"pid"`
		TID       int    `json:"tid"`
	} `json:"metadata"`
}

// parseDetail parses every line as the submission checker's log_parser
// does: ":::MLLOG " then one JSON object.
func parseDetail(t *testing.T, b []byte) []mllogLine {
	t.Helper()
	var lines []mllogLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		text, ok := strings.CutPrefix(sc.Text(), ":::MLLOG ")
		if !ok {
			t.Fatalf("line without :::MLLOG prefix: %q", sc.Text())
		}
		var l mllogLine
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("invalid JSON %q: %v", text, err)
		}
		lines = append(lines, l)
	}
	return lines
}

func TestDetailIsValidJSONWithCheckerKeys(t *testing.T) {
	for _, f := range fixtures {
		var buf bytes.Buffer
		r := f.build(t)
		if err := WriteDetail(&buf, r, testDetailOpts); err != nil {
			t.Fatal(err)
		}
		keys := map[string]json.RawMessage{}
		var order []string
		for _, l := range parseDetail(t, buf.Bytes()) {
			if _, dup := keys[l.Key]; !dup {
				keys[l.Key] = l.Value
			}
			order = append(order, l.Key)
			if l.Namespace != "mlperf::logging" || l.Metadata.PID != 4242 || l.Metadata.TID != 4243 {
				t.Errorf("%s: bad line %+v", f.name, l)
			}
		}
		if order[0] != "loadgen_version" || string(keys["loadgen_version"]) != `"aimeter 1.2.3"` {
			t.Errorf("%s: first line %q = %s", f.name, order[0], keys["loadgen_version"])
		}
		if strings.Contains(string(keys["loadgen_version"]), "MLPerf") {
			t.Errorf("%s: loadgen_version claims MLPerf", f.name)
		}
		// Keys the submission checker reads.
		want := []string{"test_datetime", "sut_name", "qsl_reported_total_count", "effective_scenario",
			"effective_test_mode", "effective_min_duration_ms", "effective_min_query_count",
			"effective_performance_sample_count", "effective_accuracy_sample_count",
			"effective_sample_concatenate_permutation", "effective_qsl_rng_seed",
			"effective_sample_index_rng_seed", "effective_schedule_rng_seed", "effective_target_latency_ns",
			"effective_samples_per_query"}
		if r.Summary != nil {
			want = append(want, "result_validity", "result_min_duration_met", "result_min_queries_met",
				"early_stopping_met", "num_errors", "result_99.00_percentile_latency_ns")
			switch r.Effective.Scenario {
			case loadgen.SingleStream:
				want = append(want, "early_stopping_latency_ss", "early_stopping_latency_ms")
			case loadgen.MultiStream:
				want = append(want, "early_stopping_latency_ms")
			case loadgen.Server:
				want = append(want, "result_completed_samples_per_sec", "result_perf_constraints_met")
			case loadgen.Offline:
				want = append(want, "result_samples_per_second")
			}
			if order[len(order)-1] != "num_errors" {
				t.Errorf("%s: last key %q, want num_errors", f.name, order[len(order)-1])
			}
			if r.Effective.UseTokenLatencies {
				want = append(want, "requested_use_token_latencies")
				if r.Effective.Scenario == loadgen.Server {
					want = append(want, "result_first_token_99.00_percentile_latency_ns",
						"result_time_per_output_token_99.00_percentile_ns", "result_completed_tokens_per_second",
						"requested_server_ttft_latency", "requested_server_tpot_latency")
				}
			}
		}
		for _, k := range want {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s: key %s missing", f.name, k)
			}
		}
	}
}

// The line layout of the example in loadgen-reference §10.2 (from a real
// log, of an older LoadGen), with the line number of LoadGen 6.0.17, whose
// results.cc logs result_validity at line 674.
func TestDetailLineLayout(t *testing.T) {
	r := &loadgen.Result{Summary: &loadgen.Summary{Valid: true, MinDurationMet: true, MinQueriesMet: true,
		PerfConstraintsMet: true, EarlyStoppingMet: true}}
	var buf bytes.Buffer
	opts := DetailOptions{PID: 4242, EndTimeNs: 600412331207, Location: time.UTC}
	if err := WriteDetail(&buf, r, opts); err != nil {
		t.Fatal(err)
	}
	want := `:::MLLOG {"key": "result_validity", "value": "VALID", "time_ms": 600412.331207, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, "file": "results.cc", "line_no": 640, "pid": 4242, "tid": 4242}}`
	want = strings.Replace(want, `"line_no": 640`, `"line_no": 674`, 1)
	if !strings.Contains(buf.String(), want+"\n") {
		t.Errorf("no line\n%s\nin\n%s", want, buf.String())
	}
}

func TestDetailValues(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
		why  string
	}{
		{"Starting performance mode", `"Starting performance mode"`, "strings are quoted"},
		{"a\"b\\c\nd\x01", `"a\"b\\c\nd\u0001"`, "EscapeStringJson rules keep odd strings valid JSON"},
		{true, "true", "bools are words"},
		{int64(-5), "-5", "signed integers"},
		{uint64(18209322760996052031), "18209322760996052031", "seeds need all 64 bits"},
		{1e7, "1e+07", "C++ default stream format"},
		{83.5, "83.5", "no trailing zeros"},
		{0.9, "0.9", "shortest 6-digit form"},
		{math.Inf(1), "Infinity", "Python's json reads it; glibc's inf would not parse"},
		{math.NaN(), "NaN", "Python's json reads it"},
		{[]uint64{3, 0, 2}, "[3,0,2]", "loaded_qsl_set list, no spaces"},
		{[]uint64{}, "[]", "empty list (LoadGen would garble it)"},
		{map[string]string{"b": "2", "a": "1"}, `{"a":"1","b":"2"}`, "std::map order"},
		{errors.New("boom"), `"boom"`, "errors as their text"},
		{nil, `""`, "nil as an empty string"},
	} {
		if got := string(appendValue(nil, tc.v)); got != tc.want {
			t.Errorf("%#v: got %s, want %s (%s)", tc.v, got, tc.want, tc.why)
		}
	}
}

func TestDetailTimesAndEventTypes(t *testing.T) {
	r := &loadgen.Result{
		StartTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Events: []loadgen.Event{
			{TimeNs: 1_580_314_812, Key: "power_begin", Value: "07-20-2024 17:54:38.800", Kind: loadgen.EventIntervalStart},
			{TimeNs: 1_580_314_813, Key: "power_end", Value: "07-20-2024 17:54:39.111", Kind: loadgen.EventIntervalEnd},
			{TimeNs: 5, Key: "error_runtime", Value: "x", Error: true},
		},
		Summary: &loadgen.Summary{SampleCount: 2, SampleLatencyMean: 5,
			Result: loadgen.PerformanceResult{FinalQueryIssuedTime: 1}},
	}
	var buf bytes.Buffer
	if err := WriteDetail(&buf, r, DetailOptions{PID: 1, Location: time.FixedZone("X", 3600)}); err != nil {
		t.Fatal(err)
	}
	lines := parseDetail(t, buf.Bytes())
	byKey := map[string]mllogLine{}
	for _, l := range lines {
		byKey[l.Key] = l
	}
	if got := string(byKey["test_datetime"].Value); got != `"2026-01-02T04:04:05Z"` {
		t.Errorf("test_datetime = %s: want local time with a literal Z, as LoadGen", got)
	}
	if l := byKey["power_begin"]; l.TimeMs != "1580.314812" || l.EventType != "POINT_IN_TIME" {
		t.Errorf("power_begin: time %s type %s (LoadGen: 1580.314812, POINT_IN_TIME)", l.TimeMs, l.EventType)
	}
	if l := byKey["error_runtime"]; !l.Metadata.IsError || l.TimeMs != "0.000005" {
		t.Errorf("error_runtime: %+v", l)
	}
	// Results default to the last event's time (the largest).
	if l := byKey["num_errors"]; l.TimeMs != "1580.314813" || string(l.Value) != "1" {
		t.Errorf("num_errors: time %s value %s", l.TimeMs, l.Value)
	}

	buf.Reset()
	if err := WriteDetail(&buf, r, DetailOptions{PID: 1, IntervalEventTypes: true}); err != nil {
		t.Fatal(err)
	}
	for _, l := range parseDetail(t, buf.Bytes()) {
		want := map[string]string{"power_begin": "INTERVAL_START", "power_end": "INTERVAL_END"}[l.Key]
		if want == "" {
			want = "POINT_IN_TIME"
		}
		if l.EventType != want {
			t.Errorf("%s: event_type %s, want %s", l.Key, l.EventType, want)
		}
	}
}

func TestInvalidReason(t *testing.T) {
	for _, tc := range []struct {
		s    loadgen.Summary
		want string
	}{
		{loadgen.Summary{MinDurationMet: true, MinQueriesMet: true, PerfConstraintsMet: true}, ""},
		{loadgen.Summary{MinQueriesMet: true, PerfConstraintsMet: false,
			PerfConstraintsRecommendation: "TTFT constrain not met: Reduce target QPS to improve latency.\n * TPOT constrain not met: Reduce target QPS to improve latency.",
			MinDurationRecommendation:     "Increase the target QPS so the loadgen pre-generates more queries."},
			"TTFT constrain not met: Reduce target QPS to improve latency.  * TPOT constrain not met: Reduce target QPS to improve latency. Increase the target QPS so the loadgen pre-generates more queries. "},
		{loadgen.Summary{MinDurationMet: true, PerfConstraintsMet: true, AimeterReasons: []string{"2 samples were lost.", "Interrupted."}},
			"The test exited early, before enough queries were issued. 2 samples were lost. Interrupted."},
		{loadgen.Summary{MinDurationMet: true, MinQueriesMet: true, PerfConstraintsMet: true, AimeterReasons: []string{"Lost."}},
			"Lost."},
	} {
		if got := InvalidReason(&tc.s); got != tc.want {
			t.Errorf("InvalidReason = %q, want %q", got, tc.want)
		}
	}
}

// TestDetailPreTestWarnings: the warnings logged before the test come right
// after qsl_reported_performance_count, as in LoadGen's StartTest, and only
// LoadGen's own (audit.config, TEST05) are warnings; aimeter's notes about
// config lines follow them as entries that are not warnings (the summary
// does not count them) and without the file's directory.
func TestDetailPreTestWarnings(t *testing.T) {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Mode = loadgen.PerformanceOnly
	r := newResult(t, s, 8, 8)
	warn := func(v string) loadgen.Event {
		return loadgen.Event{TimeNs: 1000, Key: "warning_generic_message", Value: v, Warning: true}
	}
	// As mlperfconf.Load reports TEST04's audit.config: LoadGen's warning
	// and three model-specific lines LoadGen ignores silently.
	r.Events = []loadgen.Event{
		warn(mlperfconf.AuditConfigWarning),
		warn(`/home/user/audit.config:9: key "resnet50.*.performance_issue_same": model-specific audit.config lines are ignored`),
		warn(`/home/user/audit.config:10: key "resnet50.*.performance_issue_unique": model-specific audit.config lines are ignored`),
		warn(`/home/user/audit.config:11: key "resnet50.*.min_query_count": model-specific audit.config lines are ignored`),
		warn(loadgen.Test05Warning),
		{TimeNs: 2000, Key: "generic_message", Value: "Starting performance mode"},
	}
	var detail, summary bytes.Buffer
	if err := WriteDetail(&detail, r, DetailOptions{Version: "test", PID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&summary, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(detail.String(), "/home/user") {
		t.Errorf("detail log carries a path of the user's machine:\n%s", detail.String())
	}
	lines := parseDetail(t, detail.Bytes())
	var keys []string
	for _, l := range lines {
		keys = append(keys, l.Key)
	}
	i := slices.Index(keys, "qsl_reported_performance_count")
	want := []string{"qsl_reported_performance_count", "warning_generic_message", "warning_generic_message",
		"warning_generic_message", "warning_generic_message", "warning_generic_message", "requested_scenario"}
	if i < 0 || i+len(want) > len(keys) || !slices.Equal(keys[i:i+len(want)], want) {
		t.Errorf("keys around the pre-test warnings: got %v, want %v", keys[max(i, 0):min(max(i, 0)+len(want), len(keys))], want)
	}
	if n := strings.Count(detail.String(), `"is_warning": true`); n != 2 {
		t.Errorf("detail log has %d warnings, want 2 (audit.config and TEST05)", n)
	}
	if !strings.Contains(detail.String(), `"value": "audit.config:9: key \"resnet50.*.performance_issue_same\"`) {
		t.Errorf("detail log lacks aimeter's note on line 9 under the file's base name:\n%s", detail.String())
	}
	if !strings.Contains(summary.String(), "\n2 warnings encountered.") {
		t.Errorf("summary footer: got %q, want 2 warnings", summary.String()[max(0, summary.Len()-120):])
	}
}

func TestStripPathPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want, reason string }{
		{"/home/u/audit.config:9: key x", "audit.config:9: key x", "absolute path with a line number"},
		{"/home/u/mlperf.conf: replaces the built-in", "mlperf.conf: replaces the built-in", "absolute path without a line"},
		{"user.conf:3: key x", "user.conf:3: key x", "relative paths say nothing about the machine"},
		{"self-test defaults:2: x", "self-test defaults:2: x", "a name that is no path"},
		{"no colon here", "no colon here", "nothing to strip"},
		{"model \"x\" is unknown: see /etc/x", "model \"x\" is unknown: see /etc/x", "only a leading file is reduced"},
	} {
		if got := stripPathPrefix(tc.in); got != tc.want {
			t.Errorf("%s: stripPathPrefix(%q) = %q, want %q", tc.reason, tc.in, got, tc.want)
		}
	}
}
