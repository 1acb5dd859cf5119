package ollamatest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// words returns n pseudo-random lower-case words from seed: a prompt that
// no other seed repeats, so Ollama's prefix cache cannot hit.
func words(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		for range 2 + r.IntN(7) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		t.Fatalf("POST %s: %s: %s", url, resp.Status, msg)
	}
	return resp
}

// chunk is the part of a chat.completion.chunk the tests read.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// streamResult is what streamChat saw.
type streamResult struct {
	contentChunks    int
	text             string
	done             bool
	finish           string
	promptTokens     int
	completionTokens int
	ttft             time.Duration
}

// streamChat sends a streaming chat completion and reads the SSE stream.
// A negative temperature leaves it out of the request (Ollama's OpenAI API
// then samples at temperature 1).
func streamChat(t *testing.T, s *Server, prompt string, maxTokens int, temperature float64) streamResult {
	t.Helper()
	req := map[string]any{
		"model":          s.Model,
		"stream":         true,
		"max_tokens":     maxTokens,
		"stream_options": map[string]any{"include_usage": true},
		"messages":       []map[string]string{{"role": "user", "content": prompt}},
	}
	if temperature >= 0 {
		req["temperature"] = temperature
	}
	start := time.Now()
	resp := post(t, s.URL+"/v1/chat/completions", req)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	var r streamResult
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if line != "" {
				t.Errorf("unexpected SSE line %q", line)
			}
			continue
		}
		if r.done {
			t.Errorf("data after [DONE]: %q", data)
		}
		if data == "[DONE]" {
			r.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				if r.contentChunks == 0 {
					r.ttft = time.Since(start)
				}
				r.contentChunks++
				r.text += ch.Delta.Content
			}
			if ch.FinishReason != nil {
				r.finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			r.promptTokens, r.completionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSmoke runs the checks against one real server: each Start costs
// about a second.
func TestSmoke(t *testing.T) {
	s := Start(t, Options{})
	t.Run("ChatStreaming", func(t *testing.T) { testChatStreaming(t, s) })
	t.Run("PrefixCache", func(t *testing.T) { testPrefixCache(t, s) })
	t.Run("Completions", func(t *testing.T) { testCompletions(t, s) })
	t.Run("Models", func(t *testing.T) { testModels(t, s) })
}

// testChatStreaming: one content chunk per token, and the usage agrees,
// whether the server decodes greedily or samples.
func testChatStreaming(t *testing.T, s *Server) {
	for _, tc := range []struct {
		seed        uint64
		temperature float64
		reason      string
	}{
		{1, 0, "greedy decoding"},
		{2, 0, "greedy, another prompt"},
		{3, -1, "no temperature in the request: Ollama samples at 1, and still never picks a byte token or EOS"},
		{4, -1, "sampling, another prompt"},
		{5, 1.5, "sampling hotter than the default"},
	} {
		r := streamChat(t, s, words(tc.seed, 40), 32, tc.temperature)
		if r.contentChunks != 32 {
			t.Errorf("%s: %d content chunks, want 32 (one per token); text %q", tc.reason, r.contentChunks, r.text)
		}
		if r.completionTokens != 32 {
			t.Errorf("%s: usage.completion_tokens %d, want 32", tc.reason, r.completionTokens)
		}
		if r.promptTokens < 40 {
			t.Errorf("%s: usage.prompt_tokens %d, want at least one per word (40)", tc.reason, r.promptTokens)
		}
		if r.finish != "length" {
			t.Errorf("%s: finish_reason %q, want length", tc.reason, r.finish)
		}
		if !r.done {
			t.Errorf("%s: the stream ended without [DONE]", tc.reason)
		}
	}
}

// testPrefixCache shows why benchmarks must vary their prompts: a repeated
// prompt skips the prefill. It asserts only what does not depend on timing.
func testPrefixCache(t *testing.T, s *Server) {
	a := streamChat(t, s, words(100, 300), 4, 0)
	b := streamChat(t, s, words(101, 300), 4, 0)
	again := streamChat(t, s, words(101, 300), 4, 0)
	for i, r := range []streamResult{a, b, again} {
		if r.contentChunks != 4 || r.completionTokens != 4 {
			t.Errorf("request %d: %d chunks, %d completion tokens, want 4 and 4", i, r.contentChunks, r.completionTokens)
		}
	}
	if a.promptTokens < 300 || b.promptTokens < 300 {
		t.Errorf("prompt tokens %d and %d, want at least 300 each", a.promptTokens, b.promptTokens)
	}
	t.Logf("TTFT for %d prompt tokens: new prompt %v, another new prompt %v, that prompt repeated %v (prefix-cache hit; a load generator must vary its prompts)",
		b.promptTokens, a.ttft, b.ttft, again.ttft)
}

func testCompletions(t *testing.T, s *Server) {
	resp := post(t, s.URL+"/v1/completions", map[string]any{
		"model": s.Model, "prompt": words(2, 20), "max_tokens": 8,
	})
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Object != "text_completion" || len(out.Choices) != 1 || out.Choices[0].Text == "" {
		t.Errorf("completion %+v, want one text_completion choice with text", out)
	}
	if out.Usage.CompletionTokens != 8 {
		t.Errorf("completion_tokens %d, want 8", out.Usage.CompletionTokens)
	}
}

func testModels(t *testing.T, s *Server) {
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range out.Data {
		ids = append(ids, m.ID)
	}
	if len(ids) != 1 || (ids[0] != s.Model && ids[0] != s.Model+":latest") {
		t.Errorf("/v1/models lists %v, want only %s", ids, s.Model)
	}
	var v struct{ Version string }
	r2, err := http.Get(s.URL + "/api/version")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Body.Close()
	if err := json.NewDecoder(r2.Body).Decode(&v); err != nil || v.Version != Version {
		t.Errorf("/api/version %q (%v), want %s", v.Version, err, Version)
	}
}

// groupProcesses returns the live (not zombie) processes of process group
// pgid, from /proc.
func groupProcesses(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid && f[0] != "Z" {
			live = append(live, s[:i+1])
		}
	}
	return live
}

// TestStopLeavesNoProcesses: after Stop, neither the server nor its
// llama.cpp runner is left running.
func TestStopLeavesNoProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// The tiny model here (the smoke test serves micro): both sizes load.
	s := Start(t, Options{Size: "tiny", NumParallel: 1})
	pgid := s.PID()
	before := groupProcesses(t, pgid)
	runner := false
	for _, p := range before {
		runner = runner || strings.Contains(p, "(ollama") && !strings.HasPrefix(p, strconv.Itoa(pgid)+" ")
	}
	if len(before) < 2 || !runner {
		t.Fatalf("processes in the server's group before Stop: %q; want the server and its runner (the warm-up loads the model)", before)
	}
	s.Stop()
	if !s.Exited() {
		t.Error("the server has not exited after Stop")
	}
	// SIGKILL is delivered at once, but a process leaves /proc (or turns
	// zombie) a moment later: wait, bounded.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = groupProcesses(t, pgid); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes left after Stop: %q", left)
	}
	s.Stop() // a second Stop is harmless
}

// fakeTB records Skip and Fatal instead of ending the test, and ends its
// goroutine the way testing does.
type fakeTB struct {
	testing.TB
	mu      sync.Mutex
	skipped string
	fatal   string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

// runStart calls Start with f in a goroutine of its own, as testing would.
func runStart(f *fakeTB, opts Options) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, opts)
	}()
	<-done
}

func TestMissingBinary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-ollama")
	for _, tc := range []struct {
		require   string
		wantSkip  bool
		wantFatal bool
		reason    string
	}{
		{"", true, false, "without AIMETER_REQUIRE_OLLAMA a missing binary skips"},
		{"1", false, true, "AIMETER_REQUIRE_OLLAMA=1 turns the skip into a failure"},
	} {
		t.Setenv("AIMETER_OLLAMA", missing)
		t.Setenv("AIMETER_REQUIRE_OLLAMA", tc.require)
		f := &fakeTB{TB: t}
		runStart(f, Options{})
		msg := f.skipped + f.fatal
		if (f.skipped != "") != tc.wantSkip || (f.fatal != "") != tc.wantFatal {
			t.Errorf("%s: skipped %q, fatal %q", tc.reason, f.skipped, f.fatal)
		}
		if !strings.Contains(msg, missing) {
			t.Errorf("%s: message %q does not name %s", tc.reason, msg, missing)
		}
	}

	// Without AIMETER_OLLAMA, the message names the cache path and the
	// install command.
	t.Setenv("AIMETER_OLLAMA", "")
	t.Setenv("AIMETER_CACHE", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := FindBinary()
	if err == nil || !strings.Contains(err.Error(), CachePath()) || !strings.Contains(err.Error(), InstallCommand) {
		t.Errorf("FindBinary with nothing installed: %v, want the cache path and %s", err, InstallCommand)
	}
}

// TestServerThatFails: a "server" that exits at once, or never answers,
// fails Start quickly with its output, never hangs.
func TestServerThatFails(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses shell scripts")
	}
	for _, tc := range []struct {
		script string
		want   string
		reason string
	}{
		{"echo 'Error: listen tcp: boom' >&2; exit 1", "boom", "exits before it is ready: the log tail is in the message"},
		{"echo 'starting'; exec sleep 30", "not ready after", "never answers: bounded by ReadyTimeout"},
	} {
		bin := filepath.Join(t.TempDir(), "ollama")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AIMETER_OLLAMA", bin)
		f := &fakeTB{TB: t}
		start := time.Now()
		runStart(f, Options{ReadyTimeout: 500 * time.Millisecond})
		if !strings.Contains(f.fatal, tc.want) || !strings.Contains(f.fatal, bin) {
			t.Errorf("%s: fatal %q, want one naming %q and the binary", tc.reason, f.fatal, tc.want)
		}
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("%s: Start took %v", tc.reason, el)
		}
	}
}

func TestModelfile(t *testing.T) {
	m := Modelfile("/m/x.gguf", 4096, 2)
	for _, want := range []string{"FROM /m/x.gguf\n", "PARAMETER temperature 0\n", "PARAMETER num_ctx 4096\n", "PARAMETER num_thread 2\n", "assistant: {{ .Response }}"} {
		if !strings.Contains(m, want) {
			t.Errorf("Modelfile lacks %q:\n%s", want, m)
		}
	}
}
