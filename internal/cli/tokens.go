package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/stats"
)

// tokenPercentiles are the percentiles tokenFigures gives.
var tokenPercentiles = []float64{0.50, 0.90, 0.99}

// tokenFigures gives the console lines of a streaming run's token figures,
// from the reported pass's successful samples: the inter-token latency
// (the gaps between consecutive token arrivals of a sample, every gap of
// every sample), the end-to-end latency (scheduled to completed, as
// LoadGen measures a sample) and the output tokens per second (their
// tokens over the pass's duration). Nil for a run without token times (not
// streamed) or without a reported pass.
func tokenFigures(res *loadgen.Result) []string {
	pass := -1
	for i, p := range res.Passes {
		if p.Reported {
			pass = i
		}
	}
	if pass < 0 {
		return nil
	}
	info := res.Passes[pass]
	// Most runs stream no tokens: say so before reading every record.
	any := false
	for seq := range res.TokenTimes() {
		if seq >= info.FirstSeq && seq < info.EndSeq {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	var ok []uint64 // the successful samples' sequence ids
	var e2e []int64
	var tokens int64
	for rec := range res.PassRecords(pass) {
		if rec.Status != loadgen.StatusOK {
			continue
		}
		ok = append(ok, rec.SeqID)
		e2e = append(e2e, rec.CompletedNs-rec.ScheduledNs)
		tokens += rec.Tokens
	}
	slices.Sort(ok) // (in issue order, nearly sorted already)
	var itl []int64
	streamed := 0
	for seq, times := range res.TokenTimes() {
		if seq < info.FirstSeq || seq >= info.EndSeq {
			continue
		}
		if _, found := slices.BinarySearch(ok, seq); !found {
			continue
		}
		streamed++
		for j := 1; j < len(times); j++ {
			itl = append(itl, times[j]-times[j-1])
		}
	}
	if streamed == 0 {
		return nil
	}
	slices.Sort(itl)
	slices.Sort(e2e)
	lines := []string{
		"  ITL " + percentiles(itl) + fmt.Sprintf(" (%d gaps between tokens of %d streamed samples)", len(itl), streamed),
		"  E2E latency " + percentiles(e2e) + fmt.Sprintf(" (%d successful samples)", len(e2e)),
	}
	if info.EndNs > 0 {
		secs := float64(info.EndNs) / 1e9
		lines = append(lines, fmt.Sprintf("  Output tokens/s %s (%d tokens in %s)",
			strconv.FormatFloat(float64(tokens)/secs, 'f', 1, 64), tokens, report.FormatDuration(info.EndNs)))
	}
	return lines
}

// percentiles is "p50 X, p90 Y, p99 Z" of sorted durations, or "none"
// when there are none.
func percentiles(sorted []int64) string {
	if len(sorted) == 0 {
		return "none"
	}
	s := ""
	for i, p := range tokenPercentiles {
		if i > 0 {
			s += ", "
		}
		s += "p" + strconv.FormatFloat(p*100, 'f', -1, 64) + " " + report.FormatDuration(stats.Percentile(sorted, p))
	}
	return s
}

// printLines prints each line.
func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
