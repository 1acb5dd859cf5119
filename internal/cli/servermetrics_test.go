package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/internal/browsertest"
	"aimeter/scrape"
)

// TestServerMetricsOverSocket runs aimeter against `aimeter serve openai`
// over a real socket and checks that the server's /metrics is scraped by
// default into the bundle, drawn in report.html, and regenerated the same
// by `aimeter report`; then that a dead endpoint named with
// --server-metrics is a recorded gap, with a warning, and no lost result.
// The runs are short: their verdict (early stopping needs more queries
// than 2 s give) is not what is tested, so VALID and INVALID both pass.
func TestServerMetricsOverSocket(t *testing.T) {
	url := startServeOpenAI(t, "--ttft", "20ms", "--tpot", "5ms", "--output-tokens", "8")
	// Eight requests kept in flight for 2 s (about 55 ms each): the
	// in-flight steady window holds hundreds of them over some 36 mean
	// latencies, above the minimum a window must hold, so it is shaded; the
	// super-pass one (600 s at least) is not found.
	base := []string{"run", "-q", "--sut", "openai", "--url", url, "--concurrency", "8", "--qsl-size", "16", "--input-tokens", "8", "--output-tokens", "8",
		"--set", "min_duration=2000", "--set", "min_query_count=40", "--server-metrics-interval", "200ms"}

	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, "", append(base, "--output-dir", out)...)
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	m := b.ServerMetrics
	if m == nil {
		t.Fatalf("no server metrics in the bundle:\n%v", res)
	}
	if e, ok := b.Manifest.Entry(bundle.ServerMetricsFile); !ok || e.Role != bundle.Raw {
		t.Errorf("manifest entry of %s: %+v %v", bundle.ServerMetricsFile, e, ok)
	}
	if len(m.Targets) != 1 || m.Targets[0] != url+"/metrics" || m.IntervalNs != 200e6 {
		t.Errorf("targets %v, interval %d", m.Targets, m.IntervalNs)
	}
	// A 2 s run scraped every 200 ms: at least 5 scrapes, whatever the
	// machine's load, and none failed against a live server.
	if len(m.Scrapes) < 5 {
		t.Errorf("%d scrapes", len(m.Scrapes))
	}
	for _, s := range m.Scrapes {
		if s.Error != "" {
			t.Errorf("scrape at %d ns failed: %s", s.TimeNs, s.Error)
		}
	}
	// The server saw the run's requests: its counter at the last scrape
	// is at least the requests completed before that scrape began, and
	// its running requests were drawn.
	var last float64
	for _, x := range m.Scrapes[len(m.Scrapes)-1].Samples {
		if x.Name == "vllm:request_success_total" {
			last = x.Value
		}
	}
	if last == 0 {
		t.Error("the server's request counter is 0 at the last scrape")
	}
	if got := scrape.Known(m); len(got) < 2 || got[0].Quantity != scrape.Running {
		t.Errorf("known series: %+v", got)
	}
	html := readFileT(t, filepath.Join(out, "report.html"))
	for _, want := range []string{"Server metrics", `class="server-chart"`, "vllm:num_requests_running", url + "/metrics",
		"Steady state", derived.SuperPassLabel, derived.InFlightLabel, "TPOT p90"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	checkReportInBrowser(t, filepath.Join(out, "report.html"), inFlightFound(t, out))

	// report.html is a function of the bundle.
	if again := runCLI(t, "", "report", out); again.code != res.code {
		t.Fatalf("aimeter report: %v", again)
	}
	if html2 := readFileT(t, filepath.Join(out, "report.html")); html2 != html {
		t.Error("aimeter report made another report.html from the same bundle")
	}

	// A dead endpoint beside the live one: gaps, a warning, the result kept.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	out2 := filepath.Join(t.TempDir(), "out")
	res = runCLI(t, "", append(base, "--output-dir", out2, "--server-metrics", url+"/metrics", "--server-metrics", dead)...)
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	if !strings.Contains(res.stderr, "failed (recorded as gaps") {
		t.Errorf("no warning of the gaps:\n%v", res)
	}
	b, err = bundle.Read(out2)
	if err != nil {
		t.Fatal(err)
	}
	gaps, good := 0, 0
	for _, s := range b.ServerMetrics.Scrapes {
		switch {
		case s.Target == 1 && s.Error != "":
			gaps++
		case s.Target == 0 && s.Error == "":
			good++
		}
	}
	if gaps == 0 || good == 0 {
		t.Errorf("%d gaps of the dead endpoint, %d good scrapes of the live one", gaps, good)
	}
	if b.Result.Summary == nil || b.Result.RecordCount() == 0 {
		t.Error("the run's result was lost")
	}

	// --no-server-metrics: no file.
	out3 := filepath.Join(t.TempDir(), "out")
	if res := runCLI(t, "", append(base, "--output-dir", out3, "--no-server-metrics")...); res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	if _, err := os.Stat(filepath.Join(out3, bundle.ServerMetricsFile)); !os.IsNotExist(err) {
		t.Errorf("%s with --no-server-metrics: %v", bundle.ServerMetricsFile, err)
	}
}

// TestServerMetricsFlagErrors: bad server-metrics flags are refused before
// the run (exit 2), naming the flag.
func TestServerMetricsFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		why  string
		args []string
		want string
	}{
		{"not an http URL", []string{"--sut", "openai", "--url", "http://127.0.0.1:1", "--server-metrics", "ftp://h/metrics"}, "--server-metrics: scrape: metrics endpoint 1"},
		{"both on and off", []string{"--sut", "openai", "--url", "http://127.0.0.1:1", "--server-metrics", "http://h/metrics", "--no-server-metrics"}, "give one"},
		{"an interval too short", []string{"--sut", "openai", "--url", "http://127.0.0.1:1", "--server-metrics-interval", "1ms"}, "--server-metrics-interval"},
		{"an in-process SUT has no server", []string{"--sut", "null", "--server-metrics", "http://h/metrics"}, "--server-metrics applies only to a network SUT"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", filepath.Join(t.TempDir(), "o")}, tc.args...)...)
			if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%v", res.code, ExitUsage, tc.want, res)
			}
		})
	}
}

// checkReportInBrowser opens a run's report.html in headless Chromium (as
// report/browser_test.go does) and checks that the page script draws every
// chart without an error, shades the in-flight steady window (when
// result.json found it) on both
// timeline charts (the run is too short for a super-pass window: Endpoints'
// 600 s floor), and that the server-metrics charts and the steady-state
// table are shown. It skips without a browser.
func checkReportInBrowser(t *testing.T, file string, inFlight bool) {
	t.Helper()
	ctx := browsertest.Context(t, 60*time.Second)
	problems := browsertest.WatchProblems(ctx)
	var want, rendered, text string
	var windows []string
	var serverCharts int
	err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+file),
		chromedp.Poll(`document.body.dataset.rendered !== undefined`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`document.body.dataset.charts || ""`, &want),
		chromedp.Evaluate(`document.body.dataset.rendered`, &rendered),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".chart .uplot")).filter(function (u) { return /-(latency|throughput)$/.test(u.parentElement.id); }).map(function (u) { return u.dataset.windows || ""; })`, &windows),
		chromedp.Evaluate(`document.querySelectorAll("svg.server-chart").length`, &serverCharts),
		chromedp.Evaluate(`document.body.innerText`, &text),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if p := problems.List(); len(p) > 0 {
		t.Errorf("page problems: %q", p)
	}
	if want == "" || rendered != want {
		t.Errorf("rendered %q charts of %q", rendered, want)
	}
	// The in-flight window holds the minimum on a quiet machine; a
	// loaded one (-race on 2 cores) may keep fewer requests in flight, and
	// then the window is not found and nothing is shaded: the page must
	// say what result.json says.
	shade := "0"
	if inFlight {
		shade = "1"
	}
	if len(windows) != 2 || windows[0] != shade || windows[1] != shade {
		t.Errorf("steady windows shaded on the latency and throughput charts: %q, want %s each (in-flight window found: %v)", windows, shade, inFlight)
	}
	if serverCharts < 2 {
		t.Errorf("%d server-metrics charts, want running and waiting requests at least", serverCharts)
	}
	for _, w := range []string{"Steady state", "Super-pass window (MLPerf Endpoints): not found", "In-flight window", "Server metrics"} {
		if !strings.Contains(text, w) {
			t.Errorf("page text lacks %q", w)
		}
	}
}

// inFlightFound reads whether the bundle in dir found its in-flight
// steady window (result.json's steady_state.windows).
func inFlightFound(t *testing.T, dir string) bool {
	t.Helper()
	var doc struct {
		Steady struct {
			Windows []struct {
				Label string `json:"label"`
				Found bool   `json:"found"`
			} `json:"windows"`
		} `json:"steady_state"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(dir, "result.json"))), &doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range doc.Steady.Windows {
		if w.Label == derived.InFlightLabel {
			return w.Found
		}
	}
	t.Fatalf("result.json has no %s window", derived.InFlightLabel)
	return false
}
