package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut"
	"aimeter/sut/netsut"
)

// TestBackend is the test-only node protocol of these tests, added through
// State.Backends (never a flag value users see): POST /infer?i=N answers
// "ok N", GET /health 200 and GET /name the server's name, over real HTTP.
const TestBackend = "test-http"

type testHTTPEndpoint struct {
	url    string
	client *http.Client
}

func (e *testHTTPEndpoint) get(ctx context.Context, path string) (string, error) {
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
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s%s: %s", e.url, path, res.Status)
	}
	return string(b), err
}

func (e *testHTTPEndpoint) Do(ctx context.Context, _ *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/infer?i="+strconv.FormatUint(s.Index, 10), nil)
	if err != nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, err)
		return
	}
	res, err := e.client.Do(req)
	if err != nil {
		resp.Err = netsut.Classify(ctx, err, false)
		return
	}
	defer res.Body.Close()
	if resp.Data, err = io.ReadAll(res.Body); err != nil {
		resp.Err = netsut.Classify(ctx, err, true)
	}
}

func (e *testHTTPEndpoint) Check(ctx context.Context) error {
	if _, err := e.get(ctx, "/health"); err != nil {
		return fmt.Errorf("%s: GET /health: %w", e.url, err)
	}
	return nil
}
func (e *testHTTPEndpoint) NodeName(ctx context.Context) (string, error) { return e.get(ctx, "/name") }
func (e *testHTTPEndpoint) Name() string                                 { return e.url }
func (e *testHTTPEndpoint) Close() error                                 { e.client.CloseIdleConnections(); return nil }

func testBackends() map[string]BackendFunc {
	return map[string]BackendFunc{TestBackend: func(url string, _ *sut.Config) (netsut.Endpoint, error) {
		return &testHTTPEndpoint{url: url, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}, nil
	}}
}

func testNode(t *testing.T, name string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
		case "/name":
			io.WriteString(w, name)
		case "/infer":
			io.WriteString(w, "ok "+r.URL.Query().Get("i"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// bundleRecordsT reads the records of the bundle in dir, with their
// per-sample data (node, bytes, error).
func bundleRecordsT(t *testing.T, dir string) []loadgen.Record {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(b.Result.Records())
}

// runDispatchCLI runs aimeter with the test backend available.
func runDispatchCLI(t *testing.T, args ...string) (cliResult, string) {
	t.Helper()
	tw := newTwin(t, args...)
	tw.st.Backends = testBackends()
	code := tw.main()
	return cliResult{code: code, stdout: tw.stdout.String(), stderr: tw.stderr.String()}, tw.wd
}

// TestDispatchEveryScenario runs --sut dispatch over two real nodes in the
// four scenarios: every sample is answered, by both nodes in turn, and the
// run names its nodes in the SUT name, the bundle and the console.
func TestDispatchEveryScenario(t *testing.T) {
	a, b := testNode(t, "alpha"), testNode(t, "beta")
	for _, sc := range []struct {
		name string
		sets []string
	}{
		{"SingleStream", []string{"target_latency=1"}},
		{"MultiStream", []string{"target_latency=8"}},
		{"Server", []string{"target_qps=300", "target_latency=1000"}},
		{"Offline", []string{"target_qps=300"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := []string{"run", "-q", "--sut", "dispatch", "--backend", TestBackend, "--url", a.URL, "--url", b.URL,
				"--scenario", sc.name, "--output-dir", out, "--set", "min_duration=100", "--set", "min_query_count=64", "--qsl-size", "64"}
			for _, kv := range sc.sets {
				args = append(args, "--set", kv)
			}
			res, _ := runDispatchCLI(t, args...)
			if res.code != ExitOK && res.code != ExitInvalid {
				t.Fatalf("%v", res)
			}
			info := readRunInfoT(t, out)
			if info.FailedSamples != 0 || info.LostSamples != 0 {
				t.Fatalf("%d failed, %d lost:\n%v", info.FailedSamples, info.LostSamples, res)
			}
			if want := "Network SUT (2 nodes: alpha, beta)"; info.SUTName != want {
				t.Errorf("sut_name %q, want %q", info.SUTName, want)
			}
			perNode := map[uint32]int{}
			for _, r := range bundleRecordsT(t, out) {
				perNode[r.Node]++
			}
			if perNode[1] == 0 || perNode[2] == 0 || perNode[0] != 0 || perNode[1]-perNode[2] > 1 || perNode[2]-perNode[1] > 1 {
				t.Errorf("samples per node %v: want round robin over nodes 1 and 2", perNode)
			}
			if !strings.Contains(res.stdout, "Per node (reported pass):") || !strings.Contains(res.stdout, "2 beta") {
				t.Errorf("no node table on the console:\n%s", res.stdout)
			}
			if meta := readFileT(t, filepath.Join(out, "run.json")); !strings.Contains(meta, `"url": "`+b.URL+`"`) {
				t.Errorf("run.json does not list node 2's URL:\n%s", meta)
			}
		})
	}
}

func TestDispatchRefusals(t *testing.T) {
	up := testNode(t, "up")
	down := testNode(t, "down")
	downURL := down.URL
	down.Close()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"a node down at the start is named, and nothing runs", []string{"--url", up.URL, "--url", downURL}, ExitFailure, "node 2 (" + downURL + ")"},
		{"no --url", nil, ExitUsage, "give each node with --url"},
		{"a backend this build lacks lists the available ones", []string{"--backend", "grpc-carrier-pigeon", "--url", up.URL}, ExitUsage, "available: kserve, openai, " + TestBackend},
		{"a URL without a scheme", []string{"--url", "localhost:80"}, ExitUsage, `--url "localhost:80"`},
		{"a URL's password is never shown", []string{"--url", "ftp://user:hunter2@host/"}, ExitUsage, "ftp://host/"},
		{"an unknown policy", []string{"--url", up.URL, "--policy", "random"}, ExitUsage, "unknown dispatch policy"},
		{"concurrency with another scenario", []string{"--url", up.URL, "--concurrency", "4", "--scenario", "Server"}, ExitUsage, "runs on SingleStream's issuing only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--sut", "dispatch", "--backend", TestBackend, "--output-dir", out}, tt.args...)
			// A later --backend wins over the default one above.
			res, _ := runDispatchCLI(t, args...)
			if res.code != tt.code || !strings.Contains(res.stderr, tt.stderr) {
				t.Fatalf("want exit %d and %q in stderr; got %v", tt.code, tt.stderr, res)
			}
			if strings.Contains(res.stderr+res.stdout, "hunter2") {
				t.Error("a password reached the output")
			}
		})
	}
}

// TestDispatchAllowDownNodes: with --allow-down-nodes the run goes on with
// the nodes that are up, says which one it left out, and every sample is
// served by node 1.
func TestDispatchAllowDownNodes(t *testing.T) {
	up := testNode(t, "up")
	down := testNode(t, "down")
	downURL := down.URL
	down.Close()
	out := filepath.Join(t.TempDir(), "out")
	res, _ := runDispatchCLI(t, "run", "-q", "--sut", "dispatch", "--backend", TestBackend, "--url", up.URL, "--url", downURL,
		"--allow-down-nodes", "--scenario", "Offline", "--output-dir", out, "--set", "min_duration=0", "--set", "min_query_count=32", "--qsl-size", "32")
	if res.code != ExitOK {
		t.Fatalf("%v", res)
	}
	if !strings.Contains(res.stderr, "node 2 ("+downURL+") is down and left out") {
		t.Errorf("no warning about node 2:\n%s", res.stderr)
	}
	for _, r := range bundleRecordsT(t, out) {
		if r.Node != 1 {
			t.Fatalf("a sample went to node %d", r.Node)
		}
	}
}

// TestDispatchConcurrency: --concurrency selects SingleStream's issuing with
// N requests in flight, and every output says it is aimeter's mode.
func TestDispatchConcurrency(t *testing.T) {
	a, b := testNode(t, "alpha"), testNode(t, "beta")
	out := filepath.Join(t.TempDir(), "out")
	res, _ := runDispatchCLI(t, "run", "-q", "--sut", "dispatch", "--backend", TestBackend, "--url", a.URL, "--url", b.URL,
		"--concurrency", "4", "--policy", "least-outstanding", "--output-dir", out, "--set", "min_duration=100", "--set", "min_query_count=64", "--qsl-size", "64")
	if res.code != ExitOK && res.code != ExitInvalid {
		t.Fatalf("%v", res)
	}
	if !strings.Contains(res.stdout, "fixed concurrency 4 (aimeter mode, not an MLPerf scenario)") || !strings.Contains(res.stdout, "Completed samples per second : ") {
		t.Errorf("console does not name the mode:\n%s", res.stdout)
	}
	info := readRunInfoT(t, out)
	if info.Requested.Concurrency != 4 || info.Effective.Scenario != loadgen.SingleStream || info.FailedSamples != 0 {
		t.Errorf("settings.json: concurrency %d, scenario %v, %d failed", info.Requested.Concurrency, info.Effective.Scenario, info.FailedSamples)
	}
	if s := readFileT(t, filepath.Join(out, "mlperf_log_summary.txt")); !strings.Contains(s, "aimeter mode : fixed concurrency 4") {
		t.Error("the summary does not name the mode")
	}
}
