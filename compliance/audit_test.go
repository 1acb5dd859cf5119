package compliance

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen/loadgentest"
)

// label is the ground truth of the test data set: ten classes.
func label(i uint64) uint8 { return uint8(i % 10) }

// labelledPlan is auditPlan over a labelled data set (top-1 target 99 %).
func labelledPlan(dir string, s *serviceSUT) benchmark.Plan {
	p := auditPlan(dir, s)
	p.Custom.Labels, p.Custom.Target = label, 0.99
	return p
}

func runAudit(t *testing.T, test Test, p benchmark.Plan, o Options) *AuditResult {
	t.Helper()
	var res *AuditResult
	var err error
	synctest.Test(t, func(t *testing.T) {
		res, err = AuditWith(context.Background(), test, p, o)
	})
	if err != nil {
		t.Fatalf("%s: %v", test, err)
	}
	return res
}

// TestTEST01: a SUT that answers the same in both modes passes; one that
// answers garbage once the accuracy run is over (the first 4,096 samples)
// fails, the fallback's scores confirming it; one whose answers differ on
// a few samples fails the comparison but passes the fallback, whose
// baseline and scores are written beside the verification. MLPerf's
// run_verification.py agrees on each folder.
func TestTEST01(t *testing.T) {
	const accuracyRun = 4096
	for _, tc := range []struct {
		name     string
		answer   func(n int, i uint64) []byte
		pass     bool
		fallback bool
	}{
		{"same answers", func(n int, i uint64) []byte { return []byte{label(i)} }, true, false},
		{"garbage in performance mode", func(n int, i uint64) []byte {
			if n >= accuracyRun {
				return []byte{0xEE}
			}
			return []byte{label(i)}
		}, false, true},
		{"a few answers differ", func(n int, i uint64) []byte {
			if n >= accuracyRun && i%500 == 7 {
				return []byte{label(i) + 1}
			}
			return []byte{label(i)}
		}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res := runAudit(t, TEST01, labelledPlan(dir, &serviceSUT{service: time.Millisecond, answer: tc.answer}), Options{})
			if res.Pass != tc.pass || res.Accuracy == nil || res.Verification == nil || !res.Verification.Pass {
				t.Fatalf("pass %v, want %v:\n%s", res.Pass, tc.pass, res.Output())
			}
			if tc.fallback != strings.Contains(res.Accuracy.Output, "baseline fallback") {
				t.Errorf("fallback %v:\n%s", tc.fallback, res.Accuracy.Output)
			}
			for _, f := range []string{"accuracy/manifest.json", "performance/run_1/manifest.json", "audit/manifest.json", "audit/mlperf_log_accuracy.json",
				"TEST01/verify_accuracy.txt", "TEST01/verify_performance.txt", "TEST01/accuracy/mlperf_log_accuracy.json", "TEST01/performance/run_1/mlperf_log_detail.txt"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "TEST01", "accuracy", "baseline_accuracy.txt")); (err == nil) != tc.fallback {
				t.Errorf("baseline_accuracy.txt: %v, want it written only by the fallback", err)
			}
			// aimeter check passes a passing audit's folder, bundles
			// and all, and names a failing one's verification.
			rep, err := Check(dir, CheckOptions{})
			if err != nil || rep.OK() != tc.pass || len(rep.Runs) != 3 {
				t.Errorf("aimeter check: %v, %d runs, OK %v, want %v: %v", err, len(rep.Runs), rep.OK(), tc.pass, rep.Findings)
			}
			// MLPerf's script knows no fallback: it fails every folder
			// whose answers differ.
			checkWithMLPerf(t, TEST01, dir, tc.pass && !tc.fallback)
		})
	}
}

// tokens encodes int32 token IDs as an LLM harness logs them.
func tokens(ids ...int32) []byte {
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(id))
	}
	return b
}

// llmPlan is a short token-mode Server plan for TEST06, TEST07 and TEST09.
func llmPlan(dir string, s *serviceSUT) benchmark.Plan {
	s.tokens = true
	return benchmark.Plan{
		Custom: &benchmark.Custom{SUT: s, QSL: &loadgentest.QSL{Total: 256}},
		Settings: benchmark.Settings{Scenario: "Server", Set: []string{"use_token_latencies=1", "target_qps=100", "min_query_count=100",
			"ttft_latency=1000", "tpot_latency=1000"}},
		OutputDir: dir, NoReport: true, SpinWindow: -1,
	}
}

// TestTEST06: answers that end in one EOS and begin with their first
// token pass; answers ending in two EOS, or whose first token differs
// from the one reported first, fail.
func TestTEST06(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(n int, i uint64) []byte
		pass   bool
		line   string
	}{
		{"consistent", func(n int, i uint64) []byte { return tokens(int32(i)+10, 5, 6, 2) }, true, "TEST06 verification complete"},
		{"two trailing EOS", func(n int, i uint64) []byte { return tokens(int32(i)+10, 5, 2, 2) }, false, "EOS check pass: False"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res := runAudit(t, TEST06, llmPlan(dir, &serviceSUT{service: time.Millisecond, answer: tc.answer}), Options{})
			if res.Pass != tc.pass || !strings.Contains(res.Output(), tc.line) {
				t.Fatalf("pass %v, want %v with %q:\n%s", res.Pass, tc.pass, tc.line, res.Output())
			}
			checkWithMLPerf(t, TEST06, dir, tc.pass, "--scenario", "Server")
		})
	}
}

// TestTEST07: every answer of the performance run is scored; the test
// passes when the score reaches the threshold.
func TestTEST07(t *testing.T) {
	half := func(n int, i uint64) []byte {
		if i%2 == 0 {
			return []byte{label(i) + 1}
		}
		return []byte{label(i)}
	}
	for _, tc := range []struct {
		name      string
		answer    func(n int, i uint64) []byte
		threshold float64
		pass      bool
	}{
		{"all right, threshold 99", func(n int, i uint64) []byte { return []byte{label(i)} }, 99, true},
		{"half right, threshold 60.698", half, 0, false},
		{"half right, threshold 40", half, 40, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := labelledPlan(dir, &serviceSUT{service: time.Millisecond, answer: tc.answer})
			p.Settings.Set = append(p.Settings.Set, "min_query_count=300")
			res := runAudit(t, TEST07, p, Options{AccuracyThreshold: tc.threshold})
			if res.Pass != tc.pass || !strings.Contains(res.Output(), "TEST07 Verification Summary") {
				t.Fatalf("pass %v, want %v:\n%s", res.Pass, tc.pass, res.Output())
			}
			conf, _ := os.ReadFile(filepath.Join(dir, "audit.config"))
			if !strings.Contains(string(conf), "test07_accuracy_threshold") {
				t.Errorf("audit.config has no threshold:\n%s", conf)
			}
		})
	}
}

// TestTEST09: answers of 8 tokens pass bounds around 8 and fail bounds
// above it; MLPerf's run_verification.py writes the same file.
func TestTEST09(t *testing.T) {
	answer := func(n int, i uint64) []byte { return tokens(1, 2, 3, 4, 5, 6, 7, 8) }
	for _, tc := range []struct {
		lo, hi float64
		pass   bool
	}{{7.5, 8.5, true}, {9, 12.25, false}} {
		dir := t.TempDir()
		res := runAudit(t, TEST09, llmPlan(dir, &serviceSUT{service: time.Millisecond, answer: answer}), Options{MinOutputTokens: tc.lo, MaxOutputTokens: tc.hi})
		if res.Pass != tc.pass || !strings.Contains(res.Output(), "Mean output tokens: 8.00") {
			t.Fatalf("bounds [%v, %v]: pass %v, want %v:\n%s", tc.lo, tc.hi, res.Pass, tc.pass, res.Output())
		}
		checkWithMLPerf(t, TEST09, dir, tc.pass, "--audit-config", filepath.Join(dir, "audit.config"))
	}
}

// TestBadAccuracyLog: each defect of an accuracy log is one error naming
// the file, the entry and why.
func TestBadAccuracyLog(t *testing.T) {
	good := `[
{"seq_id": 0, "qsl_idx": 3, "data": "01000000"},
{"seq_id": 1, "qsl_idx": 4, "data": "02000000"}
]`
	for _, tc := range []struct {
		name, log, detail, dtype string
		want                     []string
	}{
		{"truncated", good[:60], "", "int32", []string{"a.json", "accuracy log entry 1", "unexpected EOF"}},
		{"not an array", `{"seq_id": 0}`, "", "int32", []string{"a.json", "want a JSON array"}},
		{"odd hex", strings.Replace(good, `"02000000"`, `"0200000"`, 1), "", "int32", []string{"accuracy log entry 1", "seq_id 1", "odd length hex"}},
		{"hex of the wrong length", strings.Replace(good, `"02000000"`, `"020000"`, 1), "", "int32", []string{"accuracy log entry 1 (seq_id 1, qsl_idx 4)", "3 bytes (6 hex digits)", "not a whole number of int32 values"}},
		{"no data", strings.Replace(good, `, "data": "02000000"`, ``, 1), "", "int32", []string{"accuracy log entry 1", "data are required"}},
		{"index outside the data set", good, `:::MLLOG {"key": "qsl_reported_total_count", "value": 4, "metadata": {"is_error": false}}` + "\n", "int32",
			[]string{"accuracy log entry 1 (seq_id 1)", "qsl_idx 4 is outside the data set of 4 samples"}},
		{"unknown dtype", good, "", "int8", []string{`unknown dtype "int8"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.json")
			os.WriteFile(path, []byte(tc.log), 0o644)
			os.WriteFile(filepath.Join(dir, "ref.json"), []byte(good), 0o644)
			if tc.detail != "" {
				os.WriteFile(filepath.Join(dir, "mlperf_log_detail.txt"), []byte(tc.detail), 0o644)
			}
			_, err := VerifyAccuracyFiles(filepath.Join(dir, "ref.json"), path, tc.dtype)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
