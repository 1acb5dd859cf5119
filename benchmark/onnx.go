//go:build onnx

package benchmark

import (
	"fmt"
	"os"
	"path/filepath"

	"aimeter/dataset/ocr"
	"aimeter/gbt/testinfo"
	"aimeter/sut"
	"aimeter/sut/null"
	"aimeter/sut/onnx"
)

// ONNXAvailable reports whether this build runs ONNX models (the build
// tag onnx).
const ONNXAvailable = true

// ONNXBuildHint says how to build aimeter with ONNX Runtime; this build has it.
const ONNXBuildHint = ""

// OCRModelsEnv names the folder of PaddleOCR's models that
// scripts/setup-onnx.sh fetches; the ocr-dbnet workload's default model is
// its detector.
const OCRModelsEnv = "AIMETER_OCR_MODELS"

// ocrDetModel is the detector's file name in that folder.
const ocrDetModel = "ch_PP-OCRv4_det_infer.onnx"

// openONNX builds the onnx SUT: the runtime, the model's session and,
// for ocr-dbnet, the generated image set, the detector's pre- and
// post-processing and the scorer.
func (r *runner) openONNX(o *opened) error {
	c := &r.plan.SUT
	x := c.ONNX
	if err := onnx.Init(x.Library); err != nil {
		return usage("SUT.ONNX.Library", "SUT.ONNX.Library: %v", err)
	}
	model := x.Model
	if model == "" && x.Workload == sut.WorkloadOCRDBNet {
		dir := os.Getenv(OCRModelsEnv)
		if dir == "" {
			return usage("SUT.ONNX.Model", "SUT.ONNX.Workload %s: give SUT.ONNX.Model, or set %s to the folder of PaddleOCR's models (run %s)", x.Workload, OCRModelsEnv, onnx.SetupHint)
		}
		model = filepath.Join(dir, ocrDetModel)
	}
	sum, err := pinnedFile("SUT.ONNX.Model", model, x.ModelSHA256)
	if err != nil {
		return fmt.Errorf("%w (run %s for the OCR models)", err, onnx.SetupHint)
	}
	x.ModelSHA256 = sum
	opts := onnx.Options{Model: model, Input: x.Input, Output: x.Output, IntraOpThreads: x.IntraOpThreads,
		MaxBatch: x.MaxBatch, Workers: x.Workers, NoSpin: x.NoSpin}
	var info testinfo.Info
	switch x.Workload {
	case sut.WorkloadOCRDBNet:
		size := x.ImageSize
		set, err := ocr.Generate(ocr.Options{Images: x.Images, Width: size, Height: size, Seed: x.Seed})
		if err != nil {
			return usage("SUT.ONNX.Images", "SUT.ONNX.Workload %s: %v", x.Workload, err)
		}
		qsl := ocr.NewQSL(set, c.PerformanceSampleCount)
		o.qsl, o.scoreLog = qsl, ocrScorer(set)
		opts.Name = "ONNXRuntimeSUT(ocr-dbnet)"
		opts.Task = &onnx.DBNetTask{Images: qsl}
		info = testinfo.Info{ModelName: "PP-OCRv4 text detection (DBNet)", DatasetType: testinfo.DatasetRandom,
			Extra: map[string]any{"dataset": qsl.Name()}}
	default:
		mi, err := onnx.Inspect(model)
		if err != nil {
			return usage("SUT.ONNX.Model", "SUT.ONNX.Model: %v", err)
		}
		shape, err := fixedShape(mi, x.Input, model)
		if err != nil {
			return usage("SUT.ONNX.Input", "SUT.ONNX.Input: %v", err)
		}
		opts.Task = &onnx.RandomTask{Shape: shape, Seed: x.Seed}
		o.qsl = null.QSL{Total: c.QSLSizeOrDefault(), Performance: c.PerformanceSampleCount}
		info = testinfo.Info{ModelName: filepath.Base(model), DatasetType: testinfo.DatasetRandom}
	}
	s, err := onnx.New(opts)
	if err != nil {
		return usage("SUT.ONNX.Model", "SUT.ONNX.Model: %v", err)
	}
	o.sut, o.closers = s, append(o.closers, s.Close)
	info.Framework = testinfo.Component{Name: "ONNX Runtime", Version: onnx.Version()}
	info.Precision = testinfo.PrecisionList{testinfo.FP32}
	info.BatchSize = s.MaxBatch()
	info.BatchVariable = testinfo.NotUsed
	if s.MaxBatch() > 1 {
		info.BatchVariable = testinfo.Used
	}
	o.info = info
	threads := max(x.IntraOpThreads, 1)
	r.notify(Info, "onnx SUT: ONNX Runtime %s, %s (input %s, output %s), %d intra-op thread(s), batches of up to %d, %d worker(s); %s",
		onnx.Version(), model, s.InputName(), s.OutputName(), threads, s.MaxBatch(), max(x.Workers, 1), o.qsl.Name())
	return nil
}

// fixedShape is the input shape after the batch dimension of a model fed
// random inputs: every dimension must be fixed.
func fixedShape(mi *onnx.ModelInfo, input, model string) ([]int64, error) {
	for _, in := range mi.Inputs {
		if input != "" && in.Name != input {
			continue
		}
		if len(in.Dimensions) == 0 {
			return nil, fmt.Errorf("the model's input %s is a scalar", in.Name)
		}
		shape := []int64(in.Dimensions[1:])
		for _, d := range shape {
			if d < 1 {
				return nil, fmt.Errorf("the model's input %s has dimensions %v: random inputs need every dimension after the batch fixed; run a model with fixed dimensions or a workload (SUT.ONNX.Workload %s)", in.Name, []int64(in.Dimensions), sut.WorkloadOCRDBNet)
			}
		}
		return shape, nil
	}
	return nil, fmt.Errorf("the model %s has no input %q", model, input)
}
