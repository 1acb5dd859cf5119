package cli

import (
	"aimeter/bundle"
	"aimeter/derived"
	"context"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/loadgen"
	"aimeter/mlperflog"
	"aimeter/report"
	"aimeter/sut/dispatch"
	"aimeter/sut/netsut"
	"aimeter/sut/null"
)

// dispatchFlags are the flags of --sut dispatch.
type dispatchFlags struct {
	backend   string
	policy    string
	allowDown bool
}

// BackendFunc makes the Endpoint of one node of --sut dispatch from its
// URL and the run's flags.
type BackendFunc func(st *State, url string, f *runFlags) (netsut.Endpoint, error)

// addDispatchFlags registers the flags of --sut dispatch and of the fixed
// concurrency mode.
func addDispatchFlags(fl *pflag.FlagSet, f *runFlags) {
	d := &f.dispatch
	fl.StringVar(&d.backend, "backend", "openai", "--sut dispatch: the protocol every node speaks ("+strings.Join(backendNames(nil), ", ")+")")
	fl.StringVar(&d.policy, "policy", "round-robin", "--sut dispatch: round-robin (equal shares) or least-outstanding (fewest requests in flight)")
	fl.BoolVar(&d.allowDown, "allow-down-nodes", false, "--sut dispatch: run without the nodes that are down at the start instead of refusing to start")
	fl.Uint64Var(&f.concurrency, "concurrency", 0, "aimeter's fixed-concurrency mode (not an MLPerf scenario): keep N requests in flight, the next sent as one completes; runs on SingleStream's issuing (the default --scenario with it)")
}

// dispatchFlagNames lists addDispatchFlags' flags for the help groups.
var dispatchFlagNames = []string{"backend", "policy", "allow-down-nodes"}

// builtinBackends are the node protocols of --sut dispatch in this build,
// one case per protocol adapter (sut/openai, sut/kserve add theirs here).
func builtinBackends() map[string]BackendFunc {
	return map[string]BackendFunc{
		"openai": func(_ *State, url string, f *runFlags) (netsut.Endpoint, error) { return newOpenAIEndpoint(url, f) },
		"kserve": func(st *State, url string, f *runFlags) (netsut.Endpoint, error) {
			return newKServeEndpoint(st, url, f)
		},
	}
}

// backendQSL is the sample library of a dispatched run: the backend's own
// data (the prompts of openai), or the null library of --qsl-size.
func backendQSL(kind string, f *runFlags) loadgen.QSL {
	switch kind {
	case "openai":
		if f.openai.set != nil {
			return f.openai.set
		}
	case "kserve":
		if f.kserve.qsl != nil {
			return f.kserve.qsl
		}
	}
	return null.QSL{Total: f.qslSize, Performance: f.perfSamples}
}

// backendNames lists the backends available with extra, sorted.
func backendNames(extra map[string]BackendFunc) []string {
	var names []string
	for k := range builtinBackends() {
		names = append(names, k)
	}
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"none in this build"}
	}
	return names
}

// newBackendEndpoint makes the Endpoint of a node speaking kind at rawURL.
// extra holds backends beyond the built-in ones (State.Backends).
func newBackendEndpoint(st *State, kind, rawURL string, f *runFlags, extra map[string]BackendFunc) (netsut.Endpoint, error) {
	mk, ok := builtinBackends()[kind]
	if !ok {
		mk, ok = extra[kind]
	}
	if !ok {
		return nil, usageError("--backend %q: not available in this build (available: %s)", kind, strings.Join(backendNames(extra), ", "))
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--url %q: want an http:// or https:// URL with a host", redactURL(rawURL))
	}
	ep, err := mk(st, rawURL, f)
	if err != nil {
		return nil, usageError("--url %s (--backend %s): %w", redactURL(rawURL), kind, err)
	}
	return ep, nil
}

// redactURL drops the user information (a password, a token) from a URL
// before it is shown or stored.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(raw, "@") {
			return "(unparsable URL)"
		}
		return raw
	}
	u.User = nil
	return u.String()
}

// newDispatchSUT builds --sut dispatch: one Endpoint per --url, a
// Dispatcher over them, checked (every node up, names gathered) before the
// run, run by netsut.
func newDispatchSUT(ctx context.Context, st *State, f *runFlags) (loadgen.SUT, loadgen.QSL, func(), error) {
	d, n := &f.dispatch, &f.net
	if len(n.urls) == 0 {
		return nil, nil, nil, usageError("--sut dispatch: give each node with --url (at least one)")
	}
	policy, err := dispatch.ParsePolicy(d.policy)
	if err != nil {
		return nil, nil, nil, usageError("--policy: %v", err)
	}
	if err := n.validate(); err != nil {
		return nil, nil, nil, err
	}
	eps := make([]netsut.Endpoint, 0, len(n.urls))
	closeAll := func() {
		for _, ep := range eps {
			ep.Close()
		}
	}
	for _, u := range n.urls {
		ep, err := newBackendEndpoint(st, d.backend, u, f, st.Backends)
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		eps = append(eps, ep)
	}
	disp, err := dispatch.New(eps, dispatch.Options{Policy: policy, AllowDownNodes: d.allowDown})
	if err != nil {
		closeAll()
		return nil, nil, nil, usageError("--sut dispatch: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, n.checkTimeout)
	err = disp.Check(cctx)
	cancel()
	if err != nil {
		disp.Close()
		return nil, nil, nil, withCode(ExitFailure, fmt.Errorf("--sut dispatch: checking the nodes before the run (%s each, --check-timeout): %w", n.checkTimeout, err))
	}
	for _, s := range disp.Stats() {
		if s.Down {
			fmt.Fprintf(st.Stderr, "warning: node %d (%s) is down and left out of the run (--allow-down-nodes)\n", s.Number, redactURL(n.urls[s.Number-1]))
		}
	}
	sut := netsut.New(ctx, disp, netsut.Options{RequestTimeout: n.requestTimeout})
	return sut, backendQSL(d.backend, f), func() { sut.Close() }, nil
}

// dispatchNodes names the nodes of a dispatched run for its bundle; nil
// for any other SUT.
func dispatchNodes(sut loadgen.SUT, f *runFlags) []bundle.Node {
	ns, ok := sut.(*netsut.SUT)
	if !ok {
		return nil
	}
	disp, ok := ns.Endpoint().(*dispatch.Dispatcher)
	if !ok {
		return nil
	}
	var nodes []bundle.Node
	for i, name := range disp.NodeNames() {
		n := bundle.Node{Number: i + 1, Name: name}
		if i < len(f.net.urls) {
			n.URL = redactURL(f.net.urls[i])
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// concurrencyScenario applies --concurrency to the scenario: it runs on
// SingleStream, which it selects when --scenario is not given, and refuses
// any other scenario and the GB/T arrival modes.
func concurrencyScenario(cmd *cobra.Command, f *runFlags, gbtMode int) error {
	if f.concurrency == 0 {
		return nil
	}
	if f.concurrency > loadgen.MaxConcurrency {
		return usageError("--concurrency %d: at most %d", f.concurrency, loadgen.MaxConcurrency)
	}
	if gbtMode >= 0 {
		return usageError("--concurrency cannot be combined with --arrival-mode: the GB/T arrival modes set their own load")
	}
	if !cmd.Flags().Changed("scenario") {
		f.scenario = loadgen.SingleStream.String()
		return nil
	}
	if sc, err := loadgen.ParseScenario(f.scenario); err == nil && sc != loadgen.SingleStream {
		return usageError("--concurrency %d with --scenario %s: fixed concurrency is aimeter's own load mode and runs on SingleStream's issuing only; drop --scenario or use SingleStream", f.concurrency, sc)
	}
	return nil
}

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
