package verdict

import (
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/shard"
)

// TestOf: the one verdict of a run, with every reason it breaks a
// rule on a line of its own (issue 39). Each row says why it is there.
func TestOf(t *testing.T) {
	valid := func() *loadgen.Summary {
		return &loadgen.Summary{MinDurationMet: true, MinQueriesMet: true, PerfConstraintsMet: true, EarlyStoppingMet: true, Valid: true,
			SampleCount: 100, Effective: loadgen.Effective{Scenario: loadgen.Server, MinDurationMs: 1000, MinQueryCount: 100, TargetLatencyPercentile: 0.99}}
	}
	ranOut := loadgen.Event{Key: "error_runtime", Error: true,
		Value: "Ending early: Ran out of generated queries to issue before the minimum query count and test duration were reached."}
	mode := func(m gbt.ArrivalMode) *gbt.Test {
		return &gbt.Test{Arrival: gbt.Arrival{Mode: m, Duration: 3 * time.Second}, EndNs: int64(150 * time.Millisecond)}
	}
	within := gbt.Metrics{Loss: gbt.Loss{Sent: 7, LossCheck: gbt.LossCheck{Threshold: 0.01, Valid: true}}}
	over := gbt.Metrics{Loss: gbt.Loss{Sent: 10, Lost: 5, LossCheck: gbt.LossCheck{Rate: 0.5, Threshold: 0.01, Valid: false}}}
	foreignOver := within
	foreignOver.Foreign = &gbt.PartMetrics{Loss: over.Loss}
	mixedOver0 := mode(gbt.ModeMixed)
	zero := gbt.ModeContinuous
	mixedOver0.UnderlyingMode = &zero

	rows := []struct {
		why     string
		sum     func(*loadgen.Summary)
		events  []loadgen.Event
		interr  string
		test    *gbt.Test
		m       *gbt.Metrics
		acc     *bundle.AccuracyCheck
		word    string
		reasons []string // each must be a part of one reason, in order
	}{
		{why: "every check passed: VALID, no reason", word: "VALID"},
		{why: "early stopping decides an all-fail run: the reason says how many more queries it needs",
			sum: func(s *loadgen.Summary) {
				s.Valid, s.EarlyStoppingMet = false, false
				s.EarlyStoppingLines = []string{" * Run unsuccessful.", " * Processed 40 queries.", " * Would need to run at least 622 more queries,", " with the run being successful if every additional", " query were under latency."}
			},
			word: "INVALID", reasons: []string{"Early stopping was not satisfied: Processed 40 queries. Would need to run at least 622 more queries,"}},
		{why: "a pass that ran out of queries: the minimum duration with LoadGen's advice, said once (LoadGen's logged error is no second reason)",
			sum: func(s *loadgen.Summary) {
				s.Valid, s.MinDurationMet = false, false
				s.MinDurationRecommendation = "Increase the target QPS so the loadgen pre-generates more queries."
			},
			events: []loadgen.Event{ranOut}, word: "INVALID",
			reasons: []string{"minimum duration was not met (min_duration 1000 ms). Increase the target QPS"}},
		{why: "every failed sample logs an error: the failures are one reason, not one a sample",
			sum: func(s *loadgen.Summary) {
				s.Valid, s.EarlyStoppingMet = false, false
				s.EarlyStoppingLines = []string{" * Only processed 0 queries.", " * Need to process at least 64 queries for early stopping."}
			},
			events: []loadgen.Event{{Key: "error_runtime", Error: true, Value: "sample 2 failed: connection reset by peer"},
				{Key: "error_runtime", Error: true, Value: "10853 further SUT errors not logged in full"}},
			word: "INVALID", reasons: []string{"Early stopping was not satisfied: Only processed 0 queries. Need to process at least 64 queries"}},
		{why: "a missed latency bound and a short run: only the latency advice (a longer run would not fix the bound)",
			sum: func(s *loadgen.Summary) {
				s.Valid, s.MinDurationMet, s.PerfConstraintsMet = false, false, false
				s.PerfConstraintsRecommendation, s.MinDurationRecommendation = "Reduce target QPS to improve latency.", "Increase the target QPS so the loadgen pre-generates more queries."
			},
			word: "INVALID", reasons: []string{"Reduce target QPS", "(min_duration 1000 ms)."}},
		{why: "an interrupted run gets no advice on its target",
			sum: func(s *loadgen.Summary) {
				s.Valid, s.MinDurationMet = false, false
				s.MinDurationRecommendation = "Increase the target QPS so the loadgen pre-generates more queries."
				s.AimeterReasons = []string{"Issuing stopped early: interrupted."}
			},
			interr: "interrupted", word: "INVALID", reasons: []string{"(min_duration 1000 ms).", "Issuing stopped early"}},
		{why: "failures decide: aimeter's reason alone, no LoadGen check",
			sum: func(s *loadgen.Summary) {
				s.Valid, s.EarlyStoppingMet, s.FailuresDecided = false, false, true
				s.AimeterReasons = []string{"4 of 4 samples failed (100 %): the SUT reported an error for them, and none is allowed (max_error_rate 0)."}
			},
			word: "INVALID", reasons: []string{"4 of 4 samples failed"}},
		{why: "a VALID pass whose accuracy misses its target is INVALID, and says so",
			acc: &bundle.AccuracyCheck{Metric: "top-1", Value: 0.5, Target: 0.9, Pass: false}, word: "INVALID", reasons: []string{"Accuracy top-1 0.5 is below its target 0.9."}},
		{why: "GB/T mode 0 that ran out of queries after 0.15 s of 3 s is not a PASS, whatever its loss (GB-7.4.2)",
			sum: func(s *loadgen.Summary) { s.Valid, s.MinDurationMet = false, false }, events: []loadgen.Event{ranOut},
			test: mode(gbt.ModeContinuous), m: &within, word: "FAIL", reasons: []string{"The test ended after 150ms of its 3s duration"}},
		{why: "GB/T mode 5 over mode 0 that ran out: the same",
			sum: func(s *loadgen.Summary) { s.Valid, s.MinDurationMet = false, false }, events: []loadgen.Event{ranOut},
			test: mixedOver0, m: &within, word: "FAIL", reasons: []string{"ended after 150ms of its 3s"}},
		{why: "GB/T mode 1: its own schedule spans the duration; LoadGen's min duration and early stopping are not GB/T rules",
			sum:  func(s *loadgen.Summary) { s.Valid, s.MinDurationMet, s.EarlyStoppingMet = false, false, false },
			test: mode(gbt.ModeFixedPeriod), m: &within, word: "PASS"},
		{why: "GB/T mode 4 has no duration to run",
			sum:  func(s *loadgen.Summary) { s.Valid, s.MinDurationMet = false, false },
			test: mode(gbt.ModeOffline), m: &within, word: "PASS"},
		{why: "GB/T loss over the threshold (GB-7.7.1-c-2)", test: mode(gbt.ModePoisson), m: &over, word: "FAIL",
			reasons: []string{"The test lost 5 of 10 samples (0 failed), a loss rate of 0.5000 over the threshold 0.0100"}},
		{why: "a mixed test's foreign jobs over the threshold fail it (IN-50)", test: mode(gbt.ModePoisson), m: &foreignOver, word: "FAIL",
			reasons: []string{"foreign jobs lost 5 of 10"}},
		{why: "GB/T test stopped early by the memory budget", sum: func(s *loadgen.Summary) { s.Result.StopReason = "memory budget reached" },
			test: mode(gbt.ModePoisson), m: &within, word: "FAIL", reasons: []string{"Issuing stopped early after 150ms of its 3s duration: memory budget reached."}},
		{why: "GB/T test cut by the run's timeout: interrupted, said once (not also as a pass that ran out of queries)",
			sum: func(s *loadgen.Summary) { s.MinDurationMet = false }, interr: "run timeout of 200ms reached", events: []loadgen.Event{ranOut},
			test: mode(gbt.ModePoisson), m: &within, word: "FAIL", reasons: []string{"The test was interrupted after 150ms of its 3s duration: run timeout of 200ms reached."}},
	}
	for _, row := range rows {
		s := valid()
		if row.sum != nil {
			row.sum(s)
		}
		b := &bundle.Bundle{Result: &loadgen.Result{Summary: s, Events: row.events, Interrupted: row.interr}, AccuracyCheck: row.acc}
		gbt.SetTest(b, row.test)
		v := Of(b, row.m)
		if v.Word() != row.word {
			t.Errorf("%s: verdict %s, want %s (%q)", row.why, v.Word(), row.word, v.Reasons)
			continue
		}
		if v.Pass != (len(v.Reasons) == 0) {
			t.Errorf("%s: pass %v with reasons %q: a failure without a reason, or a pass with one", row.why, v.Pass, v.Reasons)
		}
		if len(v.Reasons) != len(row.reasons) {
			t.Errorf("%s: reasons %q, want %d like %q", row.why, v.Reasons, len(row.reasons), row.reasons)
			continue
		}
		for i, want := range row.reasons {
			if !strings.Contains(v.Reasons[i], want) {
				t.Errorf("%s: reason %d %q lacks %q", row.why, i, v.Reasons[i], want)
			}
		}
	}
	if v := Of(&bundle.Bundle{Result: &loadgen.Result{}}, nil); v.Kind != None || v.Word() != "-" {
		t.Errorf("a run without a pass or a score decided nothing: %+v", v)
	}
}

// TestOfShard: one shard of a test has no verdict of its own, whatever its
// part's figures (a VALID-looking pass here), so result.json, the report,
// the console and the exit code all say "-" with the same note; a record of
// one shard is a whole test with a common start and keeps its verdict.
func TestOfShard(t *testing.T) {
	valid := func() *bundle.Bundle {
		return &bundle.Bundle{Result: &loadgen.Result{Summary: &loadgen.Summary{Valid: true}}}
	}
	for _, tc := range []struct {
		count int
		want  Kind
		why   string
	}{
		{4, None, "a part of a four-shard test: only the merge is judged"},
		{1, MLPerf, "a whole test that only used a common start"},
	} {
		b := valid()
		shard.Part.Set(b, &shard.Record{Index: 0, Count: tc.count})
		v := Of(b, nil)
		if v.Kind != tc.want {
			t.Errorf("count %d (%s): kind %s, want %s", tc.count, tc.why, v.Kind, tc.want)
		}
		if tc.want == None && (v.Word() != "-" || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "shard 0/4: this bundle is one part of a test")) {
			t.Errorf("count %d: %+v, want no verdict with the shard's note", tc.count, v)
		}
	}
}
