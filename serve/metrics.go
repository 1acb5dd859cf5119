package serve

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath is where both servers expose their Prometheus metrics, as
// vLLM, SGLang and TGI do.
const MetricsPath = "/metrics"

// newMetricsHandler serves the collectors of reg (a registry of the
// server's own, never the global one) in the Prometheus text format.
func newMetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// counterFunc is a counter read from an atomic the server keeps anyway.
func counterFunc(name, help string, labels prometheus.Labels, v *atomic.Int64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, func() float64 { return float64(v.Load()) })
}

// gaugeFunc is a gauge read from f at each scrape.
func gaugeFunc(name, help string, labels prometheus.Labels, f func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f)
}

// openAIMetrics registers the OpenAI simulator's metrics under vLLM's
// names (docs.vllm.ai, "Production Metrics"), so that a run against it
// plots what a run against vLLM plots:
//
//	vllm:num_requests_running      gauge: generation requests in progress (read, not yet answered to the end)
//	vllm:num_requests_waiting      gauge: always 0, as the simulator queues nothing
//	vllm:prompt_tokens_total       counter: prompt tokens of the requests accepted
//	vllm:generation_tokens_total   counter: output tokens written
//	vllm:request_success_total     counter: responses written to the end
//	vllm:prefix_cache_queries_total, vllm:prefix_cache_hits_total
//	                               counters, with CacheResponses: prompt tokens looked up in, and found in, the simulated cache
//
// Each has the label model_name, the first model served. The counters read
// the atomics behind Stats, so that exposing them costs the requests
// nothing.
func (s *OpenAIServer) registerMetrics() {
	reg := prometheus.NewRegistry()
	l := prometheus.Labels{"model_name": s.opts.Models[0]}
	c := &s.stats
	reg.MustRegister(
		gaugeFunc("vllm:num_requests_running", "Number of requests in model execution batches (aimeter serve: requests being answered).", l,
			func() float64 { return float64(c.running.Load()) }),
		gaugeFunc("vllm:num_requests_waiting", "Number of requests waiting to be processed (aimeter serve queues nothing: always 0).", l,
			func() float64 { return 0 }),
		counterFunc("vllm:prompt_tokens_total", "Number of prefill tokens processed.", l, &c.promptTokens),
		counterFunc("vllm:generation_tokens_total", "Number of generation tokens processed.", l, &c.outputTokens),
		counterFunc("vllm:request_success_total", "Count of successfully processed requests.", l, &c.completed),
	)
	if s.opts.CacheResponses {
		reg.MustRegister(
			counterFunc("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", l, &c.prefixQueries),
			counterFunc("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", l, &c.prefixHits),
		)
	}
	s.metrics = newMetricsHandler(reg)
}

// kserveMetrics are the live counts behind the KServe server's metrics.
type kserveMetrics struct {
	inflight, success, failure atomic.Int64
}

// registerMetrics registers the KServe server's metrics, also under
// vLLM's names so that the report draws them the same way:
//
//	vllm:num_requests_running   gauge: requests taken by the model's workers (in flight, less those queued)
//	vllm:num_requests_waiting   gauge: requests queued for the model
//	vllm:request_success_total  counter: inferences answered
//	nv_inference_request_failure counter: inferences refused (server busy or closing), Triton's name
//
// with the label model_name.
func (k *KServe) registerMetrics() {
	reg := prometheus.NewRegistry()
	l := prometheus.Labels{"model_name": k.opts.ModelName}
	m := &k.live
	waiting := func() float64 { return float64(len(k.jobs)) }
	reg.MustRegister(
		gaugeFunc("vllm:num_requests_running", "Number of requests being inferred (aimeter serve kserve).", l,
			func() float64 { return float64(max(m.inflight.Load()-int64(len(k.jobs)), 0)) }),
		gaugeFunc("vllm:num_requests_waiting", "Number of requests queued for the model (aimeter serve kserve).", l, waiting),
		counterFunc("vllm:request_success_total", "Count of successfully processed requests.", l, &m.success),
		counterFunc("nv_inference_request_failure", "Number of failed inference requests.", l, &m.failure),
	)
	k.metrics = newMetricsHandler(reg)
}
