package compliance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// summary is a minimal mlperf_log_summary.txt with what the verification
// reads.
func summary(scenario, result, score, latency string, errors int) string {
	var b strings.Builder
	b.WriteString("================================================\nMLPerf Results Summary\n================================================\n")
	b.WriteString("SUT name : X\nScenario : " + scenario + "\nMode     : PerformanceOnly\n")
	switch scenario {
	case "Server":
		b.WriteString("Completed samples per second    : " + score + "\n")
	case "Offline":
		b.WriteString("Samples per second: " + score + "\n")
	default:
		b.WriteString("90th percentile latency (ns) : 100\nEarly stopping 90th percentile estimate : " + score + "\n")
	}
	b.WriteString("Result is : " + result + "\n\n================================================\nTest Parameters Used\n================================================\n")
	if latency != "" {
		b.WriteString("target_latency (ns): " + latency + "\n")
	}
	if errors > 0 {
		b.WriteString("\n" + strconv.Itoa(errors) + " ERRORS encountered. See detailed log.\n")
	} else {
		b.WriteString("\nNo errors encountered during test.\n")
	}
	return b.String()
}

// TestVerifyPerformance: each verdict of MLPerf's TEST04
// verify_performance.py, from summaries made for it; where python3 and
// MLPerf's compliance folder are here, the script's output is compared
// line for line.
func TestVerifyPerformance(t *testing.T) {
	for _, tc := range []struct {
		ref, test string
		pass      bool
		last      string
		reason    string
	}{
		{summary("Offline", "VALID", "1000.5", "", 0), summary("Offline", "VALID", "1099", "", 0), true, "TEST PASS", "Offline within 10 %"},
		{summary("Offline", "VALID", "1000", "", 0), summary("Offline", "VALID", "1100", "", 0), false, "TEST FAIL: Test score invalid", "Offline at exactly +10 %: the script wants strictly below"},
		{summary("SingleStream", "VALID", "10000", "", 0), summary("SingleStream", "VALID", "8400", "", 0), true, "TEST PASS", "a short SingleStream latency: 20 % allowed (100000 vs 119047.6)"},
		{summary("SingleStream", "VALID", "1000", "", 0), summary("SingleStream", "VALID", "900", "", 0), false, "TEST FAIL: Test score invalid", "a fast SingleStream (score 1e6 > 200000): 10 % only"},
		{summary("Server", "VALID", "500", "1000000", 0), summary("Server", "VALID", "500", "2000000", 0), true, "TEST PASS",
			"Server target latencies differ, which the script means to fail but its pattern never matches (see readSummary)"},
		{summary("Offline", "INVALID", "1000", "", 2), summary("Offline", "VALID", "1000", "", 0), false, "TEST FAIL: Reference results are invalid", "an INVALID reference ends it before its error count"},
		{summary("Offline", "VALID", "1000", "", 3), summary("Offline", "INVALID", "1000", "", 0), false, "TEST FAIL: Test results are invalid", "a warning for the reference's errors, then an INVALID test"},
		{summary("Offline", "VALID", "1000", "", 0), summary("Server", "VALID", "1000", "", 0), false, "Test and reference scenarios do not match!", "different scenarios"},
	} {
		v, err := VerifyPerformance(strings.NewReader(tc.ref), strings.NewReader(tc.test))
		lines := strings.Split(strings.TrimSpace(v.Output), "\n")
		if err != nil || v.Pass != tc.pass || lines[len(lines)-1] != tc.last {
			t.Errorf("%s: pass %v, %v:\n%s\nwant pass %v ending %q", tc.reason, v.Pass, err, v.Output, tc.pass, tc.last)
		}
		compareWithScript(t, tc.reason, tc.ref, tc.test, v.Output)
	}
}

// compareWithScript runs MLPerf's TEST04 verify_performance.py on the two
// summaries and compares what it prints with want.
func compareWithScript(t *testing.T, name, ref, test, want string) {
	t.Helper()
	script, py, ok := mlperfScript(t, "TEST04", "verify_performance.py")
	if !ok {
		return
	}
	dir := t.TempDir()
	rp, tp := filepath.Join(dir, "ref.txt"), filepath.Join(dir, "test.txt")
	os.WriteFile(rp, []byte(ref), 0o644)
	os.WriteFile(tp, []byte(test), 0o644)
	out, _ := exec.Command(py, script, "-r", rp, "-t", tp).CombinedOutput()
	if string(out) != want {
		t.Errorf("%s: MLPerf's verify_performance.py printed\n%s\naimeter\n%s", name, out, want)
	}
}
