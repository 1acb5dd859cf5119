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
	// The inputs of a model other than the reference model.
	shapes    []string
	batchSize int
	inputData string
	dataMode  string
	dataSeed  uint64
}

// kserveFlagNames lists addKServeFlags' flags for the help groups.
var kserveFlagNames = []string{"grpc", "model-name", "model-version", "binary-data", "grpc-stream", "token-env", "server-timing",
	"shape", "batch-size", "input-data", "input-data-mode", "input-data-seed"}

// addKServeFlags registers the flags of --sut kserve on fl.
func addKServeFlags(fl *pflag.FlagSet, k *kserveFlags) {
	fl.BoolVar(&k.grpc, "grpc", false, "kserve: use gRPC instead of HTTP/REST")
	fl.StringVar(&k.modelName, "model-name", "fashion-mlp", "kserve: the model's name on the server")
	fl.StringVar(&k.modelVersion, "model-version", "", "kserve: the model version (empty = the server's choice)")
	fl.BoolVar(&k.binaryData, "binary-data", false, "kserve over HTTP: send and receive tensors in the binary tensor data extension instead of JSON")
	fl.BoolVar(&k.stream, "grpc-stream", false, "kserve over gRPC: send every request over one ModelStreamInfer stream (Triton, decoupled models)")
	fl.StringVar(&k.tokenEnv, "token-env", "", "kserve: name of the environment variable holding a bearer token (never logged)")
	fl.BoolVar(&k.stageTimes, "server-timing", false, "kserve: keep the server's stage times (Server-Timing) per sample, for the GB/T time breakdown")
	fl.StringArrayVar(&k.shapes, "shape", nil, "kserve, a model's own inputs: NAME:d1,d2,… the shape of an input with dynamic (-1) dimensions, without the batch dimension when its first dimension is -1 (as perf_analyzer's --shape); repeat it per input")
	fl.IntVar(&k.batchSize, "batch-size", 1, "kserve, a model's own inputs: the size of the batch dimension (an input's first dimension when the metadata gives it as -1)")
	fl.StringVar(&k.inputData, "input-data", "", `kserve: a JSON input data file in perf_analyzer's format ({"data": [{"INPUT0": [...]}, ...]}), one sample per entry, instead of the reference data set`)
	fl.StringVar(&k.dataMode, "input-data-mode", "", "kserve, a model's own inputs: random (seeded, the default for a model the reference data set does not fit) or zero; setting it sends generated data to any model")
	fl.Uint64Var(&k.dataSeed, "input-data-seed", 0, "kserve: the seed of random input data")
}
