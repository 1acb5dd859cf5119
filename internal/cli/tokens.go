package cli

import (
	"fmt"
	"io"
	"strconv"

	"aimeter/derived"
	"aimeter/derived/metrics"
	"aimeter/report"
)

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

// printLines prints each line.
func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
