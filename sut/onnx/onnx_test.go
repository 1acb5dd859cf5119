//go:build onnx

package onnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"aimeter/accuracy"
	"aimeter/dataset/ocr"
	"aimeter/loadgen"
	"aimeter/sut/onnx"
)

// need returns the runtime library and the OCR models' folder, from the
// environment scripts/setup-onnx.sh prints; the test fails without them
// (the onnx build tag says the runtime is wanted).
func need(t testing.TB) (lib, models string) {
	t.Helper()
	lib, models = os.Getenv(onnx.LibraryEnv), os.Getenv("AIMETER_OCR_MODELS")
	if lib == "" || models == "" {
		t.Fatalf("set %s and AIMETER_OCR_MODELS: run %s", onnx.LibraryEnv, onnx.SetupHint)
	}
	if err := onnx.Init(lib); err != nil {
		t.Fatal(err)
	}
	return lib, models
}

func detModel(models string) string { return filepath.Join(models, "ch_PP-OCRv4_det_infer.onnx") }

// TestDBNetDetectsGeneratedWords runs PaddleOCR's v4 detector over a small
// generated set through the SUT and scores its boxes: the detection
// quality target of the generated set (H-mean ≥ 0.80 at IoU 0.5) must hold.
func TestDBNetDetectsGeneratedWords(t *testing.T) {
	_, models := need(t)
	set, err := ocr.Generate(ocr.Options{Images: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	qsl := ocr.NewQSL(set, 0)
	all := make([]uint64, set.Len())
	for i := range all {
		all[i] = uint64(i)
	}
	if err := qsl.LoadSamples(all); err != nil {
		t.Fatal(err)
	}
	s, err := onnx.New(onnx.Options{Model: detModel(models), Task: &onnx.DBNetTask{Images: qsl}, MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls := loadgen.DefaultSettings()
	ls.Scenario, ls.Mode = loadgen.Offline, loadgen.AccuracyOnly
	res, err := loadgen.Run(t.Context(), s, qsl, ls, nil)
	if err != nil {
		t.Fatal(err)
	}
	images := make([]accuracy.OCRImage, set.Len())
	for i := range images {
		for _, b := range set.Boxes(i) {
			images[i].GroundTruths = append(images[i].GroundTruths, region(b))
		}
	}
	for _, e := range res.Accuracy {
		boxes, err := ocr.DecodeQuads(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range boxes {
			images[e.QSLIndex].Detections = append(images[e.QSLIndex].Detections, region(b))
		}
	}
	r, err := accuracy.OCRDetection(images, 0.5, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("precision %.3f recall %.3f hmean %.3f (%d of %d words)", r.Precision, r.Recall, r.HMean, r.Matched, r.CareGT)
	if r.HMean < 0.80 {
		t.Errorf("H-mean %.3f, want ≥ 0.80", r.HMean)
	}
}

func region(q ocr.Quad) accuracy.OCRRegion {
	var r accuracy.OCRRegion
	for _, c := range q {
		r.Points = append(r.Points, [2]float64{float64(c[0]), float64(c[1])})
	}
	return r
}
