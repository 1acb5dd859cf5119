package serve

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/internal/peerstest"
	"aimeter/model"
)

// TestTritonClient checks that NVIDIA's tritonclient (HTTP with JSON and
// binary tensors, gRPC) can call the server and gets the model's answer.
func TestTritonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python")
	}
	py := filepath.Join(peerstest.Bin(t, nil, "tritonclient.http, tritonclient.grpc, numpy"), "python")
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
