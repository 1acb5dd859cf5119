package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"aimeter/benchmark/invocation"
	"aimeter/loadgen"
	"aimeter/serve"
)

// TestSessionsAgainstServeOpenAI runs generated sessions against `aimeter
// serve openai` over a real socket: each later turn is scheduled exactly
// its think time after the previous turn of its session completed, every
// turn writes its max_tokens, and the bundle records each session's turn
// count, from which every sample's session and turn follow.
func TestSessionsAgainstServeOpenAI(t *testing.T) {
	url := startServeOpenAI(t, "--ttft", "2ms", "--tpot", "500us")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	res := runCLI(t, dir, "sessions", "--sut", "openai", "--url", url, "--ignore-eos", "-q", "--output-dir", out,
		"--sessions", "6", "--turns", "2:4", "--think", "20ms", "--interval", "5ms", "--answer-tokens", "5", "--user-words", "12", "--slo", "e2e=30s")
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	if !strings.Contains(res.stdout, "Sessions: 6, e2e_interactivity") || !strings.Contains(res.stdout, "turn 1: 6 sent, 0 failed") {
		t.Errorf("no session figures:\n%s", res.stdout)
	}
	rep := runCLI(t, dir, "report", out)
	if line := lineWith(res.stdout, "e2e_interactivity"); line == "" || lineWith(rep.stdout, "e2e_interactivity") != line {
		t.Errorf("aimeter report's sessions line %q, the run's %q", lineWith(rep.stdout, "e2e_interactivity"), line)
	}
	b, recs := replayRecords(t, out)
	ss := invocation.Of(b).Sessions
	if ss == nil || len(ss.TurnsPerSession) != 6 {
		t.Fatalf("invocation's sessions: %+v", ss)
	}
	bySample := map[uint64]loadgen.Record{}
	for _, r := range recs {
		bySample[r.SampleIndex] = r
	}
	first := 0
	for s, n := range ss.TurnsPerSession {
		if n < 2 || n > 4 {
			t.Errorf("session %d has %d turns, want 2 to 4", s, n)
		}
		for k := range n {
			r, ok := bySample[uint64(first+k)]
			if !ok || r.Status != loadgen.StatusOK || r.Tokens != 5 {
				t.Fatalf("session %d turn %d: %+v (present %v)", s, k, r, ok)
			}
			want := int64(s) * 5_000_000 // session s starts at s × 5 ms
			if k > 0 {
				want = bySample[uint64(first+k-1)].CompletedNs + 20_000_000
			}
			if r.ScheduledNs != want || r.IssuedNs < r.ScheduledNs {
				t.Errorf("session %d turn %d scheduled %d issued %d; want scheduled %d", s, k, r.ScheduledNs, r.IssuedNs, want)
			}
		}
		first += n
	}
	if len(recs) != first {
		t.Errorf("%d records for %d turns", len(recs), first)
	}

	// result.json has the session figures and the goodput against --slo,
	// and the report shows them; aimeter report wrote them again above.
	var rj struct {
		Goodput *struct {
			SLO struct {
				E2ENs int64 `json:"e2e_ns"`
			} `json:"slo"`
			SLOSource string `json:"slo_source"`
			Met       int    `json:"met"`
		} `json:"goodput"`
		Sessions *struct {
			Sessions, Turns  int
			E2EInteractivity float64 `json:"e2e_interactivity"`
			PerTurn          []any   `json:"per_turn"`
		} `json:"sessions"`
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rj); err != nil {
		t.Fatal(err)
	}
	if g := rj.Goodput; g == nil || g.SLO.E2ENs != 30e9 || g.SLOSource != "invocation" || g.Met != first {
		t.Errorf("result.json's goodput %+v, want all %d turns within e2e=30s", g, first)
	}
	if ss := rj.Sessions; ss == nil || ss.Sessions != 6 || ss.Turns != first || ss.E2EInteractivity <= 0 || len(ss.PerTurn) < 2 {
		t.Errorf("result.json's sessions %+v", ss)
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	for _, want := range []string{"Serving figures", "e2e_interactivity (MLPerf Endpoints)", "E2E ≤ 30s"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestSessionsBadInput: a bad ShareGPT file or flag is refused before the
// run, naming the line, entry and turn or the flag.
func TestSessionsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},{\"from\":\"human\",\"value\":\"b\"}]}\n]"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:9"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"alternation", []string{"--sut", "openai", "--url", url, "--sharegpt", bad}, `line 2: entry 0: "conversations"[1]: a user turn where an assistant turn must come`},
		{"turns", []string{"--sut", "openai", "--url", url, "--turns", "4:2"}, `--turns "4:2"`},
		{"null SUT", []string{"--turns", "2"}, "Sessions with --sut null"},
		{"prompts", []string{"--sut", "openai", "--url", url, "--prompts", bad}, "--prompts does not apply to sessions"},
		{"generated flag with a file", []string{"--sut", "openai", "--url", url, "--sharegpt", bad, "--turns", "2"}, "--turns applies only to generated sessions (no --sharegpt)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, dir, append([]string{"sessions", "-q", "--output-dir", filepath.Join(dir, "out")}, tc.args...)...)
			if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("want exit 2 with %q:\n%v", tc.want, res)
			}
		})
	}
}

// TestSessionsHistoryReachesTheServer captures the request bodies of a
// ShareGPT session at the server: turn 1 carries the system prompt, turn
// 0 and its answer, then the new user message, without a nonce. The answer
// is the server's own (the text it streamed for turn 0) by default, and
// the data set's reference answer with --history dataset.
func TestSessionsHistoryReachesTheServer(t *testing.T) {
	for _, history := range []string{"server", "dataset"} {
		t.Run(history, func(t *testing.T) { testSessionsHistory(t, history) })
	}
}

// teeWriter keeps what a handler writes, flushing as it goes.
type teeWriter struct {
	http.ResponseWriter
	buf *bytes.Buffer
}

func (w teeWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w teeWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// streamedText is the content of a streamed chat response's chunks.
func streamedText(body string) string {
	var text strings.Builder
	for _, line := range strings.Split(body, "\n") {
		var ch struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &ch) == nil && len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	return text.String()
}

func testSessionsHistory(t *testing.T, history string) {
	sim := newSim(t, "max_tokens", serve.OpenAIOptions{Models: []string{"sim"}, Seed: 5})
	type msg struct{ Role, Content string }
	var mu sync.Mutex
	var seen [][]msg
	var answers []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			b, _ := io.ReadAll(r.Body)
			var req struct{ Messages []msg }
			if err := json.Unmarshal(b, &req); err == nil {
				mu.Lock()
				seen = append(seen, req.Messages)
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			var buf bytes.Buffer
			sim.ServeHTTP(teeWriter{w, &buf}, r)
			mu.Lock()
			answers = append(answers, streamedText(buf.String()))
			mu.Unlock()
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "chat.json")
	chat := `[{"id": "x", "conversations": [
  {"from": "system", "value": "Be brief."},
  {"from": "human", "value": "one two"},
  {"from": "gpt", "value": "three four five"},
  {"from": "human", "value": "six"},
  {"from": "gpt", "value": "seven"}]}]`
	if err := os.WriteFile(file, []byte(chat), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, dir, "sessions", "--sut", "openai", "--url", srv.URL, "--ignore-eos", "-q", "--output-dir", filepath.Join(dir, "out"),
		"--sharegpt", file, "--think", "1ms", "--history", history)
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d requests, want 2: %+v", len(seen), seen)
	}
	want := []msg{{"system", "Be brief."}, {"user", "one two"}, {"assistant", "three four five"}, {"user", "six"}}
	if history == "server" {
		if answers[0] == "" || answers[0] == "three four five" {
			t.Fatalf("the server's answer to turn 0 is %q", answers[0])
		}
		want[2].Content = answers[0]
	}
	if fmt.Sprint(seen[0]) != fmt.Sprint(want[:2]) || fmt.Sprint(seen[1]) != fmt.Sprint(want) {
		t.Errorf("turn 0 sent %+v\nturn 1 sent %+v\nwant %+v", seen[0], seen[1], want)
	}
}
