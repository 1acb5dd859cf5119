package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"aimeter/model"
	"aimeter/sut/kserve/inferencepb"
)

func newTestKServe(t *testing.T) *KServe {
	t.Helper()
	k, err := NewKServe(KServeOptions{Model: model.New(model.DefaultLayers(), 3), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// TestKServeHTTPRefuses: bad requests get a 4xx with a JSON error saying
// what is wrong, never a crash or a hang.
func TestKServeHTTPRefuses(t *testing.T) {
	srv := httptest.NewServer(newTestKServe(t))
	defer srv.Close()
	pixels := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 784), ",") + "]"
	for _, c := range []struct {
		why, path, body, header string
		code                    int
		want                    string
	}{
		{"unknown model", "/v2/models/other/infer", `{}`, "", 404, "unknown model"},
		{"unknown version", "/v2/models/fashion-mlp/versions/9/infer", `{}`, "", 404, "no version"},
		{"malformed JSON", "/v2/models/fashion-mlp/infer", `{"inputs":`, "", 400, "request JSON"},
		{"no input", "/v2/models/fashion-mlp/infer", `{"inputs":[]}`, "", 400, "0 inputs"},
		{"wrong input name", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"x","datatype":"FP32","shape":[1,784],"data":` + pixels + `}]}`, "", 400, "unknown input"},
		{"wrong datatype", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"input","datatype":"INT8","shape":[1,784],"data":` + pixels + `}]}`, "", 400, "want FP32"},
		{"wrong shape", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"input","datatype":"FP32","shape":[28,28],"data":` + pixels + `}]}`, "", 400, "want [N, 784]"},
		{"too few values", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":[1,2]}]}`, "", 400, "the request has 2"},
		{"bad data", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":["a"]}]}`, "", 400, "unexpected"},
		{"unknown output", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":` + pixels + `}],"outputs":[{"name":"probs"}]}`, "", 400, "unknown output"},
		{"header length past the body", "/v2/models/fashion-mlp/infer", `{}`, "99", 400, "Inference-Header-Content-Length"},
		{"binary size not matching", "/v2/models/fashion-mlp/infer", `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"parameters":{"binary_data_size":3136}}]}abcd`, "102", 400, "binary_data_size"},
		{"a good request", "/v2/models/fashion-mlp/infer", `{"id":"7","inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":` + pixels + `}]}`, "", 200, `"id":"7"`},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader(c.body))
		if c.header != "" {
			req.Header.Set("Inference-Header-Content-Length", c.header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.why, res.StatusCode, body, c.code, c.want)
		}
		if c.code == 200 && !strings.Contains(res.Header.Get("Server-Timing"), "aimeter-inference;dur=") {
			t.Errorf("%s: Server-Timing %q", c.why, res.Header.Get("Server-Timing"))
		}
	}
}

// TestKServeGRPCRefuses: bad gRPC requests end with InvalidArgument or
// NotFound and a message.
func TestKServeGRPCRefuses(t *testing.T) {
	k := newTestKServe(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	k.RegisterGRPC(gs)
	go func() { _ = gs.Serve(l) }()
	defer gs.Stop()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	api := inferencepb.NewGRPCInferenceServiceClient(conn)
	in := func(name, dt string, shape []int64, raw ...[]byte) *inferencepb.ModelInferRequest {
		return &inferencepb.ModelInferRequest{ModelName: "fashion-mlp",
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: name, Datatype: dt, Shape: shape}},
			RawInputContents: raw}
	}
	good := make([]byte, 4*784)
	for _, c := range []struct {
		why  string
		req  *inferencepb.ModelInferRequest
		code codes.Code
		want string
	}{
		{"unknown model", &inferencepb.ModelInferRequest{ModelName: "other"}, codes.NotFound, "unknown model"},
		{"no inputs", &inferencepb.ModelInferRequest{ModelName: "fashion-mlp"}, codes.InvalidArgument, "0 inputs"},
		{"raw data of a bad length", in("input", "FP32", []int64{1, 784}, []byte{1, 2, 3}), codes.InvalidArgument, "whole number"},
		{"two raw contents", in("input", "FP32", []int64{1, 784}, good, good), codes.InvalidArgument, "2 raw input contents"},
		{"wrong shape", in("input", "FP32", []int64{2, 784}, good), codes.InvalidArgument, "holds 1568 values"},
		{"a good request", in("input", "FP32", []int64{1, 784}, good), codes.OK, ""},
	} {
		_, err := api.ModelInfer(context.Background(), c.req)
		if s := status.Convert(err); s.Code() != c.code || !strings.Contains(s.Message(), c.want) {
			t.Errorf("%s: %v, want %s with %q", c.why, err, c.code, c.want)
		}
	}
}

// TestKServeNullModel: with NullModel and no Model, a good request over HTTP
// and over gRPC is answered with zero logits of the reference model's shape,
// and bad requests are still refused.
func TestKServeNullModel(t *testing.T) {
	if _, err := NewKServe(KServeOptions{}); err == nil {
		t.Fatal("NewKServe without Model or NullModel: no error")
	}
	k, err := NewKServe(KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv := httptest.NewServer(k)
	defer srv.Close()
	pixels := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 784), ",") + "]"
	for _, c := range []struct {
		why, body string
		code      int
		want      string
	}{
		{"a good request gets ten zero logits", `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,784],"data":` + pixels + `}]}`, 200, `"shape":[1,10],"data":[0,0,0,0,0,0,0,0,0,0]`},
		{"two rows get two rows of logits", `{"inputs":[{"name":"input","datatype":"FP32","shape":[2,784],"data":` + strings.Replace(pixels, "]", ","+pixels[1:], 1) + `}]}`, 200, `"shape":[2,10]`},
		{"a wrong shape is still refused", `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]}`, 400, "want [N, 784]"},
	} {
		res, err := http.Post(srv.URL+"/v2/models/fashion-mlp/infer", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.why, res.StatusCode, body, c.code, c.want)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	k.RegisterGRPC(gs)
	go func() { _ = gs.Serve(l) }()
	defer gs.Stop()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := inferencepb.NewGRPCInferenceServiceClient(conn).ModelInfer(context.Background(), &inferencepb.ModelInferRequest{
		ModelName:        "fashion-mlp",
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "FP32", Shape: []int64{1, 784}}},
		RawInputContents: [][]byte{make([]byte, 4*784)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if raw := res.GetRawOutputContents(); len(raw) != 1 || len(raw[0]) != 4*NullClasses || strings.Trim(string(raw[0]), "\x00") != "" {
		t.Errorf("gRPC null answer: %v, want %d zero bytes", raw, 4*NullClasses)
	}
}
