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

	"aimeter/serve"
	"aimeter/sut/kserve"
	"aimeter/sut/reference/mlp"
)

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
	data, err := mlp.LoadData("auto", mlp.DataOptions{})
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
