package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/internal/peerstest"
	"aimeter/sweep/endpoints"
)

// Seed set A's seeds, as flags of aimeter sweep.
var (
	setScheduleA    = "schedule_rng_seed=10487924139932647040"
	setSampleIndexA = "sample_index_rng_seed=586478644936801402"
)

// TestSweepEndpointsRefusedBeforeStart: with --endpoints, a sweep whose
// points would not run with the submission's seed set is refused before
// it starts (exit 2, no directory written), naming each seed and the
// flags that fix it; so are flag combinations the tree cannot come from.
func TestSweepEndpointsRefusedBeforeStart(t *testing.T) {
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep")
	out := filepath.Join(dir, "out")
	base := []string{"sweep", "--sut", "openai", "--url", "http://127.0.0.1:1", "--max-concurrency", "33", "--output-dir", sw, "-q"}
	ep := []string{"--endpoints", out, "--submission", endpointsSubmission}
	cases := []struct {
		name, why string
		args      []string
		want      []string
	}{
		{"no seeds", "aimeter's own seeds (0) are not the set's: MLCommons' checker fails every point (seed-runtime-match)", ep,
			[]string{"would not run with seed set A's seeds", "schedule_rng_seed 0, the set's scheduler_rng_seed is 10487924139932647040",
				"sample_index_rng_seed 0, the set's is 586478644936801402", "--set " + setScheduleA + "\n  --set " + setSampleIndexA}},
		{"one seed", "only the seed that differs is named", append([]string{"--set", setScheduleA}, ep...),
			[]string{"(sample_index_rng_seed 0, the set's is 586478644936801402)", "--set " + setSampleIndexA}},
		{"salt seed", "Endpoints seeds the per-query salt with the set's model_seed", append([]string{"--set", setScheduleA, "--set", setSampleIndexA, "--salt", "--salt-seed", "1"}, ep...),
			[]string{"salt seed 1, the set's model_seed is 9315206023656308754", "--salt-seed 9315206023656308754"}},
		{"a model's mlperf.conf seeds", "--model applies the built-in mlperf.conf, whose seeds are MLPerf Inference's", append([]string{"--model", "llama3_1-8b"}, ep...),
			[]string{"would not run with seed set A's seeds", "--set " + setScheduleA}},
		{"goodput search", "a search's probes are no Pareto curve", append([]string{"--set", setScheduleA, "--set", setSampleIndexA, "--slo", "tpot=1ms", "--goodput-target", "0.9"}, ep...),
			[]string{"not a goodput search"}},
		{"rate search", "a rate search's probes are no Pareto curve", []string{"--max-rate", "4", "--slo", "tpot=1ms", "--goodput-target", "0.9", "--endpoints", out, "--submission", endpointsSubmission},
			[]string{"not a search over request rate"}},
		{"no submission", "the tree needs what aimeter cannot know", []string{"--endpoints", out}, []string{"--endpoints needs --submission FILE"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runCLI(t, "", append(append([]string(nil), base...), c.args...)...)
			if res.code != ExitUsage {
				t.Fatalf("%s: exit %d, want %d: %s", c.why, res.code, ExitUsage, res)
			}
			for _, w := range c.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", c.why, w, res.stderr)
				}
			}
			for _, d := range []string{sw, out} {
				if _, err := os.Stat(d); err == nil {
					t.Errorf("%s: %s was written by a sweep refused before its start", c.why, d)
				}
			}
		})
	}
}

// TestExportEndpointsWrongSeeds: exporting a sweep that did not run with
// the submission's seed set (the reproduction: MLCommons' checker
// then failed seed-runtime-match at every point) is exit 1, naming every
// point and the --set flags, and writes nothing.
func TestExportEndpointsWrongSeeds(t *testing.T) {
	url := newSimServer(t, "sim")
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep")
	res := runCLI(t, "", "sweep", "--sut", "openai", "--url", url, "--qsl-size", "16", "--duration", "50ms", "--set", "min_query_count=4",
		"--points", "1,33", "--output-dir", sw, "-q")
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatal(res)
	}
	out := filepath.Join(dir, "submission")
	res = runCLI(t, "", "export", "--endpoints", out, "--submission", endpointsSubmission, sw)
	if res.code != ExitFailure {
		t.Fatalf("exit %d, want %d: %s", res.code, ExitFailure, res)
	}
	for _, w := range []string{"2 of the sweep's 2 points did not run with seed set A's seeds", "(seed-runtime-match)",
		"--set " + setScheduleA + " --set " + setSampleIndexA, "point r1: schedule_rng_seed 0", "point r33: schedule_rng_seed 0"} {
		if !strings.Contains(res.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused export wrote %s", out)
	}
}

// TestSweepEndpointsChecker: aimeter sweep --endpoints writes the tree
// itself when the sweep ends, and MLCommons' own checker
// (endpoints-submission-cli 1.5.3.0) passes it: Endpoints' automatic
// points (Cmin 1, Cmax 33) against the simulator with seed set A's seeds,
// the salt seeded by its model_seed.
func TestSweepEndpointsChecker(t *testing.T) {
	bin := peerstest.Bin(t, []string{"endpoints-submission-cli"}, "submission_checker")
	url := newSimServer(t, "sim")
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep")
	out := filepath.Join(dir, "submission")
	res := runCLI(t, "", "sweep", "--sut", "openai", "--url", url, "--qsl-size", "64", "--duration", "100ms", "--set", "min_query_count=8",
		"--set", setScheduleA, "--set", setSampleIndexA, "--max-concurrency", "33", "--output-dir", sw, "-q",
		"--salt", "--salt-seed", "9315206023656308754", "--endpoints", out, "--submission", endpointsSubmission)
	if res.code != ExitOK && res.code != ExitInvalid { // a 100 ms point may miss early stopping: INVALID, still a point
		t.Fatal(res)
	}
	org := filepath.Join(out, "Example")
	if !strings.Contains(res.stdout, "Endpoints submission written to "+filepath.Join(org, "example-2026-10")) {
		t.Fatalf("no tree written: %s", res)
	}
	if err := endpoints.Verify(filepath.Join(org, "example-2026-10")); err != nil {
		t.Error(err)
	}
	report := checkEndpoints(t, bin, org, 0)
	for _, rule := range []string{"point-disclosure-complete", "seed-runtime-match", "seed-set-membership", "seed-set-consistency",
		"tps-utilization", "metric-consistency-system-tps", "metric-consistency-accounting"} {
		if !seen(report.Results, rule, "info") || seen(report.Results, rule, "error") {
			t.Errorf("the checker's rule %s did not pass", rule)
		}
	}
}
