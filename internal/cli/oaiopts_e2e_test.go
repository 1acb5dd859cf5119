package cli

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut/openai"
)

// TestOpenAIPromptMaxTokens runs --sut openai against the simulator with a
// prompts file whose lines carry their own max_tokens: the simulator
// answers min(8, max_tokens) tokens, so every sample's token count shows
// the max_tokens its request carried (--output-tokens 8 for the line
// without one). The console has the streaming run's ITL, end-to-end and
// tokens/s lines.
func TestOpenAIPromptMaxTokens(t *testing.T) {
	url := newSimServer(t, "sim-mt")
	dir := t.TempDir()
	file := filepath.Join(dir, "p.jsonl")
	os.WriteFile(file, []byte(`{"prompt": "one two", "max_tokens": 3}`+"\n"+
		`{"messages": [{"role": "user", "content": "three"}], "max_tokens": 5, "id": "x"}`+"\n"+
		`{"prompt": "four", "timestamp": 1.5}`+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", url, "--prompts", file, "--output-tokens", "8",
		"--scenario", "Offline", "--output-dir", out, "--set", "min_duration=0", "--set", "min_query_count=30")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]int64{0: 3, 1: 5, 2: 8}
	n := 0
	for rec := range b.Result.Records() {
		if rec.Status != loadgen.StatusOK || rec.Tokens != want[rec.SampleIndex] {
			t.Fatalf("record %+v: want ok with %d tokens", rec, want[rec.SampleIndex])
		}
		n++
	}
	if n < 30 {
		t.Errorf("%d records", n)
	}
	for _, re := range []string{`(?m)^  ITL p50 [0-9.]+ (ns|µs|ms|s), p90 .*, p99 .* \(\d+ gaps between tokens of \d+ streamed samples\)$`,
		`(?m)^  E2E latency p50 .* \(\d+ successful samples\)$`, `(?m)^  Output tokens/s [0-9.]+ \(\d+ tokens in .*\)$`} {
		if !regexp.MustCompile(re).MatchString(res.stdout) {
			t.Errorf("the console lacks %s:\n%s", re, res.stdout)
		}
	}

	// An unknown key is refused, naming the line and the key.
	os.WriteFile(file, []byte(`{"prompt": "a"}`+"\n"+`{"prompt": "b", "max_new_tokens": 3}`+"\n"), 0o644)
	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", url, "--prompts", file, "--output-dir", filepath.Join(dir, "out2"))
	if res.code == ExitOK || !strings.Contains(res.stderr, `p.jsonl:2: unknown key "max_new_tokens"`) {
		t.Errorf("unknown key: %v", res)
	}
}

// TestOpenAIHeadersBodyTemperature checks that --header, --extra-body and
// --temperature reach the server on every request, and that a secret
// header's value is in no file of the bundle.
func TestOpenAIHeadersBodyTemperature(t *testing.T) {
	const secret = "sk-header-secret-77"
	var mu sync.Mutex
	var posts int
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem := func(s string) {
			mu.Lock()
			bad = append(bad, s)
			mu.Unlock()
		}
		if r.Header.Get("X-Tenant") != "blue" || r.Header.Get("X-Api-Key") != secret {
			problem(r.Method + " without the extra headers")
		}
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		if body["temperature"] != 0.7 || body["top_k"] != float64(5) || body["max_tokens"] != float64(4) {
			problem("body " + string(raw))
		}
		mu.Lock()
		posts++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--qsl-size", "8", "--output-tokens", "4",
		"--header", "X-Tenant: blue", "--header=X-Api-Key:"+secret, "--extra-body", `{"top_k": 5}`, "--temperature", "0.7",
		"--http-client", "net/http", "--scenario", "Offline", "--output-dir", out, "--set", "min_duration=0", "--set", "min_query_count=20",
		"--no-server-metrics") // its GET /metrics is not the client's request, and carries no --header
	if res.code != ExitOK {
		t.Fatal(res)
	}
	if posts < 20 || len(bad) > 0 {
		t.Fatalf("%d requests; problems %q", posts, bad)
	}
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
				t.Errorf("%s holds the secret header's value", path)
			}
		}
		return nil
	})
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if o := invocation.Of(b).SUT.OpenAI; o == nil || strings.Join(o.Headers, "|") != "X-Tenant: blue|X-Api-Key: REDACTED" ||
		o.ExtraBody != `{"top_k": 5}` || o.Temperature == nil || *o.Temperature != 0.7 || o.HTTPClient != "net/http" {
		t.Errorf("recorded SUT %+v", o)
	}

	// A key the client sets is refused before the run, naming it.
	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--extra-body", `{"stream": false}`,
		"--output-dir", filepath.Join(t.TempDir(), "out"))
	if res.code == ExitOK || !strings.Contains(res.stderr, `extra body key "stream"`) {
		t.Errorf("a reserved key: %v", res)
	}
	// So is Authorization without --allow-header-override, and the flags
	// with another SUT.
	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--header", "Authorization: Bearer x",
		"--output-dir", filepath.Join(t.TempDir(), "out"))
	if res.code == ExitOK || !strings.Contains(res.stderr, "--allow-header-override") || strings.Contains(res.stderr, "Bearer x") {
		t.Errorf("Authorization header: %v", res)
	}
	for _, fl := range [][]string{{"--header", "X: y"}, {"--extra-body", "{}"}, {"--temperature", "1"}, {"--allow-header-override"}, {"--http-client", "h1"}} {
		res = runCLI(t, "", append([]string{"run", "-q", "--sut", "null", "--output-dir", filepath.Join(t.TempDir(), "out")}, fl...)...)
		if res.code == ExitOK || !strings.Contains(res.stderr, fl[0]+" applies only to --sut openai") {
			t.Errorf("%s with --sut null: %v", fl[0], res)
		}
	}
}

// TestOpenAIUnexpectedContentType: a 200 HTML page (a proxy's login page)
// answering a streamed chat request fails every sample with category
// unexpected_content_type, naming the status and the content type, not
// "truncated".
func TestOpenAIUnexpectedContentType(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Sign in</title>")
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--qsl-size", "4",
		"--scenario", "Offline", "--output-dir", out, "--set", "min_duration=0", "--set", "min_query_count=10")
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatalf("%v\n%v", err, res)
	}
	if len(b.Result.Errors) != 1 {
		t.Fatalf("errors %+v", b.Result.Errors)
	}
	e := b.Result.Errors[0]
	if e.Category != openai.CategoryUnexpectedContentType || !strings.Contains(e.Message, `HTTP 200 OK with Content-Type "text/html; charset=utf-8"`) ||
		!strings.Contains(e.Message, "Sign in") {
		t.Errorf("error %+v", e)
	}
	for rec := range b.Result.Records() {
		if rec.Status != loadgen.StatusError {
			t.Fatalf("record %+v: want failed", rec)
		}
	}
}
