package cli

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/serve"
	"aimeter/sut/kserve"
	"aimeter/sut/reference/mlp"
)

// TestKServeAccuracyMatchesReference runs the accuracy mode against the
// in-process reference SUT and against the same weights behind aimeter's
// KServe server, over HTTP (binary tensors) and gRPC (stream): every
// sample must get the same class in the accuracy log.
func TestKServeAccuracyMatchesReference(t *testing.T) {
	hl, gl := startReferenceKServe(t)

	wd := t.TempDir()
	base := []string{"run", "--scenario", "Offline", "--mode", "accuracy", "-q"}
	ref := runCLI(t, wd, append(base, "--sut", "reference", "--output-dir", filepath.Join(wd, "ref"))...)
	// Both runs are scored against the data set's labels; the score, not
	// the exit code, is what must agree (the test's weights may miss the
	// quality target: exit 3).
	if ref.code != ExitOK && ref.code != ExitInvalid {
		t.Fatalf("reference run: %s", ref)
	}
	score := regexp.MustCompile(`Accuracy: .*`).FindString(ref.stdout)
	if score == "" {
		t.Fatalf("the reference run printed no score:\n%s", ref)
	}
	want := map[uint64]string{}
	for _, e := range readAccuracyT(t, filepath.Join(wd, "ref")) {
		want[e.QSLIdx] = e.Data
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		// Two of the four ways, to keep the test short (10,000 samples
		// each); sut/kserve's TestAccuracy checks all four.
		{"http-binary", []string{"--url", "http://" + hl.String(), "--binary-data"}},
		{"grpc-stream", []string{"--url", gl.String(), "--grpc", "--grpc-stream"}},
	} {
		res := runCLI(t, wd, append(append(base, "--sut", "kserve", "--output-dir", filepath.Join(wd, c.name)), c.args...)...)
		if res.code != ref.code || !strings.Contains(res.stdout, score) {
			t.Fatalf("%s: want exit %d and %q, as the reference SUT: %s", c.name, ref.code, score, res)
		}
		got := readAccuracyT(t, filepath.Join(wd, c.name))
		if len(got) != len(want) {
			t.Fatalf("%s: %d accuracy entries, the reference SUT gave %d", c.name, len(got), len(want))
		}
		for _, e := range got {
			if want[e.QSLIdx] != e.Data {
				t.Fatalf("%s: sample %d: class %s, the reference SUT said %s", c.name, e.QSLIdx, e.Data, want[e.QSLIdx])
			}
		}
	}
}

// TestKServeRunRefuses: bad flags and a down server are refused before the
// run, with what to change.
func TestKServeRunRefuses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	for _, c := range []struct {
		why  string
		args []string
		code int
		want string
	}{
		{"no URL", []string{"--sut", "kserve"}, ExitUsage, "needs --url"},
		{"stream over HTTP", []string{"--sut", "kserve", "--url", "http://" + down, "--grpc-stream"}, ExitUsage, "--grpc-stream needs --grpc"},
		{"unset token variable", []string{"--sut", "kserve", "--url", "http://" + down, "--token-env", "AIMETER_TEST_NO_SUCH_VARIABLE"}, ExitUsage, "not set"},
		{"server down", []string{"--sut", "kserve", "--url", "http://" + down}, ExitFailure, down},
	} {
		res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", t.TempDir()}, c.args...)...)
		if res.code != c.code || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%s: want exit %d and %q; got %s", c.why, c.code, c.want, res)
		}
	}
}

// TestServeKServe starts `aimeter serve kserve` on free ports, checks both
// protocols with the client, and stops it with an interrupt.
func TestServeKServe(t *testing.T) {
	useUntrainedWeights(t, t.TempDir())
	tw := newTwin(t, "serve", "kserve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "-q")
	done := make(chan int, 1)
	go func() { done <- tw.main() }()
	re := regexp.MustCompile(`HTTP/REST: (http://\S+) .*\n.*gRPC: (\S+) `)
	var addrs []string
	deadline := time.Now().Add(time.Minute)
	for addrs == nil && time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(tw.stdout.String()); m != nil {
			addrs = m[1:]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if addrs == nil {
		t.Fatalf("no addresses printed:\n%s\n%s", tw.stdout.String(), tw.stderr.String())
	}
	data, err := loadDemoData(&State{Stderr: &strings.Builder{}}, "auto")
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range addrs {
		e, err := kserve.New(kserve.Options{URL: u, GRPC: i == 1, Model: "fashion-mlp", Inputs: nilSamples{}, InputSize: data.Test.Rows * data.Test.Cols})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.Check(ctx); err != nil {
			t.Errorf("Check %s: %v", u, err)
		}
		cancel()
		_ = e.Close()
	}
	<-tw.notified
	tw.mu.Lock()
	tw.interrupt(errors.New("test interrupt"))
	tw.mu.Unlock()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(tw.stdout.String(), "Stopped.") {
			t.Errorf("exit %d:\n%s\n%s", code, tw.stdout.String(), tw.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("aimeter serve kserve did not stop after the interrupt")
	}
}

// nilSamples is a sample source with no samples loaded (Check needs none).
type nilSamples struct{}

func (nilSamples) Sample(uint64) ([]float32, bool) { return nil, false }

// TestKServeGRPCClientBlock: a run over gRPC against a null-model server
// prints the client block with the send lateness of the gRPC stats handler.
func TestKServeGRPCClientBlock(t *testing.T) {
	k, err := serve.NewKServe(serve.KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	k.RegisterGRPC(gs)
	go func() { _ = gs.Serve(gl) }()
	defer func() { gs.Stop(); k.Close() }()
	res := runCLI(t, t.TempDir(), "run", "-q", "--sut", "kserve", "--grpc", "--url", gl.Addr().String(), "--scenario", "Offline",
		"--set", "min_duration=0", "--set", "min_query_count=100", "--output-dir", filepath.Join(t.TempDir(), "out"))
	if res.code != 0 {
		t.Fatalf("%s", res)
	}
	for _, want := range []string{"client:", "requests ", "errors 0", "send lateness (request written − issued) p50 "} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
}

// TestKServeEveryScenario runs --sut kserve in the four LoadGen scenarios
// against aimeter's KServe v2 server of the reference model, over
// HTTP/REST (JSON tensors) and over gRPC: every run is VALID (the latency
// bounds are generous, so only a broken client or server fails them),
// every sample is answered with the bytes of both ways, and the SUT name
// names the protocol and model.
func TestKServeEveryScenario(t *testing.T) {
	hl, gl := startReferenceKServe(t)

	protocols := []struct {
		name string
		args []string
	}{
		{"http", []string{"--url", "http://" + hl.String()}},
		{"grpc", []string{"--url", gl.String(), "--grpc"}},
	}
	scenarios := []struct {
		name string
		sets []string
	}{
		// min_duration=0: a fast server would end a closed-loop run
		// before any useful minimum; the query counts decide. Early
		// stopping needs about 20 queries at p90 and 460 at p99.
		{"SingleStream", []string{"min_duration=0", "min_query_count=100"}},
		{"MultiStream", []string{"min_duration=0", "min_query_count=700"}},
		// A one-second latency bound: the run checks the client and
		// server, not the machine's load.
		{"Server", []string{"target_qps=200", "target_latency=1000", "min_duration=200", "min_query_count=500"}},
		{"Offline", []string{"target_qps=500", "min_duration=0", "min_query_count=200"}},
	}
	wd := t.TempDir()
	for _, p := range protocols {
		for _, sc := range scenarios {
			t.Run(p.name+"/"+sc.name, func(t *testing.T) {
				out := filepath.Join(wd, p.name+"-"+sc.name)
				args := append([]string{"run", "-q", "--sut", "kserve", "--scenario", sc.name, "--output-dir", out}, p.args...)
				for _, kv := range sc.sets {
					args = append(args, "--set", kv)
				}
				res := runCLI(t, wd, args...)
				summary := readFileT(t, filepath.Join(out, "mlperf_log_summary.txt"))
				if res.code != ExitOK || !strings.Contains(summary, "Result is : VALID") {
					t.Fatalf("%v\n%s", res, summary)
				}
				info := readRunInfoT(t, out)
				if info.FailedSamples != 0 || info.LostSamples != 0 {
					t.Fatalf("%d failed, %d lost", info.FailedSamples, info.LostSamples)
				}
				if !strings.Contains(info.SUTName, "fashion-mlp") {
					t.Errorf("SUT name %q does not name the served model", info.SUTName)
				}
				for _, rec := range bundleRecordsT(t, out) {
					if rec.Status != loadgen.StatusOK || rec.RequestBytes == 0 || rec.ResponseBytes == 0 {
						t.Fatalf("record %+v: want ok with the bytes of both ways", rec)
					}
				}
			})
		}
	}
}

// startReferenceKServe serves the reference model (untrained weights, in a
// private cache) over KServe v2 HTTP/REST and gRPC on loopback until the
// test ends, and returns the two listeners' addresses.
func startReferenceKServe(t *testing.T) (httpAddr, grpcAddr net.Addr) {
	t.Helper()
	cache := t.TempDir()
	useUntrainedWeights(t, cache)
	data, err := loadDemoData(&State{Stderr: &strings.Builder{}}, "auto")
	if err != nil {
		t.Fatal(err)
	}
	path := mlp.WeightsPath(data.Train)
	m, err := model.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := serve.NewKServe(serve.KServeOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := k.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); k.Close() })
	return srv.HTTPAddr, srv.GRPCAddr
}
