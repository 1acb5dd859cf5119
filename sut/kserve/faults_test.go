package kserve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut/kserve"
	"aimeter/sut/kserve/inferencepb"
	"aimeter/sut/netsut"
)

// faultyHTTP serves health and metadata from a real KServe server and
// answers inference with infer.
func faultyHTTP(t *testing.T, infer http.HandlerFunc) *httptest.Server {
	t.Helper()
	k, err := serve.NewKServe(serve.KServeOptions{Model: testModel(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			infer(w, r)
			return
		}
		// No idle connection is left after Check: a test that stops
		// the server sees a refused dial, not a stale connection.
		w.Header().Set("Connection", "close")
		k.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// doOne checks an endpoint at u and sends one sample with the given
// timeout, returning the response and how long Do took.
func doOne(t *testing.T, o kserve.Options, timeout time.Duration, stop func()) (loadgen.Response, time.Duration) {
	t.Helper()
	qsl := dataset.NewQSL(dataset.Synthetic(2, 1), 2)
	if err := qsl.LoadSamples([]uint64{0}); err != nil {
		t.Fatal(err)
	}
	o.Model, o.Inputs = "fashion-mlp", qsl
	e, err := kserve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stop != nil {
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var resp loadgen.Response
	start := time.Now()
	e.Do(ctx, nil, loadgen.QuerySample{ID: 1, Index: 0}, &resp)
	took := time.Since(start)
	if s := e.Stats(); o.GRPC && (s.Requests != 1 || (resp.Err != nil) != (s.Errors == 1)) {
		t.Errorf("Stats %+v after one request with error %v", s, resp.Err)
	}
	return resp, took
}

func TestHTTPFaults(t *testing.T) {
	for _, c := range []struct {
		why      string
		binary   bool
		infer    http.HandlerFunc
		category string
		want     string
	}{
		{"a 500 is an http error with the status and the body", false, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "model exploded", http.StatusInternalServerError)
		}, netsut.CategoryHTTP5xx, "500 Internal Server Error: \"model exploded"},
		{"a 429 is an http error", false, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, netsut.CategoryHTTP4xx, "429"},
		{"malformed JSON is a decode error", false, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"outputs":[{"name":"logits"`))
		}, netsut.CategoryMalformedJSON, "malformed"},
		{"a response without the output is a decode error", false, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"outputs":[{"name":"other","datatype":"FP32","shape":[1],"data":[1]}]}`))
		}, netsut.CategoryProtocol, `no output "logits"`},
		{"an error object is a decode error with its message", false, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"error":"out of memory"}`))
		}, netsut.CategoryServerError, "out of memory"},
		{"binary data shorter than announced is a decode error", true, func(w http.ResponseWriter, _ *http.Request) {
			js := `{"outputs":[{"name":"logits","datatype":"FP32","shape":[1,10],"parameters":{"binary_data_size":40}}]}`
			w.Header().Set("Inference-Header-Content-Length", strconv.Itoa(len(js)))
			_, _ = w.Write([]byte(js + "abcd"))
		}, netsut.CategoryProtocol, "past the end"},
		{"a bad header length is a decode error", true, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Inference-Header-Content-Length", "-3")
			_, _ = w.Write([]byte(`{}`))
		}, netsut.CategoryProtocol, "Inference-Header-Content-Length"},
		{"a connection closed mid-response is a reset", false, func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"out"))
				conn.Close()
			}
		}, netsut.CategoryStreamTruncated, ""}, // EOF or a reset, as the kernel has it: the response had begun
		{"a server that never answers ends at the request timeout", false, func(_ http.ResponseWriter, r *http.Request) {
			// Read the body, so the server notices the client's close.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, netsut.CategoryRequestTimeout, "deadline"},
	} {
		t.Run(c.why, func(t *testing.T) {
			srv := faultyHTTP(t, c.infer)
			resp, took := doOne(t, kserve.Options{URL: srv.URL, BinaryData: c.binary}, 300*time.Millisecond, nil)
			if got := category(resp.Err); got != c.category || !strings.Contains(resp.Err.Error(), c.want) {
				t.Errorf("error %v (category %q), want category %q with %q", resp.Err, got, c.category, c.want)
			}
			if took > 10*time.Second {
				t.Errorf("Do took %v", took)
			}
		})
	}
}

// TestHTTPRefused: a server gone after Check gives connect errors.
func TestHTTPRefused(t *testing.T) {
	srv := faultyHTTP(t, func(http.ResponseWriter, *http.Request) {})
	resp, _ := doOne(t, kserve.Options{URL: srv.URL}, 5*time.Second, srv.Close)
	if got := category(resp.Err); got != netsut.CategoryConnectionRefused {
		t.Errorf("error %v (category %q), want connection_refused", resp.Err, got)
	}
}

// faultyGRPC is a v2 gRPC server whose inference fails as told.
type faultyGRPC struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	infer  func(context.Context) (*inferencepb.ModelInferResponse, error)
	stream func(grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error
}

func (faultyGRPC) ServerLive(context.Context, *inferencepb.ServerLiveRequest) (*inferencepb.ServerLiveResponse, error) {
	return &inferencepb.ServerLiveResponse{Live: true}, nil
}

func (faultyGRPC) ServerReady(context.Context, *inferencepb.ServerReadyRequest) (*inferencepb.ServerReadyResponse, error) {
	return &inferencepb.ServerReadyResponse{Ready: true}, nil
}

func (faultyGRPC) ModelReady(context.Context, *inferencepb.ModelReadyRequest) (*inferencepb.ModelReadyResponse, error) {
	return &inferencepb.ModelReadyResponse{Ready: true}, nil
}

func (faultyGRPC) ModelMetadata(context.Context, *inferencepb.ModelMetadataRequest) (*inferencepb.ModelMetadataResponse, error) {
	type tm = inferencepb.ModelMetadataResponse_TensorMetadata
	return &inferencepb.ModelMetadataResponse{Name: "fashion-mlp",
		Inputs:  []*tm{{Name: "input", Datatype: "FP32", Shape: []int64{-1, 784}}},
		Outputs: []*tm{{Name: "logits", Datatype: "FP32", Shape: []int64{-1, 10}}},
	}, nil
}

func (f faultyGRPC) ModelInfer(ctx context.Context, _ *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	return f.infer(ctx)
}

func (f faultyGRPC) ModelStreamInfer(s grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
	return f.stream(s)
}

func startFaultyGRPC(t *testing.T, f faultyGRPC) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	inferencepb.RegisterGRPCInferenceServiceServer(gs, f)
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(gs.Stop)
	return l.Addr().String()
}

func TestGRPCFaults(t *testing.T) {
	final := map[string]*inferencepb.InferParameter{"triton_final_response": {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: false}}}
	for _, c := range []struct {
		why      string
		stream   bool
		f        faultyGRPC
		category string
		want     string
	}{
		{"a status error is a grpc error with code and message", false, faultyGRPC{infer: func(context.Context) (*inferencepb.ModelInferResponse, error) {
			return nil, status.Error(codes.ResourceExhausted, "queue full")
		}}, netsut.CategoryGRPC, "ResourceExhausted: queue full"},
		{"a response without outputs is a decode error", false, faultyGRPC{infer: func(context.Context) (*inferencepb.ModelInferResponse, error) {
			return &inferencepb.ModelInferResponse{}, nil
		}}, netsut.CategoryProtocol, "no output"},
		{"raw contents not matching the outputs are a decode error", false, faultyGRPC{infer: func(context.Context) (*inferencepb.ModelInferResponse, error) {
			return &inferencepb.ModelInferResponse{Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: "logits", Datatype: "FP32"}}, RawOutputContents: [][]byte{{1, 2, 3}, {4}}}, nil
		}}, netsut.CategoryProtocol, "raw output contents"},
		{"a server that never answers ends at the request timeout", false, faultyGRPC{infer: func(ctx context.Context) (*inferencepb.ModelInferResponse, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}, netsut.CategoryRequestTimeout, "DeadlineExceeded"},
		{"a stream error message is a grpc error", true, faultyGRPC{stream: func(s grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
			r, err := s.Recv()
			if err != nil {
				return err
			}
			_ = s.Send(&inferencepb.ModelStreamInferResponse{ErrorMessage: "bad input", InferResponse: &inferencepb.ModelInferResponse{Id: r.GetId()}})
			<-s.Context().Done()
			return nil
		}}, netsut.CategoryGRPC, "bad input"},
		{"a stream that ends before the final response is truncated", true, faultyGRPC{stream: func(s grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
			r, err := s.Recv()
			if err != nil {
				return err
			}
			_ = s.Send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{Id: r.GetId(), Parameters: final,
				Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: "logits", Datatype: "FP32", Contents: &inferencepb.InferTensorContents{Fp32Contents: []float32{0, 1}}}}}})
			return status.Error(codes.Internal, "worker died")
		}}, netsut.CategoryStreamTruncated, "worker died"},
		{"a stream that never answers ends at the request timeout", true, faultyGRPC{stream: func(s grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
			<-s.Context().Done()
			return nil
		}}, netsut.CategoryRequestTimeout, ""},
	} {
		t.Run(c.why, func(t *testing.T) {
			addr := startFaultyGRPC(t, c.f)
			resp, took := doOne(t, kserve.Options{URL: addr, GRPC: true, Stream: c.stream}, 300*time.Millisecond, nil)
			if got := category(resp.Err); got != c.category || !strings.Contains(resp.Err.Error(), c.want) {
				t.Errorf("error %v (category %q), want category %q with %q", resp.Err, got, c.category, c.want)
			}
			if took > 10*time.Second {
				t.Errorf("Do took %v", took)
			}
		})
	}
}

// TestStreamDecoupled: a decoupled model answers one request with several
// responses; the first with outputs gives the class, every response with
// outputs is a token, and the one marked triton_final_response ends it.
func TestStreamDecoupled(t *testing.T) {
	flag := func(v bool) map[string]*inferencepb.InferParameter {
		return map[string]*inferencepb.InferParameter{"triton_final_response": {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: v}}}
	}
	out := func(class int) []*inferencepb.ModelInferResponse_InferOutputTensor {
		c := make([]float32, 10)
		c[class] = 1
		return []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: "logits", Datatype: "FP32", Contents: &inferencepb.InferTensorContents{Fp32Contents: c}}}
	}
	addr := startFaultyGRPC(t, faultyGRPC{stream: func(s grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
		for {
			r, err := s.Recv()
			if err != nil {
				return nil
			}
			id := r.GetId()
			for _, m := range []*inferencepb.ModelInferResponse{
				{Id: id, Parameters: flag(false), Outputs: out(3)},
				{Id: id, Parameters: flag(false), Outputs: out(5)},
				{Id: id, Parameters: flag(true)},
			} {
				if err := s.Send(&inferencepb.ModelStreamInferResponse{InferResponse: m}); err != nil {
					return err
				}
			}
		}
	}})
	resp, _ := doOne(t, kserve.Options{URL: addr, GRPC: true, Stream: true}, 5*time.Second, nil)
	if resp.Err != nil || len(resp.Data) != 1 || resp.Data[0] != 3 || resp.Tokens != 2 {
		t.Errorf("data %v, tokens %d, error %v; want class 3 from the first response and 2 tokens", resp.Data, resp.Tokens, resp.Err)
	}
}

// TestHTTPConnectionBound: an Offline query of many samples opens at most
// MaxConns connections; the other requests wait for one.
func TestHTTPConnectionBound(t *testing.T) {
	k, err := serve.NewKServe(serve.KServeOptions{Model: testModel(t), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	var mu sync.Mutex
	open, most := 0, 0
	srv := httptest.NewUnstartedServer(k)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
			most = max(most, open)
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.Start()
	defer srv.Close()
	qsl := dataset.NewQSL(dataset.Synthetic(64, 1), 64)
	e, err := kserve.New(kserve.Options{URL: srv.URL, Model: "fashion-mlp", Inputs: qsl, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	sut := netsut.New(context.Background(), e, netsut.Options{RequestTimeout: 30 * time.Second})
	defer sut.Close()
	s := loadgen.DefaultSettings()
	s.Scenario, s.MinDurationMs, s.MinQueryCount, s.OfflineExpectedQPS = loadgen.Offline, 1000, 1, 500
	res, err := loadgen.Run(context.Background(), sut, qsl, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedSamples != 0 || res.Summary.SampleCount < 500 {
		t.Fatalf("%d samples, %d failed: %v", res.Summary.SampleCount, res.FailedSamples, res.Errors)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 4 {
		t.Errorf("%d connections open at once, MaxConns is 4", most)
	}
}

// TestBearerToken: the token reaches the server over HTTP and gRPC and
// appears in no error and not in the SUT name.
func TestBearerToken(t *testing.T) {
	const token = "s3cret-token"
	srv := faultyHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Error(w, "authorized, but failing on purpose", http.StatusTeapot)
	})
	resp, _ := doOne(t, kserve.Options{URL: srv.URL, BearerToken: token}, 5*time.Second, nil)
	if resp.Err == nil || !strings.Contains(resp.Err.Error(), "418") || strings.Contains(resp.Err.Error(), token) {
		t.Errorf("HTTP: error %v, want the 418 of an authorized request without the token", resp.Err)
	}
	addr := startFaultyGRPC(t, faultyGRPC{infer: func(ctx context.Context) (*inferencepb.ModelInferResponse, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("authorization"); len(v) != 1 || v[0] != "Bearer "+token {
			return nil, status.Error(codes.Unauthenticated, "no token")
		}
		return nil, status.Error(codes.Aborted, "authorized, but failing on purpose")
	}})
	resp, _ = doOne(t, kserve.Options{URL: addr, GRPC: true, BearerToken: token}, 5*time.Second, nil)
	if resp.Err == nil || !strings.Contains(resp.Err.Error(), "Aborted") || strings.Contains(resp.Err.Error(), token) {
		t.Errorf("gRPC: error %v, want the Aborted of an authorized call without the token", resp.Err)
	}
	e, err := kserve.New(kserve.Options{URL: addr, GRPC: true, BearerToken: token, Model: "m", Inputs: dataset.NewQSL(dataset.Synthetic(1, 1), 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if strings.Contains(e.Name(), token) {
		t.Errorf("the name %q shows the token", e.Name())
	}
}
