package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	"aimeter/loadgen"
	"aimeter/tokenize"
)

// TestTokenizerFlag runs --sut openai --tokenizer cl100k_base against a
// server that reports no usage: every prompt it receives is exactly
// --input-tokens cl100k tokens, the client's nonce included, every record's output tokens are the
// tokens of the answer's text (not its 2 chunks), and the bundle records
// the tokenizer. A tokenizer that is neither an encoding nor a file is
// refused before the run, naming the flag.
func TestTokenizerFlag(t *testing.T) {
	tok, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bad []string
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		mu.Lock()
		posts++
		// The client's nonce takes the place of the prompt's first
		// words (sut/openai's AllowRepeatedPrompts): the whole content
		// is the prompt's length.
		prompt := ""
		if len(body.Messages) == 1 {
			prompt = body.Messages[0].Content
		}
		if tok.Count(prompt) != 37 {
			bad = append(bad, string(raw))
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		// "hello world again friends": 4 cl100k tokens in 2 chunks.
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hello world\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\" again friends\"}}]}\n\n"+
			"data: [DONE]\n\n")
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--qsl-size", "8", "--input-tokens", "37", "--tokenizer", "cl100k_base",
		"--scenario", "Offline", "--output-dir", out, "--set", "min_duration=0", "--set", "min_query_count=16", "--no-server-metrics")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	if posts < 16 || len(bad) > 0 {
		t.Fatalf("%d requests; prompts not of 37 tokens: %q", posts, bad)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for rec := range b.Result.Records() {
		if rec.Status != loadgen.StatusOK || rec.Tokens != 4 {
			t.Fatalf("record %+v: want ok with 4 tokens", rec)
		}
	}
	if o := invocation.Of(b).SUT.OpenAI; o == nil || o.Tokenizer != "cl100k_base" || o.TokenizerSHA256 != "" {
		t.Errorf("recorded SUT %+v", o)
	}

	// --input-lengths draws each prompt's length instead.
	mu.Lock()
	bad, posts = nil, 0
	mu.Unlock()
	lengths := map[int]bool{}
	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--qsl-size", "64", "--input-lengths", "uniform:30:44", "--tokenizer", "cl100k_base",
		"--scenario", "Offline", "--output-dir", filepath.Join(t.TempDir(), "lengths"), "--set", "min_duration=0", "--set", "min_query_count=64", "--no-server-metrics")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	for _, raw := range bad { // every prompt "bad" here: not 37 tokens unless drawn so
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.Unmarshal([]byte(raw), &body)
		prompt := body.Messages[0].Content
		n := tok.Count(prompt)
		if n < 30 || n > 44 {
			t.Errorf("a prompt of %d tokens, outside uniform:30:44", n)
		}
		lengths[n] = true
	}
	if len(lengths) < 8 {
		t.Errorf("%d distinct lengths in 64 prompts drawn from uniform:30:44", len(lengths))
	}

	// --input-lengths hist:FILE draws from the file's lengths, and the
	// bundle records the file's digest; a bad row is refused before the
	// run, naming the flag, the file and the line.
	mu.Lock()
	bad, posts = nil, 0
	mu.Unlock()
	hist := filepath.Join(t.TempDir(), "lengths.csv")
	if err := os.WriteFile(hist, []byte("length,weight\n5,1\n40,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	histOut := filepath.Join(t.TempDir(), "hist")
	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--qsl-size", "64", "--input-lengths", "hist:"+hist, "--tokenizer", "cl100k_base",
		"--scenario", "Offline", "--output-dir", histOut, "--set", "min_duration=0", "--set", "min_query_count=64", "--no-server-metrics")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	drawn := map[int]int{}
	for _, raw := range bad {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.Unmarshal([]byte(raw), &body)
		prompt := body.Messages[0].Content
		drawn[tok.Count(prompt)]++
	}
	if len(drawn) != 2 || drawn[5] == 0 || drawn[40] == 0 {
		t.Errorf("prompt lengths drawn from a file of 5 and 40: %v", drawn)
	}
	hb, err := bundle.Read(histOut)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("length,weight\n5,1\n40,3\n"))
	if !slices.Contains(invocation.Of(hb).Settings.Files, bundle.InputFile{Role: "input-lengths", Path: hist, SHA256: hex.EncodeToString(sum[:])}) ||
		invocation.Of(hb).SUT.OpenAI.InputLengthsSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the bundle's input files %+v, SUT %+v: want the lengths file with its SHA-256", invocation.Of(hb).Settings.Files, invocation.Of(hb).SUT.OpenAI)
	}
	if err := os.WriteFile(hist, []byte("5,1\n40,-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	posts = 0
	mu.Unlock()
	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--input-lengths", "hist:"+hist, "--output-dir", filepath.Join(t.TempDir(), "badhist"))
	if res.code != ExitUsage || !strings.Contains(res.stderr, "--input-lengths") || !strings.Contains(res.stderr, hist+" line 2: weight -3 is negative") || posts != 0 {
		t.Errorf("a negative weight: %v, %d requests", res, posts)
	}

	res = runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--tokenizer", "llama-9", "--output-dir", filepath.Join(t.TempDir(), "out"))
	if res.code == ExitOK || !strings.Contains(res.stderr, "--tokenizer llama-9") {
		t.Errorf("an unknown tokenizer: %v", res)
	}
}

// TestExactTokenLengths runs --tokenizer cl100k_base --input-tokens N
// against a server that counts, in cl100k tokens, the text it receives:
// the completions prompt, or the chat request's user content (the
// contract: a chat template's tokens are the server's, counted in its
// usage, not in N). Every request has exactly N tokens, the client's
// per-request nonce included (it takes the place of the prompt's first
// words instead of going in front), and a prompt at least a full nonce
// long is never sent twice.
func TestExactTokenLengths(t *testing.T) {
	tok, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		mu     sync.Mutex
		counts map[int]int
		texts  map[string]bool
		posts  int
	}
	var s seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		var body struct {
			Prompt   *string                          `json:"prompt"`
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		text, answer := "", `{"choices":[{"text":"hi"}],"usage":{"prompt_tokens":%d,"completion_tokens":1}}`
		switch {
		case strings.HasSuffix(r.URL.Path, "/completions") && !strings.HasSuffix(r.URL.Path, "/chat/completions") && body.Prompt != nil:
			text = *body.Prompt
		case strings.HasSuffix(r.URL.Path, "/chat/completions") && len(body.Messages) == 1 && body.Messages[0].Role == "user":
			text, answer = body.Messages[0].Content, `{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":%d,"completion_tokens":1}}`
		default:
			http.Error(w, "unexpected request "+r.URL.Path+" "+string(raw), http.StatusBadRequest)
			return
		}
		n := tok.Count(text)
		s.mu.Lock()
		s.posts++
		s.counts[n]++
		s.texts[text] = true
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, answer, n)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		n      int
		why    string
		unique bool // every request's text differs: the prompt holds a full nonce
	}{
		{1, "a prompt of one token is all nonce, one word", false},
		{2, "two nonce words, shorter than a full nonce", false},
		{50, "a full nonce and a body", true},
		{1000, "a long body", true},
	} {
		for _, api := range []string{"completions", "chat"} {
			t.Run(fmt.Sprintf("%s/%d", api, tc.n), func(t *testing.T) {
				s.mu.Lock()
				s.counts, s.texts, s.posts = map[int]int{}, map[string]bool{}, 0
				s.mu.Unlock()
				res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--api", api, "--stream=false", "--qsl-size", "8",
					"--input-tokens", fmt.Sprint(tc.n), "--tokenizer", "cl100k_base", "--scenario", "Offline",
					"--output-dir", filepath.Join(t.TempDir(), "out"), "--set", "min_duration=0", "--set", "min_query_count=24", "--no-server-metrics")
				if res.code != ExitOK {
					t.Fatal(res)
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.posts < 24 || len(s.counts) != 1 || s.counts[tc.n] != s.posts {
					t.Errorf("%s: %d requests of these cl100k lengths: %v, want all %d", tc.why, s.posts, s.counts, tc.n)
				}
				if tc.unique && len(s.texts) != s.posts {
					t.Errorf("%s: %d distinct texts in %d requests of 8 prompts: the nonce did not make each unique", tc.why, len(s.texts), s.posts)
				}
			})
		}
	}

	// An unknown encoding is refused before the run, listing the
	// accepted ones.
	s.mu.Lock()
	s.posts = 0
	s.mu.Unlock()
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--tokenizer", "bogus_base", "--output-dir", filepath.Join(t.TempDir(), "bogus"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.code != ExitUsage || !strings.Contains(res.stderr, "--tokenizer bogus_base") || !strings.Contains(res.stderr, strings.Join(tokenize.Encodings, ", ")) || s.posts != 0 {
		t.Errorf("an unknown encoding: %v, %d requests; want a usage error listing %v", res, s.posts, tokenize.Encodings)
	}
}
