package benchmark

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/serve"
	"aimeter/sut"
	"aimeter/sut/reference/mlp"
)

// referenceKServe serves the weights untrainedWeights put in the user
// cache over KServe v2 HTTP/REST and gRPC on loopback until the test
// ends, and returns the two addresses.
func referenceKServe(t *testing.T) (httpAddr, grpcAddr string) {
	t.Helper()
	data, err := mlp.LoadData("auto", mlp.DataOptions{Notify: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadFile(mlp.WeightsPath(data.Train))
	if err != nil {
		t.Fatal(err)
	}
	k, err := serve.NewKServe(serve.KServeOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := k.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); k.Close() })
	return srv.HTTPAddr.String(), srv.GRPCAddr.String()
}

// TestKServeAccuracyMatchesReference runs the accuracy mode against the
// in-process reference SUT and against the same weights behind serve's
// KServe server, over HTTP (binary tensors) and gRPC (stream): every
// sample gets the same class in the accuracy log, and the same score.
// (Two of the four ways, 5,000 samples each; sut/kserve's TestAccuracy
// checks all four. This was internal/cli's test of the same name.)
func TestKServeAccuracyMatchesReference(t *testing.T) {
	untrainedWeights(t)
	hl, gl := referenceKServe(t)
	run := func(cfg sut.Config) *Outcome {
		t.Helper()
		cfg.Kind = cmp.Or(cfg.Kind, sut.Reference)
		out, err := Run(context.Background(), Plan{SUT: cfg, Settings: Settings{Scenario: "Offline", Mode: "accuracy"}, OutputDir: t.TempDir(), NoReport: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.Accuracy == nil {
			t.Fatalf("%s: no score", cfg.Kind)
		}
		return out
	}
	ref := run(sut.Config{})
	want := map[uint64]string{}
	for _, e := range ref.Result.Accuracy {
		want[e.QSLIndex] = string(e.Data)
	}
	for _, c := range []struct {
		name string
		cfg  sut.Config
	}{
		{"http-binary", sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{"http://" + hl}}, KServe: &sut.KServeConfig{BinaryData: true}}},
		{"grpc-stream", sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{gl}}, KServe: &sut.KServeConfig{GRPC: true, Stream: true}}},
	} {
		out := run(c.cfg)
		if out.Accuracy.Value != ref.Accuracy.Value || out.Accuracy.Pass != ref.Accuracy.Pass {
			t.Errorf("%s: accuracy %v (pass %v), the reference SUT's %v (pass %v)", c.name, out.Accuracy.Value, out.Accuracy.Pass, ref.Accuracy.Value, ref.Accuracy.Pass)
		}
		if len(out.Result.Accuracy) != len(want) {
			t.Fatalf("%s: %d accuracy entries, the reference SUT gave %d", c.name, len(out.Result.Accuracy), len(want))
		}
		for _, e := range out.Result.Accuracy {
			if want[e.QSLIndex] != string(e.Data) {
				t.Fatalf("%s: sample %d: class %v, the reference SUT said %v", c.name, e.QSLIndex, e.Data, []byte(want[e.QSLIndex]))
			}
		}
	}
}

// TestKServeEveryScenario runs the four scenarios over KServe HTTP and
// gRPC against the reference model behind serve's KServe server: every
// run has its summary (VALID or not, which the machine's load decides), no
// sample fails or is lost, the SUT's name names the
// served model, and every record holds the bytes of both ways. (This was
// internal/cli's test of the same name; sut/kserve's TestScenarios runs
// the scenarios through loadgen alone.)
func TestKServeEveryScenario(t *testing.T) {
	untrainedWeights(t)
	hl, gl := referenceKServe(t)
	protocols := []struct {
		name string
		cfg  sut.Config
	}{
		{"http", sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{"http://" + hl}}}},
		{"grpc", sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{gl}}, KServe: &sut.KServeConfig{GRPC: true}}},
	}
	scenarios := []struct {
		name string
		sets []string
	}{
		// min_duration=0: a fast server would end a closed-loop run
		// before any useful minimum; the query counts decide. Early
		// stopping needs about 20 queries at p90 and 460 at p99.
		{"SingleStream", []string{"min_duration=0", "min_query_count=100"}},
		{"MultiStream", []string{"min_duration=0", "min_query_count=700"}},
		// A one-second latency bound: the run checks the client and
		// server, not the machine's load.
		{"Server", []string{"target_qps=200", "target_latency=1000", "min_duration=200", "min_query_count=500"}},
		{"Offline", []string{"target_qps=500", "min_duration=0", "min_query_count=200"}},
	}
	for _, p := range protocols {
		for _, sc := range scenarios {
			t.Run(p.name+"/"+sc.name, func(t *testing.T) {
				out, err := Run(context.Background(), Plan{SUT: p.cfg, Settings: Settings{Scenario: sc.name, Set: sc.sets}, OutputDir: t.TempDir(), NoReport: true})
				if err != nil {
					t.Fatal(err)
				}
				res := out.Result
				// Whether the run is VALID depends on the machine's speed and
				// load (a latency bound, early stopping): the test asks what
				// does not, a summary with every sample answered.
				if res.Summary == nil {
					t.Fatalf("no summary: verdict %+v", out.Verdict)
				}
				if res.FailedSamples != 0 || res.LostSamples != 0 {
					t.Fatalf("%d failed, %d lost", res.FailedSamples, res.LostSamples)
				}
				if !strings.Contains(res.SUTName, "fashion-mlp") {
					t.Errorf("SUT name %q does not name the served model", res.SUTName)
				}
				for rec := range out.Bundle.Result.Records() {
					if rec.Status != loadgen.StatusOK || rec.RequestBytes == 0 || rec.ResponseBytes == 0 {
						t.Fatalf("record %+v: want ok with the bytes of both ways", rec)
					}
				}
			})
		}
	}
}
