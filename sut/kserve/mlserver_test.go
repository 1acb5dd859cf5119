package kserve_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"aimeter/dataset"
	"aimeter/internal/peerstest"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestMLServer runs the client against a real third-party KServe v2
// server, Seldon MLServer 1.7.1, over HTTP and gRPC: Check passes on its
// metadata, and every sample's class is the one its model computes.
func TestMLServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MLServer")
	}
	bin := peerstest.Bin(t, []string{"mlserver"}, "")
	dir := t.TempDir()
	for _, f := range []string{"model.py", "model-settings.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "mlserver", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	httpPort, grpcPort, metricsPort := freePort(t), freePort(t), freePort(t)
	settings := fmt.Sprintf(`{"host":"127.0.0.1","http_port":%d,"grpc_port":%d,"metrics_port":%d,"parallel_workers":0,"load_models_at_startup":true}`, httpPort, grpcPort, metricsPort)
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(filepath.Join(bin, "mlserver"), "start", dir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()

	set := dataset.Synthetic(32, 5)
	qsl := dataset.NewQSL(set, 32)
	idx := make([]uint64, set.Len())
	for i := range idx {
		idx[i] = uint64(i)
	}
	if err := qsl.LoadSamples(idx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts kserve.Options
	}{
		{"http-json", kserve.Options{URL: fmt.Sprintf("http://127.0.0.1:%d", httpPort)}},
		{"grpc", kserve.Options{URL: fmt.Sprintf("127.0.0.1:%d", grpcPort), GRPC: true}},
	} {
		o := c.opts
		o.Model, o.Inputs, o.InputSize = "fashion-mlp", qsl, 784
		e, err := kserve.New(o)
		if err != nil {
			t.Fatal(err)
		}
		// MLServer takes seconds to start: Check until it passes.
		deadline := time.Now().Add(90 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = e.Check(ctx)
			cancel()
			if err == nil {
				break
			}
			select {
			case <-exited:
				t.Fatalf("MLServer exited:\n%s", log.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: MLServer not ready after 90 s: %v\n%s", c.name, err, log.String())
			}
			time.Sleep(300 * time.Millisecond)
		}
		for i := range set.Len() {
			x, _ := qsl.Sample(uint64(i))
			var resp loadgen.Response
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			e.Do(ctx, nil, loadgen.QuerySample{ID: 1, Index: uint64(i)}, &resp)
			cancel()
			if resp.Err != nil {
				t.Fatalf("%s: sample %d: %v", c.name, i, resp.Err)
			}
			if want := sliceSumsClass(x); len(resp.Data) != 1 || resp.Data[0] != want {
				t.Fatalf("%s: sample %d: class %v, want %d", c.name, i, resp.Data, want)
			}
		}
		_ = e.Close()
	}
}

// sliceSumsClass is the class testdata/mlserver/model.py computes.
func sliceSumsClass(x []float32) uint8 {
	best, max := 0, float32(0)
	for i := range 10 {
		var s float32
		for _, v := range x[78*i : 78*i+78] {
			s += v
		}
		if i == 0 || s > max {
			best, max = i, s
		}
	}
	return uint8(best)
}
