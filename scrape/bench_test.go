//go:build unix

package scrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// vllmExposition is an exposition the size of a vLLM V1 server's: its
// gauges and counters, and 15 histograms of 20 buckets each, for one
// model and engine (about 400 lines, 33 KB).
func vllmExposition() string {
	var b strings.Builder
	l := `engine="0",model_name="Qwen/Qwen3-0.6B"`
	for _, g := range []string{"num_requests_running", "num_requests_waiting", "kv_cache_usage_perc"} {
		fmt.Fprintf(&b, "# HELP vllm:%s x\n# TYPE vllm:%s gauge\nvllm:%s{%s} 3.0\n", g, g, g, l)
	}
	for _, c := range []string{"prefix_cache_queries", "prefix_cache_hits", "num_preemptions", "prompt_tokens", "generation_tokens", "request_success"} {
		fmt.Fprintf(&b, "# HELP vllm:%s_total x\n# TYPE vllm:%s_total counter\nvllm:%s_total{%s} 12345.0\n", c, c, c, l)
	}
	for h := range 15 {
		name := fmt.Sprintf("vllm:histogram_%d_seconds", h)
		fmt.Fprintf(&b, "# HELP %s x\n# TYPE %s histogram\n", name, name)
		for i := range 20 {
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"%g\"} %d.0\n", name, l, 0.001*float64(int(1)<<i), i*10)
		}
		fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} 200.0\n%s_count{%s} 200.0\n%s_sum{%s} 12.5\n", name, l, name, l, name, l)
	}
	return b.String()
}

// cpuTime is the CPU time this process has used, user and system: on a
// machine that others load, the cost of an operation is its CPU time per
// operation (reported as cpu-ns/op), not its wall time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkParse is the CPU cost of parsing one vLLM-sized exposition:
// at one scrape a second, the fraction of one core that scraping takes is
// this time over one second.
func BenchmarkParse(b *testing.B) {
	text := vllmExposition()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if _, err := Parse(text, false); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkScrapeLoopback is one whole scrape of a vLLM-sized exposition
// over a loopback socket: request, response, parse (server side included,
// as both run in this process).
func BenchmarkScrapeLoopback(b *testing.B) {
	text := vllmExposition()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(text))
	}))
	defer srv.Close()
	s := &Scraper{opts: Options{Timeout: 10 * time.Second, MaxBytes: DefaultMaxBytes, Client: srv.Client()}}
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		if _, err := s.fetch(context.Background(), srv.URL+"/metrics"); err != nil {
			b.Fatal(err)
		}
	}
}
