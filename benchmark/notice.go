package benchmark

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"aimeter/accuracy"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
)

// longRun is the expected length above which a run says beforehand how long
// it will take, and why.
const longRun = time.Minute

// unknownModelWarning names the model keys nearest to model (by edit
// distance) among those of the built-in mlperf.conf, and says what the run
// does instead. otherFiles says other config files were read too.
func unknownModelWarning(model string, otherFiles bool) string {
	where := "the built-in mlperf.conf"
	if otherFiles {
		where = "any config file read"
	}
	return fmt.Sprintf("--model %q is not a model key of %s; nearest known keys: %s. The run uses the generic (*) settings only",
		model, where, strings.Join(nearestKeys(model, mlperfconf.Builtin().Models(), 3), ", "))
}

// nearestKeys returns the n keys closest to s by edit distance, nearest
// first, ties in key order.
func nearestKeys(s string, keys []string, n int) []string {
	type scored struct {
		key  string
		dist int
	}
	all := make([]scored, 0, len(keys))
	for _, k := range keys {
		all = append(all, scored{k, editDistance(strings.ToLower(s), strings.ToLower(k))})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.dist - b.dist })
	var out []string
	for _, sc := range all[:min(n, len(all))] {
		out = append(out, sc.key)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int { return accuracy.Levenshtein([]byte(a), []byte(b)) }

// longRunNotice returns the line printed before a run expected to last
// longer than longRun: how long, which setting decides it and where it came
// from, and how to shorten an unofficial run. It returns "" for a shorter
// run or one whose length is not known in advance (accuracy runs, Offline
// and the stream scenarios past min_duration).
func longRunNotice(e loadgen.Effective, model string, src mlperfconf.Sources) string {
	if e.Mode == loadgen.AccuracyOnly {
		return ""
	}
	minDur := time.Duration(e.MinDurationMs) * time.Millisecond
	expected, why := minDur, fmt.Sprintf("min_duration = %d ms, from %s", e.MinDurationMs, sourceOf(src, "min_duration"))
	shorten := "--set min_duration=10000"
	if e.Scenario == loadgen.Server && e.TargetQPS > 0 {
		if byCount := time.Duration(float64(e.MinQueryCount) / e.TargetQPS * float64(time.Second)); byCount > expected {
			expected = byCount
			why = fmt.Sprintf("min_query_count = %d, from %s, at target_qps = %s, from %s",
				e.MinQueryCount, sourceOf(src, "min_query_count"), formatQPS(e.TargetQPS), sourceOf(src, "target_qps"))
			shorten = "--set min_query_count=1000 --set min_duration=10000"
		}
	}
	if expected <= longRun {
		return ""
	}
	what := "this run will take"
	switch e.Mode {
	case loadgen.FindPeakPerformance:
		what = "each find-peak probe of this run will take"
	case loadgen.SubmissionRun:
		what = "the performance pass of this run will take"
	}
	subject := e.Scenario.String()
	if model != "" {
		subject = model + " " + subject
	}
	return fmt.Sprintf("%s at least %s for %s: %s. For an unofficial, shorter run add %s",
		what, expected.Round(time.Second), subject, why, shorten)
}

func sourceOf(src mlperfconf.Sources, name string) string { return src.Describe(name) }

// formatQPS writes a rate with at most 6 significant digits.
func formatQPS(q float64) string { return fmt.Sprintf("%.6g", q) }

// durationNotice returns the line printed before a GB/T test whose
// --duration cannot end it: LoadGen's Server scenario, which carries arrival
// modes 1–3, also waits for min_query_count queries, so at a low rate the
// test lasts longer than asked. aimeter keeps min_query_count (it is
// LoadGen's rule, and a test may rely on it) and says so instead, naming
// the setting that fits the duration. It returns "" when the duration ends
// the test.
func durationNotice(e loadgen.Effective, duration time.Duration, src mlperfconf.Sources) string {
	if e.Scenario != loadgen.Server || !(e.TargetQPS > 0) || e.MinQueryCount == 0 {
		return ""
	}
	byCount := time.Duration(float64(e.MinQueryCount) / e.TargetQPS * float64(time.Second))
	if byCount <= duration || byCount-duration < time.Second/10 {
		return ""
	}
	fits := uint64(max(1, e.TargetQPS*duration.Seconds()))
	return fmt.Sprintf("--duration %v cannot be honoured: min_query_count = %d, from %s, needs about %s at %s jobs/s, so the test lasts that long. To end it with the duration add --set min_query_count=%d",
		duration, e.MinQueryCount, sourceOf(src, "min_query_count"), byCount.Round(100*time.Millisecond), formatQPS(e.TargetQPS), fits)
}

// foreignNotice says, before a mixed test (mode 5), that its foreign jobs
// may outlast the main jobs' duration: a foreign job's stall timeout or a
// slow SUT keeps the run going. "" when nothing is to be said.
func foreignNotice(p *gbt.RunPlan) string {
	f := p.Foreign
	if f == nil || !(f.ServerTargetQPS > 0) {
		return ""
	}
	jobs := f.ServerTargetQPS * float64(f.MinDurationMs) / 1000
	if jobs >= 1 {
		return ""
	}
	return fmt.Sprintf("mode 5: at %s foreign jobs/s over %d ms fewer than one foreign job is expected; raise --mixed-lambda or --duration for the foreign jobs to count",
		formatQPS(f.ServerTargetQPS), f.MinDurationMs)
}
