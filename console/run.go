package console

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"aimeter/benchmark"
	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/mlperflog"
	"aimeter/report"
)

// WriteRun writes the summary of a run that benchmark.Run returned: the
// GB/T test's or the MLPerf run's figures, the accuracy score, the network
// client's counters, a replay's schedule, a sessions run's turns, the
// steady-state windows and the power figures, each where the run has them.
func WriteRun(w io.Writer, out *benchmark.Outcome) {
	if out.GBT != nil {
		WriteGBT(w, out)
	} else {
		var late string
		var stream *metrics.Streaming
		if out.Derived != nil && out.Lateness == nil { // a replay writes its own (WriteReplay)
			if l := out.Derived.SendLateness(); l != nil {
				late = l.Text()
			}
		}
		if out.Derived != nil {
			stream = out.Derived.Streaming()
		}
		writeOutcome(w, out.Result, out.Verdict, late, stream, out.Dir, out.WriteErr)
		WriteAccuracy(w, out.Accuracy)
		writeNetworkOutcome(w, out.Result, out.Bundle.Nodes)
	}
	if inv := invocation.Of(out.Bundle); inv != nil {
		WriteClientStats(w, inv.Client, inv.Warmup, out.LostJobs())
	}
	WriteReplay(w, out)
	WriteSessions(w, out)
	WriteSteady(w, out)
	WritePower(w, out)
	WriteBandwidth(w, out)
	WriteNetwork(w, out)
}

// WriteResultJSON writes the run's result.json, with the bundle's
// directory, to w.
func WriteResultJSON(w io.Writer, out *benchmark.Outcome) error {
	r, err := out.Derived.Result()
	if err != nil {
		return err
	}
	r.Dir = out.Dir
	return derived.WriteResult(w, r)
}

// writeReasons writes each reason of a verdict that did not pass on a
// line of its own.
func writeReasons(w io.Writer, v benchmark.Verdict) {
	for _, r := range v.Reasons {
		fmt.Fprintf(w, "  * %s\n", r)
	}
}

// Headline is a summary's headline value as the console writes it: "--"
// and why when no sample succeeded (a value of 0 would read as a result).
func Headline(s *loadgen.Summary, value float64) string {
	if ok := s.SampleCount - s.Result.LostSamples; ok == 0 {
		return fmt.Sprintf("-- (no sample succeeded: %d failed, %d lost)", s.Result.FailedSamples, s.Result.LostSamples)
	}
	return mlperflog.FormatDouble(value)
}

// writeOutcome writes the result of a run under its verdict v (each
// reason on a line), with the send lateness of a run on a schedule
// (trace.LatenessSummary.Text of derived.Set.SendLateness; "" writes
// none) and a streamed run's token figures (derived.Set.Streaming; nil
// writes none); writeErr is the error of writing its bundle into dir (nil
// when every file was written).
func writeOutcome(w io.Writer, res *loadgen.Result, v benchmark.Verdict, late string, stream *metrics.Streaming, dir string, writeErr error) {
	fmt.Fprintf(w, "SUT %s, QSL %s (%d samples), %s, %s\n", res.SUTName, res.QSLName, res.QSLTotalCount, scenarioLabel(res.Effective), res.Effective.Mode)
	if res.Interrupted != "" && res.Summary == nil {
		// A summary says it itself ("Issuing stopped early: …").
		fmt.Fprintf(w, "Interrupted: %s\n", res.Interrupted)
	}
	if s := res.Summary; s != nil {
		name, value := s.Metric()
		fmt.Fprintf(w, "Result is : %s\n%s : %s\n", v.Word(), name, Headline(s, value))
		if line := tokenLatencyLine(s); line != "" {
			fmt.Fprintln(w, line)
		}
		writeLines(w, tokenFigures(stream))
		if late != "" {
			fmt.Fprintln(w, "  "+late)
		}
		if s.HasPerfConstraints() {
			fmt.Fprintf(w, "  Performance constraints satisfied : %s\n", yesNo(s.PerfConstraintsMet))
		}
		fmt.Fprintf(w, "  Min duration satisfied : %s\n  Min queries satisfied : %s\n  Early stopping satisfied: %s\n",
			yesNo(s.MinDurationMet), yesNo(s.MinQueriesMet), yesNo(s.EarlyStoppingMet))
		writeReasons(w, v)
	}
	if res.Effective.PrintTimestamps {
		// LoadGen prints the measurement interval against the system clock
		// for comparison with an external timer.
		for _, p := range res.Passes {
			if p.Kind == loadgen.PassAccuracy {
				continue
			}
			start := time.Unix(0, p.StartUnixNs)
			fmt.Fprintf(w, "Loadgen :: Perf mode start. system_clock Timestamp = %d\n", start.Unix())
			fmt.Fprintf(w, "Loadgen :: Perf mode stop. system_clock Timestamp = %d\n", start.Add(time.Duration(p.EndNs)).Unix())
		}
	}
	writeProbes(w, res)
	if n := len(res.Accuracy); n > 0 {
		fmt.Fprintf(w, "Accuracy log: %d responses\n", n)
	}
	WriteErrorBreakdown(w, res, dir)
	if writeErr != nil {
		fmt.Fprintf(w, "Logs NOT all written to %s: see the error below\n", dir)
		return
	}
	fmt.Fprintf(w, "Logs written to %s\n", dir)
}

// WriteAccuracy writes the score of an accuracy log, as the demo does;
// nothing for nil.
func WriteAccuracy(w io.Writer, a *bundle.AccuracyCheck) {
	if a == nil {
		return
	}
	fmt.Fprintf(w, "Accuracy: %s\n", AccuracyText(a))
}

// AccuracyText is a score for people: "86.57% top-1 (target 85%) PASS".
func AccuracyText(a *bundle.AccuracyCheck) string {
	pass := "PASS"
	if !a.Pass {
		pass = "FAIL"
	}
	// The metric's name without its unit and details: "top-1" for
	// classification, "text detection H-mean at IoU 0.5" for ocr-dbnet.
	name := "top-1"
	if m, _, _ := strings.Cut(a.Metric, " ("); m != "" && !strings.HasPrefix(m, "top-1") {
		name = m
	}
	if a.Target == 0 {
		return fmt.Sprintf("%.2f%% %s", a.Value, name)
	}
	return fmt.Sprintf("%.2f%% %s (target %.0f%%) %s", a.Value, name, a.Target, pass)
}

// tokenLatencyLine gives the time to first token and time per output token
// at the target percentile of a token-latency run, with their bounds in
// Server (what LoadGen judges it by), for the console: the summary file
// has every percentile. Empty for other runs.
func tokenLatencyLine(s *loadgen.Summary) string {
	e := &s.Effective
	if !e.UseTokenLatencies || e.Scenario == loadgen.Offline || s.FirstTokenLatencyMax <= 0 {
		return ""
	}
	p := "p" + strconv.FormatFloat(s.TokenTargetPercentile.Percentile*100, 'f', -1, 64)
	bound := func(ns int64) string {
		if e.Scenario != loadgen.Server || ns <= 0 {
			return ""
		}
		return " (bound " + report.FormatDuration(ns) + ")"
	}
	return fmt.Sprintf("  TTFT %s %s%s, TPOT %s %s%s", p, report.FormatDuration(s.TokenTargetPercentile.SampleLatency), bound(e.TTFTLatencyNs),
		p, report.FormatDuration(s.TPOTTargetPercentile.SampleLatency), bound(e.TPOTLatencyNs))
}

// writeProbes lists the probes of a find-peak search, one line each.
func writeProbes(w io.Writer, res *loadgen.Result) {
	var n int
	for _, p := range res.Passes {
		if p.Probe != nil {
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "Find-peak probes (%d; records kept for the reported one):\n", n)
	for _, p := range res.Passes {
		if p.Probe == nil {
			continue
		}
		verdict := "met"
		if !p.Probe.PerfConstraintsMet {
			verdict = "missed"
		}
		mark := ""
		if p.Reported {
			mark = "  <- reported"
		}
		fmt.Fprintf(w, "  target_qps %-12s %8d samples  p%g latency %s (%s)%s\n",
			fmt.Sprintf("%.6g", p.TargetQPS), p.Probe.Samples, res.Effective.TargetLatencyPercentile*100,
			time.Duration(p.Probe.TargetPercentileLatencyNs), verdict, mark)
	}
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "NO"
}

// tokenFigures gives the console lines of a streaming run's token figures,
// as result.json's streaming holds them (metrics.StreamingOf): the
// inter-token latency, the end-to-end latency and the output tokens per
// second. Nil for nil (a run without token times, or without a reported
// pass).
func tokenFigures(s *metrics.Streaming) []string {
	if s == nil {
		return nil
	}
	lines := []string{
		"  ITL " + derived.StatsText(s.ITLNs) + fmt.Sprintf(" (%d gaps between tokens of %d streamed samples)", s.ITLNs.Count, s.StreamedSamples),
		"  E2E latency " + derived.StatsText(s.E2ENs) + fmt.Sprintf(" (%d successful samples)", s.E2ENs.Count),
	}
	if s.SpanNs > 0 {
		lines = append(lines, fmt.Sprintf("  Output tokens/s %s (%d tokens in %s)",
			strconv.FormatFloat(s.OutputTokensPerS, 'f', 1, 64), s.OutputTokens, report.FormatDuration(s.SpanNs)))
	}
	return lines
}

// writeLines writes each line.
func writeLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// writeNetworkOutcome adds to writeOutcome what only some runs have: the
// throughput of a fixed-concurrency run (its headline figure beside the
// latency) and the per-node table of a dispatched run.
func writeNetworkOutcome(w io.Writer, res *loadgen.Result, nodes []bundle.Node) {
	if s := res.Summary; s != nil && s.Effective.Concurrency > 0 && s.SampleCount > 1 && s.Result.FinalQueryAllSamplesDoneTime > 0 {
		fmt.Fprintf(w, "Completed samples per second : %s (%d in flight)\n", mlperflog.FormatDouble(s.CompletedSamplesPerSecond()), s.Effective.Concurrency)
	}
	report.WriteNodeTable(w, report.NodeTable(res, derived.ReportNodes(nodes)))
}

// scenarioLabel is how the console names the load of a run: the scenario,
// or the fixed-concurrency mode, which is no MLPerf scenario.
func scenarioLabel(e loadgen.Effective) string {
	if e.Concurrency > 0 {
		return fmt.Sprintf("fixed concurrency %d (aimeter mode, not an MLPerf scenario)", e.Concurrency)
	}
	return e.Scenario.String()
}

// WriteClientStats writes the client's own counters after a run against
// an OpenAI-compatible or a KServe v2 server; nil writes nothing. The
// client counts every request it sent, a warm-up's (warm, nil for none)
// too: the line says how many of them were the warm-up's, which the
// measured run's figures leave out. lost counts the run's lost jobs
// (benchmark.Outcome.LostJobs).
func WriteClientStats(w io.Writer, s *bundle.ClientStats, warm *bundle.Warmup, lost uint64) {
	if s == nil {
		return
	}
	fmt.Fprintln(w, "client:")
	fmt.Fprintf(w, "  requests %d, errors %d", s.Requests, s.Errors)
	if warm != nil {
		fmt.Fprintf(w, " (of them the warm-up's: %d requests, %d failed)", warm.Requests, warm.Failed)
	}
	// A job lost to its timeout is no error to the client: counted here,
	// so that "errors 0" never hides a run that lost every job.
	fmt.Fprintf(w, "; lost %d (never answered in time)\n", lost)
	if s.TokenMismatches+s.MissingUsage+s.TokenTimesDropped > 0 || s.SendLatenessCount > 0 && s.Requests > 0 {
		fmt.Fprintf(w, "  token count mismatches (usage vs chunks) %d, responses without usage %d, token times dropped %d\n",
			s.TokenMismatches, s.MissingUsage, s.TokenTimesDropped)
	}
	if s.SendLatenessCount > 0 {
		fmt.Fprintf(w, "  send lateness (request written − issued) p50 %v, p99 %v, max %v\n",
			s.SendLatenessP50, s.SendLatenessP99, s.SendLatenessMax)
	}
}

// WriteReplay writes how closely a replay kept its schedule; nothing for
// a run that was no replay.
func WriteReplay(w io.Writer, out *benchmark.Outcome) {
	if out.Lateness == nil {
		return
	}
	fmt.Fprintf(w, "Replay: %s\n", out.Lateness)
}

// WriteSessions writes the per-turn and per-session figures of a sessions
// run; nothing for another run.
func WriteSessions(w io.Writer, out *benchmark.Outcome) {
	m := out.Sessions
	if m == nil {
		return
	}
	fmt.Fprintf(w, "Sessions: %d, e2e_interactivity %.2f tokens/s (Σ output tokens / Σ turn time); per session p50 %.2f, p10 %.2f\n",
		len(m.Sessions), m.E2EInteractivity, m.SessionInteractivityP50, m.SessionInteractivityP10)
	for _, t := range m.PerTurn {
		fmt.Fprintf(w, "  turn %d: %d sent, %d failed; TTFT p50 %v p90 %v; latency p50 %v p90 %v\n",
			t.Turn, t.Count, t.Failed, t.TTFTP50.Round(time.Microsecond), t.TTFTP90.Round(time.Microsecond), t.E2EP50.Round(time.Microsecond), t.E2EP90.Round(time.Microsecond))
	}
}
