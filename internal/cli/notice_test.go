package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func TestNearestKeys(t *testing.T) {
	tests := []struct {
		name  string
		model string
		want  string // the nearest key
	}{
		{"a hyphen too many", "resnet-50", "resnet50"},
		{"case is ignored", "BERT", "bert"},
		{"a missing suffix", "llama2-70b-interactiv", "llama2-70b-interactive"},
	}
	for _, tc := range tests {
		w := unknownModelWarning(tc.model, false)
		if !strings.Contains(w, "nearest known keys: "+tc.want) || !strings.Contains(w, "generic (*) settings") {
			t.Errorf("%s: %q", tc.name, w)
		}
	}
	if got := nearestKeys("ab", []string{"xyz", "abc", "b"}, 2); !slices.Equal(got, []string{"abc", "b"}) {
		t.Errorf("nearestKeys: %v (ties keep the keys' order)", got)
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "abc", 3}, {"kitten", "sitting", 3}, {"same", "same", 0}} {
		if d := editDistance(tc.a, tc.b); d != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}

func TestLongRunNotice(t *testing.T) {
	src := settingSources{"min_duration": "the built-in mlperf.conf (line 89: *.Server.min_duration = 600000)", "target_qps": "--set target_qps=10"}
	tests := []struct {
		name string
		eff  loadgen.Effective
		want []string // substrings; nil = no notice
	}{
		{"ten minutes of min_duration", loadgen.Effective{Scenario: loadgen.Server, Mode: loadgen.PerformanceOnly, MinDurationMs: 600_000, TargetQPS: 1000, MinQueryCount: 100},
			[]string{"this run will take at least 10m0s for resnet50 Server: min_duration = 600000 ms, from the built-in mlperf.conf (line 89", "--set min_duration=10000"}},
		{"a minute exactly is not long", loadgen.Effective{Scenario: loadgen.Offline, Mode: loadgen.PerformanceOnly, MinDurationMs: 60_000}, nil},
		{"min_query_count at a low rate decides", loadgen.Effective{Scenario: loadgen.Server, Mode: loadgen.PerformanceOnly, MinDurationMs: 1000, TargetQPS: 10, MinQueryCount: 1000},
			[]string{"1m40s", "min_query_count = 1000, from LoadGen's defaults, at target_qps = 10, from --set target_qps=10", "--set min_query_count="}},
		{"find-peak names the probes", loadgen.Effective{Scenario: loadgen.Server, Mode: loadgen.FindPeakPerformance, MinDurationMs: 120_000, TargetQPS: 1000},
			[]string{"each find-peak probe"}},
		{"an accuracy run has no length to announce", loadgen.Effective{Scenario: loadgen.Server, Mode: loadgen.AccuracyOnly, MinDurationMs: 600_000, TargetQPS: 1000}, nil},
	}
	for _, tc := range tests {
		got := longRunNotice(tc.eff, "resnet50", src)
		if tc.want == nil {
			if got != "" {
				t.Errorf("%s: unexpected notice %q", tc.name, got)
			}
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: want %q in %q", tc.name, w, got)
			}
		}
	}
}

// The warnings reach the user before the run: a mistyped model key names
// the nearest known ones, and a 10-minute official run says so and why.
func TestRunWarnsBeforeItStarts(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, "run", "-q", "--model", "resnet-50", "--set", "min_duration=50", "--set", "min_query_count=1", "--set", "target_qps=1000", "--output-dir", filepath.Join(dir, "a"))
	if !strings.Contains(r.stderr, `--model "resnet-50" is not a model key`) || !strings.Contains(r.stderr, "nearest known keys: resnet50") {
		t.Errorf("no warning naming resnet50 for --model resnet-50:\n%v", r)
	}
	r = runCLI(t, dir, "run", "-q", "--model", "resnet50", "--timeout", "100ms", "--output-dir", filepath.Join(dir, "b"))
	if !strings.Contains(r.stderr, "this run will take at least 10m0s for resnet50 Server: min_duration = 600000 ms, from the built-in mlperf.conf") {
		t.Errorf("no notice of the 10-minute run:\n%v", r)
	}
	if r.code != ExitInterrupted {
		t.Errorf("want exit %d from --timeout, got %v", ExitInterrupted, r)
	}
}
