package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/stats"
)

// runQuick runs a quick performance test of scenario into a new directory
// and returns the directory and the run's exit code (checked against
// wantCodes).
func runQuick(t *testing.T, scenario string, wantCodes []int, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	res := runCLI(t, "", quickArgs(scenario, out, extra...)...)
	if !slices.Contains(wantCodes, res.code) {
		summary, _ := os.ReadFile(filepath.Join(out, bundle.SummaryFile))
		t.Fatalf("run %s: want exit in %v\n%s\n--- summary:\n%s", scenario, wantCodes, res, summary)
	}
	return out
}

// reportTo runs `aimeter report dir --output-dir out --ignore-digests` (the
// tests edit the raw files on purpose) and returns the result and the
// regenerated summary.
func reportTo(t *testing.T, dir, out string) (cliResult, string) {
	t.Helper()
	res := runCLI(t, "", "report", dir, "--output-dir", out, "--ignore-digests")
	summary, err := os.ReadFile(filepath.Join(out, bundle.SummaryFile))
	if err != nil && res.code != ExitFailure {
		t.Fatalf("report wrote no summary: %v\n%s", err, res)
	}
	return res, string(summary)
}

// resultKeys are the detail-log keys that come from the summary alone.
func resultKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range parseDetailLog(t, path) {
		if strings.HasPrefix(k, "result_") || strings.HasPrefix(k, "early_stopping_") || strings.HasPrefix(k, "effective_") || strings.HasPrefix(k, "requested_") {
			out[k] = string(v[len(v)-1])
		}
	}
	return out
}

func TestReportRoundTrip(t *testing.T) {
	rows := []struct {
		name     string
		scenario string
		extra    []string
		code     int
		reason   string
	}{
		{"SingleStream", "SingleStream", nil, ExitOK, "VALID run"},
		{"MultiStream", "MultiStream", nil, ExitOK, "VALID run with per-query latencies"},
		{"Server", "Server", []string{"--sut", "null-async"}, ExitOK, "VALID run with a Poisson schedule"},
		{"Offline", "Offline", nil, ExitOK, "VALID run with one query"},
		{"MultiStream INVALID", "MultiStream", []string{"--set", "min_query_count=100", "--set", "max_query_count=100", "--set", "min_duration=0"}, ExitInvalid,
			"100 queries are too few for MultiStream early stopping (662): INVALID and exit 3 both times"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			dir := runQuick(t, r.scenario, []int{r.code}, r.extra...)
			orig := readFileT(t, filepath.Join(dir, bundle.SummaryFile))
			out := filepath.Join(t.TempDir(), "re")
			res, got := reportTo(t, dir, out)
			if res.code != r.code {
				t.Errorf("%s: report exit %d, run exit %d\n%s", r.reason, res.code, r.code, res)
			}
			if got != orig {
				t.Errorf("%s: regenerated summary differs\n--- report:\n%s\n--- run:\n%s", r.reason, got, orig)
			}
			if !strings.Contains(res.stdout, "Logs written to "+out) {
				t.Errorf("report stdout:\n%s", res.stdout)
			}
			want := resultKeys(t, filepath.Join(dir, bundle.DetailFile))
			have := resultKeys(t, filepath.Join(out, bundle.DetailFile))
			for k, v := range want {
				if have[k] != v {
					t.Errorf("detail %s: report %s, run %s", k, have[k], v)
				}
			}
			if len(have) != len(want) {
				t.Errorf("detail: report has %d result/settings keys, run %d", len(have), len(want))
			}

			// In place: the summary is rewritten unchanged, the records and
			// settings are left alone.
			records := readFileT(t, filepath.Join(dir, bundle.RecordsFile))
			settings := readFileT(t, filepath.Join(dir, bundle.SettingsFile))
			inPlace := runCLI(t, "", "report", dir)
			if inPlace.code != r.code {
				t.Errorf("in-place report exit %d", inPlace.code)
			}
			if got := readFileT(t, filepath.Join(dir, bundle.SummaryFile)); got != orig {
				t.Errorf("in-place report changed the summary:\n%s", got)
			}
			if readFileT(t, filepath.Join(dir, bundle.RecordsFile)) != records || readFileT(t, filepath.Join(dir, bundle.SettingsFile)) != settings {
				t.Errorf("report modified records.csv or settings.json")
			}
		})
	}
}

// TestReportRoundTripCounts: the summary footer counts the run's warnings
// and errors; report must keep them although settings.json and records.csv
// hold no events.
func TestReportRoundTripCounts(t *testing.T) {
	rows := []struct {
		name   string
		audit  string
		args   []string
		code   int
		footer string
		reason string
	}{
		{"audit warning", "*.SingleStream.min_query_count = 500\n", quickSets["SingleStream"], ExitOK,
			"\n1 warning encountered. See detailed log.\n\nNo errors encountered during test.\n",
			"an audit.config is logged as a warning"},
		{"ran out of queries", "", []string{"--set", "min_duration=100", "--set", "target_latency=10"}, ExitInvalid,
			"\nNo warnings encountered during test.\n\n1 ERROR encountered. See detailed log.\n",
			"100 queries expected at 10 ms each run out long before 100 ms: an error, INVALID"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			wd := t.TempDir()
			if r.audit != "" {
				if err := os.WriteFile(filepath.Join(wd, "audit.config"), []byte(r.audit), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir := filepath.Join(t.TempDir(), "run")
			run := runCLI(t, wd, append([]string{"run", "-q", "--scenario", "SingleStream", "--output-dir", dir}, r.args...)...)
			if run.code != r.code {
				t.Fatalf("%s: run exit %d, want %d\n%s", r.reason, run.code, r.code, run)
			}
			orig := readFileT(t, filepath.Join(dir, bundle.SummaryFile))
			if !strings.HasSuffix(orig, r.footer) {
				t.Fatalf("%s: the run's summary does not end with %q:\n%s", r.reason, r.footer, orig)
			}
			out := filepath.Join(t.TempDir(), "re")
			res, got := reportTo(t, dir, out)
			if res.code != r.code {
				t.Errorf("report exit %d, want %d\n%s", res.code, r.code, res)
			}
			if got != orig {
				t.Errorf("regenerated summary differs\n--- report:\n%s\n--- run:\n%s", got, orig)
			}
			// The counts come from the stored events: a run directory
			// whose summary was deleted gets it back, footer and all.
			if err := os.Remove(filepath.Join(dir, bundle.SummaryFile)); err != nil {
				t.Fatal(err)
			}
			if again := runCLI(t, "", "report", dir); again.code != r.code {
				t.Fatalf("report in place: exit %d, want %d\n%s", again.code, r.code, again)
			}
			if again := readFileT(t, filepath.Join(dir, bundle.SummaryFile)); again != orig {
				t.Errorf("summary regenerated in place differs\n--- report:\n%s\n--- run:\n%s", again, orig)
			}
		})
	}
}

// ---- Reference early stopping (loadgen-reference §9), computed here from
// the edited latencies with nothing but stats.EarlyStopping.MinPassing.

const (
	esConfidence = 0.99
	esTolerance  = 0.0
)

// refEstimate is the SingleStream/MultiStream step on ascending latencies:
// X = h(1)+1; if n ≥ X, t is one less than the first i in 2..n with
// n < h(i)+i (1 if none), and the estimate is sorted[n−t].
func refEstimate(sorted []int64, p float64) (x, t, est int64, ok bool) {
	if !slices.IsSorted(sorted) {
		panic("refEstimate: latencies not sorted")
	}
	es := stats.NewEarlyStopping()
	n := int64(len(sorted))
	x = es.MinPassing(1, p, esTolerance, esConfidence) + 1
	if n < x {
		return x, 0, 0, false
	}
	t = 1
	for i := int64(2); i <= n; i++ {
		if n < es.MinPassing(i, p, esTolerance, esConfidence)+i {
			t = i - 1
			break
		}
	}
	return x, t, sorted[n-t], true
}

// refEstimateLines is the summary text of one SingleStream/MultiStream step.
func refEstimateLines(sorted []int64, p float64) []string {
	x, t, est, ok := refEstimate(sorted, p)
	n := len(sorted)
	if !ok {
		return []string{
			fmt.Sprintf(" * Only processed %d queries.", n),
			fmt.Sprintf(" * Need to process at least %d queries for early stopping.", x),
		}
	}
	return []string{
		fmt.Sprintf(" * Processed at least %d queries (%d).", x, n),
		fmt.Sprintf(" * Would discard %d highest latency queries.", t-1),
		fmt.Sprintf(" * Early stopping %.1fth percentile estimate: %d", p*100, est),
	}
}

// refSingleStreamLines adds the 99th-percentile step SingleStream runs
// when the target step was satisfied.
func refSingleStreamLines(sorted []int64, p float64) []string {
	lines := refEstimateLines(sorted, p)
	if _, _, _, ok := refEstimate(sorted, p); !ok {
		return lines
	}
	x99, _, e99, ok99 := refEstimate(sorted, 0.99)
	if ok99 {
		return append(lines, fmt.Sprintf(" * Early stopping 99.0th percentile estimate: %d", e99))
	}
	return append(lines,
		" * Not enough queries processed for 99.0th percentile",
		" early stopping estimate (would need to process at",
		fmt.Sprintf(" least %d total queries).", x99))
}

// refServer is the Server step: t = latencies strictly above the bound,
// pass iff n ≥ h(t)+t.
func refServer(lat []int64, n int64, bound int64, p float64) (t, h int64, pass bool, lines []string) {
	for _, l := range lat {
		if l > bound {
			t++
		}
	}
	h = stats.NewEarlyStopping().MinPassing(t, p, esTolerance, esConfidence)
	pass = n >= h+t
	if pass {
		return t, h, pass, []string{" * Run successful."}
	}
	return t, h, pass, []string{
		" * Run unsuccessful.",
		fmt.Sprintf(" * Processed %d queries.", n),
		fmt.Sprintf(" * Would need to run at least %d more queries,", h+t-n),
		" with the run being successful if every additional",
		" query were under latency.",
	}
}

// earlyStoppingSection returns the lines under "Early Stopping Result:".
func earlyStoppingSection(t *testing.T, summary string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(summary, "\nEarly Stopping Result:\n")
	if !ok {
		t.Fatalf("summary has no early stopping section:\n%s", summary)
	}
	sec, _, _ := strings.Cut(rest, "\n\n")
	return strings.Split(sec, "\n")
}

func summaryLine(t *testing.T, summary, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(summary, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	t.Fatalf("summary has no line %q:\n%s", prefix, summary)
	return ""
}

func refPercentile(sorted []int64, p float64) int64 {
	return sorted[int(float64(len(sorted))*p)]
}

// latencyPattern returns n latencies: fast ones near 1 ms (distinct, so that the
// estimate's index matters), and k slow ones near slowNs spread evenly.
func latencyPattern(n, k int, slowNs int64) []int64 {
	lat := make([]int64, n)
	for i := range lat {
		lat[i] = 1_000_000 + int64(i*7919%100_003)
	}
	for j := 0; j < k; j++ {
		lat[j*n/k] = slowNs + int64(j)
	}
	return lat
}

func sortedCopy(v []int64) []int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

func yesNoT(b bool) string {
	if b {
		return "Yes"
	}
	return "NO"
}

func TestReportEditedSingleStream(t *testing.T) {
	dir := runQuick(t, "SingleStream", []int{ExitOK})
	base := readRecordsT(t, dir)
	n := len(base)
	_, tt, _, ok := refEstimate(make([]int64, n), 0.90)
	if !ok {
		t.Fatalf("only %d queries: too few for the test", n)
	}
	t.Logf("n = %d queries, t = %d at p90", n, tt)
	rows := []struct {
		name    string
		keep    int // records kept (0 = all)
		slow    int
		slowEst bool // whether the estimate must land on a slow latency
		reason  string
	}{
		{"all fast", 0, 0, false, "no slow queries: the estimate is a fast latency"},
		{"t-1 slow", 0, int(tt) - 1, false, "t−1 slow queries are all discarded"},
		{"t slow", 0, int(tt), true, "t slow queries: the estimate is the smallest slow one"},
		{"3t slow", 0, 3 * int(tt), true, "more slow queries than discarded"},
		{"too few queries", 50, 3, false, "50 < h(1)+1 = 64: no estimate, INVALID"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			recs := slices.Clone(base)
			if r.keep > 0 {
				recs = recs[:r.keep]
			}
			lat := latencyPattern(len(recs), r.slow, 50_000_000)
			for i := range recs {
				recs[i].CompletedNs = recs[i].ScheduledNs + lat[i]
				// A sample cannot complete before it was issued (bundle.Read refuses it).
				recs[i].IssuedNs = min(recs[i].IssuedNs, recs[i].CompletedNs)
			}
			edit := filepath.Join(t.TempDir(), "edit")
			copyRun(t, dir, edit)
			writeRecordsT(t, edit, recs)

			out := filepath.Join(t.TempDir(), "re")
			res, summary := reportTo(t, edit, out)
			sorted := sortedCopy(lat)
			wantLines := refSingleStreamLines(sorted, 0.90)
			if got := earlyStoppingSection(t, summary); !slices.Equal(got, wantLines) {
				t.Errorf("%s: early stopping\n got %q\nwant %q", r.reason, got, wantLines)
			}
			_, _, est, ok := refEstimate(sorted, 0.90)
			_, _, e99, ok99 := refEstimate(sorted, 0.99)
			d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
			if got := detailValue[int64](t, d, "early_stopping_latency_ss"); got != est {
				t.Errorf("early_stopping_latency_ss %d, want %d", got, est)
			}
			want99 := int64(0)
			if ok && ok99 {
				want99 = e99
			}
			if got := detailValue[int64](t, d, "early_stopping_latency_ms"); got != want99 {
				t.Errorf("early_stopping_latency_ms %d, want %d", got, want99)
			}
			if got, want := summaryLine(t, summary, "90.0th percentile latency (ns) : "), fmt.Sprint(refPercentile(sorted, 0.90)); got != want {
				t.Errorf("90th percentile %s, want %s", got, want)
			}
			if ok && r.slowEst != (est >= 50_000_000) {
				t.Errorf("%s: estimate %d", r.reason, est)
			}
			wantValid := ok && r.keep == 0
			if got := summaryLine(t, summary, "  Early stopping satisfied: "); got != yesNoT(ok) {
				t.Errorf("early stopping satisfied %s, want %s", got, yesNoT(ok))
			}
			if wantValid != strings.Contains(summary, "Result is : VALID\n") {
				t.Errorf("%s: want valid=%v:\n%s", r.reason, wantValid, summary)
			}
			wantCode := ExitOK
			if !wantValid {
				wantCode = ExitInvalid
			}
			if res.code != wantCode {
				t.Errorf("report exit %d, want %d", res.code, wantCode)
			}
		})
	}
}

// TestReportEarlyStoppingHandCheck: n = 1024 SingleStream queries with
// latencies 1..1024 µs in scrambled order. At p90 h(1) = 63 (X = 64) and
// t = 80, so the estimate is sorted[944] = 945 µs, discarding 79; at p99
// t = 3, so sorted[1021] = 1022 µs (loadgen-reference §9).
func TestReportEarlyStoppingHandCheck(t *testing.T) {
	dir := runQuick(t, "SingleStream", []int{ExitOK},
		"--set", "min_duration=0", "--set", "min_query_count=1024", "--set", "max_query_count=1024")
	recs := readRecordsT(t, dir)
	if len(recs) != 1024 {
		t.Fatalf("min = max query count 1024 issued %d queries", len(recs))
	}
	for i := range recs {
		// 7919 is odd, so i ↦ 7919·i mod 1024 is a permutation.
		recs[i].CompletedNs = recs[i].ScheduledNs + int64(i*7919%1024+1)*1000
	}
	writeRecordsT(t, dir, recs)
	out := filepath.Join(t.TempDir(), "re")
	res, summary := reportTo(t, dir, out)
	if res.code != ExitOK {
		t.Errorf("report:\n%s", res)
	}
	want := []string{
		" * Processed at least 64 queries (1024).",
		" * Would discard 79 highest latency queries.",
		" * Early stopping 90.0th percentile estimate: 945000",
		" * Early stopping 99.0th percentile estimate: 1022000",
	}
	if got := earlyStoppingSection(t, summary); !slices.Equal(got, want) {
		t.Errorf("early stopping\n got %q\nwant %q", got, want)
	}
	// trunc(1024 × 0.9) = 921 → 922 µs.
	if got := summaryLine(t, summary, "90.0th percentile latency (ns) : "); got != "922000" {
		t.Errorf("90th percentile %s, want 922000", got)
	}
	d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
	if got := detailValue[int64](t, d, "early_stopping_latency_ss"); got != 945000 {
		t.Errorf("early_stopping_latency_ss %d", got)
	}
	if got := detailValue[int64](t, d, "early_stopping_latency_ms"); got != 1022000 {
		t.Errorf("early_stopping_latency_ms %d", got)
	}
	// The reference helper agrees with the hand numbers.
	sorted := make([]int64, 1024)
	for i := range sorted {
		sorted[i] = int64(i+1) * 1000
	}
	if x, tt, est, _ := refEstimate(sorted, 0.90); x != 64 || tt != 80 || est != 945000 {
		t.Errorf("reference p90: X=%d t=%d estimate=%d", x, tt, est)
	}
	if x, tt, est, _ := refEstimate(sorted, 0.99); x != 662 || tt != 3 || est != 1022000 {
		t.Errorf("reference p99: X=%d t=%d estimate=%d", x, tt, est)
	}
}

func TestReportEditedServer(t *testing.T) {
	const bound = 20_000_000 // target_latency=20 (ms)
	// The run's own verdict does not matter: every latency is replaced.
	dir := runQuick(t, "Server", []int{ExitOK, ExitInvalid}, "--set", "target_latency=20")
	base := readRecordsT(t, dir)
	info := readRunInfoT(t, dir)
	if info.Effective.TargetLatencyNs != bound || info.Effective.TargetLatencyPercentile != 0.99 {
		t.Fatalf("effective bound %d at p%v", info.Effective.TargetLatencyNs, info.Effective.TargetLatencyPercentile)
	}
	n := len(base)
	if n < 700 {
		t.Fatalf("only %d Server queries", n)
	}
	es := stats.NewEarlyStopping()
	// The fewest slow queries that fail early stopping with n queries.
	kFail := 0
	for int64(n) >= es.MinPassing(int64(kFail), 0.99, 0, 0.99)+int64(kFail) {
		kFail++
	}
	overP99 := n - int(float64(n)*0.99) // slow ones reaching the p99 index
	t.Logf("n = %d queries; %d slow fail early stopping; %d slow reach the p99 index", n, kFail, overP99)
	rows := []struct {
		name   string
		keep   int
		slow   int
		slowNs int64
		reason string
	}{
		{"all fast", 0, 0, 50_000_000, "t = 0 ≤ n − h(0): passes"},
		{"one slow", 0, 1, 50_000_000, "t = 1 needs n ≥ h(1)+1 = 662"},
		{"662 queries one slow", 662, 1, 50_000_000, "n = 662 = h(1)+1 exactly: passes (min duration then fails)"},
		{"661 queries one slow", 661, 1, 50_000_000, "n = 661 < 662: one more query needed"},
		{"661 queries none slow", 661, 0, 50_000_000, "n = 661 ≥ h(0) = 459"},
		{"early stopping fails", 0, kFail, 50_000_000, "the fewest slow queries that fail early stopping"},
		{"over the bound at p99", 0, overP99, 50_000_000, "the p99 latency is slow: perf constraint fails, Reduce target QPS"},
		{"at the bound", 0, n / 20, bound, "latencies equal to the bound are not over it"},
		{"one ns over the bound", 0, n / 20, bound + 1, "a latency 1 ns over the bound counts"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			recs := slices.Clone(base)
			if r.keep > 0 {
				recs = recs[:r.keep]
			}
			lat := latencyPattern(len(recs), r.slow, r.slowNs)
			for i := range recs {
				if r.slowNs <= bound+1 && lat[i] >= r.slowNs {
					lat[i] = r.slowNs // exactly at (or 1 ns over) the bound
				}
				recs[i].CompletedNs = recs[i].ScheduledNs + lat[i]
				// A sample cannot complete before it was issued (bundle.Read refuses it).
				recs[i].IssuedNs = min(recs[i].IssuedNs, recs[i].CompletedNs)
			}
			edit := filepath.Join(t.TempDir(), "edit")
			copyRun(t, dir, edit)
			writeRecordsT(t, edit, recs)
			out := filepath.Join(t.TempDir(), "re")
			res, summary := reportTo(t, edit, out)

			nq := int64(len(recs))
			tt, _, pass, wantLines := refServer(lat, nq, bound, 0.99)
			if got := earlyStoppingSection(t, summary); !slices.Equal(got, wantLines) {
				t.Errorf("%s: early stopping\n got %q\nwant %q", r.reason, got, wantLines)
			}
			sorted := sortedCopy(lat)
			perfMet := refPercentile(sorted, 0.99) <= bound
			minDur := float64(recs[len(recs)-1].ScheduledNs)/1e9 >= float64(info.Effective.MinDurationMs)/1000
			valid := pass && perfMet && minDur
			for prefix, want := range map[string]string{
				"  Performance constraints satisfied : ": yesNoT(perfMet),
				"  Early stopping satisfied: ":           yesNoT(pass),
				"  Min duration satisfied : ":            yesNoT(minDur),
				"Result is : ":                           map[bool]string{true: "VALID", false: "INVALID"}[valid],
			} {
				if got := summaryLine(t, summary, prefix); got != want {
					t.Errorf("%s: %q%s, want %s", r.reason, prefix, got, want)
				}
			}
			if got := strings.Contains(summary, "\n * Reduce target QPS to improve latency.\n"); got != !perfMet {
				t.Errorf("%s: Reduce target QPS recommendation present=%v, perf constraint met=%v:\n%s", r.reason, got, perfMet, summary)
			}
			d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
			if got := detailValue[int64](t, d, "result_overlatency_query_count"); got != tt {
				t.Errorf("result_overlatency_query_count %d, want %d", got, tt)
			}
			wantCode := ExitOK
			if !valid {
				wantCode = ExitInvalid
			}
			if res.code != wantCode {
				t.Errorf("report exit %d, want %d", res.code, wantCode)
			}
			// Sanity of the rows themselves.
			switch r.name {
			case "one slow", "662 queries one slow", "all fast", "661 queries none slow", "at the bound":
				if !pass {
					t.Errorf("%s: expected to pass early stopping", r.reason)
				}
			case "661 queries one slow", "early stopping fails":
				if pass {
					t.Errorf("%s: expected to fail early stopping", r.reason)
				}
			case "over the bound at p99", "one ns over the bound":
				if perfMet || valid {
					t.Errorf("%s: expected the perf constraint to fail", r.reason)
				}
			}
			if r.name == "661 queries one slow" && wantLines[2] != " * Would need to run at least 1 more queries," {
				t.Errorf("h(1) = 661 at p99 means one more query: %q", wantLines[2])
			}
		})
	}
}

func TestReportEditedMultiStream(t *testing.T) {
	// 3000 queries: t = 1 at the default 700 would make the rows trivial.
	dir := runQuick(t, "MultiStream", []int{ExitOK}, "--set", "min_query_count=3000")
	base := readRecordsT(t, dir)
	// Queries in issue order.
	var qStart []int
	for i, r := range base {
		if i == 0 || r.QueryID != base[i-1].QueryID {
			qStart = append(qStart, i)
		}
	}
	nq := len(qStart)
	_, tt, _, ok := refEstimate(make([]int64, nq), 0.99)
	if !ok {
		t.Fatalf("only %d queries", nq)
	}
	t.Logf("n = %d queries, t = %d at p99", nq, tt)
	rows := []struct {
		name    string
		keepQ   int
		slow    int
		slowEst bool
		reason  string
	}{
		{"all fast", 0, 0, false, "no slow queries"},
		{"t-1 slow", 0, int(tt) - 1, false, "t−1 slow queries are discarded"},
		{"t slow", 0, int(tt), true, "t slow queries: the estimate is the smallest slow one"},
		{"661 queries", 661, 2, false, "661 < h(1)+1 = 662 at p99: no estimate, INVALID"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			recs := slices.Clone(base)
			queries := nq
			if r.keepQ > 0 {
				queries = r.keepQ
				recs = recs[:qStart[r.keepQ]]
			}
			qlat := latencyPattern(queries, r.slow, 50_000_000)
			q := -1
			for i := range recs {
				if i == 0 || recs[i].QueryID != recs[i-1].QueryID {
					q++
				}
				// Sample j of a query completes j µs before the query's last.
				j := int64(i - qStart[q])
				recs[i].CompletedNs = recs[i].ScheduledNs + qlat[q] - j*1000
			}
			edit := filepath.Join(t.TempDir(), "edit")
			copyRun(t, dir, edit)
			writeRecordsT(t, edit, recs)
			out := filepath.Join(t.TempDir(), "re")
			res, summary := reportTo(t, edit, out)

			// Per-query latency from the edited records: the latest
			// completion of the query minus its scheduled time.
			done := map[uint64]int64{}
			sched := map[uint64]int64{}
			for _, rec := range recs {
				done[rec.QueryID] = max(done[rec.QueryID], rec.CompletedNs)
				sched[rec.QueryID] = rec.ScheduledNs
			}
			var perQuery []int64
			for id, d := range done {
				perQuery = append(perQuery, d-sched[id])
			}
			slices.Sort(perQuery)
			if !slices.Equal(perQuery, sortedCopy(qlat)) {
				t.Fatalf("test construction: per-query latencies differ from the pattern")
			}
			wantLines := refEstimateLines(perQuery, 0.99)
			if got := earlyStoppingSection(t, summary); !slices.Equal(got, wantLines) {
				t.Errorf("%s: early stopping\n got %q\nwant %q", r.reason, got, wantLines)
			}
			_, _, est, ok := refEstimate(perQuery, 0.99)
			d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
			if got := detailValue[int64](t, d, "early_stopping_latency_ms"); got != est {
				t.Errorf("early_stopping_latency_ms %d, want %d", got, est)
			}
			if got, want := summaryLine(t, summary, "99.0th percentile latency (ns) : "), fmt.Sprint(refPercentile(perQuery, 0.99)); got != want {
				t.Errorf("99th percentile per-query latency %s, want %s", got, want)
			}
			if ok && r.slowEst != (est >= 50_000_000) {
				t.Errorf("%s: estimate %d", r.reason, est)
			}
			valid := ok && r.keepQ == 0
			if valid != strings.Contains(summary, "Result is : VALID\n") {
				t.Errorf("%s: want valid=%v:\n%s", r.reason, valid, summary)
			}
			if want := map[bool]int{true: ExitOK, false: ExitInvalid}[valid]; res.code != want {
				t.Errorf("report exit %d, want %d", res.code, want)
			}
		})
	}
}

// copyRun copies the files report reads.
func copyRun(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		f := e.Name()
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReportMalformed(t *testing.T) {
	dir := runQuick(t, "Offline", []int{ExitOK})
	toV1T(t, dir) // the edits below are of records.csv's text
	good := readFileT(t, filepath.Join(dir, bundle.RecordsCSVFile))
	lines := strings.SplitAfter(good, "\n")
	replaceLine := func(n int, f func(string) string) string {
		l := slices.Clone(lines)
		l[n-1] = f(l[n-1])
		return strings.Join(l, "")
	}
	setField := func(n, field int, v string) string {
		return replaceLine(n, func(s string) string {
			f := strings.Split(strings.TrimSuffix(s, "\n"), ",")
			f[field] = v
			return strings.Join(f, ",") + "\n"
		})
	}
	rows := []struct {
		name     string
		records  *string // nil: delete records.csv
		settings *string // nil: keep
		file     string  // file the error must name
		want     []string
		reason   string
	}{
		{"bad header", ptrTo(replaceLine(1, func(string) string { return "seq,query,sample\n" })), nil, bundle.RecordsCSVFile,
			[]string{"line 1:", "header is"}, "the header must be exactly RecordsHeader"},
		{"bad number", ptrTo(setField(3, 3, "12x")), nil, bundle.RecordsCSVFile,
			[]string{"line 3: field scheduled_ns", `"12x" is not a decimal integer`}, "times are decimal integers"},
		{"negative id", ptrTo(setField(4, 0, "-4")), nil, bundle.RecordsCSVFile,
			[]string{"line 4: field seq_id"}, "ids are unsigned"},
		{"unknown status", ptrTo(setField(2, 8, "done")), nil, bundle.RecordsCSVFile,
			[]string{"line 2: field status", `unknown status "done"`}, "status is ok, error or lost"},
		{"missing field", ptrTo(replaceLine(5, func(s string) string { return s[:strings.LastIndexByte(s, ',')] + "\n" })), nil, bundle.RecordsCSVFile,
			[]string{"line 5:", "8 fields, want 9"}, "nine fields per line"},
		{"blank line", ptrTo(replaceLine(6, func(s string) string { return "\n" + s })), nil, bundle.RecordsCSVFile,
			[]string{"line 6: blank line"}, "no blank lines"},
		{"empty file", ptrTo(""), nil, bundle.RecordsCSVFile,
			[]string{"line 1: empty file"}, "the header is required"},
		{"missing records", nil, nil, bundle.RecordsCSVFile,
			[]string{"missing from the bundle"}, "records.csv is required"},
		{"records of another run", ptrTo(setField(2, 0, "999999999")), ptrTo(readFileT(t, filepath.Join(dir, bundle.SettingsFile))), "",
			[]string{}, "placeholder, replaced below"},
		{"malformed settings", ptrTo(good), ptrTo("{\"version\": 1}\n"), bundle.SettingsFile,
			[]string{"settings.json:1:"}, "settings.json is checked field by field"},
		{"unknown settings key", ptrTo(good), ptrTo(strings.Replace(readFileT(t, filepath.Join(dir, bundle.SettingsFile)), "{", "{\n  \"colour\": 1,", 1)), bundle.SettingsFile,
			[]string{"settings.json:2:3", `unknown field "colour"`}, "unknown keys are refused"},
	}
	// All records of the pass moved out of its sequence range.
	var shifted strings.Builder
	for i, l := range lines {
		if i == 0 || l == "" {
			shifted.WriteString(l)
			continue
		}
		f := strings.SplitN(l, ",", 2)
		shifted.WriteString("1" + f[0] + "000000," + f[1])
	}
	rows[8] = struct {
		name     string
		records  *string
		settings *string
		file     string
		want     []string
		reason   string
	}{"records of another run", ptrTo(shifted.String()), nil, "",
		[]string{"records.csv line 2: field seq_id", "is in no pass of settings.json"}, "records outside the reported pass are not this run's"}

	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			edit := filepath.Join(t.TempDir(), "edit")
			copyRun(t, dir, edit)
			rec := filepath.Join(edit, bundle.RecordsCSVFile)
			if r.records == nil {
				if err := os.Remove(rec); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(rec, []byte(*r.records), 0o644); err != nil {
				t.Fatal(err)
			}
			if r.settings != nil {
				if err := os.WriteFile(filepath.Join(edit, bundle.SettingsFile), []byte(*r.settings), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := readFileT(t, filepath.Join(edit, bundle.SummaryFile))
			out := filepath.Join(t.TempDir(), "re")
			res := runCLI(t, "", "report", edit, "--output-dir", out, "--ignore-digests")
			if res.code != ExitFailure {
				t.Fatalf("%s: want exit %d\n%s", r.reason, ExitFailure, res)
			}
			wantName := edit
			if r.file != "" {
				wantName = filepath.Join(edit, r.file)
			}
			if !strings.HasPrefix(res.stderr, "aimeter: ") {
				t.Errorf("stderr does not start with the program name:\n%s", res.stderr)
			}
			for _, w := range append([]string{wantName}, r.want...) {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", r.reason, w, res.stderr)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("report wrote %s despite the error", out)
			}
			if readFileT(t, filepath.Join(edit, bundle.SummaryFile)) != before {
				t.Errorf("the original summary was touched")
			}
		})
	}
}

func TestReportUsage(t *testing.T) {
	rows := []struct {
		args   []string
		code   int
		want   string
		reason string
	}{
		{[]string{"report"}, ExitUsage, "requires at least 1 arg(s), only received 0", "the directory is required"},
		{[]string{"report", "a", "b"}, ExitUsage, "a is not a sweep directory", "one run directory only (several only for sweeps)"},
		{[]string{"report", filepath.Join(t.TempDir(), "none")}, ExitFailure, "not a run bundle", "a directory without a run"},
	}
	for _, r := range rows {
		res := runCLI(t, "", r.args...)
		if res.code != r.code || !strings.Contains(res.stderr, r.want) {
			t.Errorf("%v (%s): want exit %d and %q\n%s", r.args, r.reason, r.code, r.want, res)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// toV1T rewrites the bundle in dir as a format version 1 bundle, whose
// records are records.csv.
func toV1T(t *testing.T, dir string) {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteWith(dir, b, derived.Of(b).Files(), bundle.WriteOptions{FormatVersion: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestReportNamesChangedFile: a bundle edited after the run is refused
// with the file named, and nothing is written, unless --ignore-digests.
func TestReportNamesChangedFile(t *testing.T) {
	dir := runQuick(t, "Offline", []int{ExitOK})
	rec := filepath.Join(dir, bundle.RecordsFile)
	recs := readRecordsT(t, dir)
	recs[0].Status = loadgen.StatusError
	writeRecordsT(t, dir, recs)
	out := filepath.Join(t.TempDir(), "re")
	res := runCLI(t, "", "report", dir, "--output-dir", out)
	if res.code != ExitFailure || !strings.Contains(res.stderr, rec) || !strings.Contains(res.stderr, "changed since the run wrote it") {
		t.Fatalf("want exit %d naming %s:\n%s", ExitFailure, rec, res)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("report wrote %s despite the error", out)
	}
	res = runCLI(t, "", "report", dir, "--output-dir", out, "--ignore-digests")
	if res.code != ExitInvalid || !strings.Contains(res.stderr, "no longer matches its manifest") {
		t.Fatalf("--ignore-digests: want exit %d (a failed sample) and a warning:\n%s", ExitInvalid, res)
	}
}

// TestReportInPlaceKeepsEveryByte: regenerating a bundle in place leaves
// every file, raw or derived, byte for byte and mode for mode as the run
// wrote it.
func TestReportInPlaceKeepsEveryByte(t *testing.T) {
	for _, sc := range []string{"SingleStream", "MultiStream", "Server", "Offline"} {
		t.Run(sc, func(t *testing.T) {
			dir := runQuick(t, sc, []int{ExitOK, ExitInvalid}, "--trace")
			before := snapshotDir(t, dir)
			res := runCLI(t, "", "report", dir)
			if res.code != ExitOK && res.code != ExitInvalid {
				t.Fatal(res)
			}
			after := snapshotDir(t, dir)
			if len(after) != len(before) {
				t.Fatalf("files before %d, after %d", len(before), len(after))
			}
			for name, b := range before {
				if after[name] != b {
					t.Errorf("%s changed by regenerating in place", name)
				}
			}
		})
	}
}

// snapshotDir maps each file of dir to its mode and contents.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fi.Mode().String() + "\n" + readFileT(t, filepath.Join(dir, e.Name()))
	}
	return out
}
