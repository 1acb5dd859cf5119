package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAudit: aimeter audit TEST04 runs the reference and audit runs with
// the run flags, writes both bundles and the verification files, and
// exits 0 on TEST PASS or 3 on TEST FAIL, as the verification says (the
// null SUT's 100-nanosecond latencies make either possible); flags an
// audit sets itself, and an unknown test, exit 2 before anything runs.
// (compliance.TestTEST04 checks the verdicts themselves on synctest's
// clock, and MLPerf's run_verification.py on the folders.)
func TestAudit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	res := runCLI(t, "", "audit", "TEST04", "--scenario", "Offline", "--set", "min_duration=200", "--output-dir", dir, "-q")
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("exit %d:\n%s", res.code, res)
	}
	verify, err := os.ReadFile(filepath.Join(dir, "TEST04", "verify_performance.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if pass := strings.Contains(string(verify), "TEST PASS"); pass != (res.code == ExitOK) {
		t.Errorf("exit %d, but verify_performance.txt says:\n%s", res.code, verify)
	}
	if !strings.Contains(res.stdout, string(verify)) {
		t.Errorf("the console does not show the verification:\n%s", res)
	}
	for _, f := range []string{"performance/run_1/manifest.json", "audit/manifest.json", "audit.config", "TEST04/performance/run_1/mlperf_log_detail.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// TEST01 with the null SUT: three runs, both verifications.
	dir01 := filepath.Join(t.TempDir(), "audit01")
	res01 := runCLI(t, "", "audit", "TEST01", "--scenario", "Offline", "--set", "min_duration=200", "--output-dir", dir01, "-q")
	if res01.code != ExitOK && res01.code != ExitInvalid || !strings.Contains(res01.stdout, "num_perf_log_qsl_idx_match") {
		t.Fatalf("TEST01: %s", res01)
	}
	for _, f := range []string{"accuracy/manifest.json", "TEST01/verify_accuracy.txt", "TEST01/verify_performance.txt", "TEST01/accuracy/mlperf_log_accuracy.json"} {
		if _, err := os.Stat(filepath.Join(dir01, f)); err != nil {
			t.Error(err)
		}
	}
	// The audit run's bundle regenerates like any other.
	if res := runCLI(t, "", "report", filepath.Join(dir, "audit")); res.code != ExitOK && res.code != ExitInvalid {
		t.Errorf("aimeter report of the audit run: %s", res)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"TEST99"}, "unknown audit test \"TEST99\""},
		{[]string{"TEST04", "--mode", "accuracy"}, "--mode: an audit runs its own runs"},
		{[]string{"TEST04", "--audit-config", "x"}, "--audit-config: an audit runs its own runs"},
	} {
		res := runCLI(t, "", append([]string{"audit"}, tc.args...)...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: %s\nwant exit 2 saying %q", tc.args, res, tc.want)
		}
	}
}

// TestCheckCommand: aimeter check prints one line per finding and a count,
// and exits 0 for a folder without errors, 3 with errors, 2 for a missing
// folder.
func TestCheckCommand(t *testing.T) {
	dir := runQuick(t, "Offline", []int{ExitOK, ExitInvalid})
	res := runCLI(t, "", "check", dir)
	if res.code != ExitOK && res.code != ExitInvalid || !strings.Contains(res.stdout, "1 runs checked:") {
		t.Fatalf("check of a run: %s", res)
	}
	if err := os.Remove(filepath.Join(dir, "mlperf_log_summary.txt")); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, "", "check", dir)
	if res.code != ExitInvalid || !strings.Contains(res.stdout, "ERROR "+dir+": no readable mlperf_log_summary.txt") {
		t.Errorf("check of a run without its summary: %s", res)
	}
	if res := runCLI(t, "", "check", filepath.Join(dir, "absent")); res.code != ExitUsage {
		t.Errorf("check of a missing folder: %s", res)
	}
}
