package report

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
)

// TestBrowserRendersRateSearchPage opens the rate search page in headless
// Chromium and checks that it loads without console errors or uncaught
// exceptions, that its chart is laid out with a size, that every probe is
// drawn as a circle inside the chart with the target and elected-rate
// lines, that the table has a row and a bundle link per probe, and that
// the visible text has no float expansions or e-notation. Set
// AIMETER_RATE_SEARCH_SCREENSHOT=file.png to keep a full-page screenshot.
func TestBrowserRendersRateSearchPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	page := writePage(t, "rate-search.html", func(w io.Writer) error { return WriteRateSearch(w, rateSearchFixture()) })
	bctx := browsertest.Context(t, 30*time.Second)
	problems := browsertest.WatchProblems(bctx)
	var seen struct {
		W, H    float64
		Circles int
		Outside int // circles whose box lies outside the svg's box
		Target  int
		Elected int
		Rows    int
		Links   []string
	}
	var text string
	var png []byte
	actions := []chromedp.Action{
		chromedp.Navigate("file://" + page),
		chromedp.WaitVisible("body", chromedp.ByQuery),
		chromedp.Evaluate(`(function () {
			var s = document.querySelector("svg.rate-goodput");
			var r = s.getBoundingClientRect();
			var circles = Array.from(s.querySelectorAll("circle.probe"));
			return {
				W: r.width, H: r.height, Circles: circles.length,
				Outside: circles.filter(function (e) {
					var b = e.getBoundingClientRect();
					return b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5;
				}).length,
				Target: s.querySelectorAll("line.target").length,
				Elected: s.querySelectorAll("line.elected").length,
				Rows: document.querySelectorAll("tbody tr").length,
				Links: Array.from(document.querySelectorAll("tbody a")).map(function (a) { return a.getAttribute("href"); })
			};
		})()`, &seen),
		chromedp.Evaluate(`document.body.innerText`, &text),
	}
	shot := os.Getenv("AIMETER_RATE_SEARCH_SCREENSHOT")
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
	for _, p := range problems.List() {
		t.Errorf("page problem: %s", p)
	}
	if seen.W < 100 || seen.H < 100 || seen.Circles != 7 || seen.Outside > 0 || seen.Target != 1 || seen.Elected != 1 {
		t.Errorf("chart %gx%g px, %d probes drawn (want 7), %d outside it, %d target and %d elected lines (want 1 each)",
			seen.W, seen.H, seen.Circles, seen.Outside, seen.Target, seen.Elected)
	}
	if seen.Rows != 7 || len(seen.Links) != 7 || seen.Links[0] != "probe01-q2/report.html" {
		t.Errorf("%d rows, links %q: want 7, the first probe01-q2/report.html", seen.Rows, seen.Links)
	}
	if !strings.Contains(text, "13 requests/s") {
		t.Errorf("the visible text does not give the elected rate")
	}
	for _, p := range numberProblems(text) {
		t.Errorf("badly formatted number: %s", p)
	}
}
