package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
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
