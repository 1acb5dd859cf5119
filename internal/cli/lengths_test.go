package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
)

// TestOutputLengthsFlag: --output-lengths hist:FILE sends each synthetic
// prompt's max_tokens drawn from the file, and the bundle records the
// file; with a --prompts file, or with a bad row, it is refused before
// the run, naming the flag.
func TestOutputLengthsFlag(t *testing.T) {
	var mu sync.Mutex
	maxTokens := map[int]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		mu.Lock()
		maxTokens[body.MaxTokens]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	hist := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(hist, []byte("# output lengths\n7,1\n300,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--qsl-size", "32", "--input-tokens", "4", "--output-lengths", "hist:"+hist,
		"--scenario", "Offline", "--output-dir", out, "--set", "min_duration=0", "--set", "min_query_count=32", "--no-server-metrics")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	mu.Lock()
	got := maxTokens
	mu.Unlock()
	if len(got) != 2 || got[7] == 0 || got[300] == 0 {
		t.Errorf("max_tokens sent %v: want 7 and 300 only", got)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(invocation.Of(b).Settings.Files, func(f bundle.InputFile) bool {
		return f.Role == "output-lengths" && f.Path == hist && len(f.SHA256) == 64
	}) || invocation.Of(b).SUT.OpenAI.OutputLengths != "hist:"+hist {
		t.Errorf("the bundle's input files %+v, SUT %+v: want the output lengths file", invocation.Of(b).Settings.Files, invocation.Of(b).SUT.OpenAI)
	}

	prompts := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(prompts, []byte(`{"prompt": "hello"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, []byte("7,1\n0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
		why  string
	}{
		{[]string{"--output-lengths", "uniform:4:8", "--prompts", prompts}, `--output-lengths "uniform:4:8": applies to synthetic prompts`, "a prompts file gives its own max_tokens"},
		{[]string{"--input-lengths", "uniform:4:8", "--prompts", prompts}, `--input-lengths "uniform:4:8": applies to synthetic prompts`, "a prompts file gives its own texts"},
		{[]string{"--output-lengths", "hist:" + hist}, "--output-lengths \"hist:" + hist + "\": lengths file " + hist + " line 2: length 0: want 1 to", "a bad row"},
		{[]string{"--output-lengths", "uniform:9"}, "--output-lengths \"uniform:9\": lengths \"uniform:9\": want N", "a bad spec"},
	} {
		mu.Lock()
		clear(maxTokens)
		mu.Unlock()
		args := append([]string{"run", "-q", "--sut", "openai", "--url", srv.URL, "--output-dir", filepath.Join(t.TempDir(), "bad")}, c.args...)
		res := runCLI(t, "", args...)
		mu.Lock()
		posts := len(maxTokens)
		mu.Unlock()
		if res.code != ExitUsage || !strings.Contains(res.stderr, c.want) || posts != 0 {
			t.Errorf("%s: %v, %d requests; want exit 2 with %q and none sent", c.why, res, posts, c.want)
		}
	}
}
