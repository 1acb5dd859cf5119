package gbt

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/internal/golden"
	"aimeter/loadgen"
)

// ms converts milliseconds (possibly fractional) to int64 ns.
func ms(v float64) int64 { return int64(math.Round(v * 1e6)) }

// stagesMs builds TestClock stage times from ms values; -1 is NoTime.
func stagesMs(recv, preS, preE, infS, infE, postS, postE, sent float64) loadgen.StageTimes {
	t := func(v float64) int64 {
		if v == -1 {
			return loadgen.NoTime
		}
		return ms(v)
	}
	return loadgen.StageTimes{
		Clock: loadgen.TestClock, Received: t(recv), PreprocessStart: t(preS), PreprocessEnd: t(preE),
		InferenceStart: t(infS), InferenceEnd: t(infE), PostprocessStart: t(postS), PostprocessEnd: t(postE),
		ResultSent: t(sent),
	}
}

// handRun is the hand-worked run of the breakdown tests (times in ms):
//
//	A ok    issued 0,  first token 20, done 50,  11 tokens; SUT: recv 2,  pre 3–5,   inf 6–36,  post 37–40, sent 41
//	B ok    issued 10, no first token, done 30,   1 token;  SUT: recv 11, no pre,    inf 13–23, no post,    sent 24
//	C ok    issued 20, first token 60, done 100,  5 tokens; SUT: recv 19, pre 25–30, inf 30–90, post 90–95, sent 96
//	D lost  issued 30
//	E error issued 40, done 60
//
// C's receipt at 19 ms precedes its issue at 20 ms: T_IT = −1 ms, a clock
// disagreement (IN-68).
func handRun() ([]loadgen.Record, []loadgen.StageTimes) {
	rec := func(id uint64, issued, first, done float64, tokens int64, st loadgen.Status) loadgen.Record {
		r := loadgen.Record{SeqID: id, QueryID: id, SampleIndex: id, ScheduledNs: ms(issued), IssuedNs: ms(issued),
			FirstTokenNs: loadgen.NoTime, CompletedNs: loadgen.NoTime, Tokens: tokens, Status: st}
		if first >= 0 {
			r.FirstTokenNs = ms(first)
		}
		if done >= 0 {
			r.CompletedNs = ms(done)
		}
		return r
	}
	records := []loadgen.Record{
		rec(0, 0, 20, 50, 11, loadgen.StatusOK),
		rec(1, 10, -1, 30, 1, loadgen.StatusOK),
		rec(2, 20, 60, 100, 5, loadgen.StatusOK),
		rec(3, 30, -1, -1, 0, loadgen.StatusLost),
		rec(4, 40, -1, 60, 0, loadgen.StatusError),
	}
	stages := []loadgen.StageTimes{
		stagesMs(2, 3, 5, 6, 36, 37, 40, 41),
		stagesMs(11, -1, -1, 13, 23, -1, -1, 24),
		stagesMs(19, 25, 30, 30, 90, 90, 95, 96),
		loadgen.NoStages,
		loadgen.NoStages,
	}
	return records, stages
}

// near compares floats to 1e-9 relative.
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func statEq(a, b Stat) bool {
	return a.N == b.N && near(a.Min, b.Min) && near(a.Mean, b.Mean) && near(a.P50, b.P50) &&
		near(a.P90, b.P90) && near(a.P99, b.P99) && near(a.Max, b.Max)
}

// TestBreakdownHandWorked checks every Table 16 metric of handRun against
// values worked out by hand. With N = 3 the percentile indices are
// trunc(3×0.5) = 1, trunc(3×0.9) = 2, trunc(3×0.99) = 2; with N = 2 they are
// 1, 1, 1.
func TestBreakdownHandWorked(t *testing.T) {
	records, stages := handRun()
	b := ComputeBreakdown(records, stages, BreakdownOptions{Timeout: 200 * time.Millisecond})
	if b.Records != 5 || b.Completed != 3 || b.Errors != 1 || b.Lost != 1 {
		t.Fatalf("counts = %d/%d/%d/%d, want 5 records, 3 ok, 1 error, 1 lost", b.Records, b.Completed, b.Errors, b.Lost)
	}
	rows := []struct {
		m       TimeMetric
		why     string
		want    Stat
		missing int
		neg     int
	}{
		{MetricTTI, "GB-7.6.2-TTI: done − issued = 50, 20, 80; from the send time, not the scheduled time",
			Stat{N: 3, Min: 20, Mean: 50, P50: 50, P90: 80, P99: 80, Max: 80}, 0, 0},
		{MetricTIT, "GB-7.6.2-TIT: recv − issued = 2, 1, −1 → |Δ| 2, 1, 1 (GB-7.6.2-T16-note, IN-68)",
			Stat{N: 3, Min: 1, Mean: 4.0 / 3, P50: 1, P90: 2, P99: 2, Max: 2}, 0, 1},
		{MetricTIR, "GB-7.6.2-TIR: done − sent = 9, 6, 4",
			Stat{N: 3, Min: 4, Mean: 19.0 / 3, P50: 6, P90: 9, P99: 9, Max: 9}, 0, 0},
		{MetricTDIS, "GB-7.6.2-TDIS, IN-62: pre start (or inf start for B) − recv = 1, 2, 6",
			Stat{N: 3, Min: 1, Mean: 3, P50: 2, P90: 6, P99: 6, Max: 6}, 0, 0},
		{MetricTIPR, "GB-7.6.2-TIPR: 2, 5; B has no preprocessing",
			Stat{N: 2, Min: 2, Mean: 3.5, P50: 5, P90: 5, P99: 5, Max: 5}, 1, 0},
		{MetricTIN, "GB-7.6.2-TIN: 30, 10, 60",
			Stat{N: 3, Min: 10, Mean: 100.0 / 3, P50: 30, P90: 60, P99: 60, Max: 60}, 0, 0},
		{MetricTIPO, "GB-7.6.2-TIPO: 3, 5; B has no post-processing",
			Stat{N: 2, Min: 3, Mean: 4, P50: 5, P90: 5, P99: 5, Max: 5}, 1, 0},
		{MetricTIP, "GB-7.6.2-TIP, IN-70: t_IPE − t_IPS = 40−3, 23−13, 95−25 = 37, 10, 70",
			Stat{N: 3, Min: 10, Mean: 39, P50: 37, P90: 70, P99: 70, Max: 70}, 0, 0},
		{MetricTDIP, "GB-7.6.2-TDIP: t_IPE − recv = 38, 12, 76",
			Stat{N: 3, Min: 12, Mean: 42, P50: 38, P90: 76, P99: 76, Max: 76}, 0, 0},
		{MetricTFToken, "GB-7.6.2-TFTOKEN, IN-66: sent − recv = 39, 13, 77",
			Stat{N: 3, Min: 13, Mean: 43, P50: 39, P90: 77, P99: 77, Max: 77}, 0, 0},
		{MetricTesterTTFT, "IN-66 non-GB: first token − issued = 20, 40; B has none",
			Stat{N: 2, Min: 20, Mean: 30, P50: 40, P90: 40, P99: 40, Max: 40}, 1, 0},
		{MetricTesterTNToken, "IN-67 fallback: (50−20)/10 = 3, (100−60)/4 = 10; B has 1 token",
			Stat{N: 2, Min: 3, Mean: 6.5, P50: 10, P90: 10, P99: 10, Max: 10}, 1, 0},
	}
	for _, row := range rows {
		ts := b.Metric(row.m)
		if !ts.Available {
			t.Errorf("%s: unavailable (%s); %s", row.m.Key(), ts.Reason, row.why)
			continue
		}
		if !statEq(ts.Stat, row.want) {
			t.Errorf("%s = %+v, want %+v; %s", row.m.Key(), ts.Stat, row.want, row.why)
		}
		if ts.Missing != row.missing || ts.Negative != row.neg {
			t.Errorf("%s: missing %d negative %d, want %d and %d; %s", row.m.Key(), ts.Missing, ts.Negative, row.missing, row.neg, row.why)
		}
	}
	if b.TNToken.Available || b.TNToken.Reason != ReasonNoTokenTimes || !b.TNToken.GB {
		t.Errorf("t_ntoken_ms = %+v, want the GB metric unavailable: %s (IN-67)", b.TNToken, ReasonNoTokenTimes)
	}
	if b.TesterTTFT.GB || b.TesterTNToken.GB || !b.TTI.GB {
		t.Errorf("GB labels: ttft_tester %v, t_ntoken_tester %v, t_ti %v; want the tester additions non-GB (IN-66, IN-67)",
			b.TesterTTFT.GB, b.TesterTNToken.GB, b.TTI.GB)
	}
	// T_I: t_IS = 0; the lost sample D's deadline 30 + 200 = 230 ms is
	// later than the last receipt at 100 ms (IN-64).
	if want := (TotalLatency{Available: true, Ms: 230, StartNs: 0, EndNs: ms(230), EndIsDeadline: true}); b.TI != want {
		t.Errorf("T_I = %+v, want %+v (GB-7.6.2-TI, IN-64)", b.TI, want)
	}
	// IN-68: C's T_IT of −1 ms is flagged with no clock uncertainty.
	if b.TIT.NegativeFlagged != 1 || b.TIT.MostNegativeMs != -1 || len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "T_IT") {
		t.Errorf("T_IT flags = %d, most negative %v, warnings %q; want 1 flagged at −1 ms and one warning (IN-68)",
			b.TIT.NegativeFlagged, b.TIT.MostNegativeMs, b.Warnings)
	}
}

// TestTotalLatencyIN64 checks the end point of T_I (GB-7.6.2-TI, IN-64).
func TestTotalLatencyIN64(t *testing.T) {
	records, stages := handRun()
	rows := []struct {
		name    string
		timeout time.Duration
		records []loadgen.Record
		want    TotalLatency
	}{
		{"deadline of the lost sample is last: 30 + 200 ms", 200 * time.Millisecond, records,
			TotalLatency{Available: true, Ms: 230, EndNs: ms(230), EndIsDeadline: true}},
		{"deadline 30 + 50 = 80 ms precedes the receipt at 100 ms", 50 * time.Millisecond, records,
			TotalLatency{Available: true, Ms: 100, EndNs: ms(100)}},
		{"no timeout (offline, IN-51): the last receipt, 100 ms", 0, records,
			TotalLatency{Available: true, Ms: 100, EndNs: ms(100)}},
		{"an error result is a received result: E at 60 ms ends the run without C", 0,
			[]loadgen.Record{records[1], records[4]},
			TotalLatency{Available: true, Ms: 50, StartNs: ms(10), EndNs: ms(60)}},
		{"only a lost sample and no timeout: no end point", 0, records[3:4],
			TotalLatency{Reason: "no result was received and no lost sample has a deadline (no timeout)", StartNs: ms(30), EndNs: loadgen.NoTime}},
		{"no records", 0, nil, TotalLatency{Reason: "no sample was issued"}},
	}
	for _, row := range rows {
		b := ComputeBreakdown(row.records, nil, BreakdownOptions{Timeout: row.timeout})
		if b.TI != row.want {
			t.Errorf("%s: T_I = %+v, want %+v", row.name, b.TI, row.want)
		}
	}
	_ = stages
}

// TestBreakdownClocks checks which metrics survive stage times on the SUT's
// clock (IN-69) or no stage times at all.
func TestBreakdownClocks(t *testing.T) {
	records, stages := handRun()
	sut := make([]loadgen.StageTimes, len(stages))
	for i, s := range stages {
		s.Clock = loadgen.SUTClock
		sut[i] = s
	}
	b := ComputeBreakdown(records, sut, BreakdownOptions{})
	for _, ts := range []*TimeStat{&b.TIT, &b.TIR} {
		if ts.Available || ts.Reason != ReasonClocksNotSynchronised || ts.OtherClock != 3 {
			t.Errorf("%s on the SUT clock = available %v, reason %q, other clock %d; want unavailable: %q for 3 samples",
				ts.Symbol, ts.Available, ts.Reason, ts.OtherClock, ReasonClocksNotSynchronised)
		}
	}
	// Differences of SUT times stay valid on the SUT clock.
	if !b.TIN.Available || b.TIN.Stat.N != 3 || !b.TDIP.Available || !b.TFToken.Available {
		t.Errorf("SUT-side metrics on the SUT clock should be available: T_IN %+v", b.TIN)
	}
	if len(b.Warnings) != 0 {
		t.Errorf("warnings %q: T_IT's negative value is not computed on the SUT clock", b.Warnings)
	}

	none := ComputeBreakdown(records, nil, BreakdownOptions{})
	for _, m := range TimeMetrics() {
		ts := none.Metric(m)
		tester := m == MetricTTI || m == MetricTesterTTFT || m == MetricTesterTNToken
		if ts.Available != tester {
			t.Errorf("without stages %s available = %v, want %v", m.Key(), ts.Available, tester)
		}
		if !tester && m != MetricTNToken && ts.Reason != ReasonNoStages {
			t.Errorf("without stages %s reason %q, want %q", m.Key(), ts.Reason, ReasonNoStages)
		}
	}
}

// TestBreakdownClockUncertainty: negatives within the measured clock
// uncertainty are counted but not flagged (IN-68, IN-69); on single-clock
// metrics every negative is flagged.
func TestBreakdownClockUncertainty(t *testing.T) {
	records, stages := handRun()
	rows := []struct {
		why         string
		uncertainty time.Duration
		flagged     int
	}{
		{"no uncertainty: the −1 ms T_IT is flagged", 0, 1},
		{"0.5 ms uncertainty: −1 ms is beyond it", 500 * time.Microsecond, 1},
		{"exactly 1 ms: not beyond", time.Millisecond, 0},
		{"2 ms uncertainty: within it", 2 * time.Millisecond, 0},
	}
	for _, row := range rows {
		b := ComputeBreakdown(records, stages, BreakdownOptions{ClockUncertainty: row.uncertainty})
		if b.TIT.Negative != 1 || b.TIT.NegativeFlagged != row.flagged {
			t.Errorf("%s: negative %d flagged %d, want 1 and %d", row.why, b.TIT.Negative, b.TIT.NegativeFlagged, row.flagged)
		}
	}
	// A SUT-side inversion: inference ends before it starts.
	stages[0].InferenceEnd = ms(5)
	b := ComputeBreakdown(records, stages, BreakdownOptions{ClockUncertainty: time.Second})
	if b.TIN.Negative != 1 || b.TIN.NegativeFlagged != 1 || b.TIN.MostNegativeMs != -1 {
		t.Errorf("T_IN with inf 6–5 ms: %+v; want one flagged negative of −1 ms whatever the clock uncertainty", b.TIN)
	}
	if b.TIN.Stat.Min != 1 {
		t.Errorf("T_IN min = %v, want |−1| = 1 ms (GB-7.6.2-T16-note)", b.TIN.Stat.Min)
	}
}

// TestBreakdownJSONGolden pins the JSON of the hand-worked breakdown: keys
// keep the symbols with the unit ("t_ti_ms").
func TestBreakdownJSONGolden(t *testing.T) {
	records, stages := handRun()
	b := ComputeBreakdown(records, stages, BreakdownOptions{Timeout: 200 * time.Millisecond})
	got, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "metrics", "breakdown-hand.golden.json")
	golden.Check(t, path, got)
	var back Breakdown
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back.TDIP.Stat != b.TDIP.Stat || back.TI != b.TI {
		t.Errorf("JSON round trip changed the breakdown")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(got, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range append([]string{"t_i_ms"}, metricKeys()...) {
		if _, ok := keys[k]; !ok {
			t.Errorf("JSON has no key %q", k)
		}
	}
}

func metricKeys() []string {
	var out []string
	for _, m := range TimeMetrics() {
		out = append(out, m.Key())
	}
	return out
}

func TestTimeMetricKeys(t *testing.T) {
	want := "t_ti_ms t_it_ms t_ir_ms t_dis_ms t_ipr_ms t_in_ms t_ipo_ms t_ip_ms t_dip_ms t_ftoken_ms t_ntoken_ms ttft_tester_ms t_ntoken_tester_ms"
	if got := strings.Join(metricKeys(), " "); got != want {
		t.Errorf("keys = %s\nwant   %s", got, want)
	}
	if TimeMetric(-1).Key() != "" || numTimeMetrics.Key() != "" {
		t.Error("out-of-range metrics should have no key")
	}
	var b Breakdown
	if b.Metric(numTimeMetrics) != nil {
		t.Error("Metric(out of range) should be nil")
	}
}

// TestTimeMetricDelta: the signed per-sample values behind the stats (IN-68).
func TestTimeMetricDelta(t *testing.T) {
	records, stages := handRun()
	rows := []struct {
		why  string
		m    TimeMetric
		i    int
		want int64
		ok   bool
	}{
		{"C's T_IT is −1 ms, signed (IN-68)", MetricTIT, 2, -ms(1), true},
		{"A's T_TI", MetricTTI, 0, ms(50), true},
		{"B has no preprocessing", MetricTIPR, 1, 0, false},
		{"B's T_DIS ends at the inference start (IN-62)", MetricTDIS, 1, ms(2), true},
		{"T_ntoken is never per sample (IN-67)", MetricTNToken, 0, 0, false},
		{"the lost sample D has no completion", MetricTTI, 3, 0, false},
		{"out of range", numTimeMetrics, 0, 0, false},
	}
	for _, row := range rows {
		got, ok := row.m.Delta(&records[row.i], &stages[row.i])
		if got != row.want || ok != row.ok {
			t.Errorf("%s: Delta = %d, %v; want %d, %v", row.why, got, ok, row.want, row.ok)
		}
	}
	sut := stages[2]
	sut.Clock = loadgen.SUTClock
	if _, ok := MetricTIT.Delta(&records[2], &sut); ok {
		t.Error("T_IT from SUT-clock stage times should not be computed (IN-69)")
	}
	if _, ok := MetricTIN.Delta(&records[2], nil); ok {
		t.Error("T_IN without stage times should not be computed")
	}
}

func TestBreakdownPanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for 5 records and 1 stage time")
		}
	}()
	records, _ := handRun()
	ComputeBreakdown(records, []loadgen.StageTimes{loadgen.NoStages}, BreakdownOptions{})
}

// TestTesterTNTokenRounding: the per-sample fallback is rounded to the ns.
func TestTesterTNTokenRounding(t *testing.T) {
	rows := []struct {
		a, b, want int64
	}{
		{10, 4, 3},   // 2.5 → 3 (half away from zero)
		{9, 4, 2},    // 2.25 → 2
		{11, 4, 3},   // 2.75 → 3
		{-10, 4, -3}, // −2.5 → −3
		{7, 7, 1},
		{0, 3, 0},
	}
	for _, row := range rows {
		if got := divRound(row.a, row.b); got != row.want {
			t.Errorf("divRound(%d, %d) = %d, want %d", row.a, row.b, got, row.want)
		}
	}
}
