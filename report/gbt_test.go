package report

import (
	"aimeter/internal/golden"
	"bytes"
	"regexp"
	"strings"
	"testing"

	"aimeter/gbt"
)

const gbtGoldenPath = "testdata/report.gbt.golden.html"

// gbtReport is a report of GB/T scenarios.
func gbtReport(scenarios ...RunSection) *Report {
	return &Report{Title: "aimeter GB/T test report", Generated: fixedTime, System: fixedSystem, Runs: scenarios}
}

// gbtScenario runs a gbtCase and makes it a report scenario.
func gbtScenario(t *testing.T, c gbtCase) RunSection {
	t.Helper()
	res, g := gbtFixture(t, c.in, c.sut())
	return RunSection{Name: c.name, Result: res, GBT: g}
}

var (
	h2BadgeRE       = regexp.MustCompile(`<h2>[^<]*<span class="badge (\w+)">([^<]*)</span></h2>`)
	overviewBadgeRE = regexp.MustCompile(`<td><span class="badge (\w+)">([^<]*)</span></td>`)
)

// TestGBTSection renders each GB/T run of gbtCases and checks its section
// piece by piece; the reason of each check says what it guards.
func TestGBTSection(t *testing.T) {
	for _, c := range gbtCases() {
		t.Run(c.name, func(t *testing.T) {
			sc := gbtScenario(t, c)
			sum := sc.Result.Summary
			if sum == nil || sum.Valid || !strings.Contains(sum.PerfConstraintsRecommendation, "Reduce target QPS") {
				t.Fatalf("fixture: LoadGen's summary should be INVALID with \"Reduce target QPS\", is %+v", sum)
			}
			if sc.GBT.Metrics.Loss.Valid != c.pass {
				t.Fatalf("fixture: loss verdict %v (%d of %d lost), want %v", sc.GBT.Metrics.Loss.Valid, sc.GBT.Metrics.Loss.Lost, sc.GBT.Metrics.Loss.Sent, c.pass)
			}
			page := string(render(t, gbtReport(sc)))
			verdict, class := "FAIL", "invalid"
			if c.pass {
				verdict, class = "PASS", "valid"
			}
			mode := sc.GBT.Test.Arrival.Mode
			m := sc.GBT.Metrics
			checks := []struct {
				ok     bool
				reason string
			}{
				{h2Badge(page) == class+" "+verdict, "the section's headline badge is the GB/T loss-rate verdict (GB-7.7.1-c-2, IN-79), not LoadGen's INVALID"},
				{overviewBadge(page) == class+" "+verdict, "the overview row shows the GB/T verdict"},
				{strings.Contains(page, `<span class="label">GB/T 45087 verdict (loss rate)</span> <span class="badge `+class+`">`+verdict+`</span>`), "the verdict line names the loss rate as the verdict"},
				{strings.Contains(page, lossLine(m.Loss)), "the verdict line gives lost/sent, the rate and the threshold"},
				{strings.Contains(page, m.Throughput.Name()) && strings.Contains(page, "basis "+m.Throughput.Basis), "the headline metric is the throughput named by its basis (Table 18's only on the T_DIP union)"},
				{strings.Contains(page, m.Throughput.Name()+": "+fmtRate(m.Throughput.SamplesPerSecond, "samples/s")), "the overview's headline is the GB/T throughput"},
				{!strings.Contains(page, "Reduce target QPS"), "MLPerf's recommendation is no advice on a GB/T run"},
				{!strings.Contains(page, "LoadGen recommendations"), "no LoadGen recommendations heading on a GB/T run"},
				{strings.Contains(page, "MLPerf LoadGen checks (not the verdict of a GB/T test)"), "LoadGen's checks are labelled as not the verdict"},
				{strings.Contains(page, `<span class="badge neutral">INVALID</span>`), "LoadGen's INVALID is shown, in a neutral badge, as secondary information"},
				{strings.Index(page, "Time breakdown (Table 16") < strings.Index(page, "MLPerf LoadGen checks"), "the GB/T metrics come before LoadGen's checks"},
				{strings.Contains(page, "<th title=\"GB-7.6.2-TTI\">T_TI</th><td>") == m.Time.TTI.Available, "Table 16 has T_TI, with figures when a sample returned"},
				{strings.Contains(page, ">T_DIP</th>"), "Table 16 has T_DIP"},
				{strings.Contains(page, `class="gbt-loss-chart"`), "the losses per second are charted"},
				{strings.Contains(page, "test_info.org_name</th><td>Example Lab"), "the test information that is set is shown"},
				{!strings.Contains(page, "test_info.test_mode"), "test information that is not set is left out"},
				{strings.Contains(page, "test_info.dataset_type</th><td>fixed"), "a coded field is shown by its name"},
				{strings.Contains(page, "<th>test_start</th>") && strings.Contains(page, "<th>result_upload_complete</th>"), "the lifecycle events are shown (GB-7.7.1-j-1)"},
				{strings.Contains(page, "Elasticity EL (Table 19)") == (mode == gbt.ModePeak), "elasticity only for a peak test"},
				{strings.Contains(page, "Pressure tolerance PT (Table 20)") == (mode == gbt.ModePeak), "pressure tolerance only for a peak test"},
				{strings.Contains(page, "Main and foreign jobs") == (mode == gbt.ModeMixed), "foreign jobs beside the main ones only for a mixed test (IN-50)"},
			}
			if mode == gbt.ModePeak && m.Elasticity.Available {
				checks = append(checks, struct {
					ok     bool
					reason string
				}{strings.Contains(page, "Elasticity variant (IN-76, non-standard)"), "the IN-76 variant is labelled non-standard"})
			}
			if sc.Result.LateCompletions > 0 {
				checks = append(checks, struct {
					ok     bool
					reason string
				}{strings.Contains(page, fmtCount(sc.Result.LateCompletions)+" returned after their timeout"), "late completions are counted on the verdict line (GB-7.4.1-d)"})
			}
			for _, ch := range checks {
				if !ch.ok {
					t.Errorf("%s", ch.reason)
				}
			}
		})
	}
}

func h2Badge(page string) string {
	m := h2BadgeRE.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1] + " " + m[2]
}

func overviewBadge(page string) string {
	m := overviewBadgeRE.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1] + " " + m[2]
}

// TestGBTTimeTable checks the rows of the Table 16 table.
func TestGBTTimeTable(t *testing.T) {
	avail := gbt.TimeStat{Symbol: "T_TI", Requirement: "GB-7.6.2-TTI", Available: true,
		Stat: gbt.Stat{N: 1234, Min: 0.5, Mean: 1.25, P50: 1, P90: 2, P99: 3.5, Max: 150}}
	missing := gbt.TimeStat{Symbol: "T_DIS", Requirement: "GB-7.6.2-TDIS", Reason: gbt.ReasonNoStages}
	b := gbt.Breakdown{TTI: avail, TDIS: missing}
	tt := gbtTimeTableOf(&b)
	for _, tc := range []struct {
		row    int
		want   gbtTimeRow
		reason string
	}{
		{0, gbtTimeRow{Symbol: "T_TI", Requirement: "GB-7.6.2-TTI",
			Cells: []string{"1,234", "500.0 µs", "1.250 ms", "1.000 ms", "2.000 ms", "3.500 ms", "150.0 ms"}},
			"an available metric: n grouped, ms figures formatted by fmtDur"},
		{1, gbtTimeRow{Symbol: "T_DIS", Requirement: "GB-7.6.2-TDIS", Unavailable: "not available: " + gbt.ReasonNoStages},
			"a metric without data says why, with no figures"},
		{2, gbtTimeRow{Unavailable: "not available: "}, "a metric left empty is not available"},
	} {
		got := tt.Rows[tc.row]
		if got.Symbol != tc.want.Symbol || got.Unavailable != tc.want.Unavailable || strings.Join(got.Cells, "|") != strings.Join(tc.want.Cells, "|") {
			t.Errorf("row %d = %+v, want %+v: %s", tc.row, got, tc.want, tc.reason)
		}
	}
	if len(tt.Rows) != 7 || len(tt.Head) != 8 {
		t.Errorf("%d rows, %d columns; want T_TI, T_DIS, T_IPR, T_IN, T_IPO, T_IP, T_DIP with n and six figures", len(tt.Rows), len(tt.Head))
	}
}

// TestPeakRows checks the elasticity and pressure-tolerance rows.
func TestPeakRows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      gbt.Metrics
		want   []kv
		reason string
	}{
		{"not a peak test", gbt.Metrics{}, nil, "modes other than 3 (and 5 over 3) have no such metrics"},
		{"available", gbt.Metrics{
			Elasticity:        &gbt.Elasticity{Available: true, Percent: 12.345678, PercentPerMB: 0.5, N: 3},
			PressureTolerance: &gbt.PressureTolerance{Available: true, MBPerSecond: 1.5, SamplesPerSecond: 1234.6, OverNs: 2e9},
		}, []kv{
			{"Elasticity EL (Table 19)", "12.35 % (over 3 intervals)"},
			{"Elasticity variant (IN-76, non-standard)", "0.5 %/MB"},
			{"Pressure tolerance PT (Table 20)", "1.5 MB/s"},
			{"Throughput while over the pressure threshold (GB-7.6.6-T20-note)", "1,235 samples/s over 2.000 s"},
		}, "the Table 19 value in %, the IN-76 variant labelled non-standard, PT in MB/s with the throughput of GB-7.6.6-T20-note"},
		{"not available", gbt.Metrics{
			Elasticity:        &gbt.Elasticity{Reason: "no qualifying interval"},
			PressureTolerance: &gbt.PressureTolerance{Reason: "no unit over the threshold"},
		}, []kv{
			{"Elasticity EL (Table 19)", "not available: no qualifying interval"},
			{"Pressure tolerance PT (Table 20)", "not available: no unit over the threshold"},
		}, "undefined metrics say why (IN-76: reported \"--\")"},
	} {
		got := peakRows(&tc.m)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %q, want %q: %s", tc.name, got, tc.want, tc.reason)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: row %d %q, want %q: %s", tc.name, i, got[i], tc.want[i], tc.reason)
			}
		}
	}
}

// TestLossChart checks the losses-per-second SVG.
func TestLossChart(t *testing.T) {
	for _, tc := range []struct {
		name          string
		main, foreign []int
		bars          int
		foreignBars   int
		reason        string
	}{
		{"no records", nil, nil, 0, 0, "no chart without a second to draw"},
		{"nothing lost", []int{0, 0, 0}, nil, 0, 0, "an empty chart, no bar"},
		{"main losses", []int{0, 3, 1, 0}, nil, 2, 0, "one bar per second with losses"},
		{"mixed", []int{1, 0}, []int{0, 2}, 2, 1, "foreign jobs' bars beside the main ones (IN-50)"},
	} {
		svg := string(lossChart(tc.main, tc.foreign))
		if (svg == "") != (len(tc.main) == 0 && len(tc.foreign) == 0) {
			t.Errorf("%s: chart %q: %s", tc.name, svg, tc.reason)
			continue
		}
		if n := strings.Count(svg, "<title>second "); n != tc.bars {
			t.Errorf("%s: %d bars, want %d: %s", tc.name, n, tc.bars, tc.reason)
		}
		if n := strings.Count(svg, "foreign jobs lost"); n != tc.foreignBars {
			t.Errorf("%s: %d foreign bars, want %d: %s", tc.name, n, tc.foreignBars, tc.reason)
		}
	}
}

// TestInfoRows checks that only the test information that is set is shown,
// under the keys of gbt_result.json.
func TestInfoRows(t *testing.T) {
	test := &gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModeOffline}, LossThreshold: 0.05, Info: gbtInfo}
	rows := infoRows(test)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Key] = r.Value
	}
	for _, tc := range []struct {
		key, want, reason string
	}{
		{"arrival", "GB/T 45087 arrival mode 4 (offline); no timeout", "the arrival of an offline test has no timeout (IN-51)"},
		{"loss_threshold", "5 %", "the permissible loss rate, a tester parameter (IN-79)"},
		{"test_info.org_name", "Example Lab", "a string field"},
		{"test_info.dataset_type", "fixed", "a coded field by its name"},
		{"test_info.framework.version", "v0.0.0-test", "a nested field under its dotted key"},
		{"test_info.servers[0].cpu.cores", "16", "a field of a list element"},
		{"test_info.precision", "FP32", "a precision list joined"},
		{"test_info.extra.dataset", "NullQSL", "a free-form extra field"},
		{"test_info.test_mode", "", "an unset coded field is left out"},
		{"test_info.node_count", "", "an unset number is left out"},
		{"scenario", "", "no scenario row without a scenario ID"},
	} {
		if got[tc.key] != tc.want {
			t.Errorf("%s = %q, want %q: %s", tc.key, got[tc.key], tc.want, tc.reason)
		}
	}
}

// TestGBTNeedsTest checks that a GB/T run without its test description is
// refused rather than shown without its verdict.
func TestGBTNeedsTest(t *testing.T) {
	r := gbtReport(RunSection{Name: "x", Result: singleStreamResult(t), GBT: &GBTRun{}})
	var buf bytes.Buffer
	if err := Write(&buf, r); err == nil || !strings.Contains(err.Error(), "test description") {
		t.Errorf("Write = %v, want an error naming the missing test description", err)
	}
}

// gbtGoldenReport is the GB/T golden page: a peak test that passes and a
// mixed test that fails, both with LoadGen's summary INVALID.
func gbtGoldenReport(t *testing.T) *Report {
	cases := gbtCases()
	return gbtReport(gbtScenario(t, cases[2]), gbtScenario(t, cases[5]))
}

func TestGBTGolden(t *testing.T) {
	out := render(t, gbtGoldenReport(t))
	golden.Check(t, gbtGoldenPath, elideAssets(out))
}

func TestGBTWriteIsDeterministic(t *testing.T) {
	a := render(t, gbtGoldenReport(t))
	b := render(t, gbtGoldenReport(t))
	if !bytes.Equal(a, b) {
		t.Fatal("two reports of the same fake-clock GB/T runs differ")
	}
}

// TestMLPerfScenarioUnchanged checks that a scenario without GBT keeps
// LoadGen's verdict and recommendations (the golden file checks the rest).
func TestMLPerfScenarioUnchanged(t *testing.T) {
	page := string(render(t, &Report{Runs: []RunSection{{Name: "server", Result: serverResult(t)}}}))
	for _, want := range []string{`<span class="badge invalid">INVALID</span>`, "Reduce target QPS to improve latency.", "<h3>Checks</h3>"} {
		if !strings.Contains(page, want) {
			t.Errorf("MLPerf page lacks %q", want)
		}
	}
	if strings.Contains(page, "GB/T") {
		t.Error("an MLPerf page mentions GB/T")
	}
}
