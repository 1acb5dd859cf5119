package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestOpenAICacheResponses: with CacheResponses, a prompt answered before
// is answered again at once and with the same text (the fault TEST04
// detects), and counted; a new prompt still waits its delays.
func TestOpenAICacheResponses(t *testing.T) {
	ttft, _ := ParseDurationDist("50ms")
	tpot, _ := ParseDurationDist("10ms")
	out, _ := ParseLengthDist("3")
	sim, err := NewOpenAI(OpenAIOptions{TTFT: ttft, TPOT: tpot, OutputTokens: out, CacheResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	defer sim.Close()
	ask := func(prompt string) (string, time.Duration) {
		start := time.Now()
		resp, err := http.Post(srv.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"`+prompt+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var text string
		if _, after, ok := strings.Cut(string(b), `"text":"`); ok {
			text, _, _ = strings.Cut(after, `"`)
		}
		return text, time.Since(start)
	}
	first, d1 := ask("hello")
	again, d2 := ask("hello")
	_, d3 := ask("another")
	if d1 < 70*time.Millisecond || d3 < 70*time.Millisecond {
		t.Errorf("fresh prompts took %v and %v, want their 70 ms of delays", d1, d3)
	}
	if d2 >= 50*time.Millisecond || again != first || first == "" {
		t.Errorf("the repeated prompt took %v (want at once) and said %q (first %q)", d2, again, first)
	}
	if st := sim.Stats(); st.CacheHits != 1 || !strings.Contains(st.String(), "simulated cache hits 1") {
		t.Errorf("stats %+v", st)
	}
}
