package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/mlperflog"
	"aimeter/report"
)

// dispatchFlags are the flags of --sut dispatch.
type dispatchFlags struct {
	backend   string
	policy    string
	allowDown bool
}

// BackendFunc makes the Endpoint of one node of --sut dispatch from its
// URL and the run's SUT configuration (benchmark.Backend).
type BackendFunc = benchmark.Backend

// addDispatchFlags registers the flags of --sut dispatch and of the fixed
// concurrency mode.
func addDispatchFlags(fl *pflag.FlagSet, f *runFlags) {
	d := &f.dispatch
	fl.StringVar(&d.backend, "backend", "openai", "--sut dispatch: the protocol every node speaks ("+strings.Join(benchmark.BackendNames(nil), ", ")+")")
	fl.StringVar(&d.policy, "policy", "round-robin", "--sut dispatch: round-robin (equal shares) or least-outstanding (fewest requests in flight)")
	fl.BoolVar(&d.allowDown, "allow-down-nodes", false, "--sut dispatch: run without the nodes that are down at the start instead of refusing to start")
	fl.Uint64Var(&f.concurrency, "concurrency", 0, "aimeter's fixed-concurrency mode (not an MLPerf scenario): keep N requests in flight, the next sent as one completes; runs on SingleStream's issuing (the default --scenario with it)")
}

// dispatchFlagNames lists addDispatchFlags' flags for the help groups.
var dispatchFlagNames = []string{"backend", "policy", "allow-down-nodes"}

// printNetworkOutcome adds to printOutcome what only some runs have: the
// throughput of a fixed-concurrency run (its headline figure beside the
// latency) and the per-node table of a dispatched run.
func printNetworkOutcome(w io.Writer, res *loadgen.Result, nodes []bundle.Node) {
	if s := res.Summary; s != nil && s.Effective.Concurrency > 0 && s.SampleCount > 1 && s.Result.FinalQueryAllSamplesDoneTime > 0 {
		fmt.Fprintf(w, "Completed samples per second : %s (%d in flight)\n", mlperflog.FormatDouble(s.CompletedSamplesPerSecond()), s.Effective.Concurrency)
	}
	report.WriteNodeTable(w, report.NodeTable(res, derived.ReportNodes(nodes)))
}

// scenarioLabel is how the console names the load of a run: the scenario,
// or the fixed-concurrency mode, which is no MLPerf scenario.
func scenarioLabel(e loadgen.Effective) string {
	if e.Concurrency > 0 {
		return fmt.Sprintf("fixed concurrency %d (aimeter mode, not an MLPerf scenario)", e.Concurrency)
	}
	return e.Scenario.String()
}
