package kserve_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
)

// images is a data set of n inputs of 784 values, in memory: the QSL of
// the run and the source of every request's tensor.
type images struct{ n uint64 }

func (images) Name() string                     { return "images" }
func (q images) TotalSampleCount() uint64       { return q.n }
func (q images) PerformanceSampleCount() uint64 { return q.n }
func (images) LoadSamples([]uint64) error       { return nil }
func (images) UnloadSamples([]uint64) error     { return nil }

// Sample gives the input tensor of sample index: here a constant image.
func (q images) Sample(index uint64) ([]float32, bool) {
	if index >= q.n {
		return nil, false
	}
	x := make([]float32, serve.NullInputs)
	for i := range x {
		x[i] = float32(index%7) / 7
	}
	return x, true
}

// A Server test against a KServe v2 server over HTTP/REST, here aimeter's
// own server with a null model (it answers at once with zero logits).
// Options.GRPC with the server's gRPC address speaks gRPC instead.
func ExampleNew() {
	k, err := serve.NewKServe(serve.KServeOptions{NullModel: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(k)
	defer func() { srv.Close(); k.Close() }()

	data := images{n: 32}
	ep, err := kserve.New(kserve.Options{URL: srv.URL, Model: "fashion-mlp", Inputs: data, InputSize: serve.NullInputs})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	// Check asks whether the server is live and ready and whether the
	// model's metadata matches the inputs, before anything is sent.
	if err := ep.Check(ctx); err != nil {
		fmt.Println("server not usable:", err)
		return
	}
	sut := netsut.New(ctx, ep, netsut.Options{})
	defer sut.Close()

	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 500
	s.ServerTargetLatencyNs = 1e9 // one second: the example checks the protocol, not the machine
	s.MinDurationMs = 0
	s.MinQueryCount = 100
	res, err := loadgen.Run(ctx, sut, data, s, nil)
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	ok := 0
	for rec := range res.Records() {
		if rec.Status == loadgen.StatusOK && rec.RequestBytes > 0 && rec.ResponseBytes > 0 {
			ok++
		}
	}
	fmt.Println("samples answered:", ok, "of", res.RecordCount())
	fmt.Println("lost:", res.LostSamples, "failed:", res.FailedSamples)
	// Output:
	// samples answered: 100 of 100
	// lost: 0 failed: 0
}
