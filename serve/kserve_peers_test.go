package serve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/model"
)

// peersPython returns the Python of the peers virtualenv
// (scripts/install-peers.sh puts it under $AIMETER_CACHE, default
// ~/.cache/aimeter), or skips the test with why.
func peersPython(t *testing.T, module string) string {
	t.Helper()
	cache := os.Getenv("AIMETER_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("no home directory for the peers virtualenv: %v", err)
		}
		cache = filepath.Join(home, ".cache", "aimeter")
	}
	py := filepath.Join(cache, "peers-venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no peers virtualenv at %s (scripts/install-peers.sh python installs it)", py)
	}
	if out, err := exec.Command(py, "-c", "import "+module).CombinedOutput(); err != nil {
		t.Skipf("%s cannot import %s: %v\n%s", py, module, err, out)
	}
	return py
}

// TestTritonClient checks that NVIDIA's tritonclient (HTTP with JSON and
// binary tensors, gRPC) can call the server and gets the model's answer.
func TestTritonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python")
	}
	py := peersPython(t, "tritonclient.http, tritonclient.grpc, numpy")
	m := model.New(model.DefaultLayers(), 3)
	k, err := NewKServe(KServeOptions{Model: m, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv, err := k.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	x := make([]float32, 784)
	for i := range x {
		x[i] = float32(i) / 783
	}
	want := m.Predict(x, 1)[0]
	cmd := exec.Command(py, filepath.Join("testdata", "tritonclient_check.py"), srv.HTTPAddr.String(), srv.GRPCAddr.String())
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("tritonclient did not finish in 2 minutes:\n%s", out)
	}
	if err != nil {
		t.Fatalf("tritonclient: %v\n%s", err, out)
	}
	for _, v := range []string{"http-json", "http-binary", "grpc"} {
		if line := fmt.Sprintf("%s %d", v, want); !strings.Contains(string(out), line) {
			t.Errorf("want %q in the output:\n%s", line, out)
		}
	}
}
