package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
)

// pageVerdicts is what a person sees of a one-run report: the verdict
// badge of the run's heading, its first headline badge, the overview
// row's badge, and the section's text.
type pageVerdicts struct {
	Heading, Headline, Overview, Text string
}

// seeVerdicts opens the report in headless Chromium and reads its verdicts.
func seeVerdicts(t *testing.T, page string) pageVerdicts {
	t.Helper()
	bctx := browsertest.Context(t, 60*time.Second)
	var v pageVerdicts
	err := chromedp.Run(bctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible("body", chromedp.ByQuery),
		chromedp.Poll(`document.body.dataset.rendered !== undefined`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`(function () {
			var s = document.querySelector("section.scenario");
			var text = function (el) { return el ? el.innerText.trim() : ""; };
			document.querySelectorAll("details").forEach(function (d) { d.open = true; });
			return {Heading: text(s && s.querySelector("h2 .badge")), Headline: text(s && s.querySelector(".headline .badge")),
				Overview: text(document.querySelector("table.overview tbody .badge")), Text: s ? s.innerText : ""};
		})()`, &v),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// TestGBTReportVerdictAgreesWithExitCode runs GB/T tests in arrival modes
// 2, 3 and 5 through the CLI and opens each report.html in Chromium: the
// page's verdict (heading, headline, overview) is the GB/T verdict that
// the console prints and the exit code gives, never LoadGen's INVALID with
// "Reduce target QPS" (which the page showed on a run that exited 0), and
// the MLPerf summary says LoadGen's verdict is not the test's.
func TestGBTReportVerdictAgreesWithExitCode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"mode 2, nothing lost", []string{"--arrival-mode", "2", "--lambda", "400", "--duration", "300ms"}, ExitOK},
		{"mode 2, every job past a 1 µs timeout", []string{"--arrival-mode", "2", "--lambda", "400", "--duration", "300ms", "--job-timeout", "1us"}, ExitInvalid},
		{"mode 3, peak", []string{"--arrival-mode", "3", "--lambda", "100", "--duration", "400ms", "--bursts", "1", "--burst-length", "100ms",
			"--burst-period", "10ms", "--burst-jobs", "3"}, ExitOK},
		{"mode 5, mixed", []string{"--arrival-mode", "5", "--lambda", "300", "--duration", "300ms", "--mixed-lambda", "50"}, ExitOK},
		{"mode 5, mixed, every job past a 1 µs timeout", []string{"--arrival-mode", "5", "--lambda", "300", "--duration", "300ms", "--mixed-lambda", "50",
			"--job-timeout", "1us"}, ExitInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			// min_query_count = 1: the duration ends the test (LoadGen's
			// default of 100 would lengthen it at these rates).
			r := runCLI(t, dir, append([]string{"run", "-q", "--sut", "null-async", "--set", "min_query_count=1", "--output-dir", out}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("want exit %d:\n%v", c.code, r)
			}
			want := "PASS"
			if c.code != ExitOK {
				want = "FAIL"
			}
			if !strings.Contains(r.stdout, "GB/T verdict: "+want) {
				t.Errorf("the console does not say GB/T verdict: %s:\n%s", want, r.stdout)
			}
			v := seeVerdicts(t, filepath.Join(out, "report.html"))
			if v.Heading != want || v.Headline != want || v.Overview != want {
				t.Errorf("the page says heading %q, headline %q, overview %q; the exit code says %s", v.Heading, v.Headline, v.Overview, want)
			}
			if strings.Contains(v.Text, "Reduce target QPS") {
				t.Error("the page gives LoadGen's \"Reduce target QPS\" as advice on a GB/T test")
			}
			summary := readFileT(t, filepath.Join(out, "mlperf_log_summary.txt"))
			if !strings.Contains(summary, "GB/T 45087 inference test") || !strings.Contains(summary, "is not the verdict") || !strings.Contains(summary, ": "+want+",") {
				t.Errorf("the summary does not say its GB/T verdict %s and that LoadGen's is not it:\n%s", want, summary)
			}
		})
	}
}
