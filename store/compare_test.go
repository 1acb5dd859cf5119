package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/store"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The Student t CDF at points whose values are known in closed form or from
// printed tables.
func TestStudentTCDF(t *testing.T) {
	tests := []struct {
		name    string
		t, df   float64
		want    float64
		tol     float64
		comment string
	}{
		{"centre", 0, 7, 0.5, 1e-15, "symmetric about 0 for every df"},
		// df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π, so
		// F(1) = 3/4 exactly.
		{"cauchy at 1", 1, 1, 0.75, 1e-12, "1/2 + atan(1)/π = 0.75"},
		{"cauchy at -1", -1, 1, 0.25, 1e-12, "1/2 − atan(1)/π = 0.25"},
		// df = 2: F(t) = 1/2 + t / (2√(2 + t²)); t = 1 gives
		// 1/2 + 1/(2√3) = 0.788675134594813.
		{"df 2 at 1", 1, 2, 0.5 + 1/(2*math.Sqrt(3)), 1e-12, "closed form for df = 2"},
		// df = 2, t = 2: 1/2 + 2/(2√6) = 0.908248290463863.
		{"df 2 at 2", 2, 2, 0.5 + 1/math.Sqrt(6), 1e-12, "closed form for df = 2"},
		// Printed t tables: the two-sided 5 % critical value for df = 10 is
		// 2.228 (so F = 0.975 to the table's 3 decimals), for df = 30 it is
		// 2.042.
		{"table df 10", 2.228, 10, 0.975, 5e-5, "t table, two-sided 0.05, df 10"},
		{"table df 30", 2.042, 30, 0.975, 5e-5, "t table, two-sided 0.05, df 30"},
		// df = ∞ is the normal distribution: Φ(1.959964) = 0.975.
		{"normal", 1.959964, math.Inf(1), 0.975, 1e-6, "Φ(1.959964)"},
	}
	for _, tc := range tests {
		if got := store.StudentTCDF(tc.t, tc.df); !near(got, tc.want, tc.tol) {
			t.Errorf("%s: StudentTCDF(%v, %v) = %.15f, want %.15f (%s)", tc.name, tc.t, tc.df, got, tc.want, tc.comment)
		}
	}
}

// Welch's t and its degrees of freedom, worked by hand.
func TestWelchT(t *testing.T) {
	// a: n = 10, mean 12, sd 2 → va = 4/10 = 0.4
	// b: n = 5,  mean 10, sd 1 → vb = 1/5 = 0.2
	// t = (12 − 10)/√(0.4 + 0.2) = 2/0.774597 = 2.581989
	// df = 0.6² / (0.4²/9 + 0.2²/4) = 0.36 / (0.0177778 + 0.01) = 12.96
	tv, df := store.WelchT(store.Sample{N: 10, Mean: 12, Stddev: 2}, store.Sample{N: 5, Mean: 10, Stddev: 1})
	if !near(tv, 2/math.Sqrt(0.6), 1e-12) || !near(df, 0.36/(0.16/9+0.04/4), 1e-9) {
		t.Errorf("WelchT = %v, %v; want 2.581989, 12.96", tv, df)
	}
	if !near(df, 12.96, 1e-9) {
		t.Errorf("df = %v, want 12.96", df)
	}
	// Equal means give t = 0 whatever the spreads.
	if tv, _ := store.WelchT(store.Sample{N: 3, Mean: 5, Stddev: 1}, store.Sample{N: 40, Mean: 5, Stddev: 9}); tv != 0 {
		t.Errorf("t = %v for equal means", tv)
	}
}

// Pooling reproduces the mean and sample standard deviation of the union.
func TestPool(t *testing.T) {
	// {1, 2, 3}: mean 2, sd 1. {5, 7}: mean 6, sd √2.
	// Union {1, 2, 3, 5, 7}: mean 18/5 = 3.6; squared deviations
	// 6.76 + 2.56 + 0.36 + 1.96 + 11.56 = 23.2; sd = √(23.2/4) = √5.8.
	p := store.Pool(store.Sample{N: 3, Mean: 2, Stddev: 1}, store.Sample{N: 2, Mean: 6, Stddev: math.Sqrt2})
	if p.N != 5 || !near(p.Mean, 3.6, 1e-12) || !near(p.Stddev, math.Sqrt(5.8), 1e-12) {
		t.Errorf("Pool = %+v, want {5 3.6 %v}", p, math.Sqrt(5.8))
	}
}

func TestZScoreAndPercent(t *testing.T) {
	// History {10, 12, 14}: mean 12, sd √((4+0+4)/2) = 2; x = 22 → z = 5.
	z, err := store.ZScoreOf([]float64{10, 12, 14}, 22)
	if err != nil || !near(z, 5, 1e-12) {
		t.Errorf("z = %v, %v; want 5", z, err)
	}
	if _, err := store.ZScoreOf([]float64{1}, 2); err == nil {
		t.Error("a z-score from one value")
	}
	// 100 → 105 is +5 %, 100 → 90 is −10 %, from a negative base the
	// sign follows the value: −50 → −40 is +20 %.
	for _, c := range []struct{ base, x, want float64 }{{100, 105, 5}, {100, 90, -10}, {-50, -40, 20}, {3, 3, 0}} {
		if got := store.PercentChange(c.base, c.x); !near(got, c.want, 1e-12) {
			t.Errorf("PercentChange(%v, %v) = %v, want %v", c.base, c.x, got, c.want)
		}
	}
}

// rm makes a RunMetrics with one metric.
func rm(id int64, m store.Metric) store.RunMetrics {
	return store.RunMetrics{Run: store.Run{ID: id}, Metrics: map[string]store.Metric{m.Name: m}}
}

func scalar(name string, better store.Better, v float64) store.Metric {
	return store.Metric{Name: name, Better: better, Value: v}
}

func dist(mean, sd float64, n int64) store.Metric {
	return store.Metric{Name: "latency_ns", Better: store.Lower, Value: mean, Count: n, Mean: &mean, Stddev: &sd}
}

func TestEvaluate(t *testing.T) {
	hist := func(name string, better store.Better, vals ...float64) []store.RunMetrics {
		var out []store.RunMetrics
		for i, v := range vals {
			out = append(out, rm(int64(len(vals)-i), scalar(name, better, v)))
		}
		return out
	}
	tests := []struct {
		name      string
		cand      store.RunMetrics
		base      []store.RunMetrics
		th        store.Threshold
		judged    bool
		regressed bool
		why       string
	}{
		{"throughput 6 % down", rm(9, scalar("headline", store.Higher, 94)), hist("headline", store.Higher, 100),
			store.Threshold{}, true, true, "−6 % of a higher-is-better metric exceeds the default 5 %"},
		{"throughput 4 % down", rm(9, scalar("headline", store.Higher, 96)), hist("headline", store.Higher, 100),
			store.Threshold{}, true, false, "−4 % is within 5 %"},
		{"throughput 50 % up", rm(9, scalar("headline", store.Higher, 150)), hist("headline", store.Higher, 100),
			store.Threshold{}, true, false, "an improvement is never a regression"},
		{"latency 6 % up", rm(9, scalar("latency_ns.p99", store.Lower, 106)), hist("latency_ns.p99", store.Lower, 100),
			store.Threshold{Metric: "latency_ns.p99"}, true, true, "+6 % of a lower-is-better metric"},
		{"percent against the mean of 3", rm(9, scalar("headline", store.Higher, 90)), hist("headline", store.Higher, 100, 80, 90),
			store.Threshold{Lookback: 3, Limit: 1}, true, false, "the baseline is the mean of the window, 90: no change"},
		{"percent, no history", rm(9, scalar("headline", store.Higher, 90)), nil,
			store.Threshold{}, false, false, "nothing to compare with"},
		// z: history {10, 12, 14} has mean 12 and sd 2.
		{"z = 5 is not beyond 5", rm(9, scalar("latency_ns.p99", store.Lower, 22)), hist("latency_ns.p99", store.Lower, 10, 12, 14),
			store.Threshold{Test: store.ZScore, Metric: "latency_ns.p99"}, true, false, "z = (22 − 12)/2 = 5, not more than the limit 5"},
		{"z = 5.5", rm(9, scalar("latency_ns.p99", store.Lower, 23)), hist("latency_ns.p99", store.Lower, 10, 12, 14),
			store.Threshold{Test: store.ZScore, Metric: "latency_ns.p99"}, true, true, "z = (23 − 12)/2 = 5.5"},
		{"z = 5.5 below a min change", rm(9, scalar("latency_ns.p99", store.Lower, 23)), hist("latency_ns.p99", store.Lower, 10, 12, 14),
			store.Threshold{Test: store.ZScore, Metric: "latency_ns.p99", MinChange: 100}, true, false, "+91.7 % is under min_change 100 %"},
		{"z from two runs, three needed", rm(9, scalar("latency_ns.p99", store.Lower, 50)), hist("latency_ns.p99", store.Lower, 10, 12),
			store.Threshold{Test: store.ZScore, Metric: "latency_ns.p99"}, false, false, "min_samples defaults to 3 earlier runs"},
		{"z of a throughput drop", rm(9, scalar("headline", store.Higher, 1)), hist("headline", store.Higher, 10, 12, 14),
			store.Threshold{Test: store.ZScore}, true, true, "z = (1 − 12)/2 = −5.5, bad for higher-is-better"},
		// Welch: candidate n = 100, mean 110, sd 10; baseline n = 100, mean
		// 100, sd 10 → t = 10/√2 = 7.07, df = 198: p ≈ 1e-11.
		{"welch slower", rm(9, dist(110, 10, 100)), []store.RunMetrics{rm(1, dist(100, 10, 100))},
			store.Threshold{Test: store.Welch}, true, true, "t = 7.07 on 198 df"},
		// mean 101: t = 1/√2 = 0.707, one-sided p = 0.24 > 0.05.
		{"welch within noise", rm(9, dist(101, 10, 100)), []store.RunMetrics{rm(1, dist(100, 10, 100))},
			store.Threshold{Test: store.Welch}, true, false, "t = 0.707, p ≈ 0.24"},
		{"welch faster", rm(9, dist(90, 10, 100)), []store.RunMetrics{rm(1, dist(100, 10, 100))},
			store.Threshold{Test: store.Welch}, true, false, "faster is never a regression"},
		{"welch small samples", rm(9, dist(200, 10, 10)), []store.RunMetrics{rm(1, dist(100, 10, 10))},
			store.Threshold{Test: store.Welch}, false, false, "min_samples defaults to 30 per side"},
		{"welch on a scalar", rm(9, scalar("latency_ns", store.Lower, 200)), []store.RunMetrics{rm(1, dist(100, 10, 100))},
			store.Threshold{Test: store.Welch}, false, false, "a scalar has no spread"},
		{"metric missing", rm(9, scalar("headline", store.Higher, 1)), hist("headline", store.Higher, 1),
			store.Threshold{Metric: "nope"}, false, false, "no such metric"},
	}
	for _, tc := range tests {
		c := store.Evaluate(tc.cand, tc.base, tc.th)
		if c.Judged != tc.judged || c.Regressed != tc.regressed {
			t.Errorf("%s: judged %v regressed %v (%+v), want %v %v: %s", tc.name, c.Judged, c.Regressed, c, tc.judged, tc.regressed, tc.why)
		}
	}
	// The figures of the Welch row, by hand: t = 10/√(1 + 1) = 7.0711,
	// df = 2² / (1/99 + 1/99) = 198.
	c := store.Evaluate(rm(9, dist(110, 10, 100)), []store.RunMetrics{rm(1, dist(100, 10, 100))}, store.Threshold{Test: store.Welch})
	if !near(c.Statistic, 10/math.Sqrt2, 1e-9) || !near(c.DF, 198, 1e-9) || c.P > 1e-9 || !near(c.Change, 10, 1e-12) {
		t.Errorf("welch check %+v", c)
	}
	c = store.Evaluate(rm(9, dist(101, 10, 100)), []store.RunMetrics{rm(1, dist(100, 10, 100))}, store.Threshold{Test: store.Welch})
	// One-sided p of t = 0.7071 on 198 df: 1 − F(0.7071) ≈ 0.2402 (normal
	// approximation 1 − Φ(0.7071) = 0.23975; the t tail is a little heavier).
	if !near(c.P, 0.2402, 5e-4) {
		t.Errorf("p = %v, want about 0.2402", c.P)
	}
}

func TestThresholdValidate(t *testing.T) {
	bad := []struct {
		th  store.Threshold
		why string
	}{
		{store.Threshold{Test: "iqr"}, "unknown test"},
		{store.Threshold{Limit: -1}, "negative limit"},
		{store.Threshold{Test: store.Welch, Limit: 1}, "a significance level of 1"},
		{store.Threshold{Lookback: -2}, "negative lookback"},
		{store.Threshold{MinSamples: -1}, "negative min samples"},
		{store.Threshold{MinChange: -1}, "negative min change"},
		{store.Threshold{Limit: math.Inf(1)}, "infinite limit"},
	}
	for _, b := range bad {
		if err := b.th.Validate(); err == nil {
			t.Errorf("%+v accepted: %s", b.th, b.why)
		}
	}
	if err := (store.Threshold{}).Validate(); err != nil {
		t.Errorf("the zero threshold: %v", err)
	}
}

// namedSUT is a DelaySUT under another name.
type namedSUT struct {
	loadgentest.DelaySUT
	name string
}

func (n namedSUT) Name() string { return n.name }

// makeNamedBundle is makeBundle with the SUT's name set: the name is in
// the SUT configuration, so runs of another name have another config_key
// and start a series of their own, as a server on another port does.
func makeNamedBundle(t testing.TB, name string, delay time.Duration) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	_, err := benchmark.Run(context.Background(), benchmark.Plan{
		Custom:    &benchmark.Custom{SUT: namedSUT{loadgentest.DelaySUT{Delay: delay}, name}, QSL: &loadgentest.QSL{Total: 64}},
		Settings:  benchmark.Settings{Explicit: &s},
		OutputDir: dir,
		NoReport:  true,
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return dir
}

// TestCompareNoBaseline: a slower run of a SUT configuration no earlier run
// shares has no baseline; the comparison says so, prints the series keys
// and names the nearest series and the field that differs. On the old
// code it said only "not judged" and Regressed was false.
func TestCompareNoBaseline(t *testing.T) {
	fast, slow := makeNamedBundle(t, "build-a", time.Millisecond), makeNamedBundle(t, "build-b", 30*time.Millisecond)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := must[*store.Run](t)(store.RecordBundle(ctx, s, fast))
		b := must[*store.Run](t)(store.RecordBundle(ctx, s, slow))
		if a.SeriesKey == b.SeriesKey || a.WorkloadKey != b.WorkloadKey || a.ConfigKey == b.ConfigKey {
			t.Fatalf("keys %+v and %+v: want the same workload, another SUT configuration", a.Keys(), b.Keys())
		}
		c := must[*store.Comparison](t)(s.Compare(ctx, nil, nil))
		if !c.NoBaseline || c.Regressed || len(c.Baseline.RunIDs) != 0 || c.Baseline.Source != store.FromSeries {
			t.Fatalf("comparison: no baseline %v, regressed %v, baseline %+v", c.NoBaseline, c.Regressed, c.Baseline)
		}
		if c.Series != b.Keys() {
			t.Errorf("series %+v, want the candidate's %+v", c.Series, b.Keys())
		}
		if len(c.Nearest) != 1 || c.Nearest[0].Key != a.SeriesKey || !slices.Equal(c.Nearest[0].Differs, []string{store.ComponentConfig}) {
			t.Fatalf("nearest %+v, want %s differing in the SUT configuration", c.Nearest, a.SeriesKey)
		}
		want := store.FieldDiff{Component: store.ComponentConfig, Path: "name", Here: `"build-b"`, There: `"build-a"`}
		if !slices.Contains(c.Nearest[0].Fields, want) {
			t.Errorf("fields %+v lack %+v", c.Nearest[0].Fields, want)
		}
		var text bytes.Buffer
		if err := c.WriteComparison(&text); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"series of run 2: " + b.Keys().String(),
			"no baseline: no run of series " + b.SeriesKey + " was recorded before run 2",
			"nearest series:\n  " + a.SeriesKey + " (1 runs, newest 1) differs in SUT configuration: name \"build-a\" there, \"build-b\" here",
		} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("text lacks %q:\n%s", want, text.String())
			}
		}
		js := must[[]byte](t)(json.Marshal(c))
		var doc struct {
			NoBaseline bool             `json:"no_baseline"`
			Series     store.SeriesKeys `json:"series"`
			Nearest    []struct {
				Key     string   `json:"key"`
				Differs []string `json:"differs"`
			} `json:"nearest_series"`
		}
		if err := json.Unmarshal(js, &doc); err != nil || !doc.NoBaseline || doc.Series.Key != b.SeriesKey || doc.Series.ConfigKey != b.ConfigKey ||
			len(doc.Nearest) != 1 || doc.Nearest[0].Key != a.SeriesKey || doc.Nearest[0].Differs[0] != "sut_config" {
			t.Errorf("JSON (%v): %s", err, js)
		}
	})
}

// TestCompareBaselineChoice: a baseline picked by run ID or as the newest
// earlier run of a named series judges the run; a choice that finds no
// run is a *BaselineError that says why.
func TestCompareBaselineChoice(t *testing.T) {
	fast, slow := makeNamedBundle(t, "build-a", time.Millisecond), makeNamedBundle(t, "build-b", 30*time.Millisecond)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := must[*store.Run](t)(store.RecordBundle(ctx, s, fast))
		b := must[*store.Run](t)(store.RecordBundle(ctx, s, slow))
		ts := []store.Threshold{{Limit: 50}}
		for _, tc := range []struct {
			name   string
			choice store.BaselineChoice
			source store.BaselineSource
		}{
			{"by ID", store.BaselineChoice{RunID: a.ID}, store.FromRun},
			{"newest of a series", store.BaselineChoice{LatestOf: a.SeriesKey}, store.FromLatestOf},
		} {
			c, err := s.CompareWith(ctx, store.CompareOptions{Thresholds: ts, Baseline: tc.choice})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if c.NoBaseline || !c.Regressed || c.Baseline.Source != tc.source || !slices.Equal(c.Baseline.RunIDs, []int64{a.ID}) ||
				len(c.Baseline.Series) != 1 || c.Baseline.Series[0] != a.Keys() || len(c.OtherSeries) != 1 {
				t.Errorf("%s: a 30× slower run against run %d: regressed %v, baseline %+v, checks %+v", tc.name, a.ID, c.Regressed, c.Baseline, c.Checks)
			}
			var text bytes.Buffer
			c.WriteComparison(&text)
			if !strings.Contains(text.String(), "series of the baseline: "+a.Keys().String()+", differs in SUT configuration") {
				t.Errorf("%s: text:\n%s", tc.name, text.String())
			}
		}
		for _, tc := range []struct {
			name   string
			ids    []int64
			choice store.BaselineChoice
			reason string
		}{
			{"a run the store lacks", nil, store.BaselineChoice{RunID: 999}, "no run 999 in the results store"},
			{"a series the store lacks", nil, store.BaselineChoice{LatestOf: "0123456789abcdef"}, "no series 0123456789abcdef in the results store"},
			{"a series with no earlier run", []int64{a.ID}, store.BaselineChoice{LatestOf: b.SeriesKey}, "series " + b.SeriesKey + " has no run recorded before run 1"},
			{"the run judged itself", nil, store.BaselineChoice{RunID: b.ID}, "run 2 is the run being judged"},
		} {
			_, err := s.CompareWith(ctx, store.CompareOptions{IDs: tc.ids, Baseline: tc.choice})
			var be *store.BaselineError
			if !errors.As(err, &be) || be.Choice != tc.choice || !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("%s: %v, want a *BaselineError saying %q", tc.name, err, tc.reason)
			}
		}
		if _, err := s.CompareWith(ctx, store.CompareOptions{IDs: []int64{a.ID, b.ID}, Baseline: store.BaselineChoice{RunID: a.ID}}); err == nil {
			t.Error("a baseline choice with two runs named: no error")
		}
	})
}
