package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds the browser for TestBrowserRendersCharts: $CHROMIUM,
// else Debian's /usr/bin/chromium, else chromium or google-chrome on $PATH.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// pageRun is what openInBrowser saw of a page.
type pageRun struct {
	problems []string         // console errors and uncaught exceptions
	want     string           // body data-charts: the charts the page should draw
	rendered string           // body data-rendered, set by the page script
	canvases []map[string]any // id, w, h of the canvas in each .chart element
}

// openInBrowser loads the file in headless Chromium (fresh profile, no
// network services), waits for the page script to finish and reports what
// it saw. It skips the test when no browser can be found. If shot is not
// empty, a full-page PNG screenshot is written there.
func openInBrowser(t *testing.T, file, shot string) pageRun {
	t.Helper()
	browser := chromiumPath()
	if browser == "" {
		t.Skip("no Chromium found (install Debian's chromium or set $CHROMIUM): the page was not checked in a browser")
	}
	// A fresh profile. Not t.TempDir: Chromium's helper processes may still
	// write to it for a moment after the browser exits, which would fail the
	// test in the cleanup.
	profile, err := os.MkdirTemp("", "aimeter-report-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if err := os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	var (
		mu  sync.Mutex
		res pageRun
	)
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += ": " + d.Exception.Description
			}
			res.problems = append(res.problems, fmt.Sprintf("uncaught exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.APITypeError && ev.Type != runtime.APITypeAssert {
				return
			}
			var args []string
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			res.problems = append(res.problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	})

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
	}
	var png []byte
	if shot != "" {
		actions = append(actions, chromedp.FullScreenshot(&png, 90))
	}
	start := time.Now()
	if err = chromedp.Run(bctx, actions...); err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("browser: %v (page problems so far: %q)", err, res.problems)
	}
	t.Logf("page script done in %v", time.Since(start).Round(time.Millisecond))
	if shot != "" {
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Error(err)
		}
	}
	res.canvases = canvases
	mu.Lock()
	defer mu.Unlock()
	res.problems = slices.Clone(res.problems)
	return res
}

// TestBrowserRendersCharts opens the report in headless Chromium and checks
// that the page script draws every chart, without console errors or uncaught
// exceptions. Set AIMETER_REPORT_SCREENSHOT=file.png to keep a screenshot.
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
