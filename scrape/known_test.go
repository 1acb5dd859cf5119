package scrape

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"aimeter/bundle"
)

func ms(name string, v float64, kv ...string) bundle.MetricSample {
	var l map[string]string
	if len(kv) > 0 {
		l = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
	}
	return bundle.MetricSample{Name: name, Labels: l, Value: v}
}

// seriesString writes a series as "quantity [server metric]: t=v …" with
// NaN as "gap", for comparison with hand-worked expectations.
func seriesString(s Series) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s [%s %s]:", s.Target, s.Quantity, s.Server, s.Metric)
	for _, p := range s.Points {
		if math.IsNaN(p.Value) {
			fmt.Fprintf(&b, " %d=gap", p.TimeNs)
			continue
		}
		fmt.Fprintf(&b, " %d=%g", p.TimeNs, p.Value)
	}
	return b.String()
}

// TestKnown checks each server's names with hand-worked values.
func TestKnown(t *testing.T) {
	const s = int64(1e9)
	tests := []struct {
		name    string
		scrapes []bundle.Scrape
		want    []string
	}{{
		// Two engines of one vLLM: counts are summed over the label sets
		// (2+3 = 5, 1+1 = 2), the KV-cache fraction is their mean
		// ((0.25+0.5)/2 = 0.375, (0.5+0.5)/2 = 0.5). The hit rate is the
		// increase of hits over the increase of lookups from the last
		// good scrape: at 2 s, (250−100)/(700−400) = 0.5 (the failed
		// scrape at 1 s is skipped); at 3 s nothing was looked up (0/0):
		// a gap, as is the first scrape, which has no interval. Times are
		// the middles of the scrapes (t + 10/2 ns).
		name: "vLLM V1, two engines, one failed scrape",
		scrapes: []bundle.Scrape{
			{TimeNs: 0, DurationNs: 10, Samples: []bundle.MetricSample{
				ms("vllm:num_requests_running", 2, "engine", "0"), ms("vllm:num_requests_running", 3, "engine", "1"),
				ms("vllm:num_requests_waiting", 0, "engine", "0"), ms("vllm:num_requests_waiting", 1, "engine", "1"),
				ms("vllm:kv_cache_usage_perc", 0.25, "engine", "0"), ms("vllm:kv_cache_usage_perc", 0.5, "engine", "1"),
				ms("vllm:prefix_cache_hits_total", 100), ms("vllm:prefix_cache_queries_total", 400)}},
			{TimeNs: 1 * s, DurationNs: 10, Error: "no answer within 1s"},
			{TimeNs: 2 * s, DurationNs: 10, Samples: []bundle.MetricSample{
				ms("vllm:num_requests_running", 1, "engine", "0"), ms("vllm:num_requests_running", 1, "engine", "1"),
				ms("vllm:num_requests_waiting", 0, "engine", "0"), ms("vllm:num_requests_waiting", 0, "engine", "1"),
				ms("vllm:kv_cache_usage_perc", 0.5, "engine", "0"), ms("vllm:kv_cache_usage_perc", 0.5, "engine", "1"),
				ms("vllm:prefix_cache_hits_total", 250), ms("vllm:prefix_cache_queries_total", 700)}},
			{TimeNs: 3 * s, DurationNs: 10, Samples: []bundle.MetricSample{
				ms("vllm:num_requests_running", 0), ms("vllm:num_requests_waiting", 0), ms("vllm:kv_cache_usage_perc", 0),
				ms("vllm:prefix_cache_hits_total", 250), ms("vllm:prefix_cache_queries_total", 700)}},
		},
		want: []string{
			"0 running requests [vLLM vllm:num_requests_running]: 5=5 1000000005=gap 2000000005=2 3000000005=0",
			"0 waiting requests [vLLM vllm:num_requests_waiting]: 5=1 1000000005=gap 2000000005=0 3000000005=0",
			"0 KV-cache usage [vLLM vllm:kv_cache_usage_perc]: 5=0.375 1000000005=gap 2000000005=0.5 3000000005=0",
			"0 prefix-cache hit rate [vLLM Δvllm:prefix_cache_hits_total / Δvllm:prefix_cache_queries_total]: 5=gap 1000000005=gap 2000000005=0.5 3000000005=gap",
		},
	}, {
		// A counter that goes back (the server restarted) makes a gap,
		// not a negative rate: 10/20 = 0.5, then 5 < 30 hits.
		name: "vLLM counters reset",
		scrapes: []bundle.Scrape{
			{TimeNs: 0, Samples: []bundle.MetricSample{ms("vllm:prefix_cache_hits_total", 20), ms("vllm:prefix_cache_queries_total", 40)}},
			{TimeNs: s, Samples: []bundle.MetricSample{ms("vllm:prefix_cache_hits_total", 30), ms("vllm:prefix_cache_queries_total", 60)}},
			{TimeNs: 2 * s, Samples: []bundle.MetricSample{ms("vllm:prefix_cache_hits_total", 5), ms("vllm:prefix_cache_queries_total", 10)}},
		},
		want: []string{"0 prefix-cache hit rate [vLLM Δvllm:prefix_cache_hits_total / Δvllm:prefix_cache_queries_total]: 0=gap 1000000000=0.5 2000000000=gap"},
	}, {
		name: "vLLM V0 names",
		scrapes: []bundle.Scrape{{TimeNs: 0, Samples: []bundle.MetricSample{
			ms("vllm:gpu_cache_usage_perc", 0.75), ms("vllm:gpu_prefix_cache_hit_rate", 0.125)}}},
		want: []string{
			"0 KV-cache usage [vLLM vllm:gpu_cache_usage_perc]: 0=0.75",
			"0 prefix-cache hit rate [vLLM vllm:gpu_prefix_cache_hit_rate]: 0=0.125",
		},
	}, {
		name: "SGLang",
		scrapes: []bundle.Scrape{{TimeNs: 0, Samples: []bundle.MetricSample{
			ms("sglang:num_running_reqs", 7), ms("sglang:num_queue_reqs", 2), ms("sglang:token_usage", 0.28), ms("sglang:cache_hit_rate", 0.0075)}}},
		want: []string{
			"0 running requests [SGLang sglang:num_running_reqs]: 0=7",
			"0 waiting requests [SGLang sglang:num_queue_reqs]: 0=2",
			"0 KV-cache usage [SGLang sglang:token_usage]: 0=0.28",
			"0 prefix-cache hit rate [SGLang sglang:cache_hit_rate]: 0=0.0075",
		},
	}, {
		// TGI exposes no KV-cache or prefix-cache series: none is made up.
		name:    "TGI",
		scrapes: []bundle.Scrape{{TimeNs: 0, Samples: []bundle.MetricSample{ms("tgi_batch_current_size", 8), ms("tgi_queue_size", 3)}}},
		want: []string{
			"0 running requests [TGI tgi_batch_current_size]: 0=8",
			"0 waiting requests [TGI tgi_queue_size]: 0=3",
		},
	}, {
		// One TensorRT-LLM family holds active, waiting and max: the label
		// picks one (4, 2), never their sum (262).
		name: "Triton TensorRT-LLM",
		scrapes: []bundle.Scrape{{TimeNs: 0, Samples: []bundle.MetricSample{
			ms("nv_trt_llm_request_metrics", 4, "request_type", "active"), ms("nv_trt_llm_request_metrics", 2, "request_type", "waiting"),
			ms("nv_trt_llm_request_metrics", 256, "request_type", "max"),
			ms("nv_trt_llm_kv_cache_block_metrics", 0.6, "kv_cache_block_type", "fraction"), ms("nv_trt_llm_kv_cache_block_metrics", 900, "kv_cache_block_type", "used"),
			ms("nv_inference_pending_request_count", 9, "model", "ensemble")}}},
		want: []string{
			`0 running requests [Triton nv_trt_llm_request_metrics{request_type="active"}]: 0=4`,
			`0 waiting requests [Triton nv_trt_llm_request_metrics{request_type="waiting"}]: 0=2`,
			`0 KV-cache usage [Triton nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"}]: 0=0.6`,
		},
	}, {
		name: "Triton without TensorRT-LLM: pending requests are the waiting ones, summed over models",
		scrapes: []bundle.Scrape{{TimeNs: 0, Samples: []bundle.MetricSample{
			ms("nv_inference_pending_request_count", 3, "model", "a"), ms("nv_inference_pending_request_count", 4, "model", "b")}}},
		want: []string{"0 waiting requests [Triton nv_inference_pending_request_count]: 0=7"},
	}, {
		name:    "a server with none of the known names gives no series",
		scrapes: []bundle.Scrape{{TimeNs: 0, Samples: []bundle.MetricSample{ms("process_cpu_seconds_total", 3)}}},
	}, {
		name:    "a target that never answered gives no series",
		scrapes: []bundle.Scrape{{TimeNs: 0, Error: "connection refused"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Known(&bundle.ServerMetrics{IntervalNs: s, Targets: []string{"http://x/metrics"}, Scrapes: tc.scrapes})
			var lines []string
			for _, g := range got {
				lines = append(lines, seriesString(g))
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	if Known(nil) != nil {
		t.Error("Known(nil) is not nil")
	}
}

func TestKnownTargetsApart(t *testing.T) {
	m := &bundle.ServerMetrics{IntervalNs: 1e9, Targets: []string{"http://a/metrics", "http://b:9000/m"}, Scrapes: []bundle.Scrape{
		{Target: 1, TimeNs: 0, Samples: []bundle.MetricSample{ms("sglang:num_running_reqs", 1)}},
		{Target: 0, TimeNs: 0, Samples: []bundle.MetricSample{ms("vllm:num_requests_running", 2)}},
	}}
	var lines []string
	for _, g := range Known(m) {
		lines = append(lines, seriesString(g))
	}
	want := "0 running requests [vLLM vllm:num_requests_running]: 0=2\n1 running requests [SGLang sglang:num_running_reqs]: 0=1"
	if strings.Join(lines, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), want)
	}
	if TargetName(m.Targets[0]) != "a" || TargetName(m.Targets[1]) != "b:9000/m" || TargetName("http://u:p@c:1/metrics") != "c:1" {
		t.Errorf("TargetName: %q %q", TargetName(m.Targets[0]), TargetName(m.Targets[1]))
	}
}
