package mlperflog

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/sut/null"
)

// The C++ LoadGen detail logs in testdata/lgbench were written by lgbench
// (MLPerf's LoadGen 6.0.17, mlperf-inference commit b66003e10e2d, with a
// null SUT that completes every sample inside IssueQuery and a null QSL),
// with the metadata "file" reduced to the base name:
//
//	lgbench --scenario=offline --sut=sync --batch=0 --offline_expected_qps=100 \
//	    --min_duration_ms=0 --min_query_count=64 --qsl_size=32 --perf_count=16
//	lgbench --scenario=server --sut=sync --server_target_qps=2000 \
//	    --server_target_latency_ns=100000000 --min_duration_ms=0 \
//	    --min_query_count=100 --qsl_size=32 --perf_count=16

// lgSUT is lgbench's null SUT: every sample completes inside IssueQuery.
// It keeps LoadGen's name for it, NullSUT-sync; lgbench's QSL of 32
// samples, 16 loadable at once, is null.QSL, named NullQSL as in LoadGen.
type lgSUT struct{}

func (lgSUT) Name() string { return "NullSUT-sync" }
func (lgSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, s := range samples {
		r.Complete(s.ID, nil, 0)
	}
}
func (lgSUT) FlushQueries() {}

// lgSkippedKey says whether LoadGen writes key but aimeter, on purpose,
// does not (see the package documentation): the build and git facts of
// LoadGen's binary and the counters of LoadGen's logger threads.
func lgSkippedKey(key string) bool {
	for _, p := range []string{"loadgen_build_", "loadgen_git_", "loadgen_file_sha1", "logger_"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// lgTimingKey says whether the value of key depends on the clock or the
// build, so that only its presence and place are compared.
func lgTimingKey(key string) bool {
	switch key {
	case "loadgen_version", "test_datetime", "get_sut_name_duration_ns", "power_begin", "power_end",
		"result_min_latency_ns", "result_max_latency_ns", "result_mean_latency_ns",
		"result_completed_samples_per_sec", "result_samples_per_second":
		return true
	}
	return strings.HasSuffix(key, "_percentile_latency_ns")
}

// TestDetailMatchesLoadGen runs aimeter's loadgen with the settings of the
// committed C++ LoadGen logs, on the fake clock, and compares the two detail
// logs line by line: the same keys in the same order, the same metadata
// (file, line_no, is_error, is_warning) and the same values, except for the
// keys aimeter does not write (lgSkippedKey) and the values that depend on
// the clock (lgTimingKey); time_ms, pid and tid are not compared.
func TestDetailMatchesLoadGen(t *testing.T) {
	for _, tc := range []struct {
		file   string
		reason string
		set    func(*loadgen.Settings)
	}{
		{"offline.detail.txt", "Offline: one query of 64 samples", func(s *loadgen.Settings) {
			s.Scenario = loadgen.Offline
			s.OfflineExpectedQPS = 100
			s.MinQueryCount = 64
		}},
		{"server.detail.txt", "Server: 100 Poisson queries, early stopping not met", func(s *loadgen.Settings) {
			s.Scenario = loadgen.Server
			s.ServerTargetQPS = 2000
			s.ServerTargetLatencyNs = 100_000_000
			s.MinQueryCount = 100
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "lgbench", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			s := loadgen.DefaultSettings()
			s.Mode = loadgen.PerformanceOnly
			s.MinDurationMs = 0
			tc.set(&s)
			var got bytes.Buffer
			synctest.Test(t, func(t *testing.T) {
				r, err := loadgen.Run(context.Background(), lgSUT{}, null.QSL{Total: 32, Performance: 16}, s, &loadgen.Options{SpinWindow: -1})
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteDetail(&got, r, DetailOptions{Version: "test", PID: 1}); err != nil {
					t.Fatal(err)
				}
			})
			compareDetail(t, tc.reason, parseNonFinite(t, got.Bytes()), parseDetail(t, want))
		})
	}
}

func compareDetail(t *testing.T, reason string, got, want []mllogLine) {
	t.Helper()
	var w []mllogLine
	for _, l := range want {
		if !lgSkippedKey(l.Key) {
			w = append(w, l)
		}
	}
	t.Logf("%s: %d lines compared (%d in LoadGen's log)", reason, len(w), len(want))
	for i := range max(len(got), len(w)) {
		if i >= len(got) || i >= len(w) {
			var extra mllogLine
			if i < len(got) {
				extra = got[i]
			} else {
				extra = w[i]
			}
			t.Errorf("%s: line %d: got %d lines, LoadGen %d; first unmatched key %q", reason, i+1, len(got), len(w), extra.Key)
			return
		}
		g, l := got[i], w[i]
		if g.Key != l.Key {
			t.Errorf("%s: line %d: key %q, LoadGen has %q", reason, i+1, g.Key, l.Key)
			return
		}
		gm, lm := g.Metadata, l.Metadata
		if gm.File != lm.File || gm.LineNo != lm.LineNo || gm.IsError != lm.IsError || gm.IsWarning != lm.IsWarning {
			t.Errorf("%s: %s: metadata %+v, LoadGen %+v", reason, g.Key, gm, lm)
		}
		if g.EventType != l.EventType || g.Namespace != l.Namespace {
			t.Errorf("%s: %s: event_type/namespace %q/%q, LoadGen %q/%q", reason, g.Key, g.EventType, g.Namespace, l.EventType, l.Namespace)
		}
		if !lgTimingKey(g.Key) && !sameJSON(g.Value, l.Value) {
			t.Errorf("%s: %s: value %s, LoadGen %s", reason, g.Key, g.Value, l.Value)
		}
	}
}

// sameJSON compares two JSON values as written.
func sameJSON(a, b json.RawMessage) bool {
	return bytes.Equal(a, b)
}

// parseNonFinite is parseDetail for a log whose doubles may be Infinity or
// NaN (a pass of zero duration on the fake clock): those values, which
// encoding/json does not read, become strings.
func parseNonFinite(t *testing.T, b []byte) []mllogLine {
	t.Helper()
	for _, v := range []string{"Infinity", "-Infinity", "NaN"} {
		b = bytes.ReplaceAll(b, []byte(`"value": `+v+`,`), []byte(`"value": "`+v+`",`))
	}
	return parseDetail(t, b)
}

// TestDetailTEST04AuditConfig: with TEST04's audit.config, which has three
// model-specific lines LoadGen ignores, mlperfconf reports them (for
// stderr) with the file's absolute path, but the detail log and the summary
// count one warning, as LoadGen does, and no directory of the machine.
func TestDetailTEST04AuditConfig(t *testing.T) {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.config")
	const test04 = "*.Offline.mode = 2\n" +
		"*.Offline.performance_issue_unique = 0\n" +
		"*.Offline.performance_issue_same = 1\n" +
		"*.Offline.performance_issue_same_index = 3\n" +
		"stable-diffusion-xl.Offline.min_query_count = 500\n" +
		"wan-2.2-t2v-a14b.Offline.min_query_count = 20\n" +
		"wan-2.2-t2v-a14b.SingleStream.min_query_count = 20\n"
	if err := os.WriteFile(audit, []byte(test04), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := mlperfconf.Load(mlperfconf.LoadOptions{Model: "resnet50", Scenario: loadgen.Offline, AuditConfigPath: audit})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Warnings); n != 4 {
		t.Fatalf("mlperfconf reports %d warnings, want 4 (LoadGen's and one per model-specific line): %q", n, l.Warnings)
	}
	s := l.Settings
	s.MinDurationMs, s.MinQueryCount, s.OfflineExpectedQPS = 0, 16, 16
	var detail, summary bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		r, err := loadgen.Run(context.Background(), lgSUT{}, null.QSL{Total: 32, Performance: 16}, s, &loadgen.Options{SpinWindow: -1, Warnings: l.Warnings})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteDetail(&detail, r, DetailOptions{Version: "test", PID: 1}); err != nil {
			t.Fatal(err)
		}
		if err := WriteSummary(&summary, r); err != nil {
			t.Fatal(err)
		}
	})
	if strings.Contains(detail.String(), dir) || strings.Contains(summary.String(), dir) {
		t.Errorf("a result file names the directory %s", dir)
	}
	if n := strings.Count(detail.String(), `"is_warning": true`); n != 1 {
		t.Errorf("detail log has %d warnings, want 1", n)
	}
	if !strings.Contains(summary.String(), "\n1 warning encountered.") {
		t.Errorf("summary does not count 1 warning:\n%s", summary.String())
	}
	if !strings.Contains(detail.String(), `"audit.config:5: key \"stable-diffusion-xl.Offline.min_query_count\"`) {
		t.Errorf("detail log lacks the note on line 5 of audit.config")
	}
}
