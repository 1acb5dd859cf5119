package kserve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"aimeter/internal/peerstest"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
)

// shapesRuntime is a custom MLServer runtime for TestMLServerShapes:
// RowSum takes the FP32 input INPUT0 of shape [N, 4] and returns the FP32
// row sums OUTPUT0 [N, 1]; Liar's metadata (model-settings.json) says the
// same, but it takes only [N, 3]; BadOut returns INT64 [N, 2] where its
// metadata says FP32 [N, 1].
const shapesRuntime = `
import numpy as np
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse


class RowSum(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0])
        if x.ndim != 2 or x.shape[1] != 4 or x.dtype != np.float32:
            raise ValueError("want FP32 [N, 4], got %s %s" % (x.dtype, x.shape))
        y = x.sum(axis=1, keepdims=True).astype(np.float32)
        return InferenceResponse(model_name=self.name, id=payload.id,
                                 outputs=[NumpyCodec.encode_output("OUTPUT0", y)])


class Liar(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0])
        if x.ndim != 2 or x.shape[1] != 3:
            raise ValueError("input INPUT0 has shape %s; want [N, 3]" % (list(x.shape),))
        y = x.sum(axis=1, keepdims=True).astype(np.float32)
        return InferenceResponse(model_name=self.name, id=payload.id,
                                 outputs=[NumpyCodec.encode_output("OUTPUT0", y)])


class BadOut(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0])
        y = np.zeros((x.shape[0], 2), dtype=np.int64)
        return InferenceResponse(model_name=self.name, id=payload.id,
                                 outputs=[NumpyCodec.encode_output("OUTPUT0", y)])
`

// mlserverShapes starts MLServer with the models of shapesRuntime and
// returns its HTTP and gRPC addresses.
func mlserverShapes(t *testing.T) (httpURL, grpcAddr string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts MLServer")
	}
	bin := peerstest.Bin(t, []string{"mlserver"}, "")
	dir := t.TempDir()
	for _, m := range []struct{ name, impl, extra string }{
		{"rowsum", "RowSum", ""},
		{"liar", "Liar", ""},
		{"badout", "BadOut", ""},
	} {
		md := filepath.Join(dir, m.name)
		if err := os.MkdirAll(md, 0o755); err != nil {
			t.Fatal(err)
		}
		settings := fmt.Sprintf(`{"name": %q, "implementation": "shapes_rt_%s.%s",
  "inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [-1, 4]}],
  "outputs": [{"name": "OUTPUT0", "datatype": "FP32", "shape": [-1, 1]}]}`, m.name, m.name, m.impl)
		if err := os.WriteFile(filepath.Join(md, "model-settings.json"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(md, "shapes_rt_"+m.name+".py"), []byte(shapesRuntime), 0o644); err != nil {
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
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	httpURL, grpcAddr = fmt.Sprintf("http://127.0.0.1:%d", httpPort), fmt.Sprintf("127.0.0.1:%d", grpcPort)
	// MLServer takes seconds to start: wait until every model is ready
	// over both protocols.
	deadline := time.Now().Add(90 * time.Second)
	for _, o := range []kserve.Options{{URL: httpURL}, {URL: grpcAddr, GRPC: true}} {
		for _, m := range []string{"rowsum", "liar", "badout"} {
			o.Model, o.Data = m, &kserve.InputOptions{}
			e, err := kserve.New(o)
			if err != nil {
				t.Fatal(err)
			}
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
					t.Fatalf("MLServer not ready after 90 s: %v\n%s", err, log.String())
				}
				time.Sleep(300 * time.Millisecond)
			}
			_ = e.Close()
		}
	}
	return httpURL, grpcAddr
}

// runShapes runs one loadgen test of a model's own inputs against a server.
func runShapes(t *testing.T, o kserve.Options, scenario loadgen.Scenario) (*loadgen.Result, *kserve.Inputs) {
	t.Helper()
	e, err := kserve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = e.Check(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	in := e.Inputs()
	if in == nil {
		t.Fatal("Check built no inputs for a model the reference data set does not fit")
	}
	ns := netsut.New(context.Background(), e, netsut.Options{RequestTimeout: 10 * time.Second})
	defer ns.Close()
	s := loadgen.DefaultSettings()
	s.Scenario = scenario
	s.MinDurationMs = 0
	s.MinQueryCount = 64
	if scenario == loadgen.Server {
		s.ServerTargetQPS = 200
		s.ServerTargetLatencyNs = uint64(time.Second)
	}
	res, err := loadgen.Run(context.Background(), ns, in, s, &loadgen.Options{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res, in
}

// TestMLServerShapes drives a model of its own inputs (FP32 [-1, 4], not
// the reference data set) on Seldon MLServer 1.7.1 over HTTP and gRPC, in
// the Server and Offline scenarios: every sample succeeds, its response
// checked against the metadata. A model whose metadata lies about its
// input fails every sample with the server's rejection, and one whose
// output does not match its metadata with protocol errors; neither hangs
// or counts a sample as a success.
func TestMLServerShapes(t *testing.T) {
	httpURL, grpcAddr := mlserverShapes(t)
	protos := []struct {
		name string
		o    kserve.Options
		fail string // the category of a rejected request
	}{
		{"http", kserve.Options{URL: httpURL}, netsut.CategoryHTTP5xx},
		{"grpc", kserve.Options{URL: grpcAddr, GRPC: true}, netsut.CategoryGRPC},
	}
	for _, p := range protos {
		for _, sc := range []loadgen.Scenario{loadgen.Server, loadgen.Offline} {
			t.Run(p.name+"/"+sc.String(), func(t *testing.T) {
				o := p.o
				o.Model = "rowsum"
				o.Data = &kserve.InputOptions{BatchSize: 2, Seed: 7, Samples: 32}
				res, in := runShapes(t, o, sc)
				if specs := in.Specs(); len(specs) != 1 || fmt.Sprint(specs[0].Shape) != "[2 4]" {
					t.Errorf("request shapes %v, want INPUT0 [2 4]", specs)
				}
				n := res.RecordCount()
				if n < 64 || res.FailedSamples != 0 || res.LostSamples != 0 || len(res.Errors) != 0 {
					t.Fatalf("%d samples, %d failed, %d lost, errors %+v", n, res.FailedSamples, res.LostSamples, res.Errors)
				}
				t.Logf("%s %s: %d samples ok", p.name, sc, n)
			})
		}
		t.Run(p.name+"/liar", func(t *testing.T) {
			o := p.o
			o.Model = "liar"
			o.Data = &kserve.InputOptions{Samples: 16}
			res, _ := runShapes(t, o, loadgen.Offline)
			if n := res.RecordCount(); res.FailedSamples != uint64(n) || len(res.Errors) == 0 {
				t.Fatalf("%d samples, %d failed: want every one failed", n, res.FailedSamples)
			}
			for _, e := range res.Errors {
				switch {
				case p.name == "http" && (e.Category == netsut.CategoryHTTP5xx || e.Category == netsut.CategoryConnectionReset || e.Category == netsut.CategoryConnect || e.Category == netsut.CategoryStreamTruncated):
					// MLServer answers an exception with a 500 and
					// its traceback (cut), and may close the
					// connection under a request that follows.
				case e.Category == p.fail && strings.Contains(e.Message, "want [N, 3]"):
				default:
					t.Errorf("error %+v: want category %s with the server's rejection", e, p.fail)
				}
			}
		})
		t.Run(p.name+"/badout", func(t *testing.T) {
			o := p.o
			o.Model = "badout"
			o.Data = &kserve.InputOptions{Samples: 16}
			res, _ := runShapes(t, o, loadgen.Offline)
			if n := res.RecordCount(); res.FailedSamples != uint64(n) || len(res.Errors) == 0 {
				t.Fatalf("%d samples, %d failed: want every one failed", n, res.FailedSamples)
			}
			for _, e := range res.Errors {
				if e.Category != kserve.CategoryProtocol || !strings.Contains(e.Message, "OUTPUT0") {
					t.Errorf("error %+v: want category protocol naming OUTPUT0", e)
				}
			}
		})
	}
	// Refused before the run, naming the input (and the entry).
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"data": [{"INPUT0": [1, 2, 3, 4]}, {"INPUT0": [1, 2, 3]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := kserve.New(kserve.Options{URL: httpURL, Model: "rowsum", Data: &kserve.InputOptions{File: bad}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Check(context.Background())
	if _, ok := errors.AsType[*kserve.InputsError](err); !ok || !strings.Contains(err.Error(), "entry 1") || !strings.Contains(err.Error(), `"INPUT0"`) {
		t.Errorf("a file entry of 3 values for [1 4]: %v", err)
	}
}
