package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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
	browser := chromiumPath()
	if browser == "" {
		t.Skip("no Chromium found (install Debian's chromium or set $CHROMIUM)")
	}
	var buf bytes.Buffer
	if err := WriteTraining(&buf, trainingFixture(t)); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	profile, err := os.MkdirTemp("", "aimeter-training-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(browser), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 1000))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
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
