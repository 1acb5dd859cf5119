package cli

import (
	"aimeter/sut"
	"time"

	"github.com/spf13/pflag"
)

// netFlags are the flags every network SUT shares: where the servers are
// and how long to wait for them (cfg, the SUT's sut.Net), and the
// servers' metrics endpoints.
type netFlags struct {
	cfg     sut.Net
	metrics serverMetricsFlags
}

// netFlagNames lists addNetFlags' flags for the help groups.
var netFlagNames = append([]string{"url", "request-timeout", "check-timeout", "max-conns"}, serverMetricsFlagNames...)

func addNetFlags(fl *pflag.FlagSet, n *netFlags) {
	fl.StringArrayVar(&n.cfg.URLs, "url", nil, "network SUTs: the server's base URL (http://host:8000); repeat it for each node of --sut dispatch")
	fl.DurationVar(&n.cfg.RequestTimeout, "request-timeout", time.Minute, "network SUTs: end a request that takes longer than this with an error of category request_timeout (stream_stalled where the response had begun; 0 = no per-request bound)")
	fl.DurationVar(&n.cfg.CheckTimeout, "check-timeout", 10*time.Second, "network SUTs: bound on the check of every server (up, ready, serving the model) before the run")
	fl.IntVar(&n.cfg.MaxConns, "max-conns", 0, "network SUTs: most connections to one server (HTTP); set it to the requests in flight (0 = the adapter's default: for openai 512 kept idle and no bound, for kserve 256)")
	addServerMetricsFlags(fl, &n.metrics)
}
