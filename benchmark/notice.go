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
	return fmt.Sprintf("Settings.Model %q is not a model key of %s; nearest known keys: %s. The run uses the generic (*) settings only",
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

// lengthInput is what the sizing rule (lengthNotice) reads of a run.
type lengthInput struct {
	eff loadgen.Effective
	// set are the settings: a closed loop's min_query_count as given (an
	// equal-issue SingleStream's effective one derives from the
	// duration) and a fixed-concurrency run's expected latency.
	set loadgen.Settings
	src mlperfconf.Sources
	// explicit: the plan's own settings (Settings.Explicit), whose
	// sources are unknown.
	explicit bool
	model    string
	// gbt is the plan of a GB/T test; nil for an MLPerf run.
	gbt *gbt.RunPlan
	// arrivals are explicit query offsets (GB/T modes 1 and 3, a replay);
	// replay says they are a trace's.
	arrivals []int64
	replay   bool
	// chains: a sessions run, whose turns wait on each other's answers.
	chains bool
}

// lengthNotice is the sizing rule of every run (issue 39): a run lasts
// what was asked, or says so before it starts. It returns the note for a
// run that will last longer than asked (min_duration, or a GB/T test's
// duration: GB-7.4.2), naming the setting that decides and the change that
// ends it as asked, or for a run longer than longRun; "" when the run
// ends as asked. runner.run asks it for every run — the MLPerf scenarios
// in process and over the network, fixed concurrency, the GB/T modes, a
// sweep's points, an audit's runs, replays and sessions — once the
// settings and the data set are known. The settings it names are Plan
// fields ("Settings.Set min_query_count=20"); the command line names its
// flags instead.
//
// What decides a performance pass's length (loadgen-reference §5, §6):
//   - Server: LoadGen schedules max(min_duration, min_query_count /
//     target_qps) of queries and issues them all, so min_query_count at a
//     low rate outlasts the duration (a GB/T Poisson test, mode 2, too).
//   - Explicit arrivals (GB/T modes 1 and 3, a replay): the schedule's
//     span; min_query_count only counts toward LoadGen's verdict.
//   - SingleStream, MultiStream, fixed concurrency (and GB/T mode 0,
//     whose min_query_count is 1): min_duration, and at least
//     min_query_count queries completed in turn; that part depends on the
//     SUT's speed, so the note says above which latency it decides.
//   - Offline: one query of max(min_query_count, 1.1 × min_duration ×
//     target_qps) samples; min_query_count decides when it is the larger
//     (a GB/T offline test, mode 4, sends its jobs and has no duration).
//   - An accuracy pass and a sessions run: not known in advance.
func lengthNotice(in lengthInput) string {
	e := in.eff
	if e.Mode == loadgen.AccuracyOnly || in.chains {
		return ""
	}
	from := func(key string) string {
		if in.explicit {
			return "the plan's own settings"
		}
		return in.src.Describe(key)
	}
	minDur := time.Duration(e.MinDurationMs) * time.Millisecond
	asked := minDur
	askedText := fmt.Sprintf("than min_duration = %d ms (from %s)", e.MinDurationMs, from("min_duration"))
	subject, unit := "this run", "queries"
	switch e.Mode {
	case loadgen.FindPeakPerformance:
		subject = "each find-peak probe of this run"
	case loadgen.SubmissionRun:
		subject = "the performance pass of this run"
	}
	if g := in.gbt; g != nil {
		subject, unit = "this test", "jobs"
		asked = g.Test.Arrival.Duration
		askedText = fmt.Sprintf("than its duration of %v", asked)
	}
	rate := func() string {
		if in.gbt != nil {
			return fmt.Sprintf("%s jobs/s", formatQPS(e.TargetQPS))
		}
		return fmt.Sprintf("target_qps = %s, from %s", formatQPS(e.TargetQPS), from("target_qps"))
	}
	// longer: the run surely lasts expected, longer than asked, because
	// of why; fix ends it as asked. long: the run lasts expected anyway.
	longer := func(expected time.Duration, why, fix string) string {
		return fmt.Sprintf("%s will take about %s, longer %s: %s. To end it at %v: %s",
			subject, expected.Round(100*time.Millisecond), askedText, why, asked, fix)
	}
	long := func(expected time.Duration, why, shorten string) string {
		if expected <= longRun || in.gbt != nil {
			return "" // a GB/T test lasts the duration it was given
		}
		return fmt.Sprintf("%s will take at least %s for %s: %s. For an unofficial, shorter run: %s",
			subject, expected.Round(time.Second), strings.TrimSpace(in.model+" "+e.Scenario.String()), why, shorten)
	}
	durationWhy := fmt.Sprintf("min_duration = %d ms, from %s", e.MinDurationMs, from("min_duration"))
	const tolerance = 100 * time.Millisecond
	switch {
	case len(in.arrivals) > 0:
		span := time.Duration(in.arrivals[len(in.arrivals)-1])
		why := fmt.Sprintf("its schedule of %d %s spans %s", len(in.arrivals), unit, span.Round(time.Second))
		if in.replay {
			return long(span, why, "Replay.MaxDuration or Replay.Speedup")
		}
		return ""
	case e.Scenario == loadgen.Server && e.TargetQPS > 0:
		byCount := time.Duration(float64(e.MinQueryCount) / e.TargetQPS * float64(time.Second))
		if byCount <= minDur {
			return long(minDur, durationWhy, "Settings.Set min_duration=10000")
		}
		why := fmt.Sprintf("min_query_count = %d, from %s, at %s", e.MinQueryCount, from("min_query_count"), rate())
		if asked > 0 && byCount-asked >= tolerance {
			fits := uint64(max(1, e.TargetQPS*asked.Seconds()))
			return longer(byCount, why, fmt.Sprintf("Settings.Set min_query_count=%d, or a higher rate", fits))
		}
		return long(byCount, why, "Settings.Set min_query_count=1000 and Settings.Set min_duration=10000")
	case e.Scenario == loadgen.Offline:
		if in.gbt != nil || !(e.TargetQPS > 0) {
			return "" // the jobs go at once; how long they take is the SUT's
		}
		byDuration := uint64(1.1 * minDur.Seconds() * e.TargetQPS)
		expected := time.Duration(float64(e.SamplesPerQuery) / e.TargetQPS * float64(time.Second))
		if e.SamplesPerQuery <= byDuration {
			return long(expected, durationWhy+fmt.Sprintf(" at %s samples/s (target_qps, from %s)", formatQPS(e.TargetQPS), from("target_qps")), "Settings.Set min_duration=10000")
		}
		why := fmt.Sprintf("min_query_count = %d samples, from %s, at the expected %s samples/s (target_qps, from %s)",
			e.SamplesPerQuery, from("min_query_count"), formatQPS(e.TargetQPS), from("target_qps"))
		if asked > 0 && expected-asked >= tolerance {
			return longer(expected, why, "Settings.Set min_query_count=1 (min_duration then sizes the query)")
		}
		return long(expected, why, "Settings.Set min_query_count=1 and Settings.Set min_duration=10000")
	}
	// A closed loop: SingleStream, MultiStream, fixed concurrency.
	if n := long(minDur, durationWhy, "Settings.Set min_duration=10000"); n != "" {
		return n
	}
	per, perKey := time.Duration(in.set.SingleStreamExpectedLatencyNs), "single_stream_expected_latency"
	if e.Scenario == loadgen.MultiStream {
		per, perKey = time.Duration(in.set.MultiStreamExpectedLatencyNs), "multi_stream_expected_latency"
	}
	inFlight, turn := uint64(1), "one at a time"
	if e.Concurrency > 0 {
		inFlight, turn = e.Concurrency, fmt.Sprintf("%d at a time", e.Concurrency)
	}
	mqc := in.set.MinQueryCount
	if mqc <= 1 || per <= 0 || asked <= 0 {
		return ""
	}
	byCount := time.Duration(float64(mqc) * float64(per) / float64(inFlight))
	if byCount-asked < tolerance {
		return ""
	}
	above := time.Duration(float64(asked) * float64(inFlight) / float64(mqc))
	fits := uint64(max(1, float64(asked)*float64(inFlight)/float64(per)))
	return fmt.Sprintf("%s may last longer %s: min_query_count = %d %s, from %s, must also complete, %s, so %s slower than %s each make it longer (about %s at the expected %s, %s from %s). To end it at %v: Settings.Set min_query_count=%d",
		subject, askedText, mqc, unit, from("min_query_count"), turn, unit, above.Round(time.Microsecond), byCount.Round(time.Second), per, perKey, from("target_latency"), asked, fits)
}

// formatQPS writes a rate with at most 6 significant digits.
func formatQPS(q float64) string { return fmt.Sprintf("%.6g", q) }

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
	return fmt.Sprintf("mode 5: at %s foreign jobs/s over %d ms fewer than one foreign job is expected; raise GBT.Input.Mixed.Lambda or GBT.Input.Arrival.Duration for the foreign jobs to count",
		formatQPS(f.ServerTargetQPS), f.MinDurationMs)
}
