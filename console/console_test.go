package console

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sweep"
	"aimeter/train"
	"aimeter/train/trainbundle"
	"aimeter/workload/session"
	"aimeter/workload/trace"
)

// golden is one case of a golden test: why it is there, and the bytes
// the function must write.
type golden struct {
	why  string
	got  func() string
	want string
}

func checkGolden(t *testing.T, cases []golden) {
	t.Helper()
	for _, c := range cases {
		if got := c.got(); got != c.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s\n(got %q)", c.why, got, c.want, got)
		}
	}
}

// write runs f on a fresh builder and gives what it wrote.
func write(f func(w *strings.Builder)) func() string {
	return func() string {
		var b strings.Builder
		f(&b)
		return b.String()
	}
}

func f64(v float64) *float64 { return &v }

// singleStream is the result of a SingleStream performance run with n
// samples, failed of them failed and lost lost, and a p90 latency of
// 1.5 ms.
func singleStream(n, failed, lost uint64) *loadgen.Result {
	s := &loadgen.Summary{SampleCount: n, MinDurationMet: true, MinQueriesMet: true, EarlyStoppingMet: true}
	s.Effective.Scenario = loadgen.SingleStream
	s.TargetPercentile = loadgen.PercentileEntry{Percentile: 0.9, SampleLatency: 1_500_000}
	s.Result.FailedSamples, s.Result.LostSamples = failed, lost
	r := &loadgen.Result{SUTName: "NullSUT", QSLName: "NullQSL", QSLTotalCount: 1024, Summary: s, FailedSamples: failed, LostSamples: lost}
	r.Effective.Scenario, r.Effective.Mode = loadgen.SingleStream, loadgen.PerformanceOnly
	return r
}

func TestWriteRun(t *testing.T) {
	valid := benchmark.Verdict{Kind: benchmark.VerdictMLPerf, Pass: true}
	invalid := benchmark.Verdict{Kind: benchmark.VerdictMLPerf, Reasons: []string{"min_duration not met"}}
	run := func(out *benchmark.Outcome) func() string {
		if out.Bundle == nil {
			out.Bundle = &bundle.Bundle{Result: out.Result}
		}
		return write(func(w *strings.Builder) { WriteRun(w, out) })
	}
	interrupted := &loadgen.Result{SUTName: "NullSUT", QSLName: "NullQSL", QSLTotalCount: 8, Interrupted: "context canceled"}
	interrupted.Effective.Scenario, interrupted.Effective.Mode = loadgen.Server, loadgen.PerformanceOnly
	concurrent := singleStream(100, 0, 0)
	concurrent.Effective.Concurrency = 4
	concurrent.Summary.Effective.Concurrency = 4
	concurrent.Summary.Result.FinalQueryAllSamplesDoneTime = 2 // seconds
	checkGolden(t, []golden{
		{"a VALID SingleStream run: headline, the constraints, where the logs are",
			run(&benchmark.Outcome{Dir: "out", Result: singleStream(100, 0, 0), Verdict: valid}),
			"SUT NullSUT, QSL NullQSL (1024 samples), SingleStream, PerformanceOnly\nResult is : VALID\n90.0th percentile latency (ns) : 1.5e+06\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\nLogs written to out\n"},
		{"an INVALID run lists the verdict's reasons under the constraints",
			run(&benchmark.Outcome{Dir: "out", Result: singleStream(100, 0, 0), Verdict: invalid}),
			"SUT NullSUT, QSL NullQSL (1024 samples), SingleStream, PerformanceOnly\nResult is : INVALID\n90.0th percentile latency (ns) : 1.5e+06\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\n  * min_duration not met\nLogs written to out\n"},
		{"no sample succeeded: the headline is -- and why, never a 0 that reads as a result",
			run(&benchmark.Outcome{Dir: "out", Result: singleStream(2, 0, 2), Verdict: invalid}),
			"SUT NullSUT, QSL NullQSL (1024 samples), SingleStream, PerformanceOnly\nResult is : INVALID\n90.0th percentile latency (ns) : -- (no sample succeeded: 0 failed, 2 lost)\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\n  * min_duration not met\nLogs written to out\n"},
		{"interrupted before a summary: the interruption is said, and a bundle not all written is said too",
			run(&benchmark.Outcome{Dir: "out", Result: interrupted, WriteErr: errors.New("disk full")}),
			"SUT NullSUT, QSL NullQSL (8 samples), Server, PerformanceOnly\nInterrupted: context canceled\nLogs NOT all written to out: see the error below\n"},
		{"the fixed-concurrency mode is named as aimeter's, not as a scenario, and its throughput follows the logs' line",
			run(&benchmark.Outcome{Dir: "out", Result: concurrent, Verdict: valid}),
			"SUT NullSUT, QSL NullQSL (1024 samples), fixed concurrency 4 (aimeter mode, not an MLPerf scenario), PerformanceOnly\nResult is : VALID\n90.0th percentile latency (ns) : 1.5e+06\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\nLogs written to out\nCompleted samples per second : 49.5 (4 in flight)\n"},
		{"a scored accuracy log follows the logs' line",
			run(&benchmark.Outcome{Dir: "out", Result: singleStream(100, 0, 0), Verdict: valid,
				Accuracy: &bundle.AccuracyCheck{Metric: "top-1 accuracy (%)", Value: 86.574, Target: 85, Pass: true}}),
			"SUT NullSUT, QSL NullQSL (1024 samples), SingleStream, PerformanceOnly\nResult is : VALID\n90.0th percentile latency (ns) : 1.5e+06\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\nLogs written to out\nAccuracy: 86.57% top-1 (target 85%) PASS\n"},
	})
}

func TestHeadline(t *testing.T) {
	s := singleStream(10, 2, 1).Summary
	none := singleStream(2, 0, 2).Summary
	checkGolden(t, []golden{
		{"some samples succeeded: the value as LoadGen formats it", func() string { return Headline(s, 1500000) }, "1.5e+06"},
		{"none succeeded: -- with the failed and lost counts", func() string { return Headline(none, 0) }, "-- (no sample succeeded: 0 failed, 2 lost)"},
	})
}

func TestAccuracyText(t *testing.T) {
	checkGolden(t, []golden{
		{"classification against a target: top-1, the target and PASS",
			func() string {
				return AccuracyText(&bundle.AccuracyCheck{Metric: "top-1 accuracy (%)", Value: 86.574, Target: 85, Pass: true})
			}, "86.57% top-1 (target 85%) PASS"},
		{"below the target: FAIL",
			func() string {
				return AccuracyText(&bundle.AccuracyCheck{Metric: "top-1 accuracy (%)", Value: 80, Target: 85})
			}, "80.00% top-1 (target 85%) FAIL"},
		{"another metric keeps its name without its details",
			func() string {
				return AccuracyText(&bundle.AccuracyCheck{Metric: "text detection H-mean at IoU 0.5 (%)", Value: 91.2, Target: 90, Pass: true})
			}, "91.20% text detection H-mean at IoU 0.5 (target 90%) PASS"},
		{"no target: the score alone, no verdict",
			func() string { return AccuracyText(&bundle.AccuracyCheck{Metric: "top-1 accuracy (%)", Value: 50}) }, "50.00% top-1"},
		{"WriteAccuracy: the score on its line",
			write(func(w *strings.Builder) { WriteAccuracy(w, &bundle.AccuracyCheck{Metric: "top-1", Value: 50}) }), "Accuracy: 50.00% top-1\n"},
		{"WriteAccuracy: nothing without a score",
			write(func(w *strings.Builder) { WriteAccuracy(w, nil) }), ""},
	})
}

func TestWriteErrorBreakdown(t *testing.T) {
	failed := func(groups ...loadgen.ErrorInfo) *loadgen.Result {
		r := &loadgen.Result{Errors: groups}
		for _, g := range groups {
			r.FailedSamples += g.Count
		}
		return r
	}
	var many []loadgen.ErrorInfo
	for i := range 10 {
		many = append(many, loadgen.ErrorInfo{Category: "http_5xx", Code: 500 + i, Count: uint64(i + 1)})
	}
	protocol := failed(loadgen.ErrorInfo{Category: "sut", Count: 1})
	protocol.UnknownCompletions = 2
	protocol.Events = []loadgen.Event{{Error: true}, {Error: true}, {Error: true}}
	logged := &loadgen.Result{Events: []loadgen.Event{{Error: true}}}
	checkGolden(t, []golden{
		{"no error: nothing", write(func(w *strings.Builder) { WriteErrorBreakdown(w, &loadgen.Result{}, "out") }), ""},
		{"failures by group, the most frequent first; without records no total",
			write(func(w *strings.Builder) {
				WriteErrorBreakdown(w, failed(loadgen.ErrorInfo{Category: "connection_reset", Count: 3}, loadgen.ErrorInfo{Category: "http_5xx", Code: 501, Count: 20}), "out")
			}), "Failed: 23 samples: http_5xx/501 ×20, connection_reset ×3; see out/errors.json\n"},
		{"more than eight groups: the rest summed",
			write(func(w *strings.Builder) { WriteErrorBreakdown(w, failed(many...), "out") }), "Failed: 55 samples: http_5xx/509 ×10, http_5xx/508 ×9, http_5xx/507 ×8, http_5xx/506 ×7, http_5xx/505 ×6, http_5xx/504 ×5, http_5xx/503 ×4, http_5xx/502 ×3, … 2 more kinds ×3; see out/errors.json\n"},
		{"protocol errors beside the failures: the detail log is named",
			write(func(w *strings.Builder) { WriteErrorBreakdown(w, protocol, "out") }), "Failed: 1 samples: sut ×1; see out/errors.json\n3 errors logged, see out/mlperf_log_detail.txt\n"},
		{"errors that are no sample failures: only the detail log",
			write(func(w *strings.Builder) { WriteErrorBreakdown(w, logged, "out") }), "1 errors logged, see out/mlperf_log_detail.txt\n"},
	})
}

// TestTokenFigures checks the console lines of the streaming figures
// (metrics.StreamingOf computes them; its tests work them by hand).
func TestTokenFigures(t *testing.T) {
	ms := int64(1e6)
	one := func(v int64) metrics.Stats {
		return metrics.Stats{Count: 1, Min: v, Mean: v, P50: v, P90: v, P95: v, P99: v, P999: v, Max: v}
	}
	for _, tc := range []struct {
		name string
		s    *metrics.Streaming
		want []string
	}{
		{"not streamed: no lines", nil, nil},
		{"one sample: gaps of 1, 2 and 3 ms",
			&metrics.Streaming{StreamedSamples: 1, ITLNs: metrics.Stats{Count: 3, Min: ms, Mean: 2 * ms, P50: 2 * ms, P90: 3 * ms, P95: 3 * ms, P99: 3 * ms, P999: 3 * ms, Max: 3 * ms},
				E2ENs: one(10 * ms), OutputTokens: 4, SpanNs: 2e9, OutputTokensPerS: 2},
			[]string{
				"  ITL p50 2.000 ms, p90 3.000 ms, p99 3.000 ms (3 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 10.00 ms, p90 10.00 ms, p99 10.00 ms (1 successful samples)",
				"  Output tokens/s 2.0 (4 tokens in 2.000 s)",
			}},
		{"single-token samples: no gaps",
			&metrics.Streaming{StreamedSamples: 1, E2ENs: one(3 * ms), OutputTokens: 1, SpanNs: 1e9, OutputTokensPerS: 1},
			[]string{
				"  ITL none (0 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 3.000 ms, p90 3.000 ms, p99 3.000 ms (1 successful samples)",
				"  Output tokens/s 1.0 (1 tokens in 1.000 s)",
			}},
		{"an empty span: no rate",
			&metrics.Streaming{StreamedSamples: 1, E2ENs: one(3 * ms), OutputTokens: 1},
			[]string{
				"  ITL none (0 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 3.000 ms, p90 3.000 ms, p99 3.000 ms (1 successful samples)",
			}},
	} {
		if got := tokenFigures(tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestWriteClientStats: the client block counts every request the client
// sent, and says how many were the warm-up's, which the run's figures
// leave out.
func TestWriteClientStats(t *testing.T) {
	s := &bundle.ClientStats{Requests: 150, Errors: 2}
	rows := []struct {
		why  string
		warm *bundle.Warmup
		lost uint64
		want string
	}{
		{"no warm-up: the measured run's requests alone", nil, 0, "client:\n  requests 150, errors 2; lost 0 (never answered in time)\n"},
		{"a warm-up: its share named", &bundle.Warmup{Requests: 30, Failed: 1}, 0,
			"client:\n  requests 150, errors 2 (of them the warm-up's: 30 requests, 1 failed); lost 0 (never answered in time)\n"},
		{"jobs lost to their timeout: the client saw no error for them, the line counts them (issue 39)", nil, 148,
			"client:\n  requests 150, errors 2; lost 148 (never answered in time)\n"},
	}
	for _, row := range rows {
		var b strings.Builder
		WriteClientStats(&b, s, row.warm, row.lost)
		if b.String() != row.want {
			t.Errorf("%s: %q, want %q", row.why, b.String(), row.want)
		}
	}
	tokens := &bundle.ClientStats{Requests: 10, TokenMismatches: 1, MissingUsage: 2, SendLatenessCount: 10,
		SendLatenessP50: time.Millisecond, SendLatenessP99: 2 * time.Millisecond, SendLatenessMax: 3 * time.Millisecond}
	checkGolden(t, []golden{
		{"no client (an in-process SUT): nothing", write(func(w *strings.Builder) { WriteClientStats(w, nil, nil, 0) }), ""},
		{"token counts that disagree and the send lateness each get a line",
			write(func(w *strings.Builder) { WriteClientStats(w, tokens, nil, 0) }), "client:\n  requests 10, errors 0; lost 0 (never answered in time)\n  token count mismatches (usage vs chunks) 1, responses without usage 2, token times dropped 0\n  send lateness (request written − issued) p50 1ms, p99 2ms, max 3ms\n"},
	})
}

// TestWriteGBTElasticity checks that "Elasticity" is the standard's Table
// 19 value (EL × 100, in %) and IN-76's %/MB variant is labelled as such.
func TestWriteGBTElasticity(t *testing.T) {
	res := &loadgen.Result{}
	test := &gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModePeak, Timeout: 2 * time.Second}}
	m := &gbt.Metrics{Elasticity: &gbt.Elasticity{Available: true, Value: 0.0123, Percent: 1.23, PercentPerMB: 45.6}, PressureTolerance: &gbt.PressureTolerance{}}
	var b strings.Builder
	bb := &bundle.Bundle{Result: res}
	gbt.SetTest(bb, test)
	WriteGBT(&b, &benchmark.Outcome{Dir: "out", Result: res, Bundle: bb, GBT: m})
	out := b.String()
	for _, want := range []string{"Elasticity (EL, Table 19): 1.2300 %\n", "Elasticity variant (IN-76, non-standard): 45.6000 %/MB\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Elasticity: 45.6") {
		t.Errorf("the %%/MB variant is printed as the elasticity:\n%s", out)
	}
}

func TestWriteGBT(t *testing.T) {
	gbtRun := func(m *gbt.Metrics, v benchmark.Verdict, res *loadgen.Result, foreign *loadgen.Result) func() string {
		bb := &bundle.Bundle{Result: res}
		gbt.SetTest(bb, &gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModePoisson, Timeout: 4 * time.Second}})
		out := &benchmark.Outcome{Dir: "out", Result: res, Foreign: foreign, Bundle: bb, GBT: m, Verdict: v}
		return write(func(w *strings.Builder) { WriteRun(w, out) })
	}
	stat := gbt.TimeStat{Available: true, Stat: gbt.Stat{N: 10, Min: 1, Mean: 2, P50: 2, P90: 3, P99: 3.5, Max: 4}}
	full := &gbt.Metrics{
		Time:       gbt.Breakdown{TTI: stat, TDIS: gbt.TimeStat{Reason: "the SUT reports no stage times"}, TI: gbt.TotalLatency{Available: true, Ms: 2.5}},
		Throughput: gbt.Throughput{Samples: 10, SamplesPerSecond: 99.5},
		Loss:       gbt.Loss{Sent: 10, LossCheck: gbt.LossCheck{Threshold: 0.01, Valid: true}},
	}
	lossy := &gbt.Metrics{
		Throughput: gbt.Throughput{},
		Loss:       gbt.Loss{Sent: 10, Lost: 10, LossCheck: gbt.LossCheck{Rate: 1, Threshold: 0.01}},
		Foreign:    &gbt.PartMetrics{Loss: gbt.Loss{Sent: 4, Lost: 1, LossCheck: gbt.LossCheck{Rate: 0.25, Threshold: 0.01}}, Throughput: gbt.Throughput{SamplesPerSecond: 3}},
	}
	late := &loadgen.Result{LateCompletions: 2, FailedSamples: 1}
	late.Effective.Scenario = loadgen.Server
	foreign := &loadgen.Result{FailedSamples: 1}
	server := &loadgen.Result{}
	server.Effective.Scenario = loadgen.Server
	checkGolden(t, []golden{
		{"a passing test: the time table (a row without figures says why), T_I, throughput, loss and the files",
			gbtRun(full, benchmark.Verdict{Kind: benchmark.VerdictGBT, Pass: true}, server, nil), "GB/T 45087 arrival mode 2 (poisson), timeout 4s carried by LoadGen's Server scenario\nmetric  n   min    mean   p50    p90    p99    max    (ms)\nT_TI    10  1.000  2.000  2.000  3.000  3.500  4.000  \nT_DIS   -   the SUT reports no stage times\nT_IPR   -   \nT_IN    -   \nT_IPO   -   \nT_IP    -   \nT_DIP   -   \nT_I (total inference latency): 2.500 ms\nTester-side throughput (first issue to last answer; not Table 18): 99.50 samples/s\nLost: 0 of 10 samples (rate 0.0000, threshold 0.0100): PASS\nGB/T verdict: PASS\nWrote out (gbt_result.json, gbt_test.json, gbt_inference.log and the MLPerf logs)\n"},
		{"every job lost: no throughput figure, late and failed jobs counted, the foreign jobs' loss, the verdict's reasons",
			gbtRun(lossy, benchmark.Verdict{Kind: benchmark.VerdictGBT, Reasons: []string{"loss rate 1 above 0.01"}}, late, foreign), "GB/T 45087 arrival mode 2 (poisson), timeout 4s carried by LoadGen's Server scenario\nmetric  n  min  mean  p50  p90  p99  max  (ms)\nT_TI    -  \nT_DIS   -  \nT_IPR   -  \nT_IN    -  \nT_IPO   -  \nT_IP    -  \nT_DIP   -  \nTester-side throughput (first issue to last answer; not Table 18): -- (no job returned a result)\nLost: 10 of 10 samples (rate 1.0000, threshold 0.0100): FAIL\n  of which 2 returned after their timeout and were counted lost (GB-7.4.1-d)\n  1 samples failed (errors reported by the SUT)\nForeign jobs (mode 5, IN-50): lost 1 of 4 (rate 0.2500, threshold 0.0100): FAIL; 3.00 samples/s\n  1 foreign samples failed (errors reported by the SUT)\nGB/T verdict: FAIL\n  * loss rate 1 above 0.01\nWrote out (gbt_result.json, gbt_test.json, gbt_inference.log and the MLPerf logs)\n"},
	})
}

func TestWriteReplayAndSessions(t *testing.T) {
	replay := &benchmark.Outcome{Lateness: &trace.LatenessSummary{Count: 100, Late: 2, LateAfter: time.Millisecond,
		P50: 20 * time.Microsecond, P99: 900 * time.Microsecond, Max: 3 * time.Millisecond}}
	sessions := &benchmark.Outcome{Sessions: &session.Metrics{
		PerTurn:          []session.TurnStats{{Turn: 1, Count: 2, TTFTP50: 1234567, TTFTP90: 2 * time.Millisecond, E2EP50: 10 * time.Millisecond, E2EP90: 12 * time.Millisecond}},
		Sessions:         make([]session.SessionStats, 2),
		E2EInteractivity: 51.234, SessionInteractivityP50: 50, SessionInteractivityP10: 40.5,
	}}
	checkGolden(t, []golden{
		{"a run that was no replay: nothing", write(func(w *strings.Builder) { WriteReplay(w, &benchmark.Outcome{}) }), ""},
		{"a replay: how closely it kept the trace's schedule", write(func(w *strings.Builder) { WriteReplay(w, replay) }), "Replay: send lateness over 100 requests: p50 20µs, p99 900µs, max 3ms; 2 later than 1ms\n"},
		{"a run without sessions: nothing", write(func(w *strings.Builder) { WriteSessions(w, &benchmark.Outcome{}) }), ""},
		{"sessions: the interactivity, then a line a turn index, durations rounded to µs",
			write(func(w *strings.Builder) { WriteSessions(w, sessions) }), "Sessions: 2, e2e_interactivity 51.23 tokens/s (Σ output tokens / Σ turn time); per session p50 50.00, p10 40.50\n  turn 1: 2 sent, 0 failed; TTFT p50 1.235ms p90 2ms; latency p50 10ms p90 12ms\n"},
		{"WritePower: a run that sampled no power writes nothing",
			write(func(w *strings.Builder) { WritePower(w, &benchmark.Outcome{Bundle: &bundle.Bundle{}}) }), ""},
	})
}

func TestWriteTraining(t *testing.T) {
	res := &train.ResultFile{Metrics: &train.Metrics{Unit: "samples/s",
		Trials:     []train.TrialMetrics{{Trial: 1, Status: "success", TTMs: f64(61000), TTRMs: f64(60000), Throughput: f64(1234.5)}, {Trial: 2}},
		MeanTTRMs:  f64(60000),
		Throughput: f64(1234.5),
		MLPerf:     train.MLPerfScore{Reason: "MLPerf needs 10 runs"},
	}, Log: []string{"trial 1 done"}}
	run := &trainbundle.TrainingRun{Incomplete: "the second log ends before run_stop",
		Trials: []trainbundle.TrainingTrial{{Trial: 1, Log: "a.log"}, {Trial: 2, Log: "b.log"}}}
	checkGolden(t, []golden{
		{"the headline metrics (-- where absent), each trial, why the MLPerf score is missing, the log and the files",
			write(func(w *strings.Builder) { WriteTraining(w, res, run, "out") }), "GB/T 45087 training test: MLLOG from 2 result logs: a.log … b.log\nIncomplete: the second log ends before run_stop\nTrials:                 2\nMean T_TR:              60.000 s\nThroughput Th:          1234.5 samples/s\nCluster Th_CL:          --\nTraining efficiency:    --\nMLPerf time-to-train:   -- (olympic average of 2 trials, dropping 0 at each end; 0 did not converge)\n  -- MLPerf needs 10 runs\n  trial 1: success, T_T 61.000 s, T_TR 60.000 s, Th 1234.5 samples/s, utilisation --, final accuracy --, time to train --\n  trial 2: --, T_T --, T_TR --, Th --, utilisation --, final accuracy --, time to train --\nTraining log:\n  trial 1 done\nResults in out (gbt_training.json, gbt_training.log, report.html)\n"},
	})
}

func TestWriteSweep(t *testing.T) {
	point := func(c uint64, region string) sweep.Point {
		return sweep.Point{Concurrency: c, Region: region, Verdict: "VALID", SystemTPS: 100 * float64(c), TPSPerUser: 100,
			TTFTP90Ms: 12.5, TPOTP90Ms: 2, RequestRate: float64(c), Errors: 0}
	}
	auto := &sweep.Summary{
		Regions:   &sweep.Regions{CMin: 1, CMax: 64, UltraLow: sweep.Range{Start: 1, End: 1}, Low: sweep.Range{Start: 2, End: 5}, Medium: sweep.Range{Start: 6, End: 17}, High: sweep.Range{Start: 18, End: 64}},
		Uncovered: []string{"medium"},
		Points:    []sweep.Point{point(1, "ultra-low"), point(64, "high")},
		Offline:   &sweep.Offline{Point: point(0, ""), CMax: 64, Ratio: 0.5},
	}
	g := point(8, "")
	g.Goodput = &metrics.Goodput{Fraction: 0.95, RequestsPerS: 7.6, TokensPerS: 760}
	eight := uint64(8)
	search := &sweep.Summary{SLO: "ttft=100ms", Points: []sweep.Point{g},
		Search: &sweep.SearchResult{Options: sweep.SearchOptions{Start: 1, Max: 8, Target: 0.9}, Best: &eight, Stop: sweep.StopLimit,
			Probes: []sweep.Probe{{Concurrency: 8, Phase: "double", Fraction: 0.95, Pass: true}}}}
	none := &sweep.Summary{SLO: "ttft=1ms", Search: &sweep.SearchResult{Options: sweep.SearchOptions{Start: 1, Max: 8, Target: 0.9}, Stop: sweep.StopNone,
		Probes: []sweep.Probe{{Concurrency: 1, Phase: "double", Fraction: 0.1}},
		Shortfall: &sweep.Miss{Concurrency: 1, Fraction: 0.1, Target: 0.9, Issued: 20,
			Bounds: []sweep.BoundCheck{{Bound: "TTFT", LimitMs: 1, Percentile: 90, ValueMs: 2.25, Within: 0.1, Over: true}}}}}
	checkGolden(t, []golden{
		{"automatic points: the regions, a region without a point, the table and the Offline check that misses 98 %",
			write(func(w *strings.Builder) { WriteSweep(w, auto, "sw") }), "Endpoints regions for Cmin 1, Cmax 64: ultra-low 1–1, low 2–5, medium 6–17, high 18–64\n  no point in: medium\nconcurrency  region           verdict    system_tps tps_per_user     TTFT p90     TPOT p90      req/s   errors\n          1  ultra-low        VALID           100.0       100.00     12.50 ms     2.000 ms       1.00        0\n         64  high             VALID          6400.0       100.00     12.50 ms     2.000 ms      64.00        0\n    Offline                   VALID             0.0       100.00     12.50 ms     2.000 ms       0.00        0\nOffline point: 50.0 % of the Cmax point's system_tps (concurrency 64), misses 98 %: the Cmax point is elected as the Offline point\nSweep written to sw (sweep.json, sweep.html, one bundle per point)\n"},
		{"a goodput search that reached its maximum: the goodput column, the probes, the best said to may go higher",
			write(func(w *strings.Builder) { WriteSweep(w, search, "sw") }), "concurrency  region           verdict    system_tps tps_per_user     TTFT p90     TPOT p90      req/s   errors  goodput (ttft=100ms)\n          8                   VALID           800.0       100.00     12.50 ms     2.000 ms       8.00        0  95.0 % (7.60 req/s, 760.0 tok/s)\nGoodput search (target 0.9, SLO ttft=100ms): 1 probes\n   1. double concurrency     8: goodput fraction 0.9500 pass\nOutcome: the highest concurrency whose goodput fraction reached 0.9 is 8, the maximum searched (it may go higher)\nSweep written to sw (sweep.json, sweep.html, one bundle per point)\n"},
		{"a search whose start failed: no concurrency meets the target, never said as 0, and the bound that failed is named with how much",
			write(func(w *strings.Builder) { WriteSweep(w, none, "sw") }), "concurrency  region           verdict    system_tps tps_per_user     TTFT p90     TPOT p90      req/s   errors  goodput (ttft=1ms)\nGoodput search (target 0.9, SLO ttft=1ms): 1 probes\n   1. double concurrency     1: goodput fraction 0.1000 fail\nOutcome: no concurrency from 1 to 8 met the goodput target 0.9: TTFT p90 2.25 ms > 1 ms (10 % of requests within it) at concurrency 1 (goodput fraction 0.1 < 0.9)\nSweep written to sw (sweep.json, sweep.html, one bundle per point)\n"},
	})
}

func TestWriteRateSearch(t *testing.T) {
	p := sweep.Point{Verdict: "VALID", RequestRate: 9.9, TTFTP90Ms: 12.5, TPOTP90Ms: 2.25, Goodput: &metrics.Goodput{Fraction: 0.95, RequestsPerS: 9.4, TokensPerS: 940}}
	ten := 10.0
	found := &benchmark.RateSearchSummary{SLO: metrics.SLO{TTFT: 100 * time.Millisecond},
		RateSearchResult: sweep.RateSearchResult{Options: sweep.RateSearchOptions{Start: 1, Max: 16, Target: 0.9}, Best: &ten, Stop: sweep.StopFound,
			Probes: []sweep.RateProbe{{TargetQPS: 10, Phase: "double", Fraction: 0.95, Pass: true}, {TargetQPS: 20, Phase: "double"}}},
		Points: []sweep.Point{p}}
	none := &benchmark.RateSearchSummary{SLO: metrics.SLO{TPOT: time.Millisecond},
		RateSearchResult: sweep.RateSearchResult{Options: sweep.RateSearchOptions{Start: 5, Max: 20, Target: 0.9}, Stop: sweep.StopNone,
			Probes: []sweep.RateProbe{{TargetQPS: 5, Phase: "check", Fraction: 0.1}},
			Shortfall: &sweep.Miss{TargetQPS: 5, Fraction: 0.1, Target: 0.9, Issued: 10,
				Bounds: []sweep.BoundCheck{{Bound: "TPOT", LimitMs: 1, Percentile: 90, ValueMs: 2.25, Within: 0.1, Over: true}}}},
		Points: []sweep.Point{p}}
	checkGolden(t, []golden{
		{"a rate found: a row a probe that has its point (a probe without one is left out), the rate and the files",
			write(func(w *strings.Builder) { WriteRateSearch(w, found, "rs") }), "  target_qps  phase   verdict       req/s     TTFT p90     TPOT p90   errors  goodput (ttft=100ms)\n          10  double  VALID          9.90         12.5         2.25        0  95.0 % (9.40 req/s, 940.0 tok/s)\nGoodput search over request rate: the highest rate whose goodput fraction reached 0.9 is 10 requests/s (stop: found)\nProbes in rs/, summary in rs/rate-search.json, page in rs/rate-search.html\n"},
		{"no rate met the target: never said as 0, the bound that failed named with how much",
			write(func(w *strings.Builder) { WriteRateSearch(w, none, "rs") }), "  target_qps  phase   verdict       req/s     TTFT p90     TPOT p90   errors  goodput (tpot=1ms)\n           5  check   VALID          9.90         12.5         2.25        0  10.0 % (9.40 req/s, 940.0 tok/s)\nGoodput search over request rate: no request rate from 5 to 20 requests/s met the goodput target 0.9: TPOT p90 2.25 ms > 1 ms (10 % of requests within it) at 5 requests/s (goodput fraction 0.1 < 0.9) (stop: none)\nProbes in rs/, summary in rs/rate-search.json, page in rs/rate-search.html\n"},
	})
}

func TestWriteStreamProbes(t *testing.T) {
	probes := []gbt.StreamProbe{
		{N: 1, Phase: gbt.PhaseGrow, OK: true, Frames: 250, Seconds: 10.04, Idle: "fresh"},
		{N: 8, Phase: gbt.PhaseGrow, Frames: 2000, Lost: 3, Failed: 1, Seconds: 10.2, Idle: "drained"},
	}
	checkGolden(t, []golden{
		{"no probe: the header alone", write(func(w *strings.Builder) { WriteStreamProbes(w, nil) }), "phase    streams     frames       lost ok    seconds  idle SUT by\n"},
		{"a pass and a FAIL, whose lost column counts failed frames too",
			write(func(w *strings.Builder) { WriteStreamProbes(w, probes) }), "phase    streams     frames       lost ok    seconds  idle SUT by\ngrow           1        250          0 pass     10.0  fresh\ngrow           8       2000          4 FAIL     10.2  drained\n"},
	})
}

// TestFormatRate: the demo's rates are whole samples/s with thousands
// separators.
func TestFormatRate(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		want string
	}{
		{"thousands get separators", 70299.4, "70,299"},
		{"rounded to whole samples", 1999.6, "2,000"},
		{"below a thousand", 999, "999"},
		{"millions", 1234567, "1,234,567"},
		{"zero", 0, "0"},
		{"negative", -1234, "-1,234"},
	}
	for _, tt := range tests {
		if got := formatRate(tt.v); got != tt.want {
			t.Errorf("%s: formatRate(%v) = %q, want %q", tt.name, tt.v, got, tt.want)
		}
	}
}

func TestWriteDemo(t *testing.T) {
	acc := &loadgen.Result{}
	runs := []DemoRun{
		{Name: "Accuracy", Outcome: &benchmark.Outcome{Result: acc, Accuracy: &bundle.AccuracyCheck{Metric: "top-1", Value: 86.5, Target: 85, Pass: true}}},
		{Name: "SingleStream", Outcome: &benchmark.Outcome{Result: singleStream(100, 0, 0), Verdict: benchmark.Verdict{Kind: benchmark.VerdictMLPerf, Pass: true}}},
	}
	cal := benchmark.Calibration{Single: 12345 * time.Nanosecond, BatchRate: 49157.4, BatchRateMax: 50000}
	plan := benchmark.PlanDemo(cal, time.Second)
	checkGolden(t, []golden{
		{"the table after an empty line: an accuracy run has no metric, a performance run no accuracy",
			write(func(w *strings.Builder) { WriteDemoTable(w, runs) }), "\nScenario      Metric                          Value    Result  Accuracy\nAccuracy      -                               -        -       86.50% top-1 (target 85%) PASS\nSingleStream  90.0th percentile latency (ns)  1.5e+06  VALID   -\n"},
		{"the plan: the model's speed and the sizes of the Server and Offline runs",
			write(func(w *strings.Builder) { WriteDemoPlan(w, cal, benchmark.DemoCalibration(), plan) }), "Model speed: 12.3µs per sample alone, 49,157 samples/s in batches of 64 (medians of 5 rounds)\nServer: 2,000 samples/s, p99 bound 50ms, 4s; Offline: one query sized for 100,000 samples/s\n"},
	})
}

func TestWriteScenarios(t *testing.T) {
	var b strings.Builder
	WriteScenarios(&b)
	for _, want := range []string{
		"Timeout class", "T11-2", "resnet50", // the catalogue
		"T13-1  ocr-dbnet: --sut onnx --onnx-workload ocr-dbnet",   // a workload aimeter runs
		"Arrival modes (Table 10)", "those of the underlying mode", // Table 10
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
