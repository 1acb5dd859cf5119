package report

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
)

// TestBrowserRendersTrainingPage opens the training page in headless
// Chromium and checks that both inline SVG charts are laid out with a size,
// that every bar and phase is drawn inside its chart, and that the visible
// text has no float expansions or e-notation. Set
// AIMETER_TRAINING_SCREENSHOT=file.png to keep a full-page screenshot.
func TestBrowserRendersTrainingPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	page := writePage(t, "report.html", func(w io.Writer) error { return WriteTraining(w, trainingFixture(t)) })
	bctx := browsertest.Context(t, 30*time.Second)
	type svgSeen struct {
		Class     string
		W, H      float64
		Shapes    int
		OutsideOf int // shapes whose box lies outside the svg's box
	}
	var svgs []svgSeen
	var text string
	var png []byte
	actions := []chromedp.Action{
		chromedp.Navigate("file://" + page),
		chromedp.WaitVisible("body", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg")).map(function (s) {
			var r = s.getBoundingClientRect();
			var shapes = Array.from(s.querySelectorAll("rect, circle"));
			var out = shapes.filter(function (e) {
				var b = e.getBoundingClientRect();
				return b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5;
			}).length;
			return {Class: s.getAttribute("class"), W: r.width, H: r.height, Shapes: shapes.length, OutsideOf: out};
		})`, &svgs),
		chromedp.Evaluate(`document.querySelectorAll("details").forEach(function (d) { d.open = true; }); document.body.innerText`, &text),
	}
	shot := os.Getenv("AIMETER_TRAINING_SCREENSHOT")
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
	if len(svgs) != 2 {
		t.Fatalf("%d SVG charts, want the epoch chart and the timeline: %+v", len(svgs), svgs)
	}
	for _, s := range svgs {
		if s.W < 100 || s.H < 100 || s.Shapes < 3 || s.OutsideOf > 0 {
			t.Errorf("chart %s: %gx%g px, %d shapes, %d outside it", s.Class, s.W, s.H, s.Shapes, s.OutsideOf)
		}
	}
	for _, p := range numberProblems(text) {
		t.Errorf("badly formatted number: %s", p)
	}
}
