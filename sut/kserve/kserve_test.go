package kserve_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/serve"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
)

// server is an aimeter serve kserve on loopback listeners.
type server struct {
	k        *serve.KServe
	httpURL  string
	grpcAddr string
}

func testModel(t testing.TB) *model.MLP {
	t.Helper()
	return model.New(model.DefaultLayers(), 7)
}

// startServer serves m over HTTP and gRPC on loopback until the test ends.
func startServer(t testing.TB, m *model.MLP) *server {
	t.Helper()
	k, err := serve.NewKServe(serve.KServeOptions{Model: m, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := k.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		k.Close()
	})
	return &server{k: k, httpURL: srv.HTTPURL(), grpcAddr: srv.GRPCAddr.String()}
}

// variant is one way of talking to the server.
type variant struct {
	name               string
	grpc, binary, strm bool
}

var variants = []variant{
	{name: "http-json"},
	{name: "http-binary", binary: true},
	{name: "grpc", grpc: true},
	{name: "grpc-stream", grpc: true, strm: true},
}

func (s *server) endpoint(t testing.TB, v variant, qsl *dataset.QSL) *kserve.Endpoint {
	t.Helper()
	u := s.httpURL
	if v.grpc {
		u = s.grpcAddr
	}
	set := qsl.Set()
	e, err := kserve.New(kserve.Options{URL: u, GRPC: v.grpc, BinaryData: v.binary, Stream: v.strm,
		Model: "fashion-mlp", Inputs: qsl, InputSize: set.Rows * set.Cols, StageTimes: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return e
}

func shortSettings(sc loadgen.Scenario) loadgen.Settings {
	s := loadgen.DefaultSettings()
	s.Scenario = sc
	// Early stopping needs 662 queries for a 99th percentile estimate;
	// no minimum duration, so that a fast run is valid too.
	s.MinDurationMs = 0
	s.MinQueryCount = 700
	// A light load with a loose bound: the machine running the tests may
	// be busy, and these tests check the protocol, not the speed.
	s.ServerTargetQPS = 200
	s.ServerTargetLatencyNs = uint64(30 * time.Second)
	s.OfflineExpectedQPS = 1000
	s.MultiStreamExpectedLatencyNs = uint64(5 * time.Millisecond)
	s.SingleStreamExpectedLatencyNs = uint64(time.Millisecond)
	return s
}

// TestScenarios runs every scenario over every protocol variant against
// aimeter serve kserve on loopback; every run must be VALID and error-free.
func TestScenarios(t *testing.T) {
	m := testModel(t)
	srv := startServer(t, m)
	qsl := dataset.NewQSL(dataset.Synthetic(256, 1), 256)
	for _, v := range variants {
		for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.MultiStream, loadgen.Server, loadgen.Offline} {
			t.Run(v.name+"/"+sc.String(), func(t *testing.T) {
				e := srv.endpoint(t, v, qsl)
				sut := netsut.New(context.Background(), e, netsut.Options{RequestTimeout: 5 * time.Second})
				defer sut.Close()
				res, err := loadgen.Run(context.Background(), sut, qsl, shortSettings(sc), &loadgen.Options{Timeout: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				if res.FailedSamples != 0 {
					t.Fatalf("%d failed samples: %v", res.FailedSamples, res.Errors)
				}
				if !res.Summary.Valid {
					t.Errorf("INVALID: %+v", res.Summary)
				}
				if !strings.Contains(res.SUTName, "KServe v2") {
					t.Errorf("SUT name %q", res.SUTName)
				}
			})
		}
	}
}

// TestAccuracy checks that every variant returns, for every sample, the
// class the in-process model predicts: the accuracy check of a run scores
// the remote model as it scores the reference SUT.
func TestAccuracy(t *testing.T) {
	m := testModel(t)
	srv := startServer(t, m)
	set := dataset.Synthetic(200, 3)
	qsl := dataset.NewQSL(set, 200)
	want := m.Predict(set.Floats(), set.Len())
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			e := srv.endpoint(t, v, qsl)
			sut := netsut.New(context.Background(), e, netsut.Options{RequestTimeout: 5 * time.Second})
			defer sut.Close()
			s := loadgen.DefaultSettings()
			s.Scenario, s.Mode = loadgen.Offline, loadgen.AccuracyOnly
			res, err := loadgen.Run(context.Background(), sut, qsl, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Accuracy) != set.Len() {
				t.Fatalf("%d accuracy entries, want %d (errors %v)", len(res.Accuracy), set.Len(), res.Errors)
			}
			for _, a := range res.Accuracy {
				if len(a.Data) != 1 || int(a.Data[0]) != want[a.QSLIndex] {
					t.Fatalf("sample %d: got %v, in-process model says %d", a.QSLIndex, a.Data, want[a.QSLIndex])
				}
			}
		})
	}
}

// TestDo checks one request's bytes, stage times and node name.
func TestDo(t *testing.T) {
	m := testModel(t)
	srv := startServer(t, m)
	qsl := dataset.NewQSL(dataset.Synthetic(4, 1), 4)
	if err := qsl.LoadSamples([]uint64{0}); err != nil {
		t.Fatal(err)
	}
	// The stream variant needs a loadgen Responder for its token times:
	// TestScenarios covers it.
	for _, v := range variants[:3] {
		t.Run(v.name, func(t *testing.T) {
			e := srv.endpoint(t, v, qsl)
			defer e.Close()
			name, err := e.NodeName(context.Background())
			if err != nil || !strings.HasPrefix(name, "aimeter dev@127.0.0.1:") {
				t.Errorf("NodeName = %q, %v", name, err)
			}
			var resp loadgen.Response
			e.Do(context.Background(), nil, loadgen.QuerySample{ID: 1, Index: 0}, &resp)
			if resp.Err != nil {
				t.Fatal(resp.Err)
			}
			if len(resp.Data) != 1 || resp.RequestBytes < 4*784 || resp.ResponseBytes < 40 {
				t.Errorf("data %v, request %d bytes, response %d bytes", resp.Data, resp.RequestBytes, resp.ResponseBytes)
			}
			if resp.Stages == nil {
				t.Errorf("no stage times from the server")
			}
			// The gRPC adapter times the write of each request (its
			// stats handler); HTTP has no counters here.
			want := kserve.Stats{}
			if v.grpc {
				want = kserve.Stats{Requests: 1}
				want.SendLateness.Count = 1
			}
			got := e.Stats()
			if got.Requests != want.Requests || got.Errors != 0 || got.SendLateness.Count != want.SendLateness.Count ||
				(v.grpc && (got.SendLateness.Max <= 0 || got.SendLateness.P99 > got.SendLateness.Max)) {
				t.Errorf("Stats %+v, want %d request and %d send time", got, want.Requests, want.SendLateness.Count)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	qsl := dataset.NewQSL(dataset.Synthetic(4, 1), 4)
	for _, c := range []struct {
		why  string
		opts kserve.Options
		want string
	}{
		{"no URL", kserve.Options{Model: "m", Inputs: qsl}, "URL is required"},
		{"no model", kserve.Options{URL: "http://x", Inputs: qsl}, "Model is required"},
		{"no inputs", kserve.Options{URL: "http://x", Model: "m"}, "Inputs is required"},
		{"stream over HTTP", kserve.Options{URL: "http://x", Model: "m", Inputs: qsl, Stream: true}, "needs GRPC"},
		{"HTTP without scheme", kserve.Options{URL: "x:1", Model: "m", Inputs: qsl}, "want http://"},
		{"gRPC URL for HTTP", kserve.Options{URL: "grpc://x:1", Model: "m", Inputs: qsl}, "set GRPC"},
		{"bad scheme", kserve.Options{URL: "ftp://x", Model: "m", Inputs: qsl}, "scheme"},
		{"credentials in URL", kserve.Options{URL: "http://u:secret@x", Model: "m", Inputs: qsl}, "credentials"},
	} {
		_, err := kserve.New(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.why, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error shows the password: %v", c.why, err)
		}
	}
}

// TestCheckDown: a server that is down gives one clear error naming the
// URL and the step.
func TestCheckDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	qsl := dataset.NewQSL(dataset.Synthetic(4, 1), 4)
	for _, g := range []bool{false, true} {
		u := "http://" + addr
		if g {
			u = addr
		}
		e, err := kserve.New(kserve.Options{URL: u, GRPC: g, Model: "fashion-mlp", Inputs: qsl})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = e.Check(ctx)
		cancel()
		e.Close()
		if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(strings.ToLower(err.Error()), "live") {
			t.Errorf("grpc=%v: Check = %v, want an error naming %s and the liveness check", g, err, addr)
		}
	}
}

// TestCheckMetadata: a model whose metadata does not fit the data is
// refused before the run.
func TestCheckMetadata(t *testing.T) {
	srv := startServer(t, testModel(t))
	qsl := dataset.NewQSL(dataset.Synthetic(4, 1), 4)
	for _, c := range []struct {
		why  string
		opts kserve.Options
		want string
	}{
		{"wrong input size", kserve.Options{InputSize: 100}, "the data set's samples have 100 values"},
		{"unknown model", kserve.Options{Model: "other"}, "model ready"},
		{"unknown input", kserve.Options{InputName: "pixels"}, `no input "pixels"`},
		{"unknown output", kserve.Options{OutputName: "probs"}, `no output "probs"`},
	} {
		for _, g := range []bool{false, true} {
			o := c.opts
			o.URL, o.GRPC, o.Inputs = srv.httpURL, g, qsl
			if g {
				o.URL = srv.grpcAddr
			}
			if o.Model == "" {
				o.Model = "fashion-mlp"
			}
			e, err := kserve.New(o)
			if err != nil {
				t.Fatal(err)
			}
			err = e.Check(context.Background())
			e.Close()
			if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), "ModelReady", "model ready"), c.want) {
				t.Errorf("%s (grpc=%v): Check = %v, want %q", c.why, g, err, c.want)
			}
		}
	}
}

// TestDoWithoutCheck: Do before a successful Check is a client error, not
// a crash.
func TestDoWithoutCheck(t *testing.T) {
	qsl := dataset.NewQSL(dataset.Synthetic(4, 1), 4)
	e, err := kserve.New(kserve.Options{URL: "http://127.0.0.1:1", Model: "m", Inputs: qsl})
	if err != nil {
		t.Fatal(err)
	}
	var resp loadgen.Response
	e.Do(context.Background(), nil, loadgen.QuerySample{ID: 1}, &resp)
	if c := category(resp.Err); c != netsut.CategoryClient {
		t.Errorf("category %q (%v)", c, resp.Err)
	}
}

// category returns the loadgen error category of err.
func category(err error) string {
	if ce, ok := errors.AsType[*loadgen.CategoryError](err); ok {
		return ce.Kind
	}
	return ""
}
