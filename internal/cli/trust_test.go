package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/derived"
)

// serverOf501 is an OpenAI-compatible server that lists one model and
// answers every completion with HTTP 501.
func serverOf501(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		http.Error(w, "not implemented", http.StatusNotImplemented)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestFailuresNeverCountAsCompletions: against a server that answers
// every request with HTTP 501 the run has no completed sample: no headline
// figure (a 0 would read as a result; the console says "--" and why, issue
// 39), an error rate of 100 %, no latency figures, exit 3, and
// none of LoadGen's advice on the load (on the old code it said "Completed
// samples per second: 3.03", "Performance constraints satisfied: Yes" and
// "TPOT p99 0 ns"). --json gives the same on stdout.
func TestFailuresNeverCountAsCompletions(t *testing.T) {
	url := serverOf501(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := runCLI(t, dir, "run", "-q", "--json", "--sut", "openai", "--url", url, "--set", "target_qps=50", "--duration", "1s",
		"--set", "min_query_count=1", "--output-dir", out)
	if r.code != ExitInvalid {
		t.Fatalf("want exit %d:\n%v", ExitInvalid, r)
	}
	var res derived.ResultJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not result.json: %v\n%s", err, r.stdout)
	}
	if res.Verdict.Pass || res.VerdictWord != "INVALID" || res.Samples.OK != 0 || res.Samples.Failed == 0 || res.Samples.ErrorRate != 1 {
		t.Errorf("result %+v: want INVALID, 0 ok, an error rate of 1", res)
	}
	if res.Headline != nil {
		t.Errorf("headline %+v: want none when no sample succeeded", res.Headline)
	}
	if len(res.Verdict.Reasons) == 0 || !strings.Contains(strings.Join(res.Verdict.Reasons, " "), "samples failed") {
		t.Errorf("reasons %q: want the failures", res.Verdict.Reasons)
	}
	if res.LatencyNs == nil || res.LatencyNs.Count != 0 || res.LatencyNs.Max != 0 {
		t.Errorf("latency %+v: a failure is no latency", res.LatencyNs)
	}
	if len(res.Errors) == 0 || !strings.HasPrefix(res.Errors[0].Category, "http") || !strings.Contains(res.Errors[0].Message, "501") {
		t.Errorf("errors %+v: want the HTTP 501s", res.Errors)
	}
	if res.Dir != out {
		t.Errorf("dir %q, want %q", res.Dir, out)
	}
	for _, no := range []string{"Reduce target QPS", "Performance constraints satisfied : Yes", "TTFT p99 0", "TPOT p99 0"} {
		if strings.Contains(r.stderr, no) {
			t.Errorf("the console says %q:\n%s", no, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "Completed samples per second : -- (no sample succeeded: ") || !strings.Contains(r.stderr, "samples failed") {
		t.Errorf("the console (stderr with --json) lacks the success throughput or the failures:\n%s", r.stderr)
	}
	// result.json in the bundle is the same, less the directory.
	stored := readFileT(t, filepath.Join(out, derived.ResultFile))
	if !strings.Contains(stored, `"error_rate": 1`) || strings.Contains(stored, `"dir"`) {
		t.Errorf("the bundle's result.json:\n%s", stored)
	}
}

// TestMaxErrorRate: failures within --max-error-rate leave an MLPerf run
// VALID; a GB/T test refuses the flag (it counts failures as lost jobs).
func TestMaxErrorRateFlag(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, "run", "-q", "--arrival-mode", "2", "--max-error-rate", "0.1", "--output-dir", filepath.Join(dir, "x"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--max-error-rate") {
		t.Errorf("a GB/T test with --max-error-rate: want exit 2 naming it:\n%v", r)
	}
	r = runCLI(t, dir, "run", "-q", "--max-error-rate", "1.5", "--output-dir", filepath.Join(dir, "y"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--max-error-rate") {
		t.Errorf("--max-error-rate 1.5: want exit 2 naming it:\n%v", r)
	}
}

// TestConcurrencyValidByDefault: the fixed-concurrency mode against a
// healthy server is VALID with nothing but the concurrency and a duration
// (on the old code it stopped after 2 s with "Ran out of generated
// queries", INVALID, unless target_latency was set), and a warm-up is
// left out of the results and recorded.
func TestConcurrencyValidByDefault(t *testing.T) {
	url := newSimServer(t, "sim-conc")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := runCLI(t, dir, "run", "-q", "--json", "--sut", "openai", "--url", url, "--concurrency", "8", "--duration", "3s", "--warmup", "40", "--output-dir", out)
	if r.code != ExitOK {
		t.Fatalf("want exit 0:\n%v", r)
	}
	var res derived.ResultJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Concurrency != 8 || res.Samples.Failed != 0 || res.Samples.OK < 100 {
		t.Errorf("result %+v", res)
	}
	inv := readFileT(t, filepath.Join(out, "invocation.json"))
	if !strings.Contains(inv, `"warmup_requests": 40`) || !strings.Contains(inv, `"warmup": {`) {
		t.Errorf("invocation.json does not record the warm-up:\n%s", inv)
	}
	if strings.Contains(r.stderr, "Ran out of generated queries") {
		t.Errorf("ran out of queries:\n%s", r.stderr)
	}
}
