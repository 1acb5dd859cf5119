package benchmark

import (
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/gbt"
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

// TestLengthNotice is the sizing rule of issue 39: a run lasts what was
// asked, or says so before it starts, naming the setting that decides and
// the change that ends it as asked (loadgen-reference §5, §6; GB-7.4.2).
func TestLengthNotice(t *testing.T) {
	src := mlperfconf.Sources{
		"min_duration": {Layer: mlperfconf.LayerMLPerfConf, Name: "min_duration", File: "mlperf.conf", Builtin: true,
			Entry: mlperfconf.Entry{Key: "*.Server.min_duration", Value: "600000", Line: 89}},
		"target_qps": {Layer: mlperfconf.LayerSet, Name: "target_qps", File: "--set", Entry: mlperfconf.Entry{Key: "*.Server.target_qps", Value: "10", Line: 1}},
	}
	perf := func(sc loadgen.Scenario, minDurMs, mqc uint64, qps float64) loadgen.Effective {
		return loadgen.Effective{Scenario: sc, Mode: loadgen.PerformanceOnly, MinDurationMs: minDurMs, MinQueryCount: mqc, TargetQPS: qps}
	}
	stream := func(latency time.Duration, mqc uint64) loadgen.Settings {
		return loadgen.Settings{SingleStreamExpectedLatencyNs: uint64(latency), MinQueryCount: mqc}
	}
	gbtPlan := func(mode gbt.ArrivalMode, d time.Duration) *gbt.RunPlan {
		return &gbt.RunPlan{Test: gbt.Test{Arrival: gbt.Arrival{Mode: mode, Duration: d}}}
	}
	withConcurrency := func(e loadgen.Effective, c uint64) loadgen.Effective { e.Concurrency = c; return e }
	mode := func(e loadgen.Effective, m loadgen.Mode) loadgen.Effective { e.Mode = m; return e }
	offline := perf(loadgen.Offline, 2000, 1, 10)
	offline.SamplesPerQuery = 100
	tests := []struct {
		name string
		in   lengthInput
		want []string // substrings; nil = no notice
	}{
		// Issue 39, reproduction 3: --sut openai --duration 2s ran 10 s.
		{"min_query_count at the OpenAI default rate outlasts --duration", lengthInput{eff: perf(loadgen.Server, 2000, 100, 10)},
			[]string{"this run will take about 10s, longer than min_duration = 2000 ms", "min_query_count = 100, from LoadGen's defaults, at target_qps = 10",
				"To end it at 2s: Settings.Set min_query_count=20, or a higher rate"}},
		{"a duration the count fits says nothing", lengthInput{eff: perf(loadgen.Server, 20_000, 100, 10)}, nil},
		{"ten minutes of min_duration", lengthInput{eff: perf(loadgen.Server, 600_000, 100, 1000), src: src, model: "resnet50"},
			[]string{"this run will take at least 10m0s for resnet50 Server: min_duration = 600000 ms, from the built-in mlperf.conf (line 89", "Settings.Set min_duration=10000"}},
		{"a minute exactly is not long", lengthInput{eff: perf(loadgen.Server, 60_000, 1, 1000)}, nil},
		{"find-peak names the probes", lengthInput{eff: mode(perf(loadgen.Server, 120_000, 100, 1000), loadgen.FindPeakPerformance)},
			[]string{"each find-peak probe of this run will take at least 2m0s"}},
		{"an accuracy run has no length to announce", lengthInput{eff: mode(perf(loadgen.Server, 600_000, 100, 1000), loadgen.AccuracyOnly)}, nil},
		// The sweep of issue 39: a point at concurrency 1 of 3 s took 34 s.
		{"a sweep point at concurrency 1: min_query_count may decide", lengthInput{eff: withConcurrency(perf(loadgen.SingleStream, 3000, 100, 1e9), 1),
			set: stream(time.Second, 100)},
			[]string{"this run may last longer than min_duration = 3000 ms", "min_query_count = 100 queries", "1 at a time", "slower than 30ms each",
				"about 1m40s at the expected 1s", "Settings.Set min_query_count=3"}},
		{"a sweep point at concurrency 64 ends on its duration", lengthInput{eff: withConcurrency(perf(loadgen.SingleStream, 3000, 100, 1e9), 64),
			set: stream(time.Second, 100)}, nil},
		{"SingleStream at a short expected latency ends on its duration", lengthInput{eff: perf(loadgen.SingleStream, 10_000, 100, 20),
			set: stream(50*time.Millisecond, 100)}, nil},
		{"Offline: min_query_count samples at the expected rate", lengthInput{eff: offline},
			[]string{"this run will take about 10s, longer than min_duration = 2000 ms", "min_query_count = 100 samples", "Settings.Set min_query_count=1"}},
		// GB/T: the duration is what was asked (GB-7.4.2).
		{"mode 2 at the default λ", lengthInput{eff: perf(loadgen.Server, 3000, 100, 5), gbt: gbtPlan(gbt.ModePoisson, 3*time.Second)},
			[]string{"this test will take about 20s, longer than its duration of 3s: min_query_count = 100, from LoadGen's defaults, at 5 jobs/s",
				"Settings.Set min_query_count=15"}},
		{"mode 1's schedule ends it, whatever min_query_count", lengthInput{eff: perf(loadgen.Server, 500, 100, 100), gbt: gbtPlan(gbt.ModeFixedPeriod, 500*time.Millisecond),
			arrivals: []int64{0, 250e6}}, nil},
		{"mode 0 ends on its duration", lengthInput{eff: perf(loadgen.SingleStream, 3000, 1, 1), gbt: gbtPlan(gbt.ModeContinuous, 3*time.Second),
			set: stream(time.Second, 1)}, nil},
		{"mode 4 has no duration", lengthInput{eff: offline, gbt: gbtPlan(gbt.ModeOffline, 0)}, nil},
		{"a replay of an hour", lengthInput{eff: perf(loadgen.Server, 3_600_000, 2, 1), arrivals: []int64{0, int64(time.Hour)}, replay: true},
			[]string{"will take at least 1h0m0s", "its schedule of 2 queries spans 1h0m0s", "Replay.MaxDuration"}},
		{"sessions wait on their answers", lengthInput{eff: perf(loadgen.Server, 0, 1000, 1), chains: true}, nil},
	}
	for _, tc := range tests {
		checkNotice(t, tc.name, lengthNotice(tc.in), tc.want)
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
