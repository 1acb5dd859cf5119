package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func TestOneRecommendation(t *testing.T) {
	const reduce, increase = "Reduce target QPS to improve latency.", "Increase the target QPS so the loadgen pre-generates more queries."
	tests := []struct {
		name        string
		interrupted string
		perf, dur   string
		want        string
	}{
		{"an interrupted run gets no QPS advice", "interrupted by Ctrl-C (SIGINT)", reduce, increase, ""},
		{"a missed latency bound wins over a short run", "", reduce, increase, reduce},
		{"only the duration advice", "", "", increase, increase},
		{"a VALID run gets none", "", "", "", ""},
	}
	for _, tc := range tests {
		res := &loadgen.Result{Interrupted: tc.interrupted, Summary: &loadgen.Summary{PerfConstraintsRecommendation: tc.perf, MinDurationRecommendation: tc.dur}}
		if got := recommendation(res); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := recommendation(&loadgen.Result{}); got != "" {
		t.Errorf("an accuracy run without a summary: got %q", got)
	}
}

func TestScenarioIDRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"without an arrival mode the ID is not ignored", []string{"--scenario-id", "T11-2"}, "resnet50_v1.5 on imagenet2012"},
		{"with an arrival mode the null SUT is not labelled T11-2", []string{"--arrival-mode", "2", "--scenario-id", "T11-2"}, "--sut null is not that workload"},
		{"an ID not in the catalogue", []string{"--scenario-id", "T99-9"}, "no such scenario"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		r := runCLI(t, dir, append([]string{"run", "-q", "--output-dir", filepath.Join(dir, "out")}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 naming %q, got %v", tc.name, tc.want, r)
		}
	}
}

// The root help says only what exists: no network SUTs or training test
// offered as if they were there.
func TestRootHelpSaysWhatExists(t *testing.T) {
	r := runCLI(t, "", "--help")
	if r.code != ExitOK {
		t.Fatalf("--help: %v", r)
	}
	for _, bad := range []string{"over the network", "and training"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("root help claims %q:\n%s", bad, r.stdout)
		}
	}
	for _, want := range []string{"in-process", "Planned, not yet built: network SUTs", "exit status N"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("root help lacks %q:\n%s", want, r.stdout)
		}
	}
}
