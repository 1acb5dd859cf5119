package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
)

// kserveFlags are the flags of --sut kserve. --url and --request-timeout
// are shared with the other network SUTs: they are registered here only
// if no other adapter has registered them, and read by name.
type kserveFlags struct {
	fs           *pflag.FlagSet
	urls         []string
	grpc         bool
	modelName    string
	modelVersion string
	binaryData   bool
	stream       bool
	tokenEnv     string
	timeout      time.Duration
	stageTimes   bool
	maxConns     int
}

// addKServeFlags registers the flags of --sut kserve on fl.
func addKServeFlags(fl *pflag.FlagSet, k *kserveFlags) {
	k.fs = fl
	if fl.Lookup("url") == nil {
		fl.StringArrayVar(&k.urls, "url", nil, "network SUTs: the server's URL (kserve: http://host:port, or host:port with --grpc)")
	}
	if fl.Lookup("request-timeout") == nil {
		fl.DurationVar(&k.timeout, "request-timeout", 0, "network SUTs: fail a request not answered within this time (category timeout; 0 = no limit of its own)")
	}
	fl.BoolVar(&k.grpc, "grpc", false, "kserve: use gRPC instead of HTTP/REST")
	fl.StringVar(&k.modelName, "model-name", "fashion-mlp", "kserve: the model's name on the server")
	fl.StringVar(&k.modelVersion, "model-version", "", "kserve: the model version (empty = the server's choice)")
	fl.BoolVar(&k.binaryData, "binary-data", false, "kserve over HTTP: send and receive tensors in the binary tensor data extension instead of JSON")
	fl.BoolVar(&k.stream, "stream", false, "kserve over gRPC: send every request over one ModelStreamInfer stream (Triton, decoupled models)")
	fl.StringVar(&k.tokenEnv, "token-env", "", "network SUTs: name of the environment variable holding a bearer token (never logged)")
	fl.IntVar(&k.maxConns, "max-conns", 256, "kserve over HTTP: most connections open at once; more requests wait for one")
	fl.BoolVar(&k.stageTimes, "server-timing", false, "kserve: keep the server's stage times (Server-Timing) per sample, for the GB/T time breakdown")
}

// sharedFlag returns the value of a flag that another network adapter may
// have registered with another type: the first value of a list, else its
// string form.
func sharedFlag(fs *pflag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return ""
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		if v := sv.GetSlice(); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return f.Value.String()
}

// newKServeSUT builds --sut kserve: the demo's data set as the QSL, sent to
// a KServe v2 server, checked before the run.
func newKServeSUT(ctx context.Context, st *State, f *runFlags) (loadgen.SUT, loadgen.QSL, func(), error) {
	k := &f.kserve
	url := sharedFlag(k.fs, "url")
	if url == "" {
		return nil, nil, nil, usageError("--sut kserve needs --url (http://host:port, or host:port with --grpc)")
	}
	if fs := k.fs.Lookup("url"); fs != nil {
		if sv, ok := fs.Value.(pflag.SliceValue); ok && len(sv.GetSlice()) > 1 {
			return nil, nil, nil, usageError("--sut kserve takes one --url; several servers are --sut dispatch")
		}
	}
	timeout := k.timeout
	if v := sharedFlag(k.fs, "request-timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, nil, nil, usageError("--request-timeout %q: %v", v, err)
		}
		timeout = d
	}
	var token string
	if k.tokenEnv != "" {
		token = os.Getenv(k.tokenEnv)
		if token == "" {
			return nil, nil, nil, usageError("--token-env %s: the variable is not set or empty", k.tokenEnv)
		}
	}
	if k.maxConns <= 0 {
		return nil, nil, nil, usageError("--max-conns must be ≥ 1")
	}
	if k.stream && !k.grpc {
		return nil, nil, nil, usageError("--stream needs --grpc (ModelStreamInfer is a gRPC call)")
	}
	data, err := loadDemoData(st, "auto")
	if err != nil {
		return nil, nil, nil, withCode(ExitFailure, err)
	}
	qsl := dataset.NewQSL(data.test, 1024)
	ep, err := kserve.New(kserve.Options{
		URL: url, GRPC: k.grpc, Model: k.modelName, ModelVersion: k.modelVersion,
		Inputs: qsl, InputSize: data.test.Rows * data.test.Cols,
		BinaryData: k.binaryData, Stream: k.stream, BearerToken: token, StageTimes: k.stageTimes, MaxConns: k.maxConns,
	})
	if err != nil {
		return nil, nil, nil, usageError("%v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ep.Check(cctx); err != nil {
		_ = ep.Close()
		return nil, nil, nil, withCode(ExitFailure, fmt.Errorf("the server is not ready for the run: %w", err))
	}
	if !strings.Contains(strings.ToLower(data.test.Name), "fashion") {
		fmt.Fprintf(st.Stderr, "note: sending the %s data set; the server's model must have been trained on it\n", data.test.Name)
	}
	sut := netsut.New(context.Background(), ep, netsut.Options{RequestTimeout: timeout})
	return sut, qsl, func() { _ = sut.Close() }, nil
}
