package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"aimeter/benchmark"
)

// BackendFunc makes the Endpoint of one node of --sut dispatch from its
// URL and the run's SUT configuration (benchmark.Backend).
type BackendFunc = benchmark.Backend

// addDispatchFlags registers the flags of --sut dispatch and of the fixed
// concurrency mode.
func addDispatchFlags(fl *pflag.FlagSet, f *runFlags) {
	d := &f.dispatch
	fl.StringVar(&d.Backend, "backend", "openai", "--sut dispatch: the protocol every node speaks ("+strings.Join(benchmark.BackendNames(nil), ", ")+")")
	fl.StringVar(&d.Policy, "policy", "round-robin", "--sut dispatch: round-robin (equal shares) or least-outstanding (fewest requests in flight)")
	fl.BoolVar(&d.AllowDownNodes, "allow-down-nodes", false, "--sut dispatch: run without the nodes that are down at the start instead of refusing to start")
	fl.Uint64Var(&f.concurrency, "concurrency", 0, "aimeter's fixed-concurrency mode (not an MLPerf scenario): keep N requests in flight, the next sent as one completes; runs on SingleStream's issuing (the default --scenario with it)")
}

// dispatchFlagNames lists addDispatchFlags' flags for the help groups.
var dispatchFlagNames = []string{"backend", "policy", "allow-down-nodes"}
