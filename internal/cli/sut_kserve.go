package cli

import (
	"github.com/spf13/pflag"
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
