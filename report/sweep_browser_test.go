package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
)

// TestBrowserRendersSweepPage opens a page of two sweeps side by side in
// headless Chromium and checks that each of the four SVG charts is laid
// out with a size, that every measured point is drawn as a circle inside
// its chart, that every curve is a path of horizontal and vertical moves
// only (a step function, nothing interpolated), and that the visible
// text has no float expansions or e-notation. Set
// AIMETER_SWEEP_SCREENSHOT=file.png to keep a full-page screenshot.
func TestBrowserRendersSweepPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	page := writePage(t, "sweep.html", func(w io.Writer) error { return WriteSweeps(w, sweepFixture()) })
	bctx := browsertest.Context(t, 30*time.Second)
	type svgSeen struct {
		Class     string
		W, H      float64
		Circles   int
		Paths     int
		Diagonal  int // path commands other than M, H and V
		OutsideOf int // circles whose box lies outside the svg's box
	}
	var svgs []svgSeen
	var text string
	var png []byte
	actions := []chromedp.Action{
		chromedp.Navigate("file://" + page),
		chromedp.WaitVisible("body", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg")).map(function (s) {
			var r = s.getBoundingClientRect();
			var circles = Array.from(s.querySelectorAll("circle"));
			var out = circles.filter(function (e) {
				var b = e.getBoundingClientRect();
				return b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5;
			}).length;
			var paths = Array.from(s.querySelectorAll("path.step"));
			var diagonal = paths.filter(function (p) { return /[^MHV0-9. -]/.test(p.getAttribute("d")); }).length;
			return {Class: s.getAttribute("class"), W: r.width, H: r.height, Circles: circles.length, Paths: paths.length, Diagonal: diagonal, OutsideOf: out};
		})`, &svgs),
		chromedp.Evaluate(`document.body.innerText`, &text),
	}
	shot := os.Getenv("AIMETER_SWEEP_SCREENSHOT")
	if shot != "" {
		actions = append(actions, chromedp.FullScreenshot(&png, 100))
	}
	if err := chromedp.Run(bctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
	if shot != "" {
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Error(err)
		}
	}
	// 4 + 4 points in the Pareto and concurrency charts; goodput only for
	// the second sweep's 4.
	want := map[string][2]int{"pareto": {8, 2}, "tps-concurrency": {8, 2}, "ttft-concurrency": {8, 2}, "goodput-concurrency": {4, 1}}
	if len(svgs) != len(want) {
		t.Fatalf("%d SVG charts, want %d: %+v", len(svgs), len(want), svgs)
	}
	for _, s := range svgs {
		w := want[s.Class]
		if s.W < 100 || s.H < 100 || s.Circles != w[0] || s.Paths != w[1] || s.Diagonal > 0 || s.OutsideOf > 0 {
			t.Errorf("chart %s: %gx%g px, %d circles and %d curves (want %d and %d), %d not step functions, %d points outside it",
				s.Class, s.W, s.H, s.Circles, s.Paths, w[0], w[1], s.Diagonal, s.OutsideOf)
		}
	}
	for _, p := range numberProblems(text) {
		t.Errorf("badly formatted number: %s", p)
	}
}

// writePage writes the page that write makes to a file name in a
// directory of t's own and returns its path, for a browser to open.
func writePage(t *testing.T, name string, write func(io.Writer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return page
}

// TestBrowserParetoReadable opens the Pareto page of the sweep
// (points 1, 2, 4 and 8 between 157 and 199 tokens/s per user, and an
// Offline point) in headless Chromium at 1400 × 900 px and checks, from
// the boxes the browser laid out: the chart is at least 900 px wide; the
// points spread over most of the plot's width (not 3 % of it, as on an
// axis pinned at 0); each axis has at least 4 ticks; every point is
// labelled with its concurrency, the Offline point included; and no two
// point markers, no two labels, and no label and marker overlap. Set
// AIMETER_PARETO_SCREENSHOT=file.png to keep a screenshot.
func TestBrowserParetoReadable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	page := writePage(t, "sweep.html", func(w io.Writer) error { return WriteSweeps(w, paretoFixture()) })
	bctx := browsertest.Context(t, 30*time.Second)
	type rect struct{ Left, Top, Right, Bottom float64 }
	var seen struct {
		SVG, Frame     rect
		Markers        []rect
		Labels         []rect
		Texts          []string
		XTicks, YTicks int
	}
	var png []byte
	actions := []chromedp.Action{
		chromedp.EmulateViewport(1400, 900),
		chromedp.Navigate("file://" + page),
		chromedp.WaitVisible("svg.pareto", chromedp.ByQuery),
		chromedp.Evaluate(`(function () {
			var s = document.querySelector("svg.pareto");
			function box(e) { var r = e.getBoundingClientRect(); return {Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom}; }
			var labels = Array.from(s.querySelectorAll("text.point-label"));
			return {SVG: box(s), Frame: box(s.querySelector("rect")),
				Markers: Array.from(s.querySelectorAll(".point")).map(box),
				Labels: labels.map(box), Texts: labels.map(function (e) { return e.textContent; }),
				XTicks: s.querySelectorAll("text.x-tick").length, YTicks: s.querySelectorAll("text.y-tick").length};
		})()`, &seen),
	}
	shot := os.Getenv("AIMETER_PARETO_SCREENSHOT")
	if shot != "" {
		actions = append(actions, chromedp.CaptureScreenshot(&png))
	}
	if err := chromedp.Run(bctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
	if shot != "" {
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Error(err)
		}
	}
	if w := seen.SVG.Right - seen.SVG.Left; w < 900 {
		t.Errorf("the Pareto chart is %g px wide at 1400 px, want at least 900", w)
	}
	if seen.XTicks < 4 || seen.YTicks < 4 {
		t.Errorf("%d x ticks and %d y ticks, want at least 4 each", seen.XTicks, seen.YTicks)
	}
	texts := slices.Clone(seen.Texts)
	slices.Sort(texts)
	if want := []string{"Offline", "c=1", "c=2", "c=4", "c=8"}; !slices.Equal(texts, want) {
		t.Errorf("labels %v, want %v", texts, want)
	}
	if len(seen.Markers) != 5 {
		t.Fatalf("%d point markers, want 5 (4 points and the Offline point)", len(seen.Markers))
	}
	lo, hi := seen.Markers[0].Left, seen.Markers[0].Right
	for _, m := range seen.Markers {
		lo, hi = min(lo, m.Left), max(hi, m.Right)
	}
	if frame := seen.Frame.Right - seen.Frame.Left; hi-lo < 0.6*frame {
		t.Errorf("the points span %g px of the plot's %g: want most of its width", hi-lo, frame)
	}
	overlap := func(a, b rect) bool {
		return a.Left < b.Right && b.Left < a.Right && a.Top < b.Bottom && b.Top < a.Bottom
	}
	for i, a := range seen.Markers {
		for j, b := range seen.Markers[i+1:] {
			if overlap(a, b) {
				t.Errorf("markers %d and %d overlap: %+v, %+v", i, i+1+j, a, b)
			}
		}
	}
	for i, a := range seen.Labels {
		if a.Left < seen.SVG.Left || a.Right > seen.SVG.Right || a.Top < seen.SVG.Top || a.Bottom > seen.SVG.Bottom {
			t.Errorf("label %q outside the chart: %+v", seen.Texts[i], a)
		}
		for j, b := range seen.Labels[i+1:] {
			if overlap(a, b) {
				t.Errorf("labels %q and %q overlap", seen.Texts[i], seen.Texts[i+1+j])
			}
		}
		for _, m := range seen.Markers {
			if overlap(a, m) {
				t.Errorf("label %q covers a point marker", seen.Texts[i])
			}
		}
	}
}
