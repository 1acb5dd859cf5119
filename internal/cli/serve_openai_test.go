package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeOpenAI starts `aimeter serve openai` on a free port, streams one
// chat response from it, interrupts it and reads the counters it prints.
func TestServeOpenAI(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "send.jsonl")
	tw := newTwin(t, "serve", "openai", "--addr", "127.0.0.1:0", "--model", "m1", "--model", "m2",
		"--output-tokens", "uniform:3:6", "--ttft", "1ms", "--tpot", "normal:1ms:100us", "--seed", "9", "--send-log", logPath)
	codec := make(chan int, 1)
	go func() { codec <- tw.main() }()

	addrRE := regexp.MustCompile(`listening on (http://\S+)`)
	var url string
	deadline := time.Now().Add(30 * time.Second)
	for url == "" {
		if m := addrRE.FindStringSubmatch(tw.stdout.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-codec:
			t.Fatalf("exited %d before listening:\n%s%s", code, tw.stdout.String(), tw.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 30 s:\n%s", tw.stdout.String())
		}
	}

	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m2","messages":[{"role":"user","content":"hello there"}],"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	resp.Body.Close()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// role, 3–6 tokens, finish, usage, [DONE]
	if len(events) < 7 || len(events) > 10 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("events: %q", events)
	}
	var usage struct {
		Model string `json:"model"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(events[len(events)-2]), &usage); err != nil || usage.Model != "m2" ||
		usage.Usage.PromptTokens != 2 || usage.Usage.CompletionTokens != len(events)-4 {
		t.Errorf("usage event %s: %+v %v", events[len(events)-2], usage, err)
	}

	<-tw.notified
	tw.mu.Lock()
	tw.interrupt(errors.New("test interrupt"))
	tw.mu.Unlock()
	select {
	case code := <-codec:
		if code != ExitOK {
			t.Errorf("exit %d after an interrupt:\n%s", code, tw.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still serving 30 s after the interrupt")
	}
	if out := tw.stdout.String(); !strings.Contains(out, "stopped; requests 1 (streams 1), completed 1") {
		t.Errorf("stdout:\n%s", out)
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if lines := strings.Count(string(b), "\n"); lines != len(events) || !strings.HasPrefix(string(b), `{"id":"chatcmpl-1","chunk":0,"unix_ns":`) {
		t.Errorf("send log has %d lines for %d events:\n%s", lines, len(events), b)
	}
}

func TestServeOpenAIFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
		why  string
	}{
		{[]string{"--ttft", "50"}, `--ttft: "50": "50" is not a duration`, "a duration without its unit"},
		{[]string{"--ttft", "gamma:1ms:2ms"}, "accepted forms: D, uniform:MIN:MAX", "the error lists the accepted forms"},
		{[]string{"--tpot", "lognormal:9ms:1ms"}, "--tpot", "p99 below the median names the flag"},
		{[]string{"--output-tokens", "50ms"}, "--output-tokens", "a duration as a length"},
		{[]string{"--output-tokens", "prompt:1:2"}, "accepted forms: N, uniform:MIN:MAX", "prompt: is for durations"},
		{[]string{"--fault-reset", "1.5"}, "--fault-reset 1.5: a probability is in [0, 1]", "a probability above 1"},
		{[]string{"--fault-stall", "0.6", "--fault-5xx", "0.6"}, "add up to 1.2", "probabilities adding up to more than 1"},
		{[]string{"--max-tokens", "0"}, "--max-tokens 0", "a default max_tokens below 1"},
	}
	for _, tt := range tests {
		r := runCLI(t, "", append([]string{"serve", "openai", "--addr", "127.0.0.1:0"}, tt.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v (%s): %s\nwant exit %d and %q", tt.args, tt.why, r, ExitUsage, tt.want)
		}
	}
}

func TestServeOpenAIBadAddr(t *testing.T) {
	r := runCLI(t, "", "serve", "openai", "--addr", "256.0.0.1:1")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "--addr 256.0.0.1:1") {
		t.Errorf("%s", r)
	}
}
