// Package dispatch spreads the samples of one run over several inference
// servers (nodes): the MLPerf network division's system of many nodes
// behind one SUT, and GB/T 45087's cluster tests.
//
// A Dispatcher is itself a netsut.Endpoint, so netsut.New runs it under
// loadgen like any single server. Each sample goes to exactly one node,
// chosen by the Policy; the response carries the node's number (1-based)
// in loadgen.Response.Node, so records.csv and the report can break the
// results down per node.
//
// A failed request is never retried on another node. A retry would hide
// the failure (the sample would count as served, only slower), would send
// the same sample twice, and would load the healthy nodes with work the
// schedule did not ask for; MLPerf's rules count every query once. A node
// that fails mid-run therefore shows as errors counted on that node
// (Stats), while the other nodes go on serving their share.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// Policy chooses the node of each request.
type Policy int

// The dispatch policies.
const (
	// RoundRobin sends request k to node k mod N, over the nodes that are
	// up: every node gets the same share whatever its speed.
	RoundRobin Policy = iota
	// LeastOutstanding sends each request to the node with the fewest
	// requests in flight (ties go to the lowest node number): a slow node
	// gets fewer requests.
	LeastOutstanding
)

var policyNames = [...]string{"round-robin", "least-outstanding"}

// String returns the policy's flag name ("round-robin", "least-outstanding").
func (p Policy) String() string {
	if p < 0 || int(p) >= len(policyNames) {
		return fmt.Sprintf("Policy(%d)", int(p))
	}
	return policyNames[p]
}

// ParsePolicy accepts the flag names of the policies, case-insensitively,
// with "-", "_" or nothing between the words ("round-robin", "rr",
// "least-outstanding", "lo").
func ParsePolicy(s string) (Policy, error) {
	switch strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s)) {
	case "roundrobin", "rr", "":
		return RoundRobin, nil
	case "leastoutstanding", "lo":
		return LeastOutstanding, nil
	}
	return 0, fmt.Errorf("unknown dispatch policy %q (want round-robin or least-outstanding)", s)
}

// Options configure a Dispatcher. The zero value dispatches round robin and
// refuses to start while any node is down.
type Options struct {
	// Policy chooses the node of each request; zero is RoundRobin.
	Policy Policy
	// AllowDownNodes lets Check succeed while some (not all) nodes are
	// down: those nodes are left out of the run and reported as down in
	// Stats. False (the default) makes Check fail, naming every node that
	// is down.
	AllowDownNodes bool
	// NameTimeout bounds the round trips of Name, which asks every node
	// for its name each time it is called; zero means 5 seconds.
	NameTimeout time.Duration
}

// Dispatcher is one SUT over several nodes. Create it with New; Check it
// (which also gathers the node names) before the run.
type Dispatcher struct {
	nodes  []*node
	opts   Options
	next   atomic.Uint64
	active atomic.Pointer[[]int] // indices of the nodes in rotation

	mu    sync.Mutex // guards names
	names []string
}

var _ netsut.Endpoint = (*Dispatcher)(nil)

// node is one endpoint and its counters. The counters are atomics so that
// choosing a node and counting a request take no lock.
type node struct {
	ep       netsut.Endpoint
	inFlight atomic.Int64
	sent     atomic.Uint64
	ok       atomic.Uint64
	down     atomic.Bool
	errMu    sync.Mutex // guards errs; taken only for failed requests
	errs     map[string]uint64
	_        [64]byte // keep the hot counters of neighbouring nodes on separate cache lines
}

// New returns a Dispatcher over nodes, numbered 1 to len(nodes) in this
// order. It takes ownership of the nodes: Close closes them.
func New(nodes []netsut.Endpoint, opts Options) (*Dispatcher, error) {
	if len(nodes) == 0 {
		return nil, errors.New("dispatch: no nodes: give at least one endpoint")
	}
	if opts.Policy != RoundRobin && opts.Policy != LeastOutstanding {
		return nil, fmt.Errorf("dispatch: Options.Policy = %d: want RoundRobin or LeastOutstanding", int(opts.Policy))
	}
	d := &Dispatcher{opts: opts, nodes: make([]*node, len(nodes)), names: make([]string, len(nodes))}
	all := make([]int, len(nodes))
	for i, ep := range nodes {
		if ep == nil {
			return nil, fmt.Errorf("dispatch: node %d is nil", i+1)
		}
		d.nodes[i] = &node{ep: ep}
		d.names[i] = ep.Name()
		all[i] = i
	}
	d.active.Store(&all)
	return d, nil
}

// pick returns the index of the node for the next request.
func (d *Dispatcher) pick() int {
	active := *d.active.Load()
	if d.opts.Policy == LeastOutstanding {
		best, bestN := active[0], d.nodes[active[0]].inFlight.Load()
		for _, i := range active[1:] {
			if n := d.nodes[i].inFlight.Load(); n < bestN {
				best, bestN = i, n
			}
		}
		return best
	}
	return active[(d.next.Add(1)-1)%uint64(len(active))]
}

// Do sends the sample to one node and sets resp.Node to its number. A
// failure is counted on that node and returned as the sample's error; it is
// not retried elsewhere (see the package documentation).
func (d *Dispatcher) Do(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
	i := d.pick()
	n := d.nodes[i]
	n.inFlight.Add(1)
	n.sent.Add(1)
	n.ep.Do(ctx, r, s, resp)
	n.inFlight.Add(-1)
	resp.Node = uint32(i + 1)
	switch {
	case resp.Err != nil:
		n.countError(category(resp.Err))
	case ctx.Err() != nil:
		// netsut.SUT turns this into a timeout error after Do returns.
		n.countError(netsut.CategoryRequestTimeout)
	default:
		n.ok.Add(1)
	}
}

func (n *node) countError(cat string) {
	n.errMu.Lock()
	if n.errs == nil {
		n.errs = make(map[string]uint64)
	}
	n.errs[cat]++
	n.errMu.Unlock()
}

// category is the error category loadgen will record for err.
func category(err error) string {
	var c interface{ Category() string }
	if errors.As(err, &c) {
		return c.Category()
	}
	return loadgen.DefaultErrorCategory
}

// Check checks every node in parallel and gathers the names of those that
// are up (Gather). A node that is down fails the check, its error naming
// the node; with Options.AllowDownNodes the down nodes are left out of the
// run instead, and only all nodes down is an error.
func (d *Dispatcher) Check(ctx context.Context) error {
	errs := make([]error, len(d.nodes))
	var wg sync.WaitGroup
	for i, n := range d.nodes {
		wg.Go(func() {
			if err := n.ep.Check(ctx); err != nil {
				errs[i] = fmt.Errorf("node %d (%s): %w", i+1, n.ep.Name(), err)
			}
		})
	}
	wg.Wait()
	var up []int
	var down []error
	for i, err := range errs {
		d.nodes[i].down.Store(err != nil)
		if err != nil {
			down = append(down, err)
		} else {
			up = append(up, i)
		}
	}
	if len(up) == 0 {
		return fmt.Errorf("dispatch: every node is down: %w", errors.Join(down...))
	}
	if len(down) > 0 && !d.opts.AllowDownNodes {
		return fmt.Errorf("dispatch: %d of %d nodes down: %w", len(down), len(d.nodes), errors.Join(down...))
	}
	d.active.Store(&up)
	d.gather(ctx, up)
	return nil
}

// Gather asks every node for its name, in parallel, with one round trip
// each (netsut.NodeNamer); a node that cannot say, or fails to, keeps its
// endpoint's Name. Check calls it; call it directly to name the nodes
// without checking them.
func (d *Dispatcher) Gather(ctx context.Context) {
	all := make([]int, len(d.nodes))
	for i := range all {
		all[i] = i
	}
	d.gather(ctx, all)
}

func (d *Dispatcher) gather(ctx context.Context, which []int) {
	var wg sync.WaitGroup
	for _, i := range which {
		namer, ok := d.nodes[i].ep.(netsut.NodeNamer)
		if !ok {
			continue
		}
		wg.Go(func() {
			name, err := namer.NodeName(ctx)
			if err != nil || strings.TrimSpace(name) == "" {
				return
			}
			d.mu.Lock()
			d.names[i] = strings.TrimSpace(name)
			d.mu.Unlock()
		})
	}
	wg.Wait()
}

// Name asks every node in rotation for its name (Gather, bounded by
// Options.NameTimeout) and returns "Network SUT (N nodes: name1, name2,
// …)", counting and naming the nodes in rotation (a node Check left out
// as down is not). MLPerf's network division requires the SUT name to contain
// "Network SUT" and to be obtained with a network round trip; LoadGen
// times the call (get_sut_name_duration_ns). A node that does not answer
// keeps the name it had.
func (d *Dispatcher) Name() string {
	timeout := d.opts.NameTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	d.gather(ctx, *d.active.Load())
	cancel()
	return d.name()
}

// name formats the SUT name from the names known now: the nodes in
// rotation only, so that a node Check found down (and left out) is
// neither counted nor named.
func (d *Dispatcher) name() string {
	active := *d.active.Load()
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(active))
	for _, i := range active {
		names = append(names, d.names[i])
	}
	noun := "nodes"
	if len(names) == 1 {
		noun = "node"
	}
	return fmt.Sprintf("Network SUT (%d %s: %s)", len(names), noun, strings.Join(names, ", "))
}

// NodeNames returns the name of every node, in node-number order.
func (d *Dispatcher) NodeNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.names...)
}

// Close closes every node and joins their errors.
func (d *Dispatcher) Close() error {
	var errs []error
	for i, n := range d.nodes {
		if err := n.ep.Close(); err != nil {
			errs = append(errs, fmt.Errorf("node %d: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}

// NodeStats are one node's counters.
type NodeStats struct {
	// Number is the node's number, 1-based, as in loadgen's Response.Node.
	Number int
	// Name is the node's name (gathered, or its endpoint's Name).
	Name string
	// Down is set when Check found the node down and left it out.
	Down bool
	// Sent is the number of requests sent to the node, OK those that
	// succeeded, InFlight those still running.
	Sent, OK uint64
	InFlight int64
	// Errors counts the failed requests by error category (nil for none).
	Errors map[string]uint64
}

// Failed returns the number of failed requests.
func (s NodeStats) Failed() uint64 {
	var n uint64
	for _, c := range s.Errors {
		n += c
	}
	return n
}

// Stats returns the counters of every node, in node-number order. It may
// be called at any time, also during the run.
func (d *Dispatcher) Stats() []NodeStats {
	names := d.NodeNames()
	out := make([]NodeStats, len(d.nodes))
	for i, n := range d.nodes {
		st := NodeStats{Number: i + 1, Name: names[i], Down: n.down.Load(), Sent: n.sent.Load(), OK: n.ok.Load(), InFlight: n.inFlight.Load()}
		n.errMu.Lock()
		if len(n.errs) > 0 {
			st.Errors = make(map[string]uint64, len(n.errs))
			for k, v := range n.errs {
				st.Errors[k] = v
			}
		}
		n.errMu.Unlock()
		out[i] = st
	}
	return out
}
