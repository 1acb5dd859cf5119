package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/internal/peerstest"
	"aimeter/sweep"
	"aimeter/sweep/endpoints"
)

// endpointsSubmission is the submission file of sweep/endpoints' tests.
var endpointsSubmission = filepath.Join("..", "..", "sweep", "endpoints", "testdata", "submission.yaml")

// TestExportEndpointsChecker sweeps Endpoints' automatic points (Cmin 1,
// Cmax 33) against the simulator with seed set A's seeds (its model_seed
// seeding the per-query salt), writes the tree
// with aimeter export --endpoints, and runs MLCommons' own checker
// (endpoints-submission-cli 1.5.3.0) and plotter (mlperf-viz 2.0.0) on it:
// the checker must pass it, with warnings only for what a 100 ms point
// cannot satisfy, and must refuse a copy with a disclosure field removed,
// as must endpoints.Verify.
func TestExportEndpointsChecker(t *testing.T) {
	bin := peerstest.Bin(t, []string{"endpoints-submission-cli", "mlperf-viz"}, "submission_checker")
	url := newSimServer(t, "sim")
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep")
	res := runCLI(t, "", "sweep", "--sut", "openai", "--url", url, "--qsl-size", "64", "--duration", "100ms", "--set", "min_query_count=8",
		"--set", "schedule_rng_seed=10487924139932647040", "--set", "sample_index_rng_seed=586478644936801402",
		"--max-concurrency", "33", "--output-dir", sw, "-q", "--salt", "--salt-seed", "9315206023656308754") // the set's model_seed seeds the salt
	if res.code != ExitOK && res.code != ExitInvalid { // a 100 ms point may miss early stopping: INVALID, still a point
		t.Fatal(res)
	}
	out := filepath.Join(dir, "submission")
	res = runCLI(t, "", "export", "--endpoints", out, "--submission", endpointsSubmission, sw)
	if res.code != ExitOK || !strings.Contains(res.stdout, "Endpoints submission written to") {
		t.Fatal(res)
	}
	org := filepath.Join(out, "Example")
	// Every point's figures are sweep.json's, computed from the same bundles.
	var sum sweep.Summary
	if data, err := os.ReadFile(filepath.Join(sw, sweep.SummaryFile)); err != nil || json.Unmarshal(data, &sum) != nil {
		t.Fatalf("sweep.json: %v", err)
	}
	curve := filepath.Join(org, "example-2026-10", "results", "sim_1x", "llama3_1-8b")
	for _, p := range sum.Points {
		var rs endpoints.ResultSummary
		data, err := os.ReadFile(filepath.Join(curve, fmt.Sprintf("r%d", p.Concurrency), endpoints.ResultFile))
		if err != nil || json.Unmarshal(data, &rs) != nil {
			t.Fatalf("point %d: %v", p.Concurrency, err)
		}
		tps := rs.OutputSequenceLengths.Total / (rs.DurationNs / 1e9)
		if math.Abs(tps-p.SystemTPS) > 1e-6*p.SystemTPS || rs.NSamplesCompleted != p.Completed ||
			math.Abs(rs.TPOT.Percentiles["90"]/1e6-p.TPOTP90Ms) > 1e-9 || math.Abs(rs.TTFT.Percentiles["90"]/1e6-p.TTFTP90Ms) > 1e-9 {
			t.Errorf("point %d: result_summary.json %+v, sweep.json %+v", p.Concurrency, rs, p)
		}
	}
	// The salt's seed travels in config.yaml (the invocation's SUT).
	if cfg, err := os.ReadFile(filepath.Join(curve, "r1", endpoints.ConfigFile)); err != nil || !strings.Contains(string(cfg), "salt_seed: 9315206023656308754") {
		t.Errorf("r1's config.yaml lacks the salt seed: %v\n%s", err, cfg)
	}
	report := checkEndpoints(t, bin, org, 0)
	for _, r := range report.Warnings {
		switch {
		case r.Rule == "point-duration", r.Rule == "maximal-engagement":
		case r.Rule == "steady-state-basis" && !strings.Contains(r.Message, "no steady_state block"):
			// A 100 ms point cannot hold a steady window (its minimum
			// duration is 600 s): every point says why, in a block.
		default:
			t.Errorf("unexpected warning %s: %s", r.Rule, r.Message)
		}
	}
	// The rules that check what aimeter computed ran and passed.
	for _, rule := range []string{"point-disclosure-complete", "seed-runtime-match", "tps-utilization", "metric-consistency-system-tps",
		"metric-consistency-tpot-p90", "metric-consistency-tps-per-user", "metric-consistency-accounting", "accuracy-coverage",
		"region-placement", "offline-point-present", "system-description-valid", "power-descriptor", "steady-state-valid", "steady-state-consistency"} {
		if !seen(report.Results, rule, "info") || seen(report.Results, rule, "error") {
			t.Errorf("the checker's rule %s did not pass", rule)
		}
	}
	// The plotter reads every point, with no structural warning.
	bundleJSON := filepath.Join(dir, "viz.json")
	if b, err := exec.Command(filepath.Join(bin, "mlperf-viz"), org, "--export", bundleJSON, "--strict").CombinedOutput(); err != nil {
		t.Fatalf("mlperf-viz: %v: %s", err, b)
	}
	var viz struct {
		Warnings []any `json:"warnings"`
		Runs     []any `json:"runs"`
	}
	if data, err := os.ReadFile(bundleJSON); err != nil || json.Unmarshal(data, &viz) != nil || len(viz.Warnings) != 0 || len(viz.Runs) < 7 {
		t.Errorf("mlperf-viz bundle: %v, %d warnings, %d runs", err, len(viz.Warnings), len(viz.Runs))
	}
	checkVizSite(t, bin, org, filepath.Join(dir, "site"), sum)

	// Exporting again into the same directory is refused, before the
	// sweep is read.
	if again := runCLI(t, "", "export", "--endpoints", out, "--submission", endpointsSubmission, sw); again.code != ExitUsage || !strings.Contains(again.stderr, "already exists") {
		t.Errorf("a second export into the same directory: %s", again)
	}

	// A point.yaml without target_cohort: both checkers refuse the tree.
	point := filepath.Join(org, "example-2026-10", "results", "sim_1x", "llama3_1-8b", "r1", endpoints.PointFile)
	data, err := os.ReadFile(point)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), "target_cohort: 2026-10-C1\n", "", 1)
	if broken == string(data) {
		t.Fatalf("%s has no target_cohort:\n%s", point, data)
	}
	if err := os.WriteFile(point, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	report = checkEndpoints(t, bin, org, 1)
	found := false
	for _, r := range report.Errors {
		found = found || (r.Rule == "point-disclosure-complete" && strings.Contains(r.Message, "target_cohort"))
	}
	if !found {
		t.Errorf("the checker did not name the missing target_cohort: %+v", report.Errors)
	}
	if err := endpoints.Verify(filepath.Join(org, "example-2026-10")); err == nil || !strings.Contains(err.Error(), "target_cohort: missing") {
		t.Errorf("endpoints.Verify of the broken tree: %v", err)
	}
}

// vizRun is a run of mlperf-viz's data, the fields aimeter's figures
// land in.
type vizRun struct {
	Label string `json:"label"`
	Run   struct {
		Direct struct {
			Concurrency float64 `json:"concurrency"`
			Completed   float64 `json:"measured_total_requests"`
			TPOTP90     float64 `json:"measured_latency_tpot_p90"`
		} `json:"direct_fields"`
		Derived struct {
			SystemTPS  float64 `json:"system_tps"`
			TPSPerUser float64 `json:"tps_per_user"`
			TTFT       float64 `json:"ttft"`
		} `json:"derived_fields"`
	} `json:"run"`
}

// checkVizSite runs mlperf-viz --build on org into site and checks the
// static site it writes: its index page and scripts are there, and the
// data file the page loads (cli-data.json) holds every point of the sweep
// with sweep.json's figures.
func checkVizSite(t *testing.T, bin, org, site string, sum sweep.Summary) {
	t.Helper()
	if b, err := exec.Command(filepath.Join(bin, "mlperf-viz"), org, "--build", site, "--strict").CombinedOutput(); err != nil {
		t.Fatalf("mlperf-viz --build: %v: %s", err, b)
	}
	for _, f := range []string{"index.html", "_app"} {
		if _, err := os.Stat(filepath.Join(site, f)); err != nil {
			t.Errorf("the built site has no %s: %v", f, err)
		}
	}
	var data struct {
		Warnings []any    `json:"warnings"`
		Runs     []vizRun `json:"runs"`
	}
	raw, err := os.ReadFile(filepath.Join(site, "cli-data.json"))
	if err != nil || json.Unmarshal(raw, &data) != nil {
		t.Fatalf("the built site's data: %v", err)
	}
	if len(data.Warnings) != 0 {
		t.Errorf("the built site's data has warnings: %v", data.Warnings)
	}
	runs := map[string]vizRun{}
	for _, r := range data.Runs {
		runs[r.Label] = r
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }
	pts := sum.Points
	if o := sum.Offline; o != nil && o.Meets {
		pts = append(pts, o.Point)
	}
	for _, p := range pts {
		label := fmt.Sprintf("r%d", p.Concurrency)
		r, ok := runs[label]
		if !ok {
			t.Errorf("the built site's data has no run %s", label)
			continue
		}
		d, v := r.Run.Direct, r.Run.Derived
		if d.Concurrency != float64(p.Concurrency) || d.Completed != float64(p.Completed) || !near(v.SystemTPS, p.SystemTPS) ||
			!near(v.TPSPerUser, p.TPSPerUser) || !near(v.TTFT, p.TTFTP90Ms) || !near(d.TPOTP90, p.TPOTP90Ms) {
			t.Errorf("run %s in the built site: %+v; sweep.json: concurrency %d, completed %d, system_tps %g, tps_per_user %g, ttft p90 %g ms, tpot p90 %g ms",
				label, r.Run, p.Concurrency, p.Completed, p.SystemTPS, p.TPSPerUser, p.TTFTP90Ms, p.TPOTP90Ms)
		}
	}
	if len(data.Runs) != len(pts) {
		t.Errorf("the built site's data has %d runs, the sweep %d points", len(data.Runs), len(pts))
	}
}

type endpointsResult struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

type endpointsReport struct {
	Results  []endpointsResult `json:"results"`
	Errors   []endpointsResult `json:"errors"`
	Warnings []endpointsResult `json:"warnings"`
	Passed   bool              `json:"passed"`
}

// seen reports whether results hold rule at severity.
func seen(results []endpointsResult, rule, severity string) bool {
	for _, r := range results {
		if r.Rule == rule && r.Severity == severity {
			return true
		}
	}
	return false
}

// checkEndpoints runs endpoints-submission-cli check-submission on org and
// wants exit status code.
func checkEndpoints(t *testing.T, bin, org string, code int) endpointsReport {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "endpoints-submission-cli"), "check-submission", org, "--json", "--no-annotate")
	// (Its upgrade notice asks PyPI, bounded at 3 s, and never changes the
	// exit status.)
	out, err := cmd.Output()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("endpoints-submission-cli: %v", err)
	}
	var rep endpointsReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("endpoints-submission-cli: exit %d, %v: %s", got, jerr, out)
	}
	if got != code {
		t.Fatalf("endpoints-submission-cli check-submission: exit %d, want %d; errors %+v", got, code, rep.Errors)
	}
	return rep
}

// TestExportEndpointsBadInput: a submission file without a field the
// checker needs, or --endpoints without a submission file, is a usage
// error naming it, before any sweep is read.
func TestExportEndpointsBadInput(t *testing.T) {
	data, err := os.ReadFile(endpointsSubmission)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no submission file", []string{"--endpoints", filepath.Join(dir, "out")}, "--endpoints needs --submission"},
		{"no output", []string{"--submission", endpointsSubmission}, "--submission needs --endpoints"},
		{"no seed set", []string{"--endpoints", filepath.Join(dir, "out"), "--submission", "NOSEED"}, "seed_set: missing"},
		{"no system_power", []string{"--endpoints", filepath.Join(dir, "out"), "--submission", "NOACC"}, "system_power: missing"},
	}
	noSeed := filepath.Join(dir, "noseed.yaml")
	noAcc := filepath.Join(dir, "noacc.yaml")
	text := string(data)
	if err := os.WriteFile(noSeed, []byte(strings.Replace(text, "seed_set: A\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noAcc, []byte(text[:strings.Index(text, "system_power:")]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"export"}, c.args...)
			for i, a := range args {
				args[i] = strings.NewReplacer("NOSEED", noSeed, "NOACC", noAcc).Replace(a)
			}
			res := runCLI(t, "", append(args, dir)...)
			if res.code != ExitUsage || !strings.Contains(res.stderr, c.want) {
				t.Errorf("exit %d, want %d with %q: %s", res.code, ExitUsage, c.want, res)
			}
		})
	}
}
