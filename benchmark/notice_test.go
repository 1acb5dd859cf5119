package benchmark

import (
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/mlperfconf"
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
	src := mlperfconf.Sources{
		"min_duration": {Layer: mlperfconf.LayerMLPerfConf, Name: "min_duration", File: "mlperf.conf", Builtin: true,
			Entry: mlperfconf.Entry{Key: "*.Server.min_duration", Value: "600000", Line: 89}},
		"target_qps": {Layer: mlperfconf.LayerSet, Name: "target_qps", File: "--set", Entry: mlperfconf.Entry{Key: "*.Server.target_qps", Value: "10", Line: 1}},
	}
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
		checkNotice(t, tc.name, longRunNotice(tc.eff, "resnet50", src), tc.want)
	}
}

// checkNotice checks a notice of a table row: none when want is nil, else
// one holding every string of want.
func checkNotice(t *testing.T, why, got string, want []string) {
	t.Helper()
	if want == nil {
		if got != "" {
			t.Errorf("%s: unexpected notice %q", why, got)
		}
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in %q", why, w, got)
		}
	}
}
