package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
	"aimeter/sut/reference/mlp"
)

// kserveFlags are the flags of --sut kserve (and of the nodes of --sut
// dispatch --backend kserve). --url, --request-timeout, --check-timeout and
// --max-conns are the network SUTs' shared flags (netflags.go).
type kserveFlags struct {
	grpc         bool
	modelName    string
	modelVersion string
	binaryData   bool
	stream       bool
	tokenEnv     string
	stageTimes   bool
	// qsl is the demo's data set, loaded once (the nodes of a dispatched
	// run share it); inputSize the length of one input.
	qsl       *dataset.QSL
	inputSize int
}

// kserveFlagNames lists addKServeFlags' flags for the help groups.
var kserveFlagNames = []string{"grpc", "model-name", "model-version", "binary-data", "grpc-stream", "token-env", "server-timing"}

// addKServeFlags registers the flags of --sut kserve on fl.
func addKServeFlags(fl *pflag.FlagSet, k *kserveFlags) {
	fl.BoolVar(&k.grpc, "grpc", false, "kserve: use gRPC instead of HTTP/REST")
	fl.StringVar(&k.modelName, "model-name", "fashion-mlp", "kserve: the model's name on the server")
	fl.StringVar(&k.modelVersion, "model-version", "", "kserve: the model version (empty = the server's choice)")
	fl.BoolVar(&k.binaryData, "binary-data", false, "kserve over HTTP: send and receive tensors in the binary tensor data extension instead of JSON")
	fl.BoolVar(&k.stream, "grpc-stream", false, "kserve over gRPC: send every request over one ModelStreamInfer stream (Triton, decoupled models)")
	fl.StringVar(&k.tokenEnv, "token-env", "", "kserve: name of the environment variable holding a bearer token (never logged)")
	fl.BoolVar(&k.stageTimes, "server-timing", false, "kserve: keep the server's stage times (Server-Timing) per sample, for the GB/T time breakdown")
}

// kserveData loads the demo's data set once: the inputs every KServe
// request carries.
func kserveData(st *State, f *runFlags) (*dataset.QSL, int, error) {
	k := &f.kserve
	if k.qsl != nil {
		return k.qsl, k.inputSize, nil
	}
	data, err := loadDemoData(st, "auto")
	if err != nil {
		return nil, 0, withCode(ExitFailure, err)
	}
	if !strings.Contains(strings.ToLower(data.Test.Name), "fashion") {
		fmt.Fprintf(st.Stderr, "note: sending the %s data set; the server's model must have been trained on it\n", data.Test.Name)
	}
	k.qsl, k.inputSize = dataset.NewQSL(data.Test, mlp.QSLPerformanceSamples), data.Test.Rows*data.Test.Cols
	return k.qsl, k.inputSize, nil
}

// newKServeEndpoint builds the client of one KServe v2 server at url from
// the KServe flags. It does not contact the server.
func newKServeEndpoint(st *State, url string, f *runFlags) (*kserve.Endpoint, error) {
	k := &f.kserve
	var token string
	if k.tokenEnv != "" {
		token = os.Getenv(k.tokenEnv)
		if token == "" {
			return nil, usageError("--token-env %s: the variable is not set or empty", k.tokenEnv)
		}
	}
	if f.net.maxConns < 0 {
		return nil, usageError("--max-conns must not be negative")
	}
	if k.stream && !k.grpc {
		return nil, usageError("--grpc-stream needs --grpc (ModelStreamInfer is a gRPC call)")
	}
	qsl, inputSize, err := kserveData(st, f)
	if err != nil {
		return nil, err
	}
	ep, err := kserve.New(kserve.Options{
		URL: url, GRPC: k.grpc, Model: k.modelName, ModelVersion: k.modelVersion,
		Inputs: qsl, InputSize: inputSize,
		BinaryData: k.binaryData, Stream: k.stream, BearerToken: token, StageTimes: k.stageTimes, MaxConns: f.net.maxConns,
	})
	if err != nil {
		return nil, usageError("%v", err)
	}
	return ep, nil
}

// newKServeSUT builds --sut kserve: the demo's data set as the QSL, sent to
// a KServe v2 server, checked before the run.
func newKServeSUT(ctx context.Context, st *State, f *runFlags) (loadgen.SUT, loadgen.QSL, func(), error) {
	url, err := f.net.oneURL("kserve")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := f.net.validate(); err != nil {
		return nil, nil, nil, err
	}
	ep, err := newKServeEndpoint(st, url, f)
	if err != nil {
		return nil, nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, f.net.checkTimeout)
	defer cancel()
	if err := ep.Check(cctx); err != nil {
		_ = ep.Close()
		return nil, nil, nil, withCode(ExitFailure, fmt.Errorf("--sut kserve: the server is not ready for the run: %w", err))
	}
	sut := netsut.New(context.Background(), ep, netsut.Options{RequestTimeout: f.net.requestTimeout})
	return sut, f.kserve.qsl, func() { _ = sut.Close() }, nil
}
