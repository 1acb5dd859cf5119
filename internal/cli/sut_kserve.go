package cli

import (
	"github.com/spf13/pflag"

	"aimeter/sut"
)

// kserveFlags are the flags of --sut kserve (and of the nodes of --sut
// dispatch --backend kserve): each sets its field of the SUT's
// configuration (cfg), but --shape, parsed by config. --url,
// --request-timeout, --check-timeout and --max-conns are the network SUTs'
// shared flags (netflags.go).
type kserveFlags struct {
	cfg    sut.KServeConfig
	shapes []string
}

// kserveFlagNames lists addKServeFlags' flags for the help groups.
var kserveFlagNames = []string{"grpc", "model-name", "model-version", "binary-data", "grpc-stream", "token-env", "server-timing",
	"shape", "batch-size", "input-data", "input-data-mode", "input-data-seed", "compression"}

// addKServeFlags registers the flags of --sut kserve on fl.
func addKServeFlags(fl *pflag.FlagSet, k *kserveFlags) {
	fl.BoolVar(&k.cfg.GRPC, "grpc", false, "kserve: use gRPC instead of HTTP/REST")
	fl.StringVar(&k.cfg.Model, "model-name", "fashion-mlp", "kserve: the model's name on the server")
	fl.StringVar(&k.cfg.ModelVersion, "model-version", "", "kserve: the model version (empty = the server's choice)")
	fl.BoolVar(&k.cfg.BinaryData, "binary-data", false, "kserve over HTTP: send and receive tensors in the binary tensor data extension instead of JSON")
	fl.BoolVar(&k.cfg.Stream, "grpc-stream", false, "kserve over gRPC: send every request over one ModelStreamInfer stream (Triton, decoupled models)")
	fl.StringVar(&k.cfg.TokenEnv, "token-env", "", "kserve: name of the environment variable holding a bearer token (never logged)")
	fl.BoolVar(&k.cfg.ServerTiming, "server-timing", false, "kserve: keep the server's stage times (Server-Timing) per sample, for the GB/T time breakdown")
	fl.StringArrayVar(&k.shapes, "shape", nil, "kserve, a model's own inputs: NAME:d1,d2,… the shape of an input with dynamic (-1) dimensions, without the batch dimension when its first dimension is -1 (as perf_analyzer's --shape); repeat it per input")
	fl.IntVar(&k.cfg.BatchSize, "batch-size", 1, "kserve, a model's own inputs: the size of the batch dimension (an input's first dimension when the metadata gives it as -1)")
	fl.StringVar(&k.cfg.InputData, "input-data", "", `kserve: a JSON input data file in perf_analyzer's format ({"data": [{"INPUT0": [...]}, ...]}), one sample per entry, instead of the reference data set`)
	fl.StringVar(&k.cfg.DataMode, "input-data-mode", "", "kserve, a model's own inputs: random (seeded, the default for a model the reference data set does not fit) or zero; setting it sends generated data to any model")
	fl.Uint64Var(&k.cfg.Seed, "input-data-seed", 0, "kserve: the seed of random input data")
	fl.StringVar(&k.cfg.Compression, "compression", "", "kserve over HTTP: QSL-side compression of the samples (MLPerf network division): none, lossless (each request body gzipped when its sample is loaded, untimed, sent with Content-Encoding: gzip) or original (the data set's own compression); refused where --model's rules forbid it (docs/bandwidth.md)")
}

// config is the KServeConfig of the flags: --shape parsed, and --batch-size
// only where given (the library's default otherwise); a batch size below 1
// is refused, naming its flag.
func (k *kserveFlags) config(changed func(string) bool) (*sut.KServeConfig, error) {
	c := k.cfg
	shapes, err := sut.ParseShapes(k.shapes)
	if err != nil {
		return nil, usageError("--shape %v", err)
	}
	c.Shapes = shapes
	if c.BatchSize < 1 {
		return nil, usageError("--batch-size must be ≥ 1")
	}
	if !changed("batch-size") {
		c.BatchSize = 0
	}
	return &c, nil
}
