package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
)

// TestAuditSizedForSUT: the example of aimeter audit's help, TEST04
// Offline against an honest `aimeter serve openai`, and TEST01 Offline
// against an honest KServe server (HTTP; TEST04 over gRPC too): the audit
// probes the SUT, records the sizing (the console, sizing.json) and sizes
// the runs from it, so that both last min_duration and are VALID (the
// defaults expected 10 and 100 samples/s of servers doing thousands, and
// both runs ended in a fraction of a second, INVALID). These servers'
// speed is the machine's, so their comparison is left to its noise. An
// honest server whose delays set its speed (16 connections, 8 tokens
// 10 ms apart: about 200 samples/s) passes; against the same server with
// --cache-responses TEST04 fails: the cached audit run answers its
// repeated sample far faster and ends before min_duration, and the hint
// names that cause. min_duration is 1 s to keep each audit to a few
// seconds (aimeter's 10 s default makes each one last 45 s or more); the
// probe and the sizing are those of the default.
func TestAuditSizedForSUT(t *testing.T) {
	plain := startServeOpenAI(t)
	delays := []string{"--tpot", "10ms", "--output-tokens", "8"}
	slow := startServeOpenAI(t, delays...)
	cached := startServeOpenAI(t, append(delays, "--cache-responses")...)
	httpAddr, grpcAddr := startReferenceKServe(t)
	slowClient := []string{"--max-conns", "16", "--qsl-size", "64", "--input-tokens", "8", "--output-tokens", "8"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		last string // the last line of verify_performance.txt
		hint string // in the hint on stderr ("" for none)
		// cpuBound: the servers' speed is the machine's, which other
		// work on a shared 2-core machine moves by 20-50 % between two
		// runs; both runs must be VALID, and a failed comparison of the
		// two is left to that noise (the hint must then say so).
		cpuBound bool
	}{
		{"help example openai", []string{"TEST04", "--sut", "openai", "--url", plain}, ExitOK, "TEST PASS", "", true},
		{"kserve HTTP", []string{"TEST01", "--sut", "kserve", "--url", "http://" + httpAddr.String()}, ExitOK, "TEST PASS", "", true},
		{"kserve gRPC", []string{"TEST04", "--sut", "kserve", "--grpc", "--url", grpcAddr.String()}, ExitOK, "TEST PASS", "", true},
		{"openai delays", append([]string{"TEST04", "--sut", "openai", "--url", slow}, slowClient...), ExitOK, "TEST PASS", "", false},
		{"openai cache", append([]string{"TEST04", "--sut", "openai", "--url", cached}, slowClient...), ExitInvalid,
			"TEST FAIL: Test results are invalid", "as a result cache does", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "audit")
			start := time.Now()
			res := runCLI(t, "", append(append([]string{"audit"}, tc.args...), "--scenario", "Offline", "--output-dir", dir, "--set", "min_duration=1000")...)
			t.Logf("%v", time.Since(start).Round(time.Millisecond))
			test := tc.args[0]
			verify, _ := os.ReadFile(filepath.Join(dir, test, "verify_performance.txt"))
			if tc.cpuBound && res.code == ExitInvalid && strings.HasSuffix(string(verify), "TEST FAIL: Test score invalid\n") {
				t.Logf("two VALID runs compared outside the tolerance (the machine's noise):\n%s", verify)
				tc.code, tc.last, tc.hint = ExitInvalid, "TEST FAIL: Test score invalid", "the machine's other load"
			}
			if res.code != tc.code || !strings.HasSuffix(string(verify), tc.last+"\n") {
				t.Fatalf("exit %d, want %d ending %q; verify_performance.txt:\n%s\n%s", res.code, tc.code, tc.last, verify, res)
			}
			if !strings.Contains(res.stdout, test+" sizing: ") || !strings.Contains(res.stdout, "sized with --set target_qps=") {
				t.Errorf("the console does not say how the runs were sized:\n%s", res.stdout)
			}
			var sz benchmark.Sizing
			b, err := os.ReadFile(filepath.Join(dir, "sizing.json"))
			if err := errors.Join(err, json.Unmarshal(b, &sz)); err != nil || sz.Rate <= 0 || len(sz.Probes) == 0 || len(sz.Set) != 1 {
				t.Errorf("sizing.json %v:\n%s", err, b)
			}
			if tc.code == ExitOK || tc.cpuBound {
				for _, run := range []string{"performance/run_1", "audit"} {
					s := readFileT(t, filepath.Join(dir, run, "mlperf_log_summary.txt"))
					if !strings.Contains(s, "Result is : VALID") {
						t.Errorf("%s:\n%s", run, s)
					}
				}
			}
			if got := strings.Contains(res.stderr, "hint: "); got != (tc.hint != "") || !strings.Contains(res.stderr, tc.hint) {
				t.Errorf("want a hint saying %q:\n%s", tc.hint, res.stderr)
			}
		})
	}
}
