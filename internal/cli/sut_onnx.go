package cli

import (
	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/sut"
)

// onnxFlags are the flags of --sut onnx: each sets its field of the
// SUT's configuration.
type onnxFlags struct{ cfg sut.ONNXConfig }

// onnxFlagNames lists addONNXFlags' flags for the help groups.
var onnxFlagNames = []string{"onnx-model", "onnx-library", "onnx-input", "onnx-output", "onnx-workload", "onnx-threads", "onnx-no-spin", "onnx-batch", "onnx-workers",
	"ocr-images", "ocr-image-size", "ocr-seed"}

// addONNXFlags registers the flags of --sut onnx on fl.
func addONNXFlags(fl *pflag.FlagSet, x *onnxFlags) {
	fl.StringVar(&x.cfg.Model, "onnx-model", "", "onnx: the .onnx model file (default for --onnx-workload ocr-dbnet: PaddleOCR's v4 detector in $AIMETER_OCR_MODELS)")
	fl.StringVar(&x.cfg.Library, "onnx-library", "", "onnx: the ONNX Runtime shared library (default $AIMETER_ONNXRUNTIME_LIB; scripts/setup-onnx.sh fetches it)")
	fl.StringVar(&x.cfg.Input, "onnx-input", "", "onnx: the model's input name (default its first)")
	fl.StringVar(&x.cfg.Output, "onnx-output", "", "onnx: the model's output name (default its first)")
	fl.StringVar(&x.cfg.Workload, "onnx-workload", "", "onnx: ocr-dbnet (text detection on generated word images, scored; the GB/T scenario T13-1), or empty for seeded random inputs of the model's fixed input shape")
	fl.IntVar(&x.cfg.IntraOpThreads, "onnx-threads", 1, "onnx: ONNX Runtime intra-op threads")
	fl.BoolVar(&x.cfg.NoSpin, "onnx-no-spin", false, "onnx: keep the intra-op threads from spinning while they wait (for a machine shared with other work)")
	fl.IntVar(&x.cfg.MaxBatch, "onnx-batch", 1, "onnx: the most samples of one model call (Offline and Server batch what is queued)")
	fl.IntVar(&x.cfg.Workers, "onnx-workers", 1, "onnx: model calls run at once")
	fl.IntVar(&x.cfg.Images, "ocr-images", 64, "onnx ocr-dbnet: generated images in the data set")
	fl.IntVar(&x.cfg.ImageSize, "ocr-image-size", 320, "onnx ocr-dbnet: side of the square generated images, pixels")
	fl.Uint64Var(&x.cfg.Seed, "ocr-seed", 0, "onnx: seed of the generated images (ocr-dbnet) or of the random inputs")
}

// config is the ONNXConfig of the flags; a count below 1 is refused,
// naming its flag.
func (x *onnxFlags) config() (*sut.ONNXConfig, error) {
	for _, c := range []struct {
		flag string
		v    int
	}{{"onnx-threads", x.cfg.IntraOpThreads}, {"onnx-batch", x.cfg.MaxBatch}, {"onnx-workers", x.cfg.Workers}, {"ocr-images", x.cfg.Images}} {
		if c.v < 1 {
			return nil, usageError("--%s %d: must be ≥ 1", c.flag, c.v)
		}
	}
	c := x.cfg
	return &c, nil
}

// applyScenarioID chooses, for a --scenario-id whose workload aimeter runs
// (T13-1, alias ocr-dbnet; benchmark.GBTWorkloadOf), that workload where
// the flags leave it open: --sut onnx (when --sut is not given) with
// --onnx-workload ocr-dbnet. Whether the SUT is the scenario's workload is
// the library's rule (benchmark.CheckGBTScenario).
func applyScenarioID(changed func(string) bool, f *runFlags, g *gbtFlags) {
	w, ok := benchmark.GBTWorkloadOf(g.in.Scenario)
	if !ok {
		return
	}
	if !changed("sut") {
		f.sut = string(w.Kind)
	}
	if !changed("onnx-workload") {
		f.onnx.cfg.Workload = w.Workload
	}
	g.in.Scenario = w.Scenario
}
