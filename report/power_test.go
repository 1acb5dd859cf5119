package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
	"aimeter/internal/golden"
)

// powerFixture is a run's power over a pass of endNs: a CPU package at
// 100 W rising to 150 W, read every second from a 2 s warm-up that ended
// 1 s before the pass until 1 s after it; a GPU at 200 W with one missed
// read; the warm-up, the pass and its power window as phases.
func powerFixture(endNs int64) *Power {
	p := &Power{Gaps: 1, Note: "nvml node-1/gpu0: readings cover 90.0 % of the window"}
	cpu := PowerSeries{Label: "rapl node-1/package-0"}
	gpu := PowerSeries{Label: "nvml node-1/gpu0 (from its energy counter)"}
	for t := int64(-3e9); t <= endNs+1e9; t += 1e9 {
		cpu.TimesNs = append(cpu.TimesNs, t)
		cpu.Watts = append(cpu.Watts, 100+50*float64(t+3e9)/float64(endNs+4e9))
		gpu.TimesNs = append(gpu.TimesNs, t)
		w := 200.0
		if t == 0 {
			w = math.NaN()
		}
		gpu.Watts = append(gpu.Watts, w)
	}
	p.Series = []PowerSeries{cpu, gpu}
	e := func(v float64) *float64 { return &v }
	p.Phases = []PowerPhase{
		{Name: "warm-up", FromNs: -3e9, ToNs: -1e9, EnergyJ: e(600), AvgW: e(300), PeakW: e(305), Coverage: 1, JPerSample: e(6)},
		{Name: "performance", FromNs: 0, ToNs: endNs, EnergyJ: e(3000), AvgW: e(320), PeakW: e(350), Coverage: 0.9, Note: "readings cover 90.0 % of the phase (< 95 %): no energy per sample or token"},
		{Name: "mlperf-power-window", FromNs: 0, ToNs: endNs * 9 / 10, EnergyJ: e(2800), AvgW: e(321), PeakW: e(350), Coverage: 1, JPerSample: e(0.25), JPerToken: e(0.0125)},
	}
	return p
}

// The power chart and table, checked against a golden file (go test
// ./report -run TestPowerGolden -update rewrites it), and what must be in
// them whatever the layout.
func TestPowerGolden(t *testing.T) {
	v := buildPower(powerFixture(10e9), 10e9)
	if v == nil || v.SVG == "" {
		t.Fatal("no chart")
	}
	svg := string(v.SVG)
	// The GPU's missed read at 0 s breaks its line in two.
	if n := strings.Count(svg, `class="power-line"`); n != 3 {
		t.Errorf("%d polylines, want 3 (the CPU in one, the GPU in two around its gap)", n)
	}
	for _, ph := range []string{"warm-up", "performance", "mlperf-power-window"} {
		if !strings.Contains(svg, `data-phase="`+ph+`"`) {
			t.Errorf("phase %s is not shaded", ph)
		}
	}
	if !strings.Contains(svg, `class="power-zero"`) || !strings.Contains(svg, ">-3.000 s</text>") {
		t.Error("a chart that starts before the pass (the warm-up) marks 0 s and starts at -3 s")
	}
	if len(v.Table.Rows) != 3 || v.Table.Rows[2][8] != "0.0125 J" || v.Table.Rows[1][7] != "–" {
		t.Errorf("table %q", v.Table.Rows)
	}
	if len(v.Notes) != 3 || !strings.Contains(v.Notes[2], "1 reads gave nothing") {
		t.Errorf("notes %q", v.Notes)
	}
	golden.Check(t, "testdata/power.golden.svg", []byte(svg+"\n"))

	if buildPower(nil, 1) != nil {
		t.Error("no power made a view")
	}
	if v := buildPower(&Power{}, 0); v == nil || v.SVG != "" {
		t.Errorf("power without series or time drew %+v", v)
	}
}

// The power section in a real browser: the chart is drawn under the
// timeline charts with a size, its lines and phases are in the document,
// the table is visible, and the page logs no error.
func TestBrowserPowerChart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	res := offlineResult(t)
	end := res.Passes[res.ReportedPass()].EndNs
	r := &Report{Title: "power", Generated: fixedTime, System: fixedSystem,
		Runs: []RunSection{{Name: "batching SUT Offline", Result: res, Power: powerFixture(end)}}}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, render(t, r), 0o644); err != nil {
		t.Fatal(err)
	}
	run := openInBrowser(t, page, "")
	for _, p := range run.problems {
		t.Errorf("page: %s", p)
	}
	if !strings.Contains(run.text, "Power and energy") || !strings.Contains(run.text, "mlperf-power-window") {
		t.Errorf("the power section is not visible:\n%s", run.text)
	}
	ctx := browsertest.Context(t, 30*time.Second)
	var seen struct {
		W, H, Lines, Phases float64
		BelowTimeline       bool
	}
	js := `(() => {
	  const svg = document.querySelector('svg.power-chart');
	  if (!svg) return {W: 0, H: 0, Lines: 0, Phases: 0, BelowTimeline: false};
	  const r = svg.getBoundingClientRect();
	  const tl = document.querySelector('[id$="-throughput"]');
	  return {W: r.width, H: r.height, Lines: svg.querySelectorAll('polyline.power-line').length,
	    Phases: svg.querySelectorAll('rect.power-phase').length,
	    BelowTimeline: !!tl && tl.getBoundingClientRect().bottom <= r.top};
	})()`
	if err := chromedp.Run(ctx, chromedp.Navigate("file://"+page), chromedp.Evaluate(js, &seen)); err != nil {
		t.Fatal(err)
	}
	if seen.W <= 0 || seen.H <= 0 || seen.Lines != 2 || seen.Phases != 3 || !seen.BelowTimeline {
		t.Errorf("the browser shows the power chart as %+v: want a size, 2 lines (the pass is shorter than a period: the GPU's missed read at 0 s ends its line, each device has one), 3 phases, under the timeline", seen)
	}
}
