// Package verdict decides a run's verdict from its bundle, in one
// function (Of) that every writer calls: the console, the exit code,
// result.json, the report, the summary's note, sweeps, the results store,
// the tester's service and `aimeter check`. It imports only the bundle's
// own packages, so that every one of them can call it.
package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/shard"
)

// Kind says which rules decided a run's verdict.
type Kind string

// The rules that decide a verdict.
const (
	// MLPerf is LoadGen's VALID or INVALID (with aimeter's checks:
	// failures over max_error_rate, lost samples, an interrupted run).
	MLPerf Kind = "MLPerf"
	// GBT is the GB/T 45087 loss-rate verdict (GB-7.7.1-c-2).
	GBT Kind = "GB/T 45087"
	// Accuracy is an accuracy-only run's score against its target.
	Accuracy Kind = "accuracy"
	// None is a run that decided nothing (an accuracy run without
	// labels, a run interrupted before it measured).
	None Kind = "none"
)

// Verdict is what a run found, the same on the console, in the summary,
// the report, result.json and the exit code.
type Verdict struct {
	Kind Kind `json:"kind"`
	// Pass is VALID for MLPerf, PASS for GB/T and accuracy; false for
	// VerdictNone.
	Pass bool `json:"pass"`
	// Reasons say, one line each, why a run is not VALID or PASS: every
	// rule it broke (LoadGen's validity checks with what they would need,
	// the GB/T loss, a test that ended before its duration, failures, an
	// accuracy below its target). Empty when Pass.
	Reasons []string `json:"reasons,omitempty"`
}

// Word is the verdict as the console and the report say it: VALID or
// INVALID for an MLPerf run, PASS or FAIL otherwise, "-" for none.
func (v Verdict) Word() string {
	switch {
	case v.Kind == None:
		return "-"
	case v.Kind == MLPerf && v.Pass:
		return "VALID"
	case v.Kind == MLPerf:
		return "INVALID"
	case v.Pass:
		return "PASS"
	}
	return "FAIL"
}

// Of decides a run's verdict from its bundle, and is the only
// function that does: the console, the exit code, result.json, the report,
// the results store, the tester's service and `aimeter check` all call it
// (through derived.Set.Verdict), so none can disagree with another. m is the
// bundle's GB/T metrics (derived.Set.GBTMetrics); nil for a GB/T
// bundle evaluates them from its records (gbt.Evaluate).
//
// A GB/T test (gbt.TestOf(b) set) passes when its loss rate, and its foreign
// jobs', are within the threshold (GB-7.7.1-c-2, IN-79, IN-50) and it ran
// its whole duration: a test whose LoadGen pass ran out of queries, was
// stopped or was interrupted before its duration is not a PASS, whatever
// its loss. LoadGen's own latency bound and early stopping are not GB/T
// rules (Table 10's timeout is). An MLPerf run is VALID when LoadGen's
// checks pass and no sample failed or was lost (loadgen.Summary.Valid) and,
// where scored, its accuracy meets the target. Every rule broken is one
// line of Reasons. One shard of a test (shard.Of(b).Sharded()) has no
// verdict of its own: Kind None, with PartialNote as its reason. A merge
// that left shards out (shard.MergeOf(b).Partial(), --allow-partial) is
// never VALID or PASS: its first reason names the missing shards.
func Of(b *bundle.Bundle, m *gbt.Metrics) Verdict {
	if rec := shard.Of(b); rec.Sharded() {
		return Verdict{Kind: None, Reasons: []string{PartialNote(rec)}}
	}
	v := of(b, m)
	if mg := shard.MergeOf(b); mg.Partial() {
		if v.Kind == None {
			v.Kind = MLPerf
		}
		v.Pass = false
		v.Reasons = append([]string{mg.PartialReason()}, v.Reasons...)
	}
	return v
}

func of(b *bundle.Bundle, m *gbt.Metrics) Verdict {
	res, acc := b.Result, b.AccuracyCheck
	var why []string
	if m == nil && gbt.TestOf(b) != nil && res != nil {
		if gm, err := gbt.Evaluate(gbt.RunOf(b)); err == nil {
			m = &gm
		} else {
			return Verdict{Kind: GBT, Reasons: []string{"The GB/T test cannot be evaluated: " + err.Error()}}
		}
	}
	if m != nil && gbt.TestOf(b) != nil {
		why = append(why, gbtReasons(gbt.TestOf(b), res, m)...)
		return Verdict{Kind: GBT, Pass: len(why) == 0, Reasons: why}
	}
	if res != nil && res.Summary != nil {
		why = mlperfReasons(res)
		if !res.Summary.Valid && len(why) == 0 {
			// No failure goes unexplained.
			why = []string{"LoadGen's checks did not pass (see mlperf_log_summary.txt)."}
		}
		if acc != nil && !acc.Pass {
			why = append(why, accuracyReason(acc))
		}
		return Verdict{Kind: MLPerf, Pass: len(why) == 0, Reasons: why}
	}
	if acc != nil {
		if !acc.Pass {
			why = append(why, accuracyReason(acc))
		}
		return Verdict{Kind: Accuracy, Pass: acc.Pass, Reasons: why}
	}
	return Verdict{Kind: None}
}

// PartialNote is what every writer says of a shard's bundle: it is one
// part of a test, whose result only the merge of every shard gives.
func PartialNote(rec *shard.Record) string {
	return fmt.Sprintf("%s: this bundle is one part of a test; merge the shards for its result", rec)
}

func accuracyReason(acc *bundle.AccuracyCheck) string {
	return fmt.Sprintf("Accuracy %s %.4g is below its target %.4g.", acc.Metric, acc.Value, acc.Target)
}

// mlperfReasons are the reasons an MLPerf pass is INVALID, in LoadGen's
// order (performance constraints, minimum duration and queries, early
// stopping), then aimeter's (loadgen.Summary.AimeterReasons).
func mlperfReasons(res *loadgen.Result) []string {
	s := res.Summary
	if s.Valid {
		return nil
	}
	var why []string
	e := s.Effective
	// One piece of LoadGen's advice at most: none for an interrupted run
	// (its figures say nothing about the target), else the
	// performance-constraint advice when that check failed, else the
	// minimum-duration advice. Both at once pull the target QPS in
	// opposite directions, and the latency bound is what a longer run
	// would not fix.
	perfRec, durRec := s.PerfConstraintsRecommendation, s.MinDurationRecommendation
	if res.Interrupted != "" {
		perfRec, durRec = "", ""
	} else if perfRec != "" {
		durRec = ""
	}
	if !s.FailuresDecided {
		if s.HasPerfConstraints() && !s.PerfConstraintsMet {
			r := fmt.Sprintf("The performance constraints were not met: the %.4gth percentile latency is %v, the bound %v.",
				100*e.TargetLatencyPercentile, time.Duration(s.TargetPercentile.SampleLatency), time.Duration(e.TargetLatencyNs))
			if e.UseTokenLatencies {
				r = fmt.Sprintf("The performance constraints were not met: at the %.4gth percentile TTFT is %v (bound %v) and TPOT %v (bound %v).",
					100*e.TargetLatencyPercentile, time.Duration(s.TokenTargetPercentile.SampleLatency), time.Duration(e.TTFTLatencyNs),
					time.Duration(s.TPOTTargetPercentile.SampleLatency), time.Duration(e.TPOTLatencyNs))
			}
			if perfRec != "" {
				r += " " + perfRec
			}
			why = append(why, r)
		}
		if !s.MinDurationMet {
			r := fmt.Sprintf("The minimum duration was not met (min_duration %d ms).", e.MinDurationMs)
			if durRec != "" {
				r += " " + durRec
			}
			why = append(why, r)
		}
		if !s.MinQueriesMet {
			why = append(why, fmt.Sprintf("The minimum query count was not met: %d queries issued, min_query_count %d.", s.Result.QueriesIssued, e.MinQueryCount))
		}
		if !s.EarlyStoppingMet {
			why = append(why, "Early stopping was not satisfied:"+earlyStoppingText(s))
		}
	}
	// LoadGen's logged errors are not reasons of their own: each failed
	// sample logs one (thousands against a server that fails), and a pass
	// that ran out of queries or stopped is already the minimum-duration
	// reason or aimeter's.
	why = append(why, s.AimeterReasons...)
	return why
}

// earlyStoppingText is the summary's early-stopping lines in one line
// (how many queries ran and how many more it would need).
func earlyStoppingText(s *loadgen.Summary) string {
	lines := s.EarlyStoppingLines
	if s.Effective.UseTokenLatencies {
		lines = append(slices.Clone(s.EarlyStoppingTPOTLines), s.EarlyStoppingTTFTLines...)
	}
	var b strings.Builder
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "*"))
		if l == "" || l == "Run unsuccessful." {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(l)
	}
	if b.Len() == 0 {
		return " too few queries for its estimate."
	}
	return b.String()
}

// gbtReasons are the reasons a GB/T test fails: a loss rate over the
// threshold (GB-7.7.1-c-2), its foreign jobs' too (IN-50), and a test
// that did not run its duration (GB-7.4.2: the arrival mode runs for the
// test's duration; the offline mode has none).
func gbtReasons(t *gbt.Test, res *loadgen.Result, m *gbt.Metrics) []string {
	var why []string
	loss := func(who string, l gbt.Loss) {
		if !l.Valid {
			why = append(why, fmt.Sprintf("%s lost %d of %d samples (%d failed), a loss rate of %.4f over the threshold %.4f (GB-7.7.1-c-2).",
				who, l.Lost, l.Sent, l.Failed, l.Rate, l.Threshold))
		}
	}
	loss("The test", m.Loss)
	if m.Foreign != nil {
		loss("The mixed test's foreign jobs", m.Foreign.Loss)
	}
	if res == nil {
		return why
	}
	s := res.Summary
	mode := t.MainMode()
	ranOut := slices.ContainsFunc(res.Events, func(ev loadgen.Event) bool {
		return ev.Error && strings.Contains(fmt.Sprint(ev.Value), "Ran out of generated queries")
	})
	// Modes 0 and 2 are scheduled by LoadGen for min_duration (the test's
	// duration); modes 1 and 3 issue their own schedule, which spans it.
	// The offline mode has no duration.
	short := s != nil && (mode == gbt.ModeContinuous || mode == gbt.ModePoisson) && !s.MinDurationMet
	ended := ""
	if mode != gbt.ModeOffline && t.Arrival.Duration > 0 {
		ended = fmt.Sprintf(" after %v of its %v duration", time.Duration(t.EndNs).Round(time.Millisecond), t.Arrival.Duration)
	}
	switch {
	case res.Interrupted != "":
		why = append(why, "The test was interrupted"+ended+": "+res.Interrupted+".")
	case s != nil && s.Result.StopReason != "":
		why = append(why, "Issuing stopped early"+ended+": "+s.Result.StopReason+".")
	case ended != "" && (ranOut || short):
		why = append(why, "The test ended"+ended+": LoadGen ran out of generated queries, so the jobs did not arrive for the whole test (GB-7.4.2).")
	}
	if s != nil && s.Result.ProtocolErrors > 0 {
		why = append(why, fmt.Sprintf("%d SUT protocol errors (completions for unknown, duplicate or lost samples).", s.Result.ProtocolErrors))
	}
	return why
}
