package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
)

// pageRun is what openInBrowser saw of a page.
type pageRun struct {
	problems []string         // console errors and uncaught exceptions
	want     string           // body data-charts: the charts the page should draw
	rendered string           // body data-rendered, set by the page script
	canvases []map[string]any // id, w, h of the canvas in each .chart element
	charts   []chartSeen      // what each .chart element shows
	text     string           // the page's visible text, every <details> open
	headline []string         // the text of every .headline .value
	sections []sectionSeen    // what each scenario section shows
	overview []string         // the verdict badge of each overview row
}

// sectionSeen is what the browser shows of one scenario section: the badge
// of its heading, the badges of its headline lines and its visible text.
type sectionSeen struct {
	ID        string
	Badge     string
	Headlines []string
	Text      string
}

// box is a rectangle in CSS pixels from the top left of a chart's canvas.
type box struct {
	X, Y, W, H float64
	Text       string
}

// chartSeen is what the browser shows of one chart: its marker labels and
// lines as the page script drew them (data-labels, data-lines), the size of
// its canvas in CSS pixels, and its legend's values with no mouse over it.
type chartSeen struct {
	ID     string
	Labels []box
	Lines  []box
	W, H   float64
	Legend []string
}

// seeChartsJS collects a chartSeen for every .chart element.
const seeChartsJS = `Array.from(document.querySelectorAll(".chart")).map(function (el) {
	var c = el.querySelector("canvas");
	var r = c ? c.getBoundingClientRect() : {width: 0, height: 0};
	var boxes = function (s) {
		return JSON.parse(s || "[]").map(function (b) { return {X: b.x, Y: b.y, W: b.w, H: b.h, Text: b.text || ""}; });
	};
	return {
		ID: el.id, Labels: boxes(el.dataset.labels), Lines: boxes(el.dataset.lines), W: r.width, H: r.height,
		Legend: Array.from(el.querySelectorAll(".u-legend .u-value")).map(function (v) { return v.textContent; })
	};
})`

// openInBrowser loads the file in headless Chromium (fresh profile, no
// network services), waits for the page script to finish and reports what
// it saw. It skips the test when no browser can be found. If shot is not
// empty, a full-page PNG screenshot is written there.
func openInBrowser(t *testing.T, file, shot string) pageRun {
	t.Helper()
	bctx := browsertest.Context(t, 30*time.Second)
	var err error

	var res pageRun
	problems := browsertest.WatchProblems(bctx)

	var canvases []map[string]any
	actions := []chromedp.Action{
		chromedp.Navigate("file://" + file),
		chromedp.WaitVisible("body", chromedp.ByQuery),
		chromedp.Poll(`document.body.dataset.rendered !== undefined`, nil, chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Evaluate(`document.body.dataset.charts || ""`, &res.want),
		chromedp.Evaluate(`document.body.dataset.rendered`, &res.rendered),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".chart")).map(function (el) {
			var c = el.querySelector("canvas");
			return {id: el.id, w: c ? c.width : 0, h: c ? c.height : 0};
		})`, &canvases),
		chromedp.Evaluate(seeChartsJS, &res.charts),
		chromedp.Evaluate(`document.querySelectorAll("details").forEach(function (d) { d.open = true; }); document.body.innerText`, &res.text),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".headline .value")).map(function (v) { return v.textContent; })`, &res.headline),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("section.scenario")).map(function (s) {
			var b = s.querySelector("h2 .badge");
			return {ID: s.id, Badge: b ? b.innerText : "", Text: s.innerText,
				Headlines: Array.from(s.querySelectorAll(".headline .badge")).map(function (v) { return v.innerText; })};
		})`, &res.sections),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("table.overview tbody .badge")).map(function (v) { return v.innerText; })`, &res.overview),
	}
	var png []byte
	if shot != "" {
		actions = append(actions, chromedp.FullScreenshot(&png, 100)) // quality 100: a PNG, not a JPEG
	}
	start := time.Now()
	if err = chromedp.Run(bctx, actions...); err != nil {
		t.Fatalf("browser: %v (page problems so far: %q)", err, problems.List())
	}
	t.Logf("page script done in %v", time.Since(start).Round(time.Millisecond))
	if shot != "" {
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Error(err)
		}
	}
	res.canvases = canvases
	res.problems = problems.List()
	return res
}

// TestBrowserRendersCharts opens the report in headless Chromium and checks
// that the page script draws every chart, without console errors or uncaught
// exceptions; that no marker label overlaps another or lies on a marker line
// (Server runs VALID, INVALID far past the bound and INVALID just past it);
// that every legend shows a value before the mouse moves; and that the
// visible text has no float expansions or e-notation. Set
// AIMETER_REPORT_SCREENSHOT=file.png to keep a full-page screenshot.
func TestBrowserRendersCharts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, render(t, testReport(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := openInBrowser(t, page, os.Getenv("AIMETER_REPORT_SCREENSHOT"))
	for _, p := range run.problems {
		t.Errorf("page: %s", p)
	}
	n, _ := strconv.Atoi(run.want)
	if n != chartedScenarios*chartsPerScenario {
		t.Errorf("page expects %q charts, want %d", run.want, chartedScenarios*chartsPerScenario)
	}
	if run.rendered != run.want {
		t.Errorf("page script rendered %q charts, page has %q", run.rendered, run.want)
	}
	if len(run.canvases) != n {
		t.Errorf("%d chart elements, want %d", len(run.canvases), n)
	}
	for _, c := range run.canvases {
		if w, h := c["w"].(float64), c["h"].(float64); w <= 0 || h <= 0 {
			t.Errorf("chart %v has a %vx%v canvas", c["id"], w, h)
		}
	}

	// Marker labels: none overlaps another, none lies on a line. The Server
	// latency-over-time charts (INVALID far past the bound, VALID, INVALID
	// just past it) must each show the p99 and the bound labels.
	labelled := map[string]bool{}
	for _, c := range run.charts {
		for _, p := range labelProblems(c) {
			t.Error(p)
		}
		if len(c.Labels) > 0 {
			labelled[c.ID] = true
		}
		for i, v := range c.Legend {
			if v == "" || v == "—" || v == "--" {
				t.Errorf("%s: legend value %d reads %q with no mouse over the chart", c.ID, i, v)
			}
		}
	}
	for _, id := range []string{"s4-latency", "s5-latency", "s6-latency"} {
		i := slices.IndexFunc(run.charts, func(c chartSeen) bool { return c.ID == id })
		if i < 0 {
			t.Errorf("no chart %s", id)
			continue
		}
		var texts []string
		for _, l := range run.charts[i].Labels {
			texts = append(texts, l.Text)
		}
		if len(texts) != 2 || !strings.HasPrefix(texts[0], "p99 ") || !strings.HasPrefix(texts[1], "bound ") {
			t.Errorf("%s labels: %q, want the p99 and the bound", id, texts)
		}
	}
	if len(labelled) < 3*chartedScenarios { // histogram, CDF and latency charts
		t.Errorf("%d charts have marker labels, want %d", len(labelled), 3*chartedScenarios)
	}

	// Numbers formatted for people (digests, in the shard tables, are
	// hex, not numbers).
	for _, p := range numberProblems(hashRE.ReplaceAllString(run.text, "<hash>")) {
		t.Errorf("page text: %s", p)
	}
	for _, want := range []string{"86.57 %", "75.6954 %", "2,126 samples/s", "487.6543"} {
		if !strings.Contains(run.text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	if len(run.headline) == 0 {
		t.Error("no headline values")
	}
	for _, h := range run.headline {
		if !headlineRE.MatchString(h) {
			t.Errorf("headline value %q is not a number with a unit", h)
		}
	}
}

// TestBrowserHarnessSeesErrors checks that openInBrowser does report console
// errors and uncaught exceptions, so that a clean run means a clean page.
func TestBrowserHarnessSeesErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	page := filepath.Join(t.TempDir(), "bad.html")
	html := `<!DOCTYPE html><html><body><script>
console.error("deliberate", 42);
setTimeout(function () { document.body.dataset.rendered = "0"; }, 0);
null.boom();
</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	run := openInBrowser(t, page, "")
	all := strings.Join(run.problems, "\n")
	if len(run.problems) != 2 || !strings.Contains(all, "deliberate") || !strings.Contains(all, "uncaught exception") {
		t.Errorf("problems seen: %q, want the console error and the exception", run.problems)
	}
}

// labelProblems lists what is wrong with the marker labels of a chart: a
// label outside the canvas, two labels that overlap, or a label that lies on
// a marker line.
func labelProblems(c chartSeen) []string {
	var out []string
	overlap := func(a, b box) bool {
		return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
	}
	for i, a := range c.Labels {
		if a.X < 0 || a.Y < 0 || a.X+a.W > c.W || a.Y+a.H > c.H {
			out = append(out, fmt.Sprintf("%s: label %q at %+v lies outside the %vx%v canvas", c.ID, a.Text, a, c.W, c.H))
		}
		for _, b := range c.Labels[i+1:] {
			if overlap(a, b) {
				out = append(out, fmt.Sprintf("%s: labels %q %+v and %q %+v overlap", c.ID, a.Text, a, b.Text, b))
			}
		}
		for _, l := range c.Lines {
			if overlap(a, l) {
				out = append(out, fmt.Sprintf("%s: label %q %+v lies on the line %+v", c.ID, a.Text, a, l))
			}
		}
	}
	return out
}

// Number formats a reader should never see: a float's long expansion, and
// e-notation.
var (
	longFraction = regexp.MustCompile(`\d\.\d{7,}`)
	eNotation    = regexp.MustCompile(`\de[+-]?\d`)
	// headlineRE is a headline value: a grouped number, with its unit when
	// it has one (an mAP has none).
	headlineRE = regexp.MustCompile(`^-?\d{1,3}(,\d{3})*(\.\d{1,4})?( (ns|µs|ms|s|%|samples/s))?$`)
)

// numberProblems lists the badly formatted numbers in a page's visible text.
func numberProblems(text string) []string {
	var out []string
	for _, re := range []*regexp.Regexp{longFraction, eNotation} {
		for _, loc := range re.FindAllStringIndex(text, 5) {
			out = append(out, fmt.Sprintf("%q in %q", text[loc[0]:loc[1]], text[max(loc[0]-40, 0):min(loc[1]+40, len(text))]))
		}
	}
	return out
}

func TestLabelProblems(t *testing.T) {
	tests := []struct {
		reason string
		chart  chartSeen
		want   int
	}{
		{"labels apart, each beside its line, is fine",
			chartSeen{W: 500, H: 300, Labels: []box{{X: 400, Y: 10, W: 80, H: 15}, {X: 400, Y: 60, W: 80, H: 15}},
				Lines: []box{{X: 50, Y: 30, W: 440, H: 2}, {X: 50, Y: 80, W: 440, H: 2}}}, 0},
		{"p99 above its line and bound below its own, printed on top of each other",
			chartSeen{W: 500, H: 300, Labels: []box{{X: 400, Y: 100, W: 80, H: 15}, {X: 400, Y: 108, W: 80, H: 15}}}, 1},
		{"the p99 label sits on the bound line",
			chartSeen{W: 500, H: 300, Labels: []box{{X: 400, Y: 100, W: 80, H: 15}}, Lines: []box{{X: 50, Y: 110, W: 440, H: 2}}}, 1},
		{"a label cut off at the right edge",
			chartSeen{W: 500, H: 300, Labels: []box{{X: 450, Y: 10, W: 80, H: 15}}}, 1},
		{"boxes that only touch do not overlap",
			chartSeen{W: 500, H: 300, Labels: []box{{X: 10, Y: 10, W: 80, H: 15}, {X: 10, Y: 25, W: 80, H: 15}}}, 0},
	}
	for _, tt := range tests {
		if got := labelProblems(tt.chart); len(got) != tt.want {
			t.Errorf("%s: %d problems %q, want %d", tt.reason, len(got), got, tt.want)
		}
	}
}

func TestNumberProblems(t *testing.T) {
	tests := []struct {
		reason string
		text   string
		want   int
	}{
		{"formatted numbers", "top-1 accuracy 86.57 % (target 75.6954 %), 97,862 samples/s, 3.000 ms", 0},
		{"a float64 printed in full", "top-1 accuracy 86.57000000000001", 1},
		{"a target QPS printed in full", "target_qps 97862.09565041763", 1},
		{"e-notation from a chart legend", "max 1.234e+5", 1},
		{"long integers are raw ns or seeds, not floats", "2050000000 13281865557512327830", 0},
	}
	for _, tt := range tests {
		if got := numberProblems(tt.text); len(got) != tt.want {
			t.Errorf("%s: %d problems %q, want %d", tt.reason, len(got), got, tt.want)
		}
	}
}
