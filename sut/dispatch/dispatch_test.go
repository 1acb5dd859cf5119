package dispatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/netsut"
)

// testServer is a node speaking a tiny protocol over real HTTP: GET /health
// answers 200, GET /name answers the server's name, POST /infer?i=N answers
// "ok N". hold, when set, is waited for before /infer answers.
type testServer struct {
	*httptest.Server
	name string
	hits atomic.Int64
	got  chan struct{} // one value per /infer request received
	hold chan struct{} // nil: answer at once
	// dieAfter, when > 0, makes the node die on its request number
	// dieAfter+1: that connection is dropped without an answer and the
	// listener closed, so every later request fails too.
	dieAfter int64
	die      sync.Once
}

func newTestServer(t *testing.T, name string) *testServer {
	t.Helper()
	ts := &testServer{name: name, got: make(chan struct{}, 1024)}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			w.WriteHeader(http.StatusOK)
		case "/name":
			io.WriteString(w, ts.name)
		case "/infer":
			n := ts.hits.Add(1)
			ts.got <- struct{}{}
			if ts.dieAfter > 0 && n > ts.dieAfter {
				ts.die.Do(func() { ts.Listener.Close() })
				if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
					c.Close()
				}
				return
			}
			if ts.hold != nil {
				select {
				case <-ts.hold:
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "ok %s", r.URL.Query().Get("i"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Server.Close)
	return ts
}

// httpEndpoint is a test netsut.Endpoint (and NodeNamer) for testServer.
type httpEndpoint struct {
	url    string
	client *http.Client
}

func (e *httpEndpoint) get(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	if err != nil {
		return "", err
	}
	res, err := e.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", e.url+path, res.Status)
	}
	return string(b), nil
}

func (e *httpEndpoint) Do(ctx context.Context, _ *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/infer?i="+strconv.FormatUint(s.Index, 10), nil)
	if err != nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, err)
		return
	}
	res, err := e.client.Do(req)
	if err != nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryConnect, err)
		return
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryConnectionReset, err)
		return
	}
	resp.Data = b
}

func (e *httpEndpoint) Check(ctx context.Context) error {
	if _, err := e.get(ctx, "/health"); err != nil {
		return fmt.Errorf("%s: GET /health: %w", e.url, err)
	}
	return nil
}

func (e *httpEndpoint) Name() string { return "test " + e.url }

func (e *httpEndpoint) Close() error { e.client.CloseIdleConnections(); return nil }

// namedEndpoint adds NodeName to httpEndpoint.
type namedEndpoint struct{ *httpEndpoint }

func (e namedEndpoint) NodeName(ctx context.Context) (string, error) { return e.get(ctx, "/name") }

func endpoints(servers ...*testServer) []netsut.Endpoint {
	eps := make([]netsut.Endpoint, len(servers))
	for i, s := range servers {
		eps[i] = namedEndpoint{&httpEndpoint{url: s.URL, client: &http.Client{Transport: &http.Transport{}}}}
	}
	return eps
}

func do(d *Dispatcher, idx uint64) loadgen.Response {
	var resp loadgen.Response
	d.Do(context.Background(), nil, loadgen.QuerySample{ID: loadgen.ResponseID(idx + 1), Index: idx}, &resp)
	return resp
}

func TestRoundRobinIsExact(t *testing.T) {
	a, b, c := newTestServer(t, "alpha"), newTestServer(t, "beta"), newTestServer(t, "gamma")
	d, err := New(endpoints(a, b, c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	for k := range 30 {
		resp := do(d, uint64(k))
		if resp.Err != nil {
			t.Fatalf("request %d: %v", k, resp.Err)
		}
		if want := uint32(k%3 + 1); resp.Node != want {
			t.Fatalf("request %d went to node %d, want %d", k, resp.Node, want)
		}
		if want := fmt.Sprintf("ok %d", k); string(resp.Data) != want {
			t.Fatalf("request %d answered %q, want %q", k, resp.Data, want)
		}
	}
	for i, s := range []*testServer{a, b, c} {
		if got := s.hits.Load(); got != 10 {
			t.Errorf("node %d served %d requests, want 10", i+1, got)
		}
	}
	for _, st := range d.Stats() {
		if st.Sent != 10 || st.OK != 10 || st.Failed() != 0 || st.InFlight != 0 {
			t.Errorf("node %d stats %+v, want 10 sent, 10 ok", st.Number, st)
		}
	}
	if got, want := d.Name(), "Network SUT (3 nodes: alpha, beta, gamma)"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
}

func TestLeastOutstandingAvoidsTheBusyNode(t *testing.T) {
	slow, fast := newTestServer(t, "slow"), newTestServer(t, "fast")
	slow.hold = make(chan struct{})
	d, err := New(endpoints(slow, fast), Options{Policy: LeastOutstanding})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	done := make(chan loadgen.Response)
	go func() { done <- do(d, 0) }() // both idle: the tie goes to node 1
	select {
	case <-slow.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the first request never reached node 1")
	}
	for k := 1; k <= 5; k++ {
		if resp := do(d, uint64(k)); resp.Node != 2 || resp.Err != nil {
			t.Fatalf("request %d while node 1 is busy: node %d, err %v; want node 2", k, resp.Node, resp.Err)
		}
	}
	close(slow.hold)
	if resp := <-done; resp.Node != 1 || resp.Err != nil {
		t.Fatalf("slow request: node %d, err %v; want node 1", resp.Node, resp.Err)
	}
	if got := do(d, 6).Node; got != 1 {
		t.Errorf("with both idle again, request went to node %d, want 1 (lowest index)", got)
	}
}

func TestNodeKilledMidRun(t *testing.T) {
	a, b := newTestServer(t, "alpha"), newTestServer(t, "beta")
	d, err := New(endpoints(a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for k := range 10 {
		if resp := do(d, uint64(k)); resp.Err != nil {
			t.Fatalf("request %d before the kill: %v", k, resp.Err)
		}
	}
	b.CloseClientConnections()
	b.Close()
	for k := 10; k < 20; k++ {
		resp := do(d, uint64(k))
		if k%2 == 0 && resp.Err != nil {
			t.Fatalf("request %d to the live node: %v", k, resp.Err)
		}
		if k%2 == 1 && (resp.Err == nil || resp.Node != 2) {
			t.Fatalf("request %d to the dead node: node %d, err %v; want an error on node 2", k, resp.Node, resp.Err)
		}
	}
	st := d.Stats()
	if st[0].Sent != 10 || st[0].OK != 10 || st[0].Failed() != 0 {
		t.Errorf("live node: %+v, want 10 sent, 10 ok", st[0])
	}
	if st[1].Sent != 10 || st[1].OK != 5 || st[1].Errors[netsut.CategoryConnect] != 5 {
		t.Errorf("killed node: %+v, want 10 sent, 5 ok, 5 connect errors", st[1])
	}
}

// A whole loadgen run through netsut over two nodes, one of which dies
// after its 20th request: the run ends, the dead node's samples are
// errors recorded against node 2, and node 1 serves all of its share.
func TestRunWithANodeDyingMidRun(t *testing.T) {
	a, b := newTestServer(t, "alpha"), newTestServer(t, "beta")
	b.dieAfter = 20
	d, err := New(endpoints(a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	sut := netsut.New(context.Background(), d, netsut.Options{RequestTimeout: 10 * time.Second})
	defer sut.Close()
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.SingleStream
	s.MinDurationMs = 0
	s.MinQueryCount = 100
	s.MaxQueryCount = 100
	res, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 16}, s, &loadgen.Options{StallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[uint32][2]int{} // node → ok, failed
	for rec := range res.Records() {
		c := perNode[rec.Node]
		if rec.Error != 0 {
			c[1]++
		} else {
			c[0]++
		}
		perNode[rec.Node] = c
	}
	if perNode[1] != [2]int{50, 0} {
		t.Errorf("node 1: %v ok/failed, want 50/0", perNode[1])
	}
	if got := perNode[2]; got != [2]int{20, 30} {
		t.Errorf("node 2: %v ok/failed, want its first 20 ok and the other 30 failed", got)
	}
	if res.FailedSamples != uint64(perNode[2][1]) {
		t.Errorf("FailedSamples = %d, want %d", res.FailedSamples, perNode[2][1])
	}
	if !strings.HasPrefix(res.SUTName, "Network SUT (2 nodes: alpha, beta)") {
		t.Errorf("sut_name %q", res.SUTName)
	}
}

func TestCheck(t *testing.T) {
	up := newTestServer(t, "up")
	dead := newTestServer(t, "dead")
	deadURL := dead.URL
	dead.Close()
	tests := []struct {
		name    string
		allow   bool
		servers []*testServer
		wantErr string // "" for success
		active  []int
	}{
		{"all up: every node in rotation", false, []*testServer{up}, "", []int{0}},
		{"a node down is refused by default, naming it", false, []*testServer{up, dead}, "node 2 (test " + deadURL + ")", nil},
		{"a node down is left out when tolerated", true, []*testServer{up, dead}, "", []int{0}},
		{"all down is an error even when tolerated", true, []*testServer{dead}, "every node is down", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(endpoints(tt.servers...), Options{AllowDownNodes: tt.allow})
			if err != nil {
				t.Fatal(err)
			}
			err = d.Check(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Check: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := *d.active.Load(); fmt.Sprint(got) != fmt.Sprint(tt.active) {
				t.Errorf("active nodes %v, want %v", got, tt.active)
			}
			// The SUT name counts the nodes in rotation only: a node down
			// at the start is neither counted nor named.
			if name, want := d.Name(), fmt.Sprintf("Network SUT (%d node", len(tt.active)); !strings.HasPrefix(name, want) {
				t.Errorf("SUT name %q, want it to start %q", name, want)
			}
			for k := range 4 {
				if resp := do(d, uint64(k)); resp.Err != nil {
					t.Errorf("request %d: %v", k, resp.Err)
				}
			}
		})
	}
}

func TestNewAndParse(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New with no nodes: no error")
	}
	if _, err := New([]netsut.Endpoint{nil}, Options{}); err == nil {
		t.Error("New with a nil node: no error")
	}
	if _, err := New(endpoints(newTestServer(t, "x")), Options{Policy: 7}); err == nil {
		t.Error("New with an unknown policy: no error")
	}
	for _, tt := range []struct {
		in   string
		want Policy
		ok   bool
	}{
		{"round-robin", RoundRobin, true},
		{"Least_Outstanding", LeastOutstanding, true},
		{"lo", LeastOutstanding, true},
		{"random", 0, false},
	} {
		got, err := ParsePolicy(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePolicy(%q) = %v, %v", tt.in, got, err)
		}
		if tt.ok {
			if back, _ := ParsePolicy(got.String()); back != got {
				t.Errorf("%v does not round-trip through String", got)
			}
		}
	}
}

// A node without NodeName keeps its endpoint's name; a NodeName error does
// too.
func TestGatherFallsBack(t *testing.T) {
	a := newTestServer(t, "alpha")
	plain := &httpEndpoint{url: a.URL, client: &http.Client{}}
	broken := namedEndpoint{&httpEndpoint{url: a.URL + "/nowhere", client: &http.Client{}}}
	d, err := New([]netsut.Endpoint{plain, broken}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Gather(context.Background())
	want := fmt.Sprintf("Network SUT (2 nodes: test %s, test %s/nowhere)", a.URL, a.URL)
	if got := d.Name(); got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
}

// Name asks the nodes again on every call (the network division's round
// trip), and a node that stops answering keeps its last name.
func TestNameIsARoundTrip(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "node-%d", calls.Add(1))
	}))
	defer srv.Close()
	d, err := New([]netsut.Endpoint{namedEndpoint{&httpEndpoint{url: srv.URL, client: &http.Client{}}}}, Options{NameTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 2; k++ {
		if got, want := d.Name(), fmt.Sprintf("Network SUT (1 node: node-%d)", k); got != want {
			t.Errorf("call %d: Name() = %q, want %q", k, got, want)
		}
	}
	srv.Close()
	if got, want := d.Name(), "Network SUT (1 node: node-2)"; got != want {
		t.Errorf("after the node went away: Name() = %q, want %q", got, want)
	}
}
