package cli

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAudit: aimeter audit TEST04 runs the reference and audit runs with
// the run flags, writes both bundles and the verification files, shows
// the verification on the console and exits as it says: 3 on TEST FAIL
// here (target_qps=1000 issues 220 samples, which the null SUT answers
// long before min_duration, so both runs are INVALID; a cheap run, where
// the default's 4.4 million samples cost a minute under -race); flags an
// audit sets itself, and an unknown test, exit 2 before anything runs.
// (compliance.TestTEST04 checks the verdicts themselves on synctest's
// clock, and MLPerf's run_verification.py on the folders;
// TestAuditTEST01 runs TEST01's three runs through the command.)
func TestAudit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	res := runCLI(t, "", "audit", "TEST04", "--scenario", "Offline", "--set", "min_duration=200", "--set", "target_qps=1000", "--output-dir", dir, "-q")
	if res.code != ExitInvalid {
		t.Fatalf("exit %d, want 3:\n%s", res.code, res)
	}
	verify, err := os.ReadFile(filepath.Join(dir, "TEST04", "verify_performance.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(verify), "TEST FAIL: Reference results are invalid\n") {
		t.Errorf("exit 3, but verify_performance.txt says:\n%s", verify)
	}
	if !strings.Contains(res.stdout, string(verify)) {
		t.Errorf("the console does not show the verification:\n%s", res)
	}
	for _, f := range []string{"performance/run_1/manifest.json", "audit/manifest.json", "audit.config", "TEST04/performance/run_1/mlperf_log_detail.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
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
		{[]string{"TEST04", "--eos-token-id", "3"}, "--eos-token-id applies to TEST06, not TEST04"},
		{[]string{"TEST09", "--accuracy-threshold", "50"}, "--accuracy-threshold applies to TEST07, not TEST09"},
		{[]string{"TEST01", "--dtype", "int8"}, `unknown dtype "int8"`},
	} {
		res := runCLI(t, "", append([]string{"audit"}, tc.args...)...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: %s\nwant exit 2 saying %q", tc.args, res, tc.want)
		}
	}
}

// TestAuditTEST01: aimeter audit TEST01 on the in-process null SUT writes
// the three bundles and both verifications; the null SUT's empty answers
// all agree with the accuracy run's, and the exit code follows both
// verdicts (target_qps=1000 keeps the performance runs to 110 samples,
// INVALID, so the exit is 3; compliance.TestTEST01 checks the verdicts on
// synctest's clock).
func TestAuditTEST01(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	res := runCLI(t, "", "audit", "TEST01", "--scenario", "Offline", "--set", "min_duration=100", "--set", "target_qps=1000", "--output-dir", dir, "-q")
	acc, err := os.ReadFile(filepath.Join(dir, "TEST01", "verify_accuracy.txt"))
	if err != nil || !strings.Contains(string(acc), "TEST PASS") {
		t.Fatalf("verify_accuracy.txt %v:\n%s\n%s", err, acc, res)
	}
	perf, _ := os.ReadFile(filepath.Join(dir, "TEST01", "verify_performance.txt"))
	if pass := strings.Contains(string(perf), "TEST PASS"); pass != (res.code == ExitOK) || (!pass && res.code != ExitInvalid) {
		t.Errorf("exit %d, but verify_performance.txt says:\n%s", res.code, perf)
	}
	for _, f := range []string{"accuracy/manifest.json", "performance/run_1/manifest.json", "audit/manifest.json", "TEST01/accuracy/mlperf_log_accuracy.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(res.stdout, "TEST01 accuracy run:") || !strings.Contains(res.stdout, string(acc)) {
		t.Errorf("the console lacks the runs or the verification:\n%s", res)
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

// startServeOpenAI runs `aimeter serve openai` with args on a free port
// until the test ends and returns its URL.
func startServeOpenAI(t *testing.T, args ...string) string {
	t.Helper()
	tw := newTwin(t, append([]string{"serve", "openai", "--addr", "127.0.0.1:0"}, args...)...)
	codec := make(chan int, 1)
	go func() { codec <- tw.main() }()
	t.Cleanup(func() {
		<-tw.notified
		tw.interrupt(errors.New("test over"))
		select {
		case <-codec:
		case <-time.After(30 * time.Second):
			t.Error("aimeter serve openai still serving 30 s after the interrupt")
		}
	})
	addrRE := regexp.MustCompile(`listening on (http://\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := addrRE.FindStringSubmatch(tw.stdout.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-codec:
			t.Fatalf("exited %d before listening:\n%s%s", code, tw.stdout.String(), tw.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 30 s:\n%s", tw.stdout.String())
		}
	}
}
