package cli

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/internal/ollamatest"
	"aimeter/loadgen"
	"aimeter/sut/netsut"
	"aimeter/sweep"
)

// TestStudiesAgainstOllama runs the LLM-serving studies against a real
// third-party server, Ollama v0.6.5 serving a generated model (CI builds it
// and requires this test): a sweep of two concurrency points with an SLO,
// a goodput search over concurrency, a trace replay and multi-turn
// sessions whose history carries Ollama's own answers. Each must measure
// every request it sent as answered (a random-weight model's answers are
// nonsense, but they are answers), write its bundles and its page, and
// exit 0 or 3 (short runs may miss early stopping; the verdict is the
// clock's on a shared machine).
func TestStudiesAgainstOllama(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.Options{})
	net := []string{"--sut", "openai", "--url", srv.URL, "--served-model", srv.Model, "-q"}
	dir := t.TempDir()
	run := func(t *testing.T, args ...string) {
		t.Helper()
		res := runCLI(t, dir, append(args, net...)...)
		if res.code != ExitOK && res.code != ExitInvalid {
			t.Fatalf("%v: %v", args, res)
		}
	}
	allOK := func(t *testing.T, out string) {
		t.Helper()
		b, err := bundle.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rec := range b.Result.Records() {
			n++
			if rec.Status != loadgen.StatusOK || rec.Tokens < 1 {
				t.Fatalf("%s: record %+v: want ok with the tokens Ollama reported", out, rec)
			}
		}
		if n == 0 {
			t.Fatalf("%s: no records", out)
		}
	}
	t.Run("sweep", func(t *testing.T) {
		out := filepath.Join(dir, "sweep")
		run(t, "sweep", "--points", "1,2", "--duration", "300ms", "--set", "min_query_count=4", "--qsl-size", "8",
			"--input-tokens", "16", "--output-tokens", "8", "--slo", "ttft=10s,e2e=30s", "--output-dir", out)
		var sum sweep.Summary
		data, err := os.ReadFile(filepath.Join(out, sweep.SummaryFile))
		if err != nil || json.Unmarshal(data, &sum) != nil || len(sum.Points) != 2 {
			t.Fatalf("sweep.json (%v): %s", err, data)
		}
		for _, p := range sum.Points {
			if p.Concurrency != 1 && p.Concurrency != 2 || p.Completed == 0 || p.Completed != p.Issued || p.Errors+p.Lost != 0 || p.SystemTPS <= 0 {
				t.Errorf("point %+v: want concurrency 1 or 2, every request answered, tokens per second", p)
			}
		}
		if page, err := os.ReadFile(filepath.Join(out, "sweep.html")); err != nil || !strings.Contains(string(page), "<svg") && !strings.Contains(string(page), "uPlot") {
			t.Errorf("sweep.html %v: no chart", err)
		}
	})
	t.Run("latency against the server's own", func(t *testing.T) {
		out := filepath.Join(dir, "clock")
		// 128 tokens a response: 30 ms or more a request, so that a latency
		// off by a whole request would fail the median's bound.
		run(t, "run", "--concurrency", "1", "--duration", "300ms", "--set", "min_query_count=8", "--qsl-size", "8",
			"--input-tokens", "16", "--output-tokens", "128", "--ignore-eos", "--output-dir", out)
		checkAgainstGinLog(t, out, srv.LogTail(64<<10))
	})
	t.Run("goodput search", func(t *testing.T) {
		out := filepath.Join(dir, "search")
		run(t, "sweep", "--goodput-target", "0.5", "--slo", "ttft=30s", "--max-concurrency", "2", "--duration", "300ms",
			"--set", "min_query_count=4", "--qsl-size", "8", "--input-tokens", "16", "--output-tokens", "8", "--output-dir", out)
		entries, err := os.ReadDir(out)
		if err != nil || len(entries) == 0 {
			t.Fatalf("the search wrote nothing (%v)", err)
		}
	})
	t.Run("replay", func(t *testing.T) {
		trace := filepath.Join(dir, "trace.csv")
		if err := os.WriteFile(trace, []byte("0,16,6\n20,24,6\n40,16,6\n60,8,6\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "replay")
		run(t, "replay", trace, "--ignore-eos", "--output-dir", out)
		allOK(t, out)
	})
	t.Run("sessions", func(t *testing.T) {
		out := filepath.Join(dir, "sessions")
		run(t, "sessions", "--sessions", "2", "--turns", "2", "--think", "1ms", "--user-words", "8", "--answer-tokens", "6",
			"--ignore-eos", "--output-dir", out)
		allOK(t, out)
	})
}

// ginLine is the access-log line Gin, Ollama's HTTP framework, writes when
// a handler returns: its status, how long the handler ran (from before
// Ollama read the request's body to after its last write), the method and
// the path.
var ginLine = regexp.MustCompile(`\[GIN\] [^|]*\|\s*(\d{3})\s*\|\s*(\S+)\s*\|[^|]*\|\s*POST\s+"/v1/chat/completions"`)

// checkAgainstGinLog compares each request's end-to-end latency in a
// concurrency-1 run's bundle with the time Ollama itself took to answer
// it. Ollama's OpenAI-compatible responses carry no durations (v0.6.5's
// chunks have id, object, created, model, system_fingerprint, choices and
// usage; prompt_eval_duration and eval_duration are on its native /api
// responses only, which are other requests), and it logs no per-request
// timings, so the one figure of its own for the very requests aimeter sent
// is the duration in Gin's access log: from just after the request's
// headers were read to just after the handler's last write. aimeter's
// end-to-end latency (completion − scheduled time) covers that and, at
// concurrency 1 (the next request is scheduled when one completes), only
// the loopback both ways besides, so the difference must be small: the
// median within ±10 ms and each within −20 ms to +250 ms (the bounds of
// package benchmark's checks against aimeter's own simulator, for a loaded
// 2-core machine under -race; the client may finish reading before the
// handler has returned, hence a negative side). One request at a time
// means Ollama ends its handlers in the order aimeter completes the
// requests: the last lines of the log, as many as the records, pair with
// the records in order of completion. TTFT and TPOT cannot be checked this
// way: Ollama states neither for an OpenAI-compatible request.
func checkAgainstGinLog(t *testing.T, out, log string) {
	t.Helper()
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var recs []loadgen.Record
	for r := range b.Result.Records() {
		if r.Status != loadgen.StatusOK {
			// Ollama v0.6.5 ends a few of the random model's longer
			// streams (after 76 to 124 of 128 tokens here, 2 to 8 % of
			// them) with a clean end of the body and no finish_reason or
			// [DONE], and logs them as 200: aimeter rightly fails them as
			// truncated. Gin logged such a handler too, so it pairs with
			// its record as any other; any other failure is aimeter's.
			if r.Status != loadgen.StatusError || r.Error == 0 || b.Result.Errors[r.Error-1].Category != netsut.CategoryStreamTruncated {
				t.Fatalf("record %+v: want every request answered", r)
			}
			t.Logf("record %+v: Ollama ended the stream without [DONE]", r)
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b loadgen.Record) int { return cmp.Compare(a.CompletedNs, b.CompletedNs) })
	var server []time.Duration
	for _, m := range ginLine.FindAllStringSubmatch(log, -1) {
		d, err := time.ParseDuration(m[2])
		if err != nil || m[1] != "200" {
			t.Fatalf("Gin log line %q: status %s, duration %v", m[0], m[1], err)
		}
		server = append(server, d)
	}
	if len(recs) == 0 || len(server) < len(recs) {
		t.Fatalf("%d records, %d chat completions in Ollama's log:\n%s", len(recs), len(server), log)
	}
	server = server[len(server)-len(recs):]
	diffs := make([]time.Duration, len(recs))
	for i, r := range recs {
		e2e := time.Duration(r.CompletedNs - r.ScheduledNs) // sweep.SampleOf's E2E, for a truncated stream too
		diffs[i] = e2e - server[i]
		if diffs[i] < -20*time.Millisecond || diffs[i] > 250*time.Millisecond {
			t.Errorf("request %d (sample %d): aimeter's latency %v, Ollama's %v: %v apart, want −20 ms to +250 ms", i+1, r.SampleIndex, e2e, server[i], diffs[i])
		}
	}
	sorted := slices.Clone(diffs)
	slices.Sort(sorted)
	p50 := sorted[len(sorted)/2]
	t.Logf("aimeter's end-to-end latency − Ollama's handler time over %d requests: min %v, p50 %v, max %v (Ollama's p50 %v)",
		len(sorted), sorted[0], p50, sorted[len(sorted)-1], slices.Sorted(slices.Values(server))[len(server)/2])
	if p50 < -10*time.Millisecond || p50 > 10*time.Millisecond {
		t.Errorf("median difference %v, want within ±10 ms", p50)
	}
}
