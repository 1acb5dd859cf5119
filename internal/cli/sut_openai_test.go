package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// streamingServer is an OpenAI-compatible loopback server: it streams four
// content chunks and the usage, or answers with one JSON body. It counts
// the requests and keeps the last Authorization header.
type streamingServer struct {
	*httptest.Server
	requests atomic.Int64
	auth     atomic.Value // string
	prompts  chan string
}

func newStreamingServer(t *testing.T) *streamingServer {
	s := &streamingServer{prompts: make(chan string, 1<<16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.auth.Store(r.Header.Get("Authorization"))
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"tiny","owned_by":"test"}]}`)
			return
		}
		s.requests.Add(1)
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		select {
		case s.prompts <- req.Messages[0].Content:
		default:
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"a b c d"}}],"usage":{"completion_tokens":4}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{"a", " b", " c", " d"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":4}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

// TestRunOpenAI runs Server (streaming, with token latencies) and Offline
// against an in-test server: VALID, TTFT/TPOT in the summary, bytes in
// samples.csv, token times in tokens.csv, the client block printed, and
// the API key nowhere in the output or the bundle.
func TestRunOpenAI(t *testing.T) {
	srv := newStreamingServer(t)
	const key = "sk-cli-secret-42"
	t.Setenv("AIMETER_TEST_KEY", key)
	for _, tc := range []struct {
		scenario string
		extra    []string
		tokens   bool
	}{
		{"Server", []string{"--set", "target_qps=400", "--set", "min_duration=500", "--set", "min_query_count=1000",
			"--set", "ttft_latency=10000", "--set", "tpot_latency=10000"}, true}, // bounds no loaded machine misses
		{"Offline", []string{"--set", "min_duration=0", "--set", "min_query_count=50", "--stream=false"}, false},
		{"SingleStream", []string{"--set", "min_duration=0", "--set", "min_query_count=100", "--set", "target_latency=1"}, true},
		// MultiStream's early stopping at p99 needs 662 queries of 8 samples.
		{"MultiStream", []string{"--set", "min_duration=0", "--set", "min_query_count=700", "--set", "target_latency=5", "--stream=false"}, false},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--sut", "openai", "--url", srv.URL, "--scenario", tc.scenario, "--output-dir", out,
				"--qsl-size", "16", "--input-tokens", "8", "--output-tokens", "4", "--api-key-env", "AIMETER_TEST_KEY"}, tc.extra...)
			res := runCLI(t, "", args...)
			if res.code != 0 {
				summary, _ := os.ReadFile(filepath.Join(out, "mlperf_log_summary.txt"))
				t.Fatalf("%v\n%s", res, summary)
			}
			if got, _ := srv.auth.Load().(string); got != "Bearer "+key {
				t.Errorf("Authorization %q", got)
			}
			for _, want := range []string{"Result is : VALID", "client:", "requests ", "send lateness"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			summary, err := os.ReadFile(filepath.Join(out, "mlperf_log_summary.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.tokens != strings.Contains(string(summary), "TTFT Early Stopping Result") || tc.tokens != strings.Contains(string(summary), "First Token latency") {
				t.Errorf("TTFT/TPOT in the summary: want %v\n%s", tc.tokens, summary)
			}
			b, err := bundle.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rec := range b.Result.Records() {
				n++
				if rec.Status != loadgen.StatusOK || rec.RequestBytes == 0 || rec.ResponseBytes == 0 || rec.Tokens != 4 {
					t.Fatalf("record %+v", rec)
				}
				if tc.tokens && rec.FirstTokenNs == loadgen.NoTime {
					t.Fatalf("record without first token: %+v", rec)
				}
			}
			if n == 0 {
				t.Fatal("no records")
			}
			_, err = os.Stat(filepath.Join(out, bundle.TokensFile))
			if tc.tokens != (err == nil) {
				t.Errorf("%s present: %v, want %v", bundle.TokensFile, err == nil, tc.tokens)
			}
			if tc.tokens {
				// aimeter export --table tokens writes tokens.csv as it was.
				res := runCLI(t, "", "export", out, "--table", "tokens")
				if lines := strings.Count(res.stdout, "\n"); res.code != ExitOK || lines != 4*n+1 {
					t.Errorf("export --table tokens: exit %d, %d lines, want 4 a sample and a header (%d): %s", res.code, lines, 4*n+1, res.stderr)
				}
			}
			// The key is nowhere.
			filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if data, _ := os.ReadFile(path); strings.Contains(string(data), key) {
						t.Errorf("%s holds the API key", path)
					}
				}
				return nil
			})
			if strings.Contains(res.stdout+res.stderr, key) {
				t.Error("the API key is in the output")
			}
		})
	}
	// A performance run never repeats a prompt.
	seen := map[string]bool{}
	for len(srv.prompts) > 0 {
		p := <-srv.prompts
		if seen[p] {
			t.Fatalf("prompt sent twice: %q", p)
		}
		seen[p] = true
	}

	// An accuracy run sends the data set's prompts exactly: 8 words, no
	// nonce, each once.
	out := filepath.Join(t.TempDir(), "acc")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--scenario", "Offline", "--mode", "accuracy",
		"--output-dir", out, "--qsl-size", "16", "--input-tokens", "8")
	if res.code != 0 {
		t.Fatalf("accuracy run: %v", res)
	}
	clear(seen)
	for len(srv.prompts) > 0 {
		p := <-srv.prompts
		if n := len(strings.Fields(p)); n != 8 || seen[p] {
			t.Errorf("accuracy prompt %q: %d words, seen before %v", p, n, seen[p])
		}
		seen[p] = true
	}
	if len(seen) != 16 {
		t.Errorf("%d distinct prompts in the accuracy run, want 16", len(seen))
	}
	acc, err := os.ReadFile(filepath.Join(out, "mlperf_log_accuracy.json"))
	if err != nil || !strings.Contains(string(acc), fmt.Sprintf("%x", "a b c d")) {
		t.Errorf("the accuracy log lacks the generated text: %v\n%.300s", err, acc)
	}
}

// TestRunOpenAIBadInput: a server that is down, a missing --url, a bad
// prompt file: one clear error before the run, nothing written.
func TestRunOpenAIBadInput(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\":\"a\"}\n{\"prompt\":\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"server down", []string{"--url", downURL}, ExitFailure, "GET " + downURL + "/v1/models"},
		{"no --url", nil, ExitUsage, "needs --url"},
		{"bad prompt file", []string{"--url", downURL, "--prompts", bad}, ExitUsage, "bad.jsonl:2: the line ends before its JSON value does"},
		{"missing prompt file", []string{"--url", downURL, "--prompts", filepath.Join(dir, "none.jsonl")}, ExitUsage, "--prompts"},
		{"bad --api", []string{"--url", downURL, "--api", "embeddings"}, ExitUsage, `API "embeddings"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", append([]string{"run", "-q", "--sut", "openai", "--output-dir", out}, tc.args...)...)
			if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("want exit %d with %q: %v", tc.code, tc.want, res)
			}
			if tc.name == "server down" && !strings.Contains(res.stderr, "refused") {
				t.Errorf("want what was tried (connection refused): %v", res)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output directory created")
			}
		})
	}
}
