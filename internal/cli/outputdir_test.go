package cli

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunUnusableOutputDir checks that an --output-dir that cannot hold the
// logs is refused with exit 2 before anything runs, naming the directory,
// rather than after the run, when the result would be lost. The SUT is
// --sut openai against aimeter's simulator behind a handler that counts
// completion requests: a run that started before the directory was checked
// sends some, whatever the speed of the machine.
func TestRunUnusableOutputDir(t *testing.T) {
	var sent atomic.Int64
	url := countingSimServer(t, &sent)
	base := t.TempDir()
	file := filepath.Join(base, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name   string
		dir    string
		gbt    bool
		skip   string
		reason string
	}{
		{"a file", file, false, "", "a regular file cannot be a directory"},
		{"a path under a file", filepath.Join(file, "out"), false, "", "MkdirAll fails under a regular file"},
		{"/dev/null", os.DevNull, false, "", "a device is not a directory"},
		{"empty", "", false, "", "an empty name is no directory at all"},
		{"read-only", readOnlyDir(t, base), false, rootSkip(), "a directory without write permission"},
		{"GB/T run, a file", file, true, "", "a GB/T test checks the directory before its main test too"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if r.skip != "" {
				t.Skip(r.skip)
			}
			sut := []string{"--sut", "openai", "--url", url, "--qsl-size", "8", "--input-tokens", "4", "--output-tokens", "2", "--stream=false"}
			args := append([]string{"run", "-q", "--output-dir", r.dir, "--set", "min_duration=200", "--set", "target_qps=100"}, sut...)
			if r.gbt {
				args = append([]string{"run", "-q", "--output-dir", r.dir, "--arrival-mode", "1", "--period", "20ms", "--duration", "200ms"}, sut...)
			}
			before := sent.Load()
			res := runCLI(t, "", args...)
			if res.code != ExitUsage {
				t.Fatalf("%s: want exit %d\n%s", r.reason, ExitUsage, res)
			}
			if n := sent.Load() - before; n != 0 {
				t.Errorf("%s: the SUT got %d requests, so the run started before the directory was checked", r.reason, n)
			}
			if !strings.Contains(res.stderr, "--output-dir") || (strings.TrimSpace(r.dir) != "" && !strings.Contains(res.stderr, r.dir)) {
				t.Errorf("%s: stderr does not name --output-dir %q:\n%s", r.reason, r.dir, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("%s: something ran:\n%s", r.reason, res.stdout)
			}
		})
	}
}

// countingSimServer starts aimeter's OpenAI simulator (see newSimServer)
// behind a handler that adds one to *sent for every completion request,
// and returns its URL.
func countingSimServer(t *testing.T, sent *atomic.Int64) string {
	t.Helper()
	sim := newSimServer(t, "sim-outputdir")
	target, err := neturl.Parse(sim)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "completions") {
			sent.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// rootSkip is why a permission test cannot run: root ignores permissions.
func rootSkip() string {
	if os.Geteuid() == 0 {
		return "running as root, which writes in read-only directories"
	}
	return ""
}

// readOnlyDir returns a directory without write permission in base.
func readOnlyDir(t *testing.T, base string) string {
	dir := filepath.Join(base, "read-only")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	return dir
}

// TestRunWriteFailureStillPrintsResult makes one file of the bundle
// unwritable (records.csv is a non-empty directory, so renaming the
// finished file onto it fails): the run's result must still be printed on
// stdout, and the error must name the file, with exit 1.
func TestRunWriteFailureStillPrintsResult(t *testing.T) {
	rows := []struct {
		name       string
		args       []string
		wantStdout string
		reason     string
	}{
		{"MLPerf run", []string{"--scenario", "Offline", "--set", "target_qps=1000"}, "Result is : ", "the LoadGen verdict is printed before the failure"},
		{"GB/T run", []string{"--arrival-mode", "1", "--period", "50ms", "--duration", "300ms"}, "Lost: ", "the GB/T metrics are printed before the failure"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			blocker := filepath.Join(dir, "records.parquet", "keep")
			if err := os.MkdirAll(blocker, 0o755); err != nil {
				t.Fatal(err)
			}
			res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", dir}, r.args...)...)
			if res.code != ExitFailure {
				t.Fatalf("%s: want exit %d\n%s", r.reason, ExitFailure, res)
			}
			if !strings.Contains(res.stdout, r.wantStdout) {
				t.Errorf("%s: stdout lacks %q:\n%s", r.reason, r.wantStdout, res.stdout)
			}
			if !strings.Contains(res.stdout, "NOT all written") {
				t.Errorf("%s: stdout claims the files were written:\n%s", r.reason, res.stdout)
			}
			if !strings.Contains(res.stderr, filepath.Join(dir, "records.parquet")) {
				t.Errorf("%s: stderr does not name records.parquet:\n%s", r.reason, res.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "mlperf_log_summary.txt")); err != nil {
				t.Errorf("%s: the other files should still be written: %v", r.reason, err)
			}
		})
	}
}

// TestRunRemovesStaleFiles runs a GB/T mixed test with a trace and then a
// plain run into the same directory: the first run's gbt_result.json,
// trace and foreign/ must not survive beside the second run's files.
func TestRunRemovesStaleFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first := runCLI(t, "", "run", "-q", "--output-dir", dir, "--trace", "--arrival-mode", "5", "--mixed-base-mode", "1",
		"--period", "50ms", "--duration", "300ms", "--mixed-lambda", "20")
	if first.code != ExitOK && first.code != ExitInvalid {
		t.Fatalf("first run:\n%s", first)
	}
	stale := []string{"gbt_result.json", "gbt_test.json", "gbt_inference.log", "mlperf_log_trace.json", "foreign"}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("the first run did not write %s, so the test proves nothing: %v", name, err)
		}
	}
	second := runCLI(t, "", "run", "-q", "--output-dir", dir, "--scenario", "Offline", "--set", "target_qps=1000")
	if second.code != ExitOK && second.code != ExitInvalid {
		t.Fatalf("second run:\n%s", second)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s of the first run survived the second run", name)
		}
	}
	if rep := runCLI(t, "", "report", dir); rep.code != ExitOK && rep.code != ExitInvalid {
		t.Errorf("report of the second run:\n%s", rep)
	}
}

// TestRunDurationNotice checks that a GB/T --duration that min_query_count
// overrides is announced before the test, naming min_query_count and the
// value that fits, and that no notice is printed when the duration ends the
// test (the sizing rule of issue 39, benchmark.lengthNotice). A schedule
// of explicit arrivals (mode 1) ends with its last job whatever
// min_query_count: it once said "cannot be honoured" and ran 0.5 s.
func TestRunDurationNotice(t *testing.T) {
	rows := []struct {
		name   string
		args   []string
		want   string // "" = no notice
		reason string
	}{
		{"Poisson at the default rate", []string{"--arrival-mode", "2", "--duration", "3s"}, "--set min_query_count=15",
			"5 jobs/s for 3 s is 15 jobs, below LoadGen's 100"},
		{"min_query_count lowered", []string{"--arrival-mode", "2", "--duration", "3s", "--set", "min_query_count=15"}, "",
			"15 jobs fit into 3 s at 5 jobs/s"},
		{"rate high enough", []string{"--arrival-mode", "2", "--duration", "3s", "--lambda", "100"}, "",
			"300 jobs in 3 s exceed min_query_count"},
		{"fixed period, fewer jobs than min_query_count", []string{"--arrival-mode", "1", "--period", "10ms", "--jobs-per-period", "1", "--duration", "500ms"},
			"", "the schedule's 50 jobs end the test at 0.5 s"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", dir, "--timeout", "100ms"}, r.args...)...)
			if res.code == ExitUsage || res.code == ExitFailure {
				t.Fatalf("%s: the test did not run:\n%s", r.reason, res)
			}
			has := strings.Contains(res.stderr, "longer than its duration")
			switch {
			case r.want == "" && has:
				t.Errorf("%s: unexpected notice:\n%s", r.reason, res.stderr)
			case r.want != "" && (!has || !strings.Contains(res.stderr, r.want) || !strings.Contains(res.stderr, "min_query_count = 100")):
				t.Errorf("%s: stderr lacks the notice with %q:\n%s", r.reason, r.want, res.stderr)
			}
		})
	}
}

// TestRunFullDisk runs into a 256 KiB tmpfs: the directory passes the
// writing test before the run, but the records do not fit. The result must
// still be printed, the error must name the file that could not be written
// and the exit code must be 1. Mounting needs root; the test is skipped
// where the machine does not allow it.
func TestRunFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mountBin, err1 := exec.LookPath("mount")
	umountBin, err2 := exec.LookPath("umount")
	if err1 != nil || err2 != nil {
		t.Skip("mount or umount is not installed")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mountBin, "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("this machine does not allow mounting a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(umountBin, dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	res := runCLI(t, "", "run", "-q", "--output-dir", dir, "--scenario", "Offline")
	if res.code != ExitFailure {
		t.Fatalf("want exit %d for a full disk\n%s", ExitFailure, res)
	}
	if !strings.Contains(res.stdout, "Result is : ") || !strings.Contains(res.stdout, "NOT all written") {
		t.Errorf("the result is not printed, or the files are said to be written:\n%s", res.stdout)
	}
	if !strings.Contains(res.stderr, filepath.Join(dir, "records.parquet")) || !strings.Contains(res.stderr, "no space left") {
		t.Errorf("stderr does not name records.parquet and the full disk:\n%s", res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		t.Error("a manifest was written for an incomplete bundle")
	}
}
