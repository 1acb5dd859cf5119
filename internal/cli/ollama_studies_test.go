package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/internal/ollamatest"
	"aimeter/loadgen"
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
