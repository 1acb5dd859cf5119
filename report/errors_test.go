package report

import (
	"aimeter/loadgen/loadgentest"
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
)

// failSUT answers ok after 1 ms, except every third index, which fails
// with HTTP 503 after 50 ms, and index 4, a reset after 20 ms.
type failSUT struct{}

func (failSUT) Name() string { return "failing" }
func (failSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		switch {
		case q.Index%3 == 0:
			time.AfterFunc(50*time.Millisecond, func() {
				r.Respond(loadgen.Response{ID: q.ID, Err: loadgen.WithCode("http_5xx", 503, "", errors.New("HTTP 503 Service Unavailable"))})
			})
		case q.Index == 4:
			time.AfterFunc(20*time.Millisecond, func() {
				r.Respond(loadgen.Response{ID: q.ID, Err: loadgen.WithCategory("connection_reset", errors.New("read: connection reset by peer"))})
			})
		default:
			time.AfterFunc(time.Millisecond, func() { r.Respond(loadgen.Response{ID: q.ID}) })
		}
	}
}
func (failSUT) FlushQueries() {}

// TestFailuresAreNotLatencies: failed samples stay out of the latency
// charts, and the page lists the failure groups (category, code, count,
// examples) and charts them over time instead of listing raw messages.
func TestFailuresAreNotLatencies(t *testing.T) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 9
	s.OfflineExpectedQPS = 1
	s.PerformanceIssueUnique = true
	res := runFakeOpts(t, failSUT{}, &loadgentest.QSL{Total: 9}, s, nil)
	if res.FailedSamples != 4 {
		t.Fatalf("%d failed samples, want 4", res.FailedSamples)
	}
	pass := len(res.Passes) - 1
	ps := collectPass(res.PassRecords(pass), res.Passes[pass], false)
	if ps.hist.n != 5 || ps.failed != 4 {
		t.Errorf("histogram of %d latencies with %d failed, want the 5 ok samples only", ps.hist.n, ps.failed)
	}
	for _, l := range ps.exact {
		if l >= 20e6 {
			t.Errorf("latency %d ns: a failure was taken as a latency", l)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, &Report{Runs: []RunSection{{Result: res}}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"<h3>Failed samples by kind</h3>", `<svg class="errors-chart"`, "<th>http_5xx</th>", "<td>503</td>",
		"HTTP 503 Service Unavailable", "connection_reset"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, "failed: HTTP 503") {
		t.Error("report.html lists the raw message of each failed sample")
	}
}
