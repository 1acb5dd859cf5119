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
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/serve"
)

// replayRecords reads a replay bundle's records through package bundle.
func replayRecords(t *testing.T, dir string) (*bundle.Bundle, []loadgen.Record) {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var recs []loadgen.Record
	for r := range b.Result.Records() {
		recs = append(recs, r)
	}
	return b, recs
}

// TestReplayAgainstServeOpenAI replays a CSV trace against `aimeter serve
// openai` over a real socket, twice as fast and cut to 25 requests: every
// request goes out as sample k at its scaled trace time, writes its
// trace's output length, and the bundle records the trace; `run --from`
// repeats it and refuses the trace once it changed.
func TestReplayAgainstServeOpenAI(t *testing.T) {
	url := startServeOpenAI(t, "--ttft", "2ms", "--tpot", "500us")
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("t_ms,input_tokens,output_tokens,session\n")
	for k := range 30 {
		fmt.Fprintf(&csv, "%d,%d,%d,s%d\n", 10*k, 5+k, 1+k%4, k%3)
	}
	tracePath := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(tracePath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	res := runCLI(t, dir, "replay", tracePath, "--sut", "openai", "--url", url, "--ignore-eos", "-q",
		"--speedup", "2", "--max-requests", "25", "--output-dir", out)
	// INVALID (3) is a result: 25 requests are too few for early stopping.
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	if !strings.Contains(res.stdout, "Replay: send lateness over 25 requests") {
		t.Errorf("no lateness line:\n%s", res.stdout)
	}
	b, recs := replayRecords(t, out)
	if len(recs) != 25 {
		t.Fatalf("%d records, want 25", len(recs))
	}
	for k, r := range recs {
		// Hand-worked: line k+2 at 10·k ms, twice as fast: 5·k ms.
		if r.SampleIndex != uint64(k) || r.ScheduledNs != int64(k)*5_000_000 {
			t.Errorf("request %d: sample %d scheduled %d ns; want sample %d at %d ns", k, r.SampleIndex, r.ScheduledNs, k, k*5_000_000)
		}
		if r.Status != loadgen.StatusOK || r.Tokens != int64(1+k%4) {
			t.Errorf("request %d: %s with %d tokens; want ok with %d (its output_tokens)", k, r.Status, r.Tokens, 1+k%4)
		}
		if r.IssuedNs < r.ScheduledNs {
			t.Errorf("request %d sent before its time", k)
		}
	}
	rp := invocation.Of(b).Replay
	if rp == nil || rp.Requests != 25 || rp.Format != "csv" || rp.Speedup != 2 || rp.SHA256 == "" || !strings.Contains(rp.Truncated, "the first 25 of 30") {
		t.Fatalf("invocation's replay: %+v", rp)
	}

	// The lateness is a function of the bundle: aimeter report gives it
	// again, the same.
	rep := runCLI(t, dir, "report", out)
	if line := lineWith(res.stdout, "Replay:"); line == "" || lineWith(rep.stdout, "Replay:") != line {
		t.Errorf("aimeter report's replay line %q, the run's %q", lineWith(rep.stdout, "Replay:"), line)
	}

	// The same run again from its bundle: the same schedule.
	again := filepath.Join(dir, "again")
	if res := runCLI(t, dir, "run", "--from", out, "--output-dir", again, "-q"); res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("run --from: %v", res)
	}
	_, recs2 := replayRecords(t, again)
	if len(recs2) != 25 || recs2[24].ScheduledNs != recs[24].ScheduledNs || recs2[24].SampleIndex != 24 {
		t.Errorf("the repeated replay differs: %d records", len(recs2))
	}
	// A trace that changed since is refused.
	if err := os.WriteFile(tracePath, []byte(csv.String()+"9999,1,1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, dir, "run", "--from", out, "--output-dir", filepath.Join(dir, "third"), "-q"); res.code != ExitUsage || !strings.Contains(res.stderr, "changed since") {
		t.Errorf("a changed trace: %v", res)
	}
}

// TestReplayPromptsReachTheServer captures the request bodies at the
// server: each prompt has its request's input length in words and its
// output length as max_tokens, and requests whose leading hash ids are
// equal send the same leading text, without a nonce in front of it, so a
// prefix cache sees the trace's sharing.
func TestReplayPromptsReachTheServer(t *testing.T) {
	sim := newSim(t, "max_tokens", serve.OpenAIOptions{Models: []string{"sim"}, Seed: 3})
	var mu sync.Mutex
	bodies := map[int]string{} // max_tokens → content
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			b, _ := io.ReadAll(r.Body)
			var req struct {
				MaxTokens int `json:"max_tokens"`
				Messages  []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(b, &req); err == nil && len(req.Messages) == 1 {
				mu.Lock()
				bodies[req.MaxTokens] = req.Messages[0].Content
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	trace := `{"timestamp": 0, "input_length": 600, "output_length": 7, "hash_ids": [10, 11]}
{"timestamp": 5, "input_length": 512, "output_length": 8, "hash_ids": [10]}
{"timestamp": 9, "input_length": 1030, "output_length": 9, "hash_ids": [10, 11, 12]}
{"timestamp": 12, "input_length": 100, "output_length": 10, "hash_ids": [13]}
`
	tracePath := filepath.Join(dir, "mooncake.jsonl")
	if err := os.WriteFile(tracePath, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, dir, "replay", tracePath, "--sut", "openai", "--url", srv.URL, "--ignore-eos", "-q", "--output-dir", filepath.Join(dir, "out"))
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	words := map[int][]string{}
	for mt, want := range map[int]int{7: 600, 8: 512, 9: 1030, 10: 100} {
		words[mt] = strings.Fields(bodies[mt])
		if len(words[mt]) != want {
			t.Errorf("the request with max_tokens %d sent %d words, want %d", mt, len(words[mt]), want)
		}
	}
	if !strings.HasPrefix(bodies[7], bodies[8]+" ") {
		t.Error("hash ids [10] must be the first 512 words of [10, 11]: the server saw another prefix (a nonce?)")
	}
	if !strings.HasPrefix(bodies[9], bodies[7]+" ") {
		t.Error("[10, 11] with 600 tokens must be a prefix of [10, 11, 12]")
	}
	if strings.HasPrefix(bodies[7], strings.Join(words[10][:5], " ")) {
		t.Error("block 13 must not start like block 10")
	}
}

// TestReplayBadInput: every bad trace or flag is refused before the run
// (exit 2), naming the line and field or the flag.
func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "0,1,1\n")
	url := "http://127.0.0.1:9" // never reached: everything is refused first
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unordered", []string{write("u.csv", "5,1,1\n4,1,1\n"), "--sut", "openai", "--url", url}, `line 2: field "t_ms": 4 ms is before the 5 ms of line 1`},
		{"negative", []string{write("n.jsonl", `{"timestamp":-3,"input_length":1,"output_length":1,"hash_ids":[0]}`), "--sut", "openai", "--url", url}, `line 1: field "timestamp": -3: negative`},
		{"missing field", []string{write("m.jsonl", `{"timestamp":0,"output_length":1,"hash_ids":[0]}`), "--sut", "openai", "--url", url}, `line 1: field "input_length": missing`},
		{"absurd length", []string{write("a.csv", "0,5000000,1\n"), "--sut", "openai", "--url", url}, `field "input_tokens": 5000000 tokens: want 1 to 1048576`},
		{"no file", []string{filepath.Join(dir, "absent.csv"), "--sut", "openai", "--url", url}, "absent.csv"},
		{"null SUT", []string{good}, "Replay with --sut null"},
		{"concurrency", []string{good, "--sut", "openai", "--url", url, "--concurrency", "4"}, "--concurrency does not apply to a replay"},
		{"scenario", []string{good, "--sut", "openai", "--url", url, "--scenario", "Offline"}, "--scenario does not apply to a replay"},
		{"prompts", []string{good, "--sut", "openai", "--url", url, "--prompts", good}, "--prompts does not apply to a replay"},
		{"arrival mode", []string{good, "--sut", "openai", "--url", url, "--arrival-mode", "1"}, "--arrival-mode does not apply"},
		{"speedup", []string{good, "--sut", "openai", "--url", url, "--speedup", "-2"}, "speedup -2"},
		{"max requests", []string{good, "--sut", "openai", "--url", url, "--max-requests", "-1"}, "max requests -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, dir, append([]string{"replay", "-q", "--output-dir", filepath.Join(dir, "out")}, tc.args...)...)
			if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("want exit 2 with %q:\n%v", tc.want, res)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused replay wrote an output directory")
	}
}

// lineWith returns the first line of s that contains sub, or "".
func lineWith(s, sub string) string {
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
