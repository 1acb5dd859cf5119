package console

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// maxBreakdownGroups bounds the groups the console names; the rest are
// summed as "… N more kinds".
const maxBreakdownGroups = 8

// WriteErrorBreakdown writes the failed samples of res by group (category
// and code, the most frequent first) and where the details are in the
// bundle in dir, e.g.
//
//	Failed: 23 of 500 samples (4.6 %): http_5xx/501 ×20, connection_reset ×3; see DIR/errors.json
//
// and, where the detail log holds errors that are not sample failures (a
// SUT's protocol errors), how many errors it logged and where. It writes
// nothing for a run without errors.
func WriteErrorBreakdown(w io.Writer, res *loadgen.Result, dir string) {
	if res.FailedSamples > 0 {
		var total uint64
		for range res.Records() {
			total++
		}
		groups := slices.Clone(res.Errors)
		slices.SortStableFunc(groups, func(a, b loadgen.ErrorInfo) int { return cmp.Compare(b.Count, a.Count) })
		parts := make([]string, 0, min(len(groups), maxBreakdownGroups)+1)
		for i, g := range groups {
			if i == maxBreakdownGroups {
				var rest uint64
				for _, h := range groups[i:] {
					rest += h.Count
				}
				parts = append(parts, fmt.Sprintf("… %d more kinds ×%d", len(groups)-i, rest))
				break
			}
			parts = append(parts, fmt.Sprintf("%s ×%d", g.Label(), g.Count))
		}
		line := fmt.Sprintf("Failed: %d", res.FailedSamples)
		if total >= res.FailedSamples {
			line += fmt.Sprintf(" of %d samples (%s %%)", total, percent(res.FailedSamples, total))
		} else {
			line += " samples"
		}
		fmt.Fprintf(w, "%s: %s; see %s\n", line, strings.Join(parts, ", "), filepath.Join(dir, bundle.ErrorsFile))
	}
	// The detail log holds the failures' messages too; it is worth naming
	// where it is the only place (errors that are not sample failures) or
	// where it holds what errors.json does not (a SUT's protocol errors).
	protocol := res.UnknownCompletions + res.DuplicateCompletions
	for _, p := range res.Passes {
		protocol += p.ProtocolErrors
	}
	if n := res.ErrorCount(); n > 0 && (res.FailedSamples == 0 || protocol > 0) {
		fmt.Fprintf(w, "%d errors logged, see %s\n", n, filepath.Join(dir, bundle.DetailFile))
	}
}

// percent formats 100·a/b with one decimal.
func percent(a, b uint64) string {
	if b == 0 {
		return "0"
	}
	return fmt.Sprintf("%.1f", 100*float64(a)/float64(b))
}
