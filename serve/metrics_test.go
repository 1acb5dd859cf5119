package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"aimeter/scrape"
)

// metricsOf scrapes url's /metrics and returns name → value (summed over
// label sets), parsed with the parser aimeter's runs use.
func metricsOf(t *testing.T, base string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%s: %s, %q", MetricsPath, res.Status, res.Header.Get("Content-Type"))
	}
	samples, err := scrape.Parse(string(body), false)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range samples {
		out[s.Name] += s.Value
		if s.Labels["model_name"] == "" {
			t.Errorf("%s has no model_name label", s.Name)
		}
	}
	return out
}

// TestOpenAIMetrics: the simulator's /metrics counts what it did, under
// vLLM's names: 3 + 2 prompt words and 4 + 4 output tokens of two
// requests, the second a cache hit (its 2 prompt tokens found in the
// simulated cache); a request held open by a long TTFT is running.
func TestOpenAIMetrics(t *testing.T) {
	ttft, err := ParseDurationDist("1h")
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newSim(t, OpenAIOptions{Seed: 1, CacheResponses: true})
	for _, body := range []string{
		`{"model":"sim","prompt":"one two three","max_tokens":4,"ignore_eos":true}`,
		`{"model":"sim","prompt":"four five","max_tokens":4,"ignore_eos":true}`,
		`{"model":"sim","prompt":"four five","max_tokens":4,"ignore_eos":true}`,
	} {
		res := post(t, hs.Client(), hs.URL+"/v1/completions", body)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %s", body, res.Status)
		}
	}
	// The handler counts a response once its last byte is written, which
	// can be just after the client has read that byte: wait until no
	// request is running before comparing (the counters are final then).
	got := metricsOf(t, hs.URL)
	for deadline := time.Now().Add(time.Minute); got["vllm:num_requests_running"] != 0; got = metricsOf(t, hs.URL) {
		if time.Now().After(deadline) {
			t.Fatalf("vllm:num_requests_running stayed %v after the responses were read", got["vllm:num_requests_running"])
		}
		time.Sleep(time.Millisecond)
	}
	want := map[string]float64{
		"vllm:num_requests_running": 0, "vllm:num_requests_waiting": 0,
		"vllm:prompt_tokens_total": 7, "vllm:generation_tokens_total": 12, "vllm:request_success_total": 3,
		"vllm:prefix_cache_queries_total": 7, "vllm:prefix_cache_hits_total": 2,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	// A request waiting for its first token is running.
	_, slow := newSim(t, OpenAIOptions{Seed: 1, TTFT: ttft})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, slow.URL+"/v1/completions", strings.NewReader(`{"prompt":"a","max_tokens":2}`))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := slow.Client().Do(req); err == nil {
			res.Body.Close()
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for metricsOf(t, slow.URL)["vllm:num_requests_running"] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the held request never showed as running")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, ok := metricsOf(t, slow.URL)["vllm:prefix_cache_hits_total"]; ok {
		t.Error("prefix-cache metrics without CacheResponses: the simulator has no cache to report")
	}
	cancel()
	<-done
}

// TestKServeMetrics: the KServe server counts answered inferences under
// vLLM's names and its refusals under Triton's.
func TestKServeMetrics(t *testing.T) {
	k, err := NewKServe(KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv := httptest.NewServer(k)
	defer srv.Close()
	pixels := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 784), ",") + "]"
	for range 2 {
		res, err := http.Post(srv.URL+"/v2/models/fashion-mlp/infer", "application/json",
			strings.NewReader(`{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":`+pixels+`}]}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	got := metricsOf(t, srv.URL)
	for k, v := range map[string]float64{"vllm:request_success_total": 2, "vllm:num_requests_running": 0, "vllm:num_requests_waiting": 0, "nv_inference_request_failure": 0} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
