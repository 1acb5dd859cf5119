package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/serve"
)

// TestServerWarmup: a Server run's warm-up goes out on the same SUT before
// the measured run, is left out of its results and is recorded in
// invocation.json; the server sees both, exactly.
func TestServerWarmup(t *testing.T) {
	sim := newSim(t, "8", serve.OpenAIOptions{Models: []string{"sim-warm"}, Seed: 3})
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	// min_duration 0: the Server schedule is exactly min_query_count
	// queries, the warm-up's exactly its 30 requests.
	r := runCLI(t, dir, "run", "-q", "--json", "--sut", "openai", "--url", srv.URL, "--scenario", "Server",
		"--set", "target_qps=400", "--set", "min_duration=0", "--set", "min_query_count=120", "--set", "target_latency=1000",
		"--warmup", "30", "--output-dir", out)
	if r.code != ExitOK && r.code != ExitInvalid {
		t.Fatalf("the run did not run:\n%v", r)
	}
	var res derived.ResultJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Samples.Issued != 120 || res.Samples.Failed != 0 {
		t.Errorf("measured samples %+v, want the 120 of the schedule, none failed", res.Samples)
	}
	if got := posts.Load(); got != 150 {
		t.Errorf("the server answered %d requests, want 30 of the warm-up and 120 measured", got)
	}
	var inv invocation.Invocation
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(out, bundle.InvocationFile))), &inv); err != nil {
		t.Fatal(err)
	}
	if w := inv.Warmup; w == nil || w.Requests != 30 || w.Failed != 0 || inv.Control.WarmupRequests != 30 {
		t.Errorf("invocation.json does not record the warm-up of 30 requests: %+v, control %+v", inv.Warmup, inv.Control)
	}
}

// TestWarmupRefused: --warmup where it means nothing is refused before
// anything runs, naming the flag and where it applies.
func TestWarmupRefused(t *testing.T) {
	rows := []struct {
		why  string
		args []string
		want string
	}{
		{"Offline issues everything at once: nothing to warm up at a rate", []string{"--scenario", "Offline"}, "--warmup applies only to the fixed-concurrency mode (--concurrency N) or the Server scenario"},
		{"SingleStream neither", []string{"--scenario", "SingleStream"}, "--warmup applies only to the fixed-concurrency mode (--concurrency N) or the Server scenario"},
		{"a GB/T test measures from its first job", []string{"--arrival-mode", "2"}, "--warmup"},
	}
	for _, row := range rows {
		dir := t.TempDir()
		args := append([]string{"run", "-q", "--warmup", "10", "--output-dir", filepath.Join(dir, "out")}, row.args...)
		r := runCLI(t, dir, args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, row.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d naming %q", row.why, r.code, r.stderr, ExitUsage, row.want)
		}
	}
}
