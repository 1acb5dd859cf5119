package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/internal/ollamatest"
	"aimeter/loadgen"
	"aimeter/serve"
)

// newSim makes `aimeter serve openai`'s simulator with opts, its output
// lengths given as --output-tokens gives them ("8", "max_tokens"), and
// closes it when the test ends (its server, if any, is closed first:
// cleanups run last in, first out).
func newSim(t *testing.T, outputTokens string, opts serve.OpenAIOptions) *serve.OpenAIServer {
	t.Helper()
	out, err := serve.ParseLengthDist(outputTokens)
	if err != nil {
		t.Fatal(err)
	}
	opts.OutputTokens = out
	sim, err := serve.NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim
}

// newSimServer starts `aimeter serve openai`'s simulator on a loopback
// listener: 8 output tokens, 2 ms to the first, 200 µs between the others.
func newSimServer(t *testing.T, model string) string {
	t.Helper()
	ttft, err := serve.ParseDurationDist("2ms")
	if err != nil {
		t.Fatal(err)
	}
	tpot, err := serve.ParseDurationDist("200us")
	if err != nil {
		t.Fatal(err)
	}
	sim := newSim(t, "8", serve.OpenAIOptions{Models: []string{model}, TTFT: ttft, TPOT: tpot, Seed: 7})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOpenAIAgainstServe runs --sut openai against aimeter's own simulator
// over real sockets: Server with token latencies (TTFT and TPOT in the
// summary, one token time per chunk) and Offline without streaming, both
// VALID.
func TestOpenAIAgainstServe(t *testing.T) {
	url := newSimServer(t, "sim-e2e")
	for _, tc := range []struct {
		scenario string
		extra    []string
		want     []string
	}{
		{"Server", []string{"--set", "target_qps=250", "--set", "min_duration=1000", "--set", "min_query_count=500", // early stopping at p99 needs about 460
			"--set", "ttft_latency=10000", "--set", "tpot_latency=10000"},
			[]string{"TTFT Early Stopping Result", "TPOT Early Stopping Result", "Mean First Token latency"}},
		{"Offline", []string{"--stream=false", "--set", "min_duration=0", "--set", "min_query_count=200"}, nil},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--sut", "openai", "--url", url, "--scenario", tc.scenario, "--output-dir", out,
				"--qsl-size", "64", "--input-tokens", "16", "--output-tokens", "8"}, tc.extra...)
			res := runCLI(t, "", args...)
			summary, _ := os.ReadFile(filepath.Join(out, "mlperf_log_summary.txt"))
			if res.code != ExitOK || !strings.Contains(string(summary), "Result is : VALID") {
				t.Fatalf("%v\n%s", res, summary)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(summary), w) {
					t.Errorf("summary lacks %q", w)
				}
			}
			if !strings.Contains(string(summary), "sim-e2e") {
				t.Error("the SUT name does not name the served model")
			}
			// The console gives TTFT and TPOT at the target percentile and
			// their bounds (10 s here) in a token-latency Server run; the
			// measured values' units depend on the machine's load.
			if tc.scenario == "Server" && !regexp.MustCompile(`TTFT p99 [0-9.]+ (ns|µs|ms|s) \(bound 10\.00 s\), TPOT p99 [0-9.]+ (ns|µs|ms|s) \(bound 10\.00 s\)`).MatchString(res.stdout) {
				t.Errorf("the console lacks the TTFT/TPOT line:\n%s", res.stdout)
			}
			b, err := bundle.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rec := range b.Result.Records() {
				if rec.Status != loadgen.StatusOK || rec.RequestBytes == 0 || rec.ResponseBytes == 0 {
					t.Fatalf("record %+v: want ok with the bytes of both ways", rec)
				}
				n++
			}
			if tc.scenario == "Server" {
				toks := 0
				for _, times := range b.Result.TokenTimes() {
					if len(times) != 8 {
						t.Fatalf("%d token times, want one per each of the 8 chunks", len(times))
					}
					toks++
				}
				if toks != n {
					t.Errorf("%d samples with token times of %d", toks, n)
				}
			}
		})
	}
}

// TestDispatchOpenAIAgainstServe runs --sut dispatch over two simulator
// nodes with the openai backend: the name says Network SUT and names both
// nodes, every sample names the node that served it, both nodes served,
// and run.json lists them.
func TestDispatchOpenAIAgainstServe(t *testing.T) {
	a, b := newSimServer(t, "node-a"), newSimServer(t, "node-b")
	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, "", "run", "-q", "--sut", "dispatch", "--backend", "openai", "--url", a, "--url", b,
		"--policy", "least-outstanding", "--scenario", "Offline", "--stream=false", "--output-dir", out,
		"--qsl-size", "32", "--input-tokens", "8", "--output-tokens", "8", "--set", "min_duration=0", "--set", "min_query_count=300")
	summary, _ := os.ReadFile(filepath.Join(out, "mlperf_log_summary.txt"))
	if res.code != ExitOK || !strings.Contains(string(summary), "Result is : VALID") {
		t.Fatalf("%v\n%s", res, summary)
	}
	if !strings.Contains(string(summary), "Network SUT") {
		t.Errorf("the SUT name must contain \"Network SUT\":\n%s", summary)
	}
	bd, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(bd.Nodes) != 2 {
		t.Fatalf("run.json lists %d nodes, want 2", len(bd.Nodes))
	}
	served := map[uint32]int{}
	for rec := range bd.Result.Records() {
		served[rec.Node]++
	}
	if served[1] == 0 || served[2] == 0 || served[0] != 0 {
		t.Errorf("samples per node %v: want both nodes to serve and every sample to name its node", served)
	}
}

// TestOpenAIAgainstOllama runs --sut openai against a real third-party
// server, Ollama v0.6.5 serving a generated model (internal/ollamatest; CI
// builds it and requires this test): Server with token latencies, streamed,
// and Offline without streaming, both VALID, with the server's usage on
// every response. In a performance run every prompt starts
// with a nonce, so Ollama's prefix cache cannot answer a reissued sample.
func TestOpenAIAgainstOllama(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.Options{})
	for _, tc := range []struct {
		scenario string
		extra    []string
		want     []string
	}{
		{"Server", []string{"--set", "target_qps=100", "--set", "min_duration=1000", "--set", "min_query_count=500",
			"--set", "ttft_latency=10000", "--set", "tpot_latency=10000"},
			[]string{"TTFT Early Stopping Result", "TPOT Early Stopping Result", "Mean First Token latency"}},
		{"Offline", []string{"--stream=false", "--set", "min_duration=0", "--set", "min_query_count=100"}, nil},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--sut", "openai", "--url", srv.URL, "--served-model", srv.Model,
				"--scenario", tc.scenario, "--output-dir", out, "--qsl-size", "64", "--input-tokens", "16", "--output-tokens", "8"}, tc.extra...)
			res := runCLI(t, "", args...)
			summary, _ := os.ReadFile(filepath.Join(out, "mlperf_log_summary.txt"))
			if res.code != ExitOK || !strings.Contains(string(summary), "Result is : VALID") {
				t.Fatalf("%v\n%s", res, summary)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(summary), w) {
					t.Errorf("summary lacks %q", w)
				}
			}
			// Ollama sends usage with every response. (A random-weight model
			// now and then emits a token that is no visible chunk of its
			// own, so the client's count of chunks may differ from usage
			// on a few samples: the client counts those, it does not fail.)
			if !strings.Contains(res.stdout, "responses without usage 0") {
				t.Errorf("the client block should show usage on every response:\n%v", res)
			}
			b, err := bundle.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			for rec := range b.Result.Records() {
				if rec.Status != loadgen.StatusOK || rec.Tokens < 1 {
					t.Fatalf("record %+v: want ok with the tokens Ollama reported", rec)
				}
			}
		})
	}
}
