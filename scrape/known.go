package scrape

import (
	"math"
	"strings"

	"aimeter/bundle"
)

// Quantity is a server-side quantity that several servers expose under
// their own metric names.
type Quantity string

// The quantities Known reads.
const (
	Running  Quantity = "running requests"      // requests being generated (in the batch)
	Waiting  Quantity = "waiting requests"      // requests queued, not yet scheduled
	KVCache  Quantity = "KV-cache usage"        // fraction of the KV cache in use, 0–1
	PrefixHR Quantity = "prefix-cache hit rate" // fraction of looked-up tokens (or blocks) found in the prefix cache, 0–1
)

// Quantities lists the quantities in the order the report draws them.
var Quantities = []Quantity{Running, Waiting, KVCache, PrefixHR}

// source is one way of reading a quantity from a server's metrics.
type source struct {
	server string
	metric string // the sample name; for a ratio, the numerator counter
	// label, if set, keeps only the samples with label[0] = label[1].
	label [2]string
	// denom, if set, makes the quantity the ratio of the increase of
	// metric to the increase of denom between two scrapes (a hit rate
	// from two counters).
	denom string
	// mean averages the series of several label sets (fractions); else
	// they are summed (counts).
	mean bool
}

// sources are tried in this order for each quantity of each target; the
// first one present in the target's scrapes is used. Names are those the
// servers' documentation gives:
//   - vLLM (docs.vllm.ai, "Production Metrics"; V1 engine and the older
//     V0 names): vllm:num_requests_running, vllm:num_requests_waiting,
//     vllm:kv_cache_usage_perc (V0: vllm:gpu_cache_usage_perc; both a
//     fraction despite the name), the counters vllm:prefix_cache_hits and
//     vllm:prefix_cache_queries (exposed with _total; V0: the gauge
//     vllm:gpu_prefix_cache_hit_rate);
//   - SGLang (docs/references/production_metrics.md): sglang:num_running_reqs,
//     sglang:num_queue_reqs, sglang:token_usage, sglang:cache_hit_rate;
//   - Text Generation Inference: tgi_batch_current_size, tgi_queue_size
//     (it exposes no KV-cache or prefix-cache series);
//   - Triton with the TensorRT-LLM backend: nv_trt_llm_request_metrics
//     {request_type="active"|"waiting"}, nv_trt_llm_kv_cache_block_metrics
//     {kv_cache_block_type="fraction"}; any Triton model:
//     nv_inference_pending_request_count for the waiting requests.
var sources = map[Quantity][]source{
	Running: {
		{server: "vLLM", metric: "vllm:num_requests_running"},
		{server: "SGLang", metric: "sglang:num_running_reqs"},
		{server: "TGI", metric: "tgi_batch_current_size"},
		{server: "Triton", metric: "nv_trt_llm_request_metrics", label: [2]string{"request_type", "active"}},
	},
	Waiting: {
		{server: "vLLM", metric: "vllm:num_requests_waiting"},
		{server: "SGLang", metric: "sglang:num_queue_reqs"},
		{server: "TGI", metric: "tgi_queue_size"},
		{server: "Triton", metric: "nv_trt_llm_request_metrics", label: [2]string{"request_type", "waiting"}},
		{server: "Triton", metric: "nv_inference_pending_request_count"},
	},
	KVCache: {
		{server: "vLLM", metric: "vllm:kv_cache_usage_perc", mean: true},
		{server: "vLLM", metric: "vllm:gpu_cache_usage_perc", mean: true},
		{server: "SGLang", metric: "sglang:token_usage", mean: true},
		{server: "Triton", metric: "nv_trt_llm_kv_cache_block_metrics", label: [2]string{"kv_cache_block_type", "fraction"}, mean: true},
	},
	PrefixHR: {
		{server: "vLLM", metric: "vllm:prefix_cache_hits_total", denom: "vllm:prefix_cache_queries_total"},
		{server: "vLLM", metric: "vllm:prefix_cache_hits", denom: "vllm:prefix_cache_queries"},
		{server: "vLLM", metric: "vllm:gpu_prefix_cache_hits_total", denom: "vllm:gpu_prefix_cache_queries_total"},
		{server: "vLLM", metric: "vllm:gpu_prefix_cache_hit_rate", mean: true},
		{server: "SGLang", metric: "sglang:cache_hit_rate", mean: true},
	},
}

// Series is one quantity of one target over the run.
type Series struct {
	Target   int      // index in ServerMetrics.Targets
	Quantity Quantity // what it is
	Server   string   // whose metric names it was read by: "vLLM", "SGLang", "TGI" or "Triton"
	Metric   string   // the metric read (for a ratio, "A / B")
	// Points are its values in time order, at the middle of each scrape
	// (TimeNs + DurationNs/2, from the run's start). A failed scrape, or
	// a ratio over an interval with nothing looked up, is a NaN: a gap.
	Points []Point
}

// Point is one value of a Series.
type Point struct {
	TimeNs int64
	Value  float64
}

// Known returns the known quantities each target exposed, target by
// target in the order of Quantities; nil for nil.
func Known(m *bundle.ServerMetrics) []Series {
	if m == nil {
		return nil
	}
	byTarget := make([][]bundle.Scrape, len(m.Targets))
	for _, s := range m.Scrapes {
		if s.Target >= 0 && s.Target < len(byTarget) {
			byTarget[s.Target] = append(byTarget[s.Target], s)
		}
	}
	var out []Series
	for t, scrapes := range byTarget {
		for _, q := range Quantities {
			for _, src := range sources[q] {
				if !present(scrapes, src) {
					continue
				}
				out = append(out, src.read(t, q, scrapes))
				break
			}
		}
	}
	return out
}

// present reports whether any scrape has src's metric (and denominator).
func present(scrapes []bundle.Scrape, src source) bool {
	for _, s := range scrapes {
		if _, ok := value(s, src.metric, src.label, src.mean); ok {
			if src.denom == "" {
				return true
			}
			if _, ok := value(s, src.denom, src.label, false); ok {
				return true
			}
		}
	}
	return false
}

// value is the sum (or mean) of metric over its label sets in scrape s,
// keeping only those with label, if set; false when s has none.
func value(s bundle.Scrape, metric string, label [2]string, mean bool) (float64, bool) {
	sum, n := 0.0, 0
	for _, x := range s.Samples {
		if x.Name != metric || (label[0] != "" && x.Labels[label[0]] != label[1]) {
			continue
		}
		sum += x.Value
		n++
	}
	if n == 0 {
		return 0, false
	}
	if mean {
		return sum / float64(n), true
	}
	return sum, true
}

// read makes the series of src from one target's scrapes.
func (src source) read(target int, q Quantity, scrapes []bundle.Scrape) Series {
	s := Series{Target: target, Quantity: q, Server: src.server, Metric: src.metric}
	if src.denom != "" {
		s.Metric = "Δ" + src.metric + " / Δ" + src.denom
	}
	if label := src.label; label[0] != "" {
		s.Metric += "{" + label[0] + "=\"" + label[1] + "\"}"
	}
	havePrev := false
	var prevNum, prevDen float64
	for _, sc := range scrapes {
		p := Point{TimeNs: sc.TimeNs + sc.DurationNs/2, Value: math.NaN()}
		if sc.Error == "" {
			if src.denom == "" {
				if v, ok := value(sc, src.metric, src.label, src.mean); ok {
					p.Value = v
				}
			} else {
				num, ok1 := value(sc, src.metric, src.label, false)
				den, ok2 := value(sc, src.denom, src.label, false)
				if ok1 && ok2 {
					if havePrev {
						p.Value = ratio(num-prevNum, den-prevDen)
					}
					prevNum, prevDen, havePrev = num, den, true
				}
			}
		}
		s.Points = append(s.Points, p)
	}
	return s
}

// ratio is the hit rate of an interval: dn hits of dd lookups; NaN when
// nothing was looked up or a counter went back (the server restarted).
func ratio(dn, dd float64) float64 {
	if dd <= 0 || dn < 0 || dn > dd {
		return math.NaN()
	}
	return dn / dd
}

// TargetName is a short name for target URL u in a legend: its host and
// port, and its path when that is not /metrics.
func TargetName(u string) string {
	s := u
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(s, "/metrics")
}
