package mlperflog

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/internal/golden"
	"aimeter/loadgen"
)

// golden compares got with testdata/golden/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

// lcg is a tiny deterministic generator for synthetic latencies.
type lcg uint64

func (g *lcg) next(n int64) int64 {
	*g = *g*6364136223846793005 + 1442695040888963407
	return int64(uint64(*g)>>33) % n
}

// Seeds of the current mlperf.conf, so the fixtures look like real runs.
func withConfSeeds(s loadgen.Settings) loadgen.Settings {
	s.QSLRNGSeed = 2085463073848966840
	s.SampleIndexRNGSeed = 2747215439041700203
	s.ScheduleRNGSeed = 16159082839903944936
	return s
}

var fixtureStart = time.Date(2026, 8, 20, 13, 4, 5, 123456789, time.UTC)

// perfEvents are the events the core logs around a performance pass.
func perfEvents(queries, spq uint64, duration int64) []loadgen.Event {
	return []loadgen.Event{
		{TimeNs: 1_250_000, Key: "generic_message", Value: "Starting performance mode"},
		{TimeNs: 1_300_000, Key: "loaded_qsl_set", Value: []uint64{3, 0, 2, 1}},
		{TimeNs: 1_400_000, Key: "generated_query_count", Value: queries},
		{TimeNs: 1_400_100, Key: "generated_samples_per_query", Value: spq},
		{TimeNs: 1_400_200, Key: "generated_query_duration", Value: duration},
		{TimeNs: 1_500_000, Key: "power_begin", Value: "08-20-2026 13:04:05.125", Kind: loadgen.EventIntervalStart},
		{TimeNs: 1_500_000 + duration, Key: "power_end", Value: "08-20-2026 13:04:12.125", Kind: loadgen.EventIntervalEnd},
	}
}

func newResult(t testing.TB, s loadgen.Settings, qslTotal, qslPerf uint64) *loadgen.Result {
	t.Helper()
	e, err := loadgen.NewEffective(s, qslTotal, qslPerf)
	if err != nil {
		t.Fatal(err)
	}
	return &loadgen.Result{
		SUTName:              "MySUT",
		GetSUTNameDurationNs: 1234,
		QSLName:              "MyQSL",
		QSLTotalCount:        qslTotal,
		QSLPerformanceCount:  qslPerf,
		Requested:            s,
		Effective:            e,
		StartTime:            fixtureStart,
	}
}

// singleStream: 1100 queries of 1.5–2.5 ms, valid, with both early-stopping
// estimates.
func singleStream(t testing.TB) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.SingleStreamExpectedLatencyNs = 2_000_000
	s.MinDurationMs = 2000
	r := newResult(t, s, 1024, 256)
	g := lcg(1)
	n := 1100
	pr := loadgen.PerformanceResult{QueriesIssued: uint64(n)}
	var now, maxLat int64
	for i := 0; i < n; i++ {
		lat := 1_500_000 + g.next(1_000_000)
		pr.SampleLatencies = append(pr.SampleLatencies, lat)
		if i == n-1 {
			pr.FinalQueryScheduledTime = float64(now) / 1e9
			pr.FinalQueryIssuedTime = float64(now) / 1e9
			pr.FinalQueryAllSamplesDoneTime = float64(now+lat) / 1e9
		}
		now += lat + 3_000
		maxLat = max(maxLat, lat)
	}
	pr.MaxLatency = float64(maxLat) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = perfEvents(uint64(n), 1, now)
	r.Passes = []loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: 2200, TargetQPS: 500,
		StartUnixNs: fixtureStart.UnixNano() + 1_500_000, EndNs: now, QueriesIssued: uint64(n), Reported: true}}
	return r
}

// multiStream: 700 queries of 8 samples.
func multiStream(t testing.TB) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Scenario = loadgen.MultiStream
	s.MinQueryCount = 662
	s.MinDurationMs = 5000
	r := newResult(t, s, 5000, 64)
	g := lcg(2)
	n := 700
	pr := loadgen.PerformanceResult{QueriesIssued: uint64(n)}
	var now, maxLat int64
	for i := 0; i < n; i++ {
		var q int64
		for j := 0; j < 8; j++ {
			lat := 6_000_000 + g.next(2_500_000)
			pr.SampleLatencies = append(pr.SampleLatencies, lat)
			q = max(q, lat)
		}
		pr.QueryLatencies = append(pr.QueryLatencies, q)
		if i == n-1 {
			pr.FinalQueryScheduledTime = float64(now) / 1e9
			pr.FinalQueryIssuedTime = float64(now) / 1e9
			pr.FinalQueryAllSamplesDoneTime = float64(now+q) / 1e9
		}
		now += q + 5_000
		maxLat = max(maxLat, q)
	}
	pr.MaxLatency = float64(maxLat) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = perfEvents(uint64(n), 8, now)
	return r
}

// server: 700 Poisson-ish queries at 100 QPS; overLatency of them above the
// 10 ms bound.
func server(t testing.TB, minDurationMs uint64, overLatency int) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 100
	s.ServerTargetLatencyNs = 10_000_000
	s.MinDurationMs = minDurationMs
	r := newResult(t, s, 1024, 1024)
	g := lcg(3)
	n := 700
	pr := loadgen.PerformanceResult{QueriesIssued: uint64(n)}
	var sched, maxLat, lastDone int64
	for i := 0; i < n; i++ {
		lat := 2_000_000 + g.next(6_000_000)
		if i%(n/max(overLatency, 1)) == 5 && overLatency > 0 {
			lat = 12_000_000 + g.next(5_000_000)
		}
		pr.SampleLatencies = append(pr.SampleLatencies, lat)
		lastDone = max(lastDone, sched+lat)
		if i == n-1 {
			pr.FinalQueryScheduledTime = float64(sched) / 1e9
			pr.FinalQueryIssuedTime = float64(sched+20_000) / 1e9
			pr.FinalQueryAllSamplesDoneTime = float64(lastDone) / 1e9
		}
		sched += 5_000_000 + g.next(10_000_000)
		maxLat = max(maxLat, lat)
	}
	pr.MaxLatency = float64(maxLat) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = perfEvents(uint64(n), 1, sched)
	return r
}

// serverInvalid fails the latency bound and the minimum duration, lost two
// samples and had one fail, and logged an error.
func serverInvalid(t testing.TB) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 100
	s.ServerTargetLatencyNs = 10_000_000
	s.MinDurationMs = 10_000
	r := newResult(t, s, 1024, 1024)
	g := lcg(4)
	n := 700
	pr := loadgen.PerformanceResult{QueriesIssued: uint64(n), LostSamples: 2, FailedSamples: 1}
	var sched, maxLat, lastDone int64
	for i := 0; i < n; i++ {
		lat := 2_000_000 + g.next(6_000_000)
		if i%20 == 3 {
			lat = 11_000_000 + g.next(5_000_000)
		}
		pr.SampleLatencies = append(pr.SampleLatencies, lat)
		lastDone = max(lastDone, sched+lat)
		if i == n-1 {
			pr.FinalQueryScheduledTime = float64(sched) / 1e9
			pr.FinalQueryIssuedTime = float64(sched+20_000) / 1e9
			pr.FinalQueryAllSamplesDoneTime = float64(lastDone) / 1e9
		}
		sched += 5_000_000 + g.next(10_000_000)
		maxLat = max(maxLat, lat)
	}
	pr.MaxLatency = float64(maxLat) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = append(perfEvents(uint64(n), 1, sched),
		loadgen.Event{TimeNs: sched, Key: "error_runtime", Value: "2 samples were never completed", Error: true})
	r.LostSamples, r.FailedSamples = 2, 1
	return r
}

// offline: one query of 1100 samples over about a second.
func offline(t testing.TB) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Scenario = loadgen.Offline
	s.OfflineExpectedQPS = 1000
	s.MinDurationMs = 1000
	r := newResult(t, s, 50000, 1024)
	g := lcg(5)
	n := int(r.Effective.SamplesPerQuery)
	pr := loadgen.PerformanceResult{QueriesIssued: 1}
	var done int64
	for i := 0; i < n; i++ {
		done += 900_000 + g.next(50_000)
		pr.SampleLatencies = append(pr.SampleLatencies, done)
	}
	pr.MaxLatency = float64(done) / 1e9
	pr.FinalQueryAllSamplesDoneTime = float64(done) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = perfEvents(1, uint64(n), 0)
	return r
}

// tokenServer is an LLM Server run (TTFT 2 s, TPOT 200 ms bounds, target
// latency 0, equal-issue on). With slow set, TTFT and TPOT both miss their
// bounds.
func tokenServer(t testing.TB, slow bool) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 2
	s.ServerTargetLatencyNs = 0
	s.UseTokenLatencies = true
	s.ServerTTFTLatencyNs = 2_000_000_000
	s.ServerTPOTLatencyNs = 200_000_000
	s.SampleConcatenatePermutation = true
	s.MinDurationMs = 300_000
	r := newResult(t, s, 24576, 24576)
	g := lcg(6)
	n := 700
	pr := loadgen.PerformanceResult{QueriesIssued: uint64(n)}
	var sched, maxLat, lastDone int64
	for i := 0; i < n; i++ {
		ttft := 300_000_000 + g.next(1_000_000_000)
		tpot := 20_000_000 + g.next(150_000_000)
		if slow && i%10 == 0 {
			ttft += 2_000_000_000
			tpot += 200_000_000
		}
		tokens := 2 + g.next(300)
		lat := ttft + tpot*(tokens-1)
		pr.SampleLatencies = append(pr.SampleLatencies, lat)
		pr.FirstTokenLatencies = append(pr.FirstTokenLatencies, ttft)
		pr.TimePerOutputToken = append(pr.TimePerOutputToken, tpot)
		pr.TokensPerSample = append(pr.TokensPerSample, tokens)
		lastDone = max(lastDone, sched+lat)
		if i == n-1 {
			pr.FinalQueryScheduledTime = float64(sched) / 1e9
			pr.FinalQueryIssuedTime = float64(sched) / 1e9
			pr.FinalQueryAllSamplesDoneTime = float64(lastDone) / 1e9
		}
		sched += 200_000_000 + g.next(600_000_000)
		maxLat = max(maxLat, lat)
	}
	pr.MaxLatency = float64(maxLat) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = append(perfEvents(uint64(n), 1, sched),
		loadgen.Event{TimeNs: 2_000, Key: "warning_generic_message", Value: "equal-issue mode", Warning: true},
		loadgen.Event{TimeNs: 3_000, Key: "warning_generic_message", Value: "second warning", Warning: true})
	return r
}

// tokenOffline reports measured and inferred (×69) tokens per second.
func tokenOffline(t testing.TB) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Scenario = loadgen.Offline
	s.OfflineExpectedQPS = 10
	s.MinDurationMs = 10_000
	s.UseTokenLatencies = true
	s.InferTokenLatencies = true
	s.TokenLatencyScalingFactor = 69
	r := newResult(t, s, 13368, 13368)
	g := lcg(7)
	n := int(r.Effective.SamplesPerQuery)
	pr := loadgen.PerformanceResult{QueriesIssued: 1}
	var done int64
	for i := 0; i < n; i++ {
		done += 90_000_000 + g.next(5_000_000)
		pr.SampleLatencies = append(pr.SampleLatencies, done)
		pr.TokensPerSample = append(pr.TokensPerSample, 50+g.next(200))
	}
	pr.MaxLatency = float64(done) / 1e9
	pr.FinalQueryAllSamplesDoneTime = float64(done) / 1e9
	r.Summary = loadgen.Summarize(r.SUTName, r.Effective, pr)
	r.Events = perfEvents(1, uint64(n), 0)
	return r
}

// accuracyOnly has no summary, three logged responses and a warning.
func accuracyOnly(t testing.TB) *loadgen.Result {
	s := withConfSeeds(loadgen.DefaultSettings())
	s.Mode = loadgen.AccuracyOnly
	r := newResult(t, s, 4, 4)
	r.Events = []loadgen.Event{
		{TimeNs: 900_000, Key: "warning_generic_message", Value: "Found Audit Config file (audit.config). Overriding TestSettings from audit.config file.", Warning: true},
		{TimeNs: 1_000_000, Key: "generic_message", Value: "Starting accuracy mode"},
		{TimeNs: 1_100_000, Key: "loaded_qsl_set", Value: []uint64{2, 0, 3, 1}},
		{TimeNs: 1_200_000, Key: "generated_query_count", Value: uint64(4)},
	}
	r.Accuracy = []loadgen.AccuracyEntry{
		{SeqID: 0, QSLIndex: 2, Data: []byte{0x16, 0xc0, 0xb0, 0xa0}},
		{SeqID: 1, QSLIndex: 0, Data: []byte{0x05, 0xc0, 0xb0, 0xa0}},
		{SeqID: 2, QSLIndex: 3, Data: nil},
		{SeqID: 3, QSLIndex: 1, Data: []byte{0xff}},
	}
	return r
}

type fixture struct {
	name  string
	build func(testing.TB) *loadgen.Result
}

var fixtures = []fixture{
	{"singlestream", singleStream},
	{"multistream", multiStream},
	{"server_valid", func(t testing.TB) *loadgen.Result { return server(t, 5000, 0) }},
	{"server_invalid", serverInvalid},
	{"offline", offline},
	{"tokens_server", func(t testing.TB) *loadgen.Result { return tokenServer(t, false) }},
	{"tokens_server_invalid", func(t testing.TB) *loadgen.Result { return tokenServer(t, true) }},
	{"tokens_offline", tokenOffline},
	{"accuracy", accuracyOnly},
}

func TestSummaryGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			r := f.build(t)
			var buf bytes.Buffer
			if err := WriteSummary(&buf, r); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, f.name+".summary.txt", buf.Bytes())
		})
	}
}

// The fixtures must exercise what they are named for.
func TestFixtureVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		r     *loadgen.Result
		valid bool
	}{
		{"singlestream", singleStream(t), true},
		{"multistream", multiStream(t), true},
		{"server_valid", server(t, 5000, 0), true},
		{"server_invalid", serverInvalid(t), false},
		{"offline", offline(t), true},
		{"tokens_server", tokenServer(t, false), true},
		{"tokens_server_invalid", tokenServer(t, true), false},
		{"tokens_offline", tokenOffline(t), true},
	} {
		if tc.r.Summary.Valid != tc.valid {
			s := tc.r.Summary
			t.Errorf("%s: Valid = %v, want %v (duration %v queries %v perf %v es %v %q)", tc.name, s.Valid, tc.valid,
				s.MinDurationMet, s.MinQueriesMet, s.PerfConstraintsMet, s.EarlyStoppingMet, s.AimeterReasons)
		}
	}
	s := serverInvalid(t).Summary
	if s.PerfConstraintsMet || s.MinDurationMet || len(s.AimeterReasons) != 2 {
		t.Errorf("server_invalid: perf %v duration %v reasons %q", s.PerfConstraintsMet, s.MinDurationMet, s.AimeterReasons)
	}
	s = tokenServer(t, true).Summary
	if !strings.Contains(s.PerfConstraintsRecommendation, "\n") {
		t.Errorf("tokens_server_invalid: want the two-line TTFT+TPOT recommendation, got %q", s.PerfConstraintsRecommendation)
	}
}

// realServerSummary is a Server mlperf_log_summary.txt published with an
// MLPerf submission (AMD's SDXL instructions), LoadGen 5.x.
const realServerSummary = `================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : 16.20
Result is : VALID
  Performance constraints satisfied : Yes
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Early Stopping Result:
 * Run successful.

================================================
Additional Stats
================================================
Scheduled samples per second : 16.66
Min latency (ns)                : 6861142555
Max latency (ns)                : 18656990527
Mean latency (ns)               : 10165896851
50.00 percentile latency (ns)   : 8919662797
90.00 percentile latency (ns)   : 15313217419
95.00 percentile latency (ns)   : 17300266456
97.00 percentile latency (ns)   : 17580579392
99.00 percentile latency (ns)   : 18010059342
99.90 percentile latency (ns)   : 18533803943

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 16.5
target_latency (ns): 20000000000
max_async_queries : 0
min_duration (ms): 600000
max_duration (ms): 0
min_query_count : 100
max_query_count : 0
qsl_rng_seed : 1780908523862526354
sample_index_rng_seed : 14771362308971278857
schedule_rng_seed : 18209322760996052031
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 5000

No warnings encountered during test.

No errors encountered during test.
`

// TestSummaryMatchesRealServerFile rebuilds the numbers of a published
// LoadGen summary by hand and expects the same bytes, apart from the
// accuracy_sample_count line newer LoadGen versions (6.0) add.
func TestSummaryMatchesRealServerFile(t *testing.T) {
	s := &loadgen.Summary{
		SUTName: "PySUT",
		Effective: loadgen.Effective{
			Scenario: loadgen.Server, Mode: loadgen.PerformanceOnly, SamplesPerQuery: 1, TargetQPS: 16.5,
			TargetLatencyNs: 20_000_000_000, TargetLatencyPercentile: 0.99, MinDurationMs: 600000, MinQueryCount: 100,
			QSLRNGSeed: 1780908523862526354, SampleIndexRNGSeed: 14771362308971278857, ScheduleRNGSeed: 18209322760996052031,
			PerformanceSampleCount: 5000, AccuracySampleCount: 5000,
		},
		// 16200 / 1000 s = 16.20 completed, 16200 / 972.4 s = 16.66 scheduled.
		Result:             loadgen.PerformanceResult{FinalQueryAllSamplesDoneTime: 1000, FinalQueryScheduledTime: 972.4},
		SampleCount:        16201,
		SampleLatencyMin:   6861142555,
		SampleLatencyMax:   18656990527,
		SampleLatencyMean:  10165896851,
		MinDurationMet:     true,
		MinQueriesMet:      true,
		PerfConstraintsMet: true,
		EarlyStoppingMet:   true,
		Valid:              true,
		EarlyStoppingLines: []string{" * Run successful."},
	}
	for i, v := range []int64{8919662797, 15313217419, 17300266456, 17580579392, 18010059342, 18533803943} {
		s.Percentiles[i] = loadgen.PercentileEntry{Percentile: loadgen.ReportedPercentiles[i], SampleLatency: v}
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, &loadgen.Result{Summary: s}); err != nil {
		t.Fatal(err)
	}
	got := strings.Replace(buf.String(), "accuracy_sample_count : 5000\n", "", 1)
	if got != realServerSummary {
		t.Errorf("summary differs from LoadGen's:\n%s", golden.Diff([]byte(got), []byte(realServerSummary)))
	}
}

func TestSummaryFooterCounts(t *testing.T) {
	for _, tc := range []struct {
		warnings, errors int
		want             string
	}{
		{0, 0, "\nNo warnings encountered during test.\n\nNo errors encountered during test.\n"},
		{1, 1, "\n1 warning encountered. See detailed log.\n\n1 ERROR encountered. See detailed log.\n"},
		{2, 3, "\n2 warnings encountered. See detailed log.\n\n3 ERRORS encountered. See detailed log.\n"},
	} {
		r := &loadgen.Result{}
		for range tc.warnings {
			r.Events = append(r.Events, loadgen.Event{Key: "w", Warning: true})
		}
		for range tc.errors {
			r.Events = append(r.Events, loadgen.Event{Key: "e", Error: true})
		}
		var buf bytes.Buffer
		if err := WriteSummary(&buf, r); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("%d warnings, %d errors: got %q, want %q", tc.warnings, tc.errors, buf.String(), tc.want)
		}
	}
}

// Spot checks of the golden files against LoadGen details that are easy to
// break unnoticed.
func TestSummaryDetails(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, serverInvalid(t)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Result is : INVALID\n  Performance constraints satisfied : NO\n  Min duration satisfied : NO\n  Min queries satisfied : Yes\n",
		// A failure decided the verdict: LoadGen's advice on the load is
		// left out, and the failures are counted against the pass.
		"Recommendations:\n * 2 samples were lost: the SUT never completed them.\n * 1 of 701 samples failed (0.1427 %): the SUT reported an error for them, and none is allowed (max_error_rate 0).\nEarly Stopping Result:\n",
		"\n1 ERROR encountered. See detailed log.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("server_invalid summary lacks %q", want)
		}
	}

	buf.Reset()
	if err := WriteSummary(&buf, tokenServer(t, true)); err != nil {
		t.Fatal(err)
	}
	out = buf.String()
	for _, want := range []string{
		" * TTFT constrain not met: Reduce target QPS to improve latency.\n * TPOT constrain not met: Reduce target QPS to improve latency.\n",
		"ttft_latency (ns): 2000000000\ntpot_latency (ns): 200000000\n",
		"WARNING: sample_concatenate_permutation was set to true. \nGenerated samples per query might be different as the one in the setting.\n",
		"samples_per_query value\n\n2 warnings encountered. See detailed log.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tokens_server_invalid summary lacks %q", want)
		}
	}

	buf.Reset()
	if err := WriteSummary(&buf, accuracyOnly(t)); err != nil {
		t.Fatal(err)
	}
	if want := "\n1 warning encountered. See detailed log.\n\nNo errors encountered during test.\n"; buf.String() != want {
		t.Errorf("accuracy-only summary = %q, want only the footer %q", buf.String(), want)
	}
}

// TestSummaryConcurrencyMode: a fixed-concurrency run keeps the
// SingleStream key but says, under it, that it is an aimeter mode and not
// a SingleStream result; a plain SingleStream run has no such line.
func TestSummaryConcurrencyMode(t *testing.T) {
	r := singleStream(t)
	var plain bytes.Buffer
	if err := WriteSummary(&plain, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "aimeter mode") {
		t.Error("a SingleStream summary names an aimeter mode")
	}
	r.Summary.Effective.Concurrency = 8
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	want := "Scenario : SingleStream\nMode     : PerformanceOnly\naimeter mode : fixed concurrency 8 (not an MLPerf scenario; the result is aimeter's, not a SingleStream result)\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, buf.String())
	}
}
