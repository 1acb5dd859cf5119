package compliance_test

import (
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/compliance"
	"aimeter/loadgen"
)

// TestHint: the hint after a failed performance verification says
// the real cause and the real tolerance: an INVALID reference or audit run
// with its reasons (not noise, and no score comparison), the cache a
// TEST04 audit run that ended early points to, the tolerance of 10 % or
// 20 % (short SingleStream latencies), and a short pass's dependence on
// the machine's load only where both runs were VALID.
func TestHint(t *testing.T) {
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
		got := (&compliance.AuditResult{Test: tc.test, Verification: &v, Reference: tc.ref, Audit: tc.aud}).Hint()
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

// TestHintQuotesFewReasons: an INVALID run's hint quotes its first three
// reasons, each cut at 300 bytes, and counts the rest.
func TestHintQuotesFewReasons(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	ref := &benchmark.Outcome{Dir: "ref", Verdict: benchmark.Verdict{Kind: benchmark.VerdictMLPerf, Reasons: []string{long, "b", "c", "d", "e"}}}
	got := (&compliance.AuditResult{Test: compliance.TEST01, Verification: &compliance.Verification{Threshold: 0.1}, Reference: ref}).Hint()
	if want := strings.Repeat("é", 150) + "… b c (2 more reasons in ref/result.json)"; !strings.HasSuffix(got, want) {
		t.Errorf("hint %q\nwant it to end %q", got, want)
	}
}
