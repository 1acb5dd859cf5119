package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepRateSearch runs `aimeter sweep --max-rate` against `aimeter
// serve openai`: under a TTFT bound the server cannot meet (1 ms; it takes
// 5 ms) the first probe fails, and the command says so with exit 3; its
// page, rate-search.html, comes out the same from `aimeter report`. Bad
// combinations of flags are refused before any probe, naming the flag.
func TestSweepRateSearch(t *testing.T) {
	url := startServeOpenAI(t, "--ttft", "5ms", "--tpot", "1ms")
	dir := t.TempDir()
	out := filepath.Join(dir, "rates")
	res := runCLI(t, dir, "sweep", "-q", "--sut", "openai", "--url", url, "--qsl-size", "16", "--output-tokens", "4", "--output-dir", out,
		"--set", "min_duration=300", "--set", "min_query_count=4", "--slo", "ttft=1ms", "--goodput-target", "0.9", "--min-rate", "5", "--max-rate", "20")
	// Nothing met the target: the console, the exit message, the page and
	// rate-search.json say so with the bound that failed (TTFT), never 0.
	const none = "no request rate from 5 to 20 requests/s met the goodput target 0.9: TTFT p90 "
	if res.code != ExitInvalid || !strings.Contains(res.stderr, none) || !strings.Contains(res.stderr, " ms > 1 ms (") ||
		!strings.Contains(res.stdout, "Goodput search over request rate: "+none) || !strings.Contains(res.stdout, "(stop: none)") || !strings.Contains(res.stdout, "rate-search.json") {
		t.Errorf("an SLO no rate meets: %v", res)
	}
	if data, err := os.ReadFile(filepath.Join(out, "rate-search.json")); err != nil || !strings.Contains(string(data), `"best_qps": null`) || !strings.Contains(string(data), `"bound": "TTFT"`) {
		t.Errorf("rate-search.json of a search that met nothing: %v\n%s", err, data)
	}
	// The search wrote its page; `aimeter report` writes it again from
	// rate-search.json, byte for byte, and ends as the search did.
	pagePath := filepath.Join(out, "rate-search.html")
	page, err := os.ReadFile(pagePath)
	if err != nil || !strings.Contains(string(page), "N"+none[1:]) {
		t.Fatalf("the search's page: %v", err)
	}
	if err := os.Remove(pagePath); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, dir, "report", out)
	if again, err := os.ReadFile(pagePath); err != nil || !bytes.Equal(again, page) || res.code != ExitInvalid ||
		!strings.Contains(res.stderr, "regenerated rate-search.html") || !strings.Contains(res.stdout, none) {
		t.Errorf("aimeter report on the search: %v; page the same: %v (%v)", res, bytes.Equal(again, page), err)
	}
	if res := runCLI(t, dir, "report", "--output-dir", filepath.Join(dir, "elsewhere"), out); res.code != ExitUsage || !strings.Contains(res.stderr, "--output-dir with a rate search") {
		t.Errorf("aimeter report --output-dir on a search: %v", res)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-rate", "10"}, "needs --slo and --goodput-target"},
		{[]string{"--max-rate", "10", "--slo", "ttft=1s", "--goodput-target", "0.9", "--points", "1"}, "--points does not apply to a search over request rate"},
		{[]string{"--max-rate", "10", "--slo", "ttft=1s", "--goodput-target", "0.9", "--scenario", "Offline"}, "--scenario Offline"},
		{[]string{"--max-rate", "10", "--slo", "ttft=1s", "--goodput-target", "0.9", "--min-rate", "20"}, "search maximum 10 requests/s"},
	} {
		res := runCLI(t, dir, append([]string{"sweep", "--output-dir", filepath.Join(t.TempDir(), "s")}, c.args...)...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("sweep %v: exit %d, stderr %q; want exit 2 naming %q", c.args, res.code, res.stderr, c.want)
		}
	}
}
