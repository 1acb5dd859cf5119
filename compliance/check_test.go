package compliance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
)

// goodRun writes a VALID run bundle into dir, on synctest's clock.
func goodRun(t *testing.T, dir string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		out, err := benchmark.Run(context.Background(), auditPlan(dir, &serviceSUT{service: time.Millisecond}))
		if err != nil {
			t.Fatalf("the good run: %v", err)
		}
		if !out.Verdict.Pass {
			t.Fatalf("the good run's verdict %+v", out.Verdict)
		}
	})
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// redigest updates the manifest of the bundle in dir for its file name,
// as if the run had written it so.
func redigest(t *testing.T, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	mb, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	for _, f := range m["files"].([]any) {
		if f := f.(map[string]any); f["name"] == name {
			f["bytes"], f["sha256"] = len(b), hex.EncodeToString(sum[:])
		}
	}
	mb, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), mb, 0o644); err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheck: a good folder (a VALID run and a passing audit verification)
// has no error; each deliberate defect of a copy is named by its check.
// TestReadDetailNonFinite: a pass with no successful sample logs its rates
// as LoadGen's C++ prints a non-finite double, bare (Infinity, NaN), which
// MLPerf's Python parser reads; check reads them too instead of calling
// the detail log unparseable.
func TestReadDetailNonFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mlperf_log_detail.txt")
	log := `:::MLLOG {"key": "result_qps_without_loadgen_overhead", "value": Infinity, "time_ms": 1.5, "metadata": {"is_error": false}}
:::MLLOG {"key": "result_token_throughput", "value": NaN, "time_ms": 1.5, "metadata": {"is_error": false}}
:::MLLOG {"key": "result_min_latency_ns", "value": -Infinity, "time_ms": 1.5, "metadata": {"is_error": false}}
:::MLLOG {"key": "early_stopping_met", "value": false, "time_ms": 1.5, "metadata": {"is_error": false}}
`
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := readDetail(path)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"result_qps_without_loadgen_overhead": "Infinity", "result_token_throughput": "NaN",
		"result_min_latency_ns": "-Infinity", "early_stopping_met": "false"} {
		if got := d.str(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	// A value that is not a number stays an error.
	os.WriteFile(path, []byte(`:::MLLOG {"key": "k", "value": Infinite, "time_ms": 1}`+"\n"), 0o644)
	if _, err := readDetail(path); err == nil {
		t.Error("a bare word other than Infinity or NaN was read")
	}
}

func TestCheck(t *testing.T) {
	good := t.TempDir()
	goodRun(t, filepath.Join(good, "run"))
	if err := os.MkdirAll(filepath.Join(good, "TEST04"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(good, "TEST04", "verify_performance.txt"), []byte("Verifying performance.\nTEST PASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(good, CheckOptions{})
	if err != nil || !rep.OK() || len(rep.Runs) != 1 {
		t.Fatalf("the good folder: %v, %d runs, findings %v", err, len(rep.Runs), rep.Findings)
	}
	// The MLPerf log files alone, as LoadGen leaves them, check the same.
	plain := filepath.Join(t.TempDir(), "loadgen-run")
	os.MkdirAll(plain, 0o755)
	for _, f := range []string{"mlperf_log_summary.txt", "mlperf_log_detail.txt", "mlperf_log_accuracy.json"} {
		b, err := os.ReadFile(filepath.Join(good, "run", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(plain, f), b, 0o644)
	}
	if rep, err := Check(filepath.Dir(plain), CheckOptions{}); err != nil || !rep.OK() || len(rep.Runs) != 1 {
		t.Errorf("MLPerf logs without a bundle: %v, %d runs, findings %v", err, len(rep.Runs), rep.Findings)
	}
	edit(t, filepath.Join(plain, "mlperf_log_summary.txt"), "Result is : VALID", "Result is : INVALID")
	if rep, _ := Check(filepath.Dir(plain), CheckOptions{}); rep.OK() {
		t.Error("an INVALID summary without a bundle passed")
	}
	run := func(dir string) string { return filepath.Join(dir, "run") }
	for _, tc := range []struct {
		codes   []string
		reason  string
		breakIt func(dir string)
		opts    CheckOptions
	}{
		{[]string{"summary-missing"}, "the summary log is gone", func(d string) {
			os.Remove(filepath.Join(run(d), "mlperf_log_summary.txt"))
		}, CheckOptions{}},
		{[]string{"invalid", "digest"}, "the summary says INVALID (and no longer matches its digest)", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_summary.txt"), "Result is : VALID", "Result is : INVALID")
		}, CheckOptions{}},
		{[]string{"detail", "digest"}, "a detail line is not an MLLOG entry", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_detail.txt"), ":::MLLOG", "garbage")
		}, CheckOptions{}},
		{[]string{"seeds"}, "the effective seed is not the requested one", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_detail.txt"), `"key": "effective_qsl_rng_seed", "value": 0`, `"key": "effective_qsl_rng_seed", "value": 7`)
		}, CheckOptions{}},
		{[]string{"detail-error"}, "the detail log reports an error", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_detail.txt"), `"is_error": false`, `"is_error": true`)
		}, CheckOptions{}},
		{[]string{"min_duration_met"}, "the minimum duration was not met", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_detail.txt"), `"key": "result_min_duration_met", "value": true`, `"key": "result_min_duration_met", "value": false`)
		}, CheckOptions{}},
		{[]string{"min_queries_met"}, "the minimum query count was not met (MLPerf logs without a bundle: a bundle's verdict is derived's)", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_detail.txt"), `"key": "result_min_queries_met", "value": true`, `"key": "result_min_queries_met", "value": false`)
			os.Remove(filepath.Join(run(d), "manifest.json"))
		}, CheckOptions{}},
		{[]string{"verdict"}, "an accuracy run scored below its target (manifest updated to match): the bundle's verdict fails", func(d string) {
			edit(t, filepath.Join(run(d), "mlperf_log_detail.txt"), `"key": "effective_test_mode", "value": "PerformanceOnly"`, `"key": "effective_test_mode", "value": "AccuracyOnly"`)
			edit(t, filepath.Join(run(d), "run.json"), `"zone": {`, `"accuracy_check": {"Metric": "top-1 accuracy (%)", "Value": 80.5, "Target": 85, "Pass": false}, "zone": {`)
			redigest(t, run(d), "mlperf_log_detail.txt")
			redigest(t, run(d), "run.json")
		}, CheckOptions{}},
		{[]string{"accuracy-log", "digest"}, "the accuracy log is malformed", func(d string) {
			os.WriteFile(filepath.Join(run(d), "mlperf_log_accuracy.json"), []byte(`[{"seq_id": 1, "qsl_idx": 2, "data": "ABC"}`), 0o644)
		}, CheckOptions{}},
		{[]string{"digest"}, "the records changed after the run", func(d string) {
			f, _ := os.OpenFile(filepath.Join(run(d), "records.parquet"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{0})
			f.Close()
		}, CheckOptions{}},
		{[]string{"audit-fail"}, "an audit test failed", func(d string) {
			os.WriteFile(filepath.Join(d, "TEST04", "verify_performance.txt"), []byte("Verifying performance.\nTEST FAIL: Test score invalid\n"), 0o644)
		}, CheckOptions{}},
		{[]string{"no-runs"}, "no run at all", func(d string) {
			os.RemoveAll(run(d))
		}, CheckOptions{}},
		{[]string{"equal-issue"}, "a model whose official settings need equal-issue mode ran without it (manifest updated to match)", func(d string) {
			edit(t, filepath.Join(run(d), "invocation.json"), `"scenario": "SingleStream"`, `"model": "llama2-70b", "scenario": "SingleStream"`)
			redigest(t, run(d), "invocation.json")
		}, CheckOptions{}},
		{[]string{"audit-missing"}, "a resnet50 run without its TEST01 verification, audits required", func(d string) {
			edit(t, filepath.Join(run(d), "invocation.json"), `"scenario": "SingleStream"`, `"model": "resnet50", "scenario": "SingleStream"`)
			redigest(t, run(d), "invocation.json")
		}, CheckOptions{RequireAudits: true}},
		{[]string{"audit-verification-missing"}, "an audit that never wrote its verification", func(d string) {
			os.MkdirAll(filepath.Join(d, "TEST01audit", "audit"), 0o755)
			os.WriteFile(filepath.Join(d, "TEST01audit", "audit.config"), []byte("*.*.mode = 2\n"), 0o644)
		}, CheckOptions{}},
		{[]string{"accuracy-log", "digest"}, "an accuracy log entry outside the data set", func(d string) {
			os.WriteFile(filepath.Join(run(d), "mlperf_log_accuracy.json"), []byte(`[{"seq_id": 1, "qsl_idx": 5000, "data": "01"}]`), 0o644)
		}, CheckOptions{}},
		{[]string{"audit-fail"}, "TEST06 failed, in the words of MLPerf's script", func(d string) {
			os.MkdirAll(filepath.Join(d, "TEST06"), 0o755)
			os.WriteFile(filepath.Join(d, "TEST06", "verify_accuracy.txt"), []byte("First token check pass: True\nEOS check pass: False\nSample length check pass: True\nTEST06 verification failed\n"), 0o644)
		}, CheckOptions{}},
	} {
		d := t.TempDir()
		copyTree(t, good, d)
		tc.breakIt(d)
		rep, err := Check(d, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.reason, err)
		}
		var codes []string
		for _, f := range rep.Findings {
			if f.Severity == SeverityError {
				codes = append(codes, f.Code)
			}
		}
		for _, c := range tc.codes {
			if !slices.Contains(codes, c) {
				t.Errorf("%s: errors %v, want %q among them (findings %v)", tc.reason, codes, c, rep.Findings)
			}
		}
		if rep.OK() {
			t.Errorf("%s: the broken folder passed", tc.reason)
		}
	}
}
