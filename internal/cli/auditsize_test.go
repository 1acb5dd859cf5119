package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/benchmark"
)

// TestAuditSizedForSUT: aimeter audit TEST04 Offline against an
// `aimeter serve openai` whose delays set its speed (16 connections, 8
// tokens 10 ms apart: about 200 samples/s) but that caches answers
// (--cache-responses): the audit probes the SUT, says how it sized the
// runs on the console and in sizing.json, and exits 3 with a hint naming
// the cause: the cached audit run answers its repeated sample far faster
// and ends before min_duration. min_duration is 1 s to keep the audit to
// a few seconds. (compliance.TestSizedAuditAgainstServers sizes and runs
// the audits against honest servers: OpenAI, KServe HTTP and gRPC.)
func TestAuditSizedForSUT(t *testing.T) {
	cached := startServeOpenAI(t, "--tpot", "10ms", "--output-tokens", "8", "--cache-responses")
	dir := filepath.Join(t.TempDir(), "audit")
	res := runCLI(t, "", "audit", "TEST04", "--sut", "openai", "--url", cached, "--max-conns", "16", "--qsl-size", "64",
		"--input-tokens", "8", "--output-tokens", "8", "--scenario", "Offline", "--output-dir", dir, "--set", "min_duration=1000")
	verify, _ := os.ReadFile(filepath.Join(dir, "TEST04", "verify_performance.txt"))
	if res.code != ExitInvalid || !strings.HasSuffix(string(verify), "TEST FAIL: Test results are invalid\n") {
		t.Fatalf("exit %d, want 3 ending %q; verify_performance.txt:\n%s\n%s", res.code, "TEST FAIL: Test results are invalid", verify, res)
	}
	if !strings.Contains(res.stdout, "TEST04 sizing: ") || !strings.Contains(res.stdout, "sized with --set target_qps=") {
		t.Errorf("the console does not say how the runs were sized:\n%s", res.stdout)
	}
	var sz benchmark.Sizing
	b, err := os.ReadFile(filepath.Join(dir, "sizing.json"))
	if err := errors.Join(err, json.Unmarshal(b, &sz)); err != nil || sz.Rate <= 0 || len(sz.Probes) == 0 || len(sz.Set) != 1 {
		t.Errorf("sizing.json %v:\n%s", err, b)
	}
	if !strings.Contains(res.stderr, "hint: ") || !strings.Contains(res.stderr, "as a result cache does") {
		t.Errorf("want a hint saying %q:\n%s", "as a result cache does", res.stderr)
	}
}
