package mlperflog

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"

	"aimeter/loadgen"
)

const banner = "================================================"

// WriteSummary writes mlperf_log_summary.txt as LoadGen writes it: the
// performance summary of r.Summary (PerformanceSummary::LogSummary followed
// by the "Test Parameters Used" block of TestSettingsInternal::LogSummary),
// then the warning and error counts. For a test without a performance
// summary (accuracy-only, r.Summary == nil) only the counts are written, as
// LoadGen does.
//
// Aimeter addition: r.Summary.AimeterReasons (lost or failed samples, an
// interrupted run) make the result INVALID even when every LoadGen check
// passed; each reason is printed as an extra " * <reason>" line under
// "Recommendations:", after LoadGen's own lines. LoadGen never prints such
// lines, so a summary that has them comes from a run LoadGen would have
// judged differently.
func WriteSummary(w io.Writer, r *loadgen.Result) error {
	bw := bufio.NewWriter(w)
	if r.Summary != nil {
		sw := summaryWriter{w: bw}
		sw.performance(r.Summary, r.SUTName)
	}
	writeSummaryFooter(bw, warningCount(r), r.ErrorCount())
	return bw.Flush()
}

// writeSummaryFooter writes the counts AsyncLog writes when the log files
// are closed, each preceded by a blank line.
func writeSummaryFooter(w *bufio.Writer, warnings, errors int) {
	switch warnings {
	case 0:
		w.WriteString("\nNo warnings encountered during test.\n")
	case 1:
		w.WriteString("\n1 warning encountered. See detailed log.\n")
	default:
		w.WriteString("\n" + strconv.Itoa(warnings) + " warnings encountered. See detailed log.\n")
	}
	switch errors {
	case 0:
		w.WriteString("\nNo errors encountered during test.\n")
	case 1:
		w.WriteString("\n1 ERROR encountered. See detailed log.\n")
	default:
		w.WriteString("\n" + strconv.Itoa(errors) + " ERRORS encountered. See detailed log.\n")
	}
}

// summaryWriter writes summary lines; bufio.Writer keeps the first error.
type summaryWriter struct {
	w   *bufio.Writer
	buf []byte
}

// line writes one summary entry: the message and a newline, as
// AsyncLog::LogSummary does (a message may itself contain newlines).
func (sw *summaryWriter) line(msg string) {
	sw.w.WriteString(msg)
	sw.w.WriteByte('\n')
}

func (sw *summaryWriter) int(label string, v int64) {
	sw.buf = strconv.AppendInt(append(sw.buf[:0], label...), v, 10)
	sw.buf = append(sw.buf, '\n')
	sw.w.Write(sw.buf)
}

func (sw *summaryWriter) uint(label string, v uint64) {
	sw.buf = strconv.AppendUint(append(sw.buf[:0], label...), v, 10)
	sw.buf = append(sw.buf, '\n')
	sw.w.Write(sw.buf)
}

// double writes v in the C++ default stream format ("92.1544").
func (sw *summaryWriter) double(label string, v float64) {
	sw.buf = appendDouble(append(sw.buf[:0], label...), v)
	sw.buf = append(sw.buf, '\n')
	sw.w.Write(sw.buf)
}

// fixed2 writes DoubleToString(v) ("944.86").
func (sw *summaryWriter) fixed2(label string, v float64) {
	sw.line(label + DoubleToString(v, 2))
}

func (sw *summaryWriter) performance(s *loadgen.Summary, sutName string) {
	e := &s.Effective
	tm := tokenMetrics(s)
	if s.SUTName != "" {
		sutName = s.SUTName
	}

	sw.line(banner + "\nMLPerf Results Summary\n" + banner)
	sw.line("SUT name : " + sutName)
	sw.line("Scenario : " + e.Scenario.String())
	sw.line("Mode     : " + e.Mode.String())
	if e.Concurrency > 0 {
		// aimeter's fixed-concurrency mode runs on SingleStream's issuing
		// and keeps its keys for the files, but is no MLPerf scenario:
		// say so, so that nobody reads the verdict as a SingleStream one.
		sw.line("aimeter mode : fixed concurrency " + strconv.FormatUint(e.Concurrency, 10) + " (not an MLPerf scenario; the result is aimeter's, not a SingleStream result)")
	}

	targetLabel := DoubleToString(s.TargetPercentile.Percentile*100, 1)
	switch e.Scenario {
	case loadgen.SingleStream:
		sw.int(targetLabel+"th percentile latency (ns) : ", s.TargetPercentile.SampleLatency)
	case loadgen.MultiStream:
		sw.int(targetLabel+"th percentile latency (ns) : ", s.TargetPercentile.QueryLatency)
	case loadgen.Server:
		sw.fixed2("Completed samples per second    : ", s.CompletedSamplesPerSecond())
	case loadgen.Offline:
		sw.double("Samples per second: ", s.SamplesPerSecond())
	}

	if e.UseTokenLatencies {
		switch e.Scenario {
		case loadgen.SingleStream, loadgen.MultiStream:
			sw.int(DoubleToString(s.TokenTargetPercentile.Percentile*100, 1)+
				"th first token percentile latency (ns) : ", s.TokenTargetPercentile.SampleLatency)
		case loadgen.Offline:
			sw.double("Tokens per second: ", tm.offlineTokensPerSecond)
		case loadgen.Server:
			sw.fixed2("Completed tokens per second: ", tm.completedTokensPerSecond)
		}
	}
	if e.InferTokenLatencies {
		switch e.Scenario {
		case loadgen.Offline:
			sw.double("Tokens per second (inferred): ", tm.inferredOfflineTokensPerSecond)
		case loadgen.Server:
			sw.fixed2("Completed tokens per second (inferred): ", tm.inferredCompletedTokensPerSecond)
		}
	}

	sw.line("Result is : " + validity(s))
	if s.HasPerfConstraints() {
		sw.line("  Performance constraints satisfied : " + yesNo(s.PerfConstraintsMet))
	}
	sw.line("  Min duration satisfied : " + yesNo(s.MinDurationMet))
	sw.line("  Min queries satisfied : " + yesNo(s.MinQueriesMet))
	sw.line("  Early stopping satisfied: " + yesNo(s.EarlyStoppingMet))
	if !s.Valid {
		sw.line("Recommendations:")
		// A recommendation is empty where failures decided the verdict
		// (Summary.FailuresDecided): LoadGen's advice on the load would
		// mislead then.
		if !s.PerfConstraintsMet && s.PerfConstraintsRecommendation != "" {
			sw.line(" * " + s.PerfConstraintsRecommendation)
		}
		if !s.MinDurationMet && s.MinDurationRecommendation != "" {
			sw.line(" * " + s.MinDurationRecommendation)
		}
		if !s.MinQueriesMet && !s.FailuresDecided {
			sw.line(" * The test exited early, before enough queries were issued.\n" +
				"   See the detailed log for why this may have occurred.")
		}
		// Aimeter's reasons; LoadGen has no such lines.
		for _, reason := range s.AimeterReasons {
			sw.line(" * " + reason)
		}
	}
	if e.Scenario != loadgen.Offline {
		if !e.UseTokenLatencies {
			sw.line("Early Stopping Result:")
			sw.line(strings.Join(s.EarlyStoppingLines, "\n"))
		} else {
			sw.line("TTFT Early Stopping Result:")
			sw.line(strings.Join(s.EarlyStoppingTTFTLines, "\n"))
			sw.line("TPOT Early Stopping Result:")
			sw.line(strings.Join(s.EarlyStoppingTPOTLines, "\n"))
		}
	}

	sw.line("\n" + banner + "\nAdditional Stats\n" + banner)
	switch e.Scenario {
	case loadgen.SingleStream:
		sw.fixed2("QPS w/ loadgen overhead         : ", s.QPSWithLoadgenOverhead())
		sw.fixed2("QPS w/o loadgen overhead        : ", s.QPSWithoutLoadgenOverhead())
		sw.line("")
	case loadgen.Server:
		sw.fixed2("Scheduled samples per second : ", s.ScheduledSamplesPerSecond())
	case loadgen.MultiStream:
		sw.line("Per-query latency:  ")
		sw.int("Min latency (ns)                : ", s.QueryLatencyMin)
		sw.int("Max latency (ns)                : ", s.QueryLatencyMax)
		sw.int("Mean latency (ns)               : ", s.QueryLatencyMean)
		for _, lp := range s.Percentiles {
			sw.int(percentileLabel(lp.Percentile)+" percentile latency (ns)   : ", lp.QueryLatency)
		}
	}
	if e.Scenario != loadgen.MultiStream {
		sw.int("Min latency (ns)                : ", s.SampleLatencyMin)
		sw.int("Max latency (ns)                : ", s.SampleLatencyMax)
		sw.int("Mean latency (ns)               : ", s.SampleLatencyMean)
		for _, lp := range s.Percentiles {
			sw.int(percentileLabel(lp.Percentile)+" percentile latency (ns)   : ", lp.SampleLatency)
		}
	}
	if e.UseTokenLatencies {
		sw.line("")
		switch e.Scenario {
		case loadgen.SingleStream:
			sw.fixed2("TPS w/ loadgen overhead         : ", tm.tpsWithLoadgenOverhead)
			sw.fixed2("TPS w/o loadgen overhead        : ", tm.tpsWithoutLoadgenOverhead)
		case loadgen.Server:
			sw.fixed2("Completed tokens per second                 : ", tm.completedTokensPerSecond)
		}
		if e.Scenario != loadgen.Offline {
			sw.int("Min First Token latency (ns)                : ", s.FirstTokenLatencyMin)
			sw.int("Max First Token latency (ns)                : ", s.FirstTokenLatencyMax)
			sw.int("Mean First Token latency (ns)               : ", s.FirstTokenLatencyMean)
			for _, lp := range s.TokenPercentiles {
				sw.int(percentileLabel(lp.Percentile)+" percentile first token latency (ns)   : ", lp.SampleLatency)
			}
			sw.line("")
			sw.int("Min Time per Output Token (ns)                : ", s.TimePerOutputTokenMin)
			sw.int("Max Time per Output Token (ns)                : ", s.TimePerOutputTokenMax)
			sw.int("Mean Time per Output Token (ns)               : ", s.TimePerOutputTokenMean)
			for _, lp := range s.TPOTPercentiles {
				sw.int(percentileLabel(lp.Percentile)+" percentile time to output token (ns)   : ", lp.SampleLatency)
			}
		}
	}

	sw.line("\n" + banner + "\nTest Parameters Used\n" + banner)
	sw.testParameters(e)
}

// testParameters is TestSettingsInternal::LogSummary. Bools print as 0/1
// (a plain ostream insertion), doubles in the default stream format.
func (sw *summaryWriter) testParameters(e *loadgen.Effective) {
	sw.uint("samples_per_query : ", e.SamplesPerQuery)
	sw.double("target_qps : ", e.TargetQPS)
	if !e.UseTokenLatencies {
		sw.int("target_latency (ns): ", e.TargetLatencyNs)
	} else {
		sw.int("ttft_latency (ns): ", e.TTFTLatencyNs)
		sw.int("tpot_latency (ns): ", e.TPOTLatencyNs)
	}
	sw.uint("max_async_queries : ", e.MaxAsyncQueries)
	sw.uint("min_duration (ms): ", e.MinDurationMs)
	sw.uint("max_duration (ms): ", e.MaxDurationMs)
	sw.uint("min_query_count : ", e.MinQueryCount)
	sw.uint("max_query_count : ", e.MaxQueryCount)
	sw.uint("qsl_rng_seed : ", e.QSLRNGSeed)
	sw.uint("sample_index_rng_seed : ", e.SampleIndexRNGSeed)
	sw.uint("schedule_rng_seed : ", e.ScheduleRNGSeed)
	sw.uint("accuracy_log_rng_seed : ", e.AccuracyLogRNGSeed)
	sw.double("accuracy_log_probability : ", e.AccuracyLogProbability)
	sw.uint("accuracy_log_sampling_target : ", e.AccuracyLogSamplingTarget)
	sw.line("print_timestamps : " + bool01(e.PrintTimestamps))
	sw.line("performance_issue_unique : " + bool01(e.PerformanceIssueUnique))
	sw.line("performance_issue_same : " + bool01(e.PerformanceIssueSame))
	sw.uint("performance_issue_same_index : ", e.PerformanceIssueSameIndex)
	sw.uint("performance_sample_count : ", e.PerformanceSampleCount)
	sw.uint("accuracy_sample_count : ", e.AccuracySampleCount)
	if e.SampleConcatenatePermutation {
		sw.line("WARNING: sample_concatenate_permutation was set to true. \n" +
			"Generated samples per query might be different as the one in the setting.\n" +
			"Check the generated_samples_per_query line in the detailed log for the real\n" +
			"samples_per_query value")
	}
}

// validity is the verdict aimeter reports: LoadGen's, made INVALID by any
// aimeter reason.
func validity(s *loadgen.Summary) string {
	if s.Valid {
		return "VALID"
	}
	return "INVALID"
}

// tokenRates are the token throughputs LoadGen prints. loadgen.Summary has
// no methods for them, so they are computed here with the C++ operand types
// and order (integer products first, then one double division), which is
// what makes e.g. result_token_throughput a per-nanosecond figure.
type tokenRates struct {
	offlineTokensPerSecond           float64 // token_count / max_latency
	completedTokensPerSecond         float64 // token_count / final all-done time
	tpsWithLoadgenOverhead           float64 // token_count / final issue time
	tpsWithoutLoadgenOverhead        float64 // token_count / (mean latency s × samples)
	tokenThroughputDetail            float64 // token_count / (mean latency ns × samples), detail quirk
	inferredOfflineTokensPerSecond   float64 // factor × samples / max_latency
	inferredCompletedTokensPerSecond float64 // factor × (samples − 1) / final all-done time
}

func tokenMetrics(s *loadgen.Summary) tokenRates {
	pr := &s.Result
	tc := float64(s.TokenCount)
	n := s.SampleCount
	factor := s.Effective.TokenLatencyScalingFactor
	meanSeconds := float64(s.SampleLatencyMean) / 1e9
	return tokenRates{
		offlineTokensPerSecond:           tc / pr.MaxLatency,
		completedTokensPerSecond:         tc / pr.FinalQueryAllSamplesDoneTime,
		tpsWithLoadgenOverhead:           tc / pr.FinalQueryIssuedTime,
		tpsWithoutLoadgenOverhead:        tc / (meanSeconds * float64(n)),
		tokenThroughputDetail:            tc / float64(uint64(s.SampleLatencyMean)*n),
		inferredOfflineTokensPerSecond:   float64(factor*n) / pr.MaxLatency,
		inferredCompletedTokensPerSecond: float64(factor*(n-1)) / pr.FinalQueryAllSamplesDoneTime,
	}
}

// SummaryNoteTitle heads a note appended to mlperf_log_summary.txt by
// WriteSummaryNote.
const SummaryNoteTitle = "aimeter note (not part of LoadGen's summary)"

// WriteSummaryNote appends a note to mlperf_log_summary.txt, to be called
// after WriteSummary: a blank line, the note's own banner-framed title
// (SummaryNoteTitle) and text, ending with a newline. LoadGen's content
// above it stays byte for byte as WriteSummary wrote it, so that tools that
// parse the summary's "key : value" lines read the same values; the note
// is for people (for example, that a GB/T 45087 run's verdict is not
// LoadGen's VALID/INVALID, gbt.SummaryNote). Its lines must not hold " : ",
// the summary's key separator, so that no parser takes a line for a
// LoadGen key; such a text is refused. An empty text writes nothing.
func WriteSummaryNote(w io.Writer, text string) error {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return nil
	}
	if strings.Contains(text, " : ") {
		return errors.New("mlperflog: a summary note must not contain \" : \", the summary's key separator")
	}
	_, err := io.WriteString(w, "\n"+banner+"\n"+SummaryNoteTitle+"\n"+banner+"\n"+text+"\n")
	return err
}
