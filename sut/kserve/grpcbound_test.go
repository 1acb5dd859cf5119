package kserve_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
	"aimeter/sut/kserve/inferencepb"
)

// TestGRPCCallBound: over gRPC, an Offline query of many samples has at
// most MaxConns ModelInfer calls in flight at once (the others wait, as
// HTTP requests wait for a connection), so that it cannot overflow a
// server's request queue; every sample is answered.
func TestGRPCCallBound(t *testing.T) {
	var open, most atomic.Int64
	logits := make([]float32, 10)
	logits[3] = 1
	addr := startFaultyGRPC(t, faultyGRPC{infer: func(context.Context) (*inferencepb.ModelInferResponse, error) {
		n := open.Add(1)
		defer open.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		return &inferencepb.ModelInferResponse{Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{
			{Name: "logits", Datatype: "FP32", Shape: []int64{1, 10}, Contents: &inferencepb.InferTensorContents{Fp32Contents: logits}}}}, nil
	}})
	qsl := dataset.NewQSL(dataset.Synthetic(64, 1), 64)
	e, err := kserve.New(kserve.Options{URL: addr, GRPC: true, Model: "fashion-mlp", Inputs: qsl, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := qsl.LoadSamples([]uint64{0}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range 200 {
		wg.Go(func() {
			var resp loadgen.Response
			e.Do(context.Background(), nil, loadgen.QuerySample{ID: loadgen.ResponseID(i + 1), Index: 0}, &resp)
			if resp.Err != nil {
				failed.Add(1)
				t.Log(resp.Err)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 || most.Load() > 4 || most.Load() < 2 {
		t.Errorf("%d of 200 calls failed; %d in flight at once, MaxConns is 4", failed.Load(), most.Load())
	}
}
