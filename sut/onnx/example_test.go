//go:build onnx

package onnx_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/dataset/ocr"
	"aimeter/loadgen"
	"aimeter/sut/onnx"
)

// Run PaddleOCR's text detector in process over generated word images,
// in LoadGen's Offline scenario, with two intra-op threads and batches of
// four images. The runtime and the model come from scripts/setup-onnx.sh.
func Example() {
	if err := onnx.Init(""); err != nil { // $AIMETER_ONNXRUNTIME_LIB
		fmt.Println(err)
		return
	}
	set, err := ocr.Generate(ocr.Options{Images: 16, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	qsl := ocr.NewQSL(set, 0)
	s, err := onnx.New(onnx.Options{
		Model:          filepath.Join(os.Getenv("AIMETER_OCR_MODELS"), "ch_PP-OCRv4_det_infer.onnx"),
		Task:           &onnx.DBNetTask{Images: qsl},
		IntraOpThreads: 2,
		MaxBatch:       4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	settings := loadgen.DefaultSettings()
	settings.Scenario, settings.Mode = loadgen.Offline, loadgen.AccuracyOnly
	res, err := loadgen.Run(context.Background(), s, qsl, settings, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	st := s.Stats()
	fmt.Printf("%d images; per image: pre-processing %v, inference %v, post-processing %v\n", len(res.Accuracy),
		st.MeanPerSample(onnx.Preprocess), st.MeanPerSample(onnx.Inference), st.MeanPerSample(onnx.Postprocess))
}
