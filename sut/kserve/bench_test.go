package kserve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
	"aimeter/sut/kserve/inferencepb"
)

// The benchmarks compare the adapter's Do with a bare client loop sending
// the same request to the same minimal server (fixed answer, no model), so
// that the figures are the client's own cost. Compare the ns/op of the
// sub-benchmarks of one run, taken side by side.

const benchParallelism = 16 // goroutines per GOMAXPROCS: requests in flight

// fixedLogits are the 10 logits every benchmark server returns.
var fixedLogits = func() []byte {
	var b []byte
	for i := range 10 {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(i)/10))
	}
	return b
}()

// rooflineGRPC answers every inference with fixed logits.
type rooflineGRPC struct{ faultyGRPC }

func (rooflineGRPC) ModelInfer(_ context.Context, r *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	return &inferencepb.ModelInferResponse{ModelName: r.GetModelName(), Id: r.GetId(),
		Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: "logits", Datatype: "FP32", Shape: []int64{1, 10}}},
		RawOutputContents: [][]byte{fixedLogits}}, nil
}

func benchQSL(b *testing.B) *dataset.QSL {
	qsl := dataset.NewQSL(dataset.Synthetic(64, 1), 64)
	idx := make([]uint64, 64)
	for i := range idx {
		idx[i] = uint64(i)
	}
	if err := qsl.LoadSamples(idx); err != nil {
		b.Fatal(err)
	}
	return qsl
}

func checkedEndpoint(b *testing.B, o kserve.Options) *kserve.Endpoint {
	o.Model, o.Inputs = "fashion-mlp", benchQSL(b)
	e, err := kserve.New(o)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Check(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}

func runAdapter(b *testing.B, e *kserve.Endpoint) {
	b.ReportAllocs()
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var resp loadgen.Response
		i := uint64(0)
		for pb.Next() {
			resp = loadgen.Response{ID: 1}
			e.Do(context.Background(), nil, loadgen.QuerySample{ID: 1, Index: i % 64}, &resp)
			if resp.Err != nil {
				b.Error(resp.Err)
				return
			}
			i++
		}
	})
}

// BenchmarkGRPC: the adapter's unary ModelInfer against a bare grpc-go
// client loop (a prebuilt request, generated stub) on one connection each.
// The server is an in-process one with a fixed answer, or, where the
// environment variable AIMETER_BENCH_GRPC_ADDR names one (as
// scripts/bench-grpc.sh does), that server.
func BenchmarkGRPC(b *testing.B) {
	addr := os.Getenv("AIMETER_BENCH_GRPC_ADDR")
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		gs := grpc.NewServer()
		inferencepb.RegisterGRPCInferenceServiceServer(gs, rooflineGRPC{})
		go func() { _ = gs.Serve(l) }()
		defer gs.Stop()
		addr = l.Addr().String()
	}

	b.Run("adapter", func(b *testing.B) {
		runAdapter(b, checkedEndpoint(b, kserve.Options{URL: addr, GRPC: true}))
	})
	b.Run("bare", func(b *testing.B) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		api := inferencepb.NewGRPCInferenceServiceClient(conn)
		x, _ := benchQSL(b).Sample(0)
		var raw []byte
		for _, v := range x {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
		req := &inferencepb.ModelInferRequest{ModelName: "fashion-mlp",
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "FP32", Shape: []int64{1, 784}}},
			Outputs:          []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "logits"}},
			RawInputContents: [][]byte{raw}}
		b.ReportAllocs()
		b.SetParallelism(benchParallelism)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := api.ModelInfer(context.Background(), req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// rooflineHTTP serves v2 metadata and answers every inference with fixed
// logits in JSON.
func rooflineHTTP() http.Handler {
	var logits strings.Builder
	logits.WriteString(`{"model_name":"fashion-mlp","outputs":[{"name":"logits","datatype":"FP32","shape":[1,10],"data":[0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9]}]}`)
	answer := []byte(logits.String())
	meta := []byte(`{"name":"fashion-mlp","inputs":[{"name":"input","datatype":"FP32","shape":[-1,784]}],"outputs":[{"name":"logits","datatype":"FP32","shape":[-1,10]}]}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header()["Content-Type"] = []string{"application/json"}
			_, _ = w.Write(answer)
		case r.URL.Path == "/v2/models/fashion-mlp":
			_, _ = w.Write(meta)
		}
	})
}

// BenchmarkHTTP: the adapter (JSON and binary tensors) against a bare
// net/http loop posting a prebuilt JSON body of the same size.
func BenchmarkHTTP(b *testing.B) {
	srv := httptest.NewServer(rooflineHTTP())
	defer srv.Close()
	b.Run("adapter-json", func(b *testing.B) {
		runAdapter(b, checkedEndpoint(b, kserve.Options{URL: srv.URL}))
	})
	b.Run("adapter-binary", func(b *testing.B) {
		runAdapter(b, checkedEndpoint(b, kserve.Options{URL: srv.URL, BinaryData: true}))
	})
	b.Run("bare", func(b *testing.B) {
		x, _ := benchQSL(b).Sample(0)
		var body bytes.Buffer
		body.WriteString(`{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":[`)
		for i, v := range x {
			if i > 0 {
				body.WriteByte(',')
			}
			body.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
		body.WriteString(`]}]}`)
		payload := body.Bytes()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
		defer client.CloseIdleConnections()
		url := srv.URL + "/v2/models/fashion-mlp/infer"
		b.ReportAllocs()
		b.SetParallelism(benchParallelism)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := client.Post(url, "application/json", bytes.NewReader(payload))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	})
}
