package cli

import (
	"time"

	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/scrape"
)

// serverMetricsFlags say which Prometheus endpoints of the servers a
// network run scrapes (docs/server-metrics.md).
type serverMetricsFlags struct {
	urls     []string
	interval time.Duration
	off      bool
}

// serverMetricsFlagNames lists the flags for the help groups and the
// network-only rule.
var serverMetricsFlagNames = []string{"server-metrics", "server-metrics-interval", "no-server-metrics"}

func addServerMetricsFlags(fl *pflag.FlagSet, m *serverMetricsFlags) {
	fl.StringArrayVar(&m.urls, "server-metrics", nil, "network SUTs: a Prometheus endpoint to scrape during the run (http://host:8002/metrics); repeat it for several nodes (default: each server's /metrics, if it answers)")
	fl.DurationVar(&m.interval, "server-metrics-interval", scrape.DefaultInterval, "network SUTs: time between two scrapes of the server's metrics")
	fl.BoolVar(&m.off, "no-server-metrics", false, "network SUTs: scrape no server metrics")
}

// plan is the flags as a plan's ServerMetrics, or a usage error naming
// the flag that is wrong.
func (m *serverMetricsFlags) plan() (benchmark.ServerMetrics, error) {
	if m.off && len(m.urls) > 0 {
		return benchmark.ServerMetrics{}, usageError("--no-server-metrics and --server-metrics: give one")
	}
	opts := scrape.Options{Targets: m.urls, Interval: m.interval}
	if len(m.urls) == 0 {
		opts.Targets = []string{"http://check.invalid/metrics"} // the interval alone
	}
	if err := opts.Check(); err != nil {
		if len(m.urls) > 0 {
			return benchmark.ServerMetrics{}, usageError("--server-metrics: %v", err)
		}
		return benchmark.ServerMetrics{}, usageError("--server-metrics-interval: %v", err)
	}
	if m.interval == 0 {
		return benchmark.ServerMetrics{}, usageError("--server-metrics-interval 0: give a positive interval, or --no-server-metrics")
	}
	return benchmark.ServerMetrics{URLs: m.urls, Interval: m.interval, Off: m.off}, nil
}
