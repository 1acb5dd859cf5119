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
	"aimeter/compliance"
	"aimeter/loadgen"
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

// TestAuditHint: the hint after a failed performance verification says
// the real cause and the real tolerance: an INVALID reference or audit run
// with its reasons (not noise, and no score comparison), the cache a
// TEST04 audit run that ended early points to, the tolerance of 10 % or
// 20 % (short SingleStream latencies), and a short pass's dependence on
// the machine's load only where both runs were VALID.
func TestAuditHint(t *testing.T) {
	run := func(valid, durationMet bool, pass time.Duration, reasons ...string) *benchmark.Outcome {
		return &benchmark.Outcome{
			Verdict: benchmark.Verdict{Kind: benchmark.VerdictMLPerf, Pass: valid, Reasons: reasons},
			Result: &loadgen.Result{Summary: &loadgen.Summary{Valid: valid, MinDurationMet: durationMet,
				Result: loadgen.PerformanceResult{FinalQueryAllSamplesDoneTime: pass.Seconds()}}},
		}
	}
	minDur := "The minimum duration was not met (min_duration 10000 ms). Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."
	for _, tc := range []struct {
		name      string
		test      compliance.Test
		v         compliance.Verification
		ref, aud  *benchmark.Outcome
		want, not []string
	}{
		{"passed", compliance.TEST04, compliance.Verification{Pass: true, Threshold: 0.1},
			run(true, true, time.Second), run(true, true, time.Second), nil, []string{"hint"}},
		{"reference INVALID", compliance.TEST04, compliance.Verification{Scenario: "Offline", Threshold: 0.1},
			run(false, false, 62*time.Millisecond, minDur), run(false, false, 60*time.Millisecond, minDur),
			[]string{"hint: TEST04 failed on an INVALID run, not on its score", "within 10 %", "the reference run was INVALID: " + minDur, "the audit run was INVALID"},
			[]string{"within 0 %", "other load", "result cache"}},
		{"TEST01 audit INVALID", compliance.TEST01, compliance.Verification{Scenario: "Offline", Threshold: 0.1},
			run(true, true, 20*time.Second), run(false, true, 20*time.Second, "3 of 5000 samples failed."),
			[]string{"TEST01 failed on an INVALID run", "within 10 %", "the audit run was INVALID: 3 of 5000 samples failed."},
			[]string{"reference run was", "result cache"}},
		{"TEST04 audit ended early", compliance.TEST04, compliance.Verification{Scenario: "Offline", Threshold: 0.1},
			run(true, true, 2*time.Second), run(false, false, 300*time.Millisecond, minDur),
			[]string{"the audit run was INVALID: " + minDur, "as a result cache does, ends the pass before min_duration"}, []string{"reference run was"}},
		{"short SingleStream", compliance.TEST04, compliance.Verification{Scenario: "SingleStream", Threshold: 0.2, RefScore: 1e5, TestScore: 1.3e5},
			run(true, true, 900*time.Millisecond), run(true, true, 900*time.Millisecond),
			[]string{"hint: the reference run's pass lasted 900ms", "within 20 %", "other load"}, []string{"INVALID"}},
		{"long Offline", compliance.TEST01, compliance.Verification{Scenario: "Offline", Threshold: 0.1, RefScore: 1000, TestScore: 1200},
			run(true, true, 30*time.Second), run(true, true, 30*time.Second),
			[]string{"hint: the audit run's score 1200 is not within 10 % of the reference run's 1000, both runs VALID", "other load"}, []string{"INVALID", "result cache"}},
	} {
		v := tc.v
		got := auditHint(&compliance.Result{Test: tc.test, Verification: &v, Reference: tc.ref, Audit: tc.aud})
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: hint %q\nwant it to say %q", tc.name, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: hint %q\nsays %q", tc.name, got, w)
			}
		}
	}
}
