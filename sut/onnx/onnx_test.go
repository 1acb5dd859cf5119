//go:build onnx

package onnx_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/accuracy"
	"aimeter/dataset/ocr"
	"aimeter/loadgen"
	"aimeter/sut/null"
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
// quality target of the generated set (H-mean ≥ 0.85 at IoU 0.5,
// benchmark.OCRTargetHMean) must hold.
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
	if r.HMean < 0.85 {
		t.Errorf("H-mean %.3f, want ≥ 0.85", r.HMean)
	}
}

func region(q ocr.Quad) accuracy.OCRRegion {
	var r accuracy.OCRRegion
	for _, c := range q {
		r.Points = append(r.Points, [2]float64{float64(c[0]), float64(c[1])})
	}
	return r
}

// irisTask feeds the six iris flowers of onnxruntime_go's own test of its
// scikit-learn random forest, one a sample, and answers the label as one
// byte.
type irisTask struct{}

var irisInputs = [6][4]float32{
	{5.9, 3.0, 5.1, 1.8}, {6.8, 2.8, 4.8, 1.4}, {6.3, 2.3, 4.4, 1.3},
	{6.5, 3.0, 5.5, 1.8}, {7.7, 2.8, 6.7, 2.0}, {5.5, 2.5, 4.0, 1.3},
}

func (irisTask) InputShape(uint64) ([]int64, error) { return []int64{4}, nil }
func (irisTask) Preprocess(i uint64, dst []float32) error {
	copy(dst, irisInputs[i][:])
	return nil
}
func (irisTask) Postprocess(_ uint64, out onnx.Output, dst []byte) ([]byte, error) {
	return append(dst, byte(out.Int64[0])), nil
}

// irisModel is the random forest shipped in the onnxruntime_go module.
func irisModel(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Fatalf("finding the onnxruntime_go module: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "test_data", "sklearn_randomforest.onnx")
}

// The iris random forest gives, through the SUT in batches, the labels
// onnxruntime_go's own test expects, in every scenario's batching.
func TestIrisRandomForest(t *testing.T) {
	need(t)
	s, err := onnx.New(onnx.Options{Model: irisModel(t), Output: "output_label", Task: irisTask{}, MaxBatch: 4, Workers: 2, IntraOpThreads: 2, NoSpin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []byte{2, 1, 1, 2, 2, 1}
	for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.Offline} {
		ls := loadgen.DefaultSettings()
		ls.Scenario, ls.Mode = sc, loadgen.AccuracyOnly
		res, err := loadgen.Run(t.Context(), s, null.QSL{Total: 6}, ls, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Accuracy) != 6 {
			t.Fatalf("%v: %d responses, want 6", sc, len(res.Accuracy))
		}
		for _, e := range res.Accuracy {
			if len(e.Data) != 1 || e.Data[0] != want[e.QSLIndex] {
				t.Errorf("%v: flower %d: label %v, want %d", sc, e.QSLIndex, e.Data, want[e.QSLIndex])
			}
		}
	}
	if st := s.Stats(); st.Samples != 12 || st.Total[onnx.Inference] <= 0 {
		t.Errorf("stats %+v: want 12 samples with inference time", st)
	}
}

// A model or input that is not there fails with the name of what is
// missing and, for the model, the setup command.
func TestBadModelInputs(t *testing.T) {
	_, models := need(t)
	for _, tc := range []struct {
		why  string
		opts onnx.Options
		want string
	}{
		{"no model file", onnx.Options{Model: filepath.Join(t.TempDir(), "none.onnx"), Task: irisTask{}}, "setup-onnx.sh"},
		{"an input the model lacks", onnx.Options{Model: detModel(models), Input: "image", Task: irisTask{}}, `no input "image"; its inputs: x`},
		{"an output the model lacks", onnx.Options{Model: irisModel(t), Output: "probs", Task: irisTask{}}, `no output "probs"; its outputs: output_label`},
		{"a sequence output", onnx.Options{Model: irisModel(t), Output: "output_probability", Task: irisTask{}}, "want a float32 or int64 tensor"},
		{"no task", onnx.Options{Model: irisModel(t)}, "Task"},
	} {
		s, err := onnx.New(tc.opts)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.why, err, tc.want)
		}
	}
	// A sample whose shape the model's fixed dimensions refuse fails, and
	// the run still ends.
	s, err := onnx.New(onnx.Options{Model: irisModel(t), Output: "output_label", Task: &onnx.RandomTask{Shape: []int64{5}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls := loadgen.DefaultSettings()
	ls.Scenario, ls.Mode = loadgen.Offline, loadgen.AccuracyOnly
	res, err := loadgen.Run(t.Context(), s, null.QSL{Total: 2}, ls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedSamples != 2 {
		t.Errorf("%d samples failed, want 2 (shape [5] against X's [-1 4])", res.FailedSamples)
	}
}

// shapeTask is RandomTask with a check of each output's shape and that its
// rows are probability distributions (softmax outputs).
type shapeTask struct {
	onnx.RandomTask
	want []int64
	t    *testing.T
}

func (s *shapeTask) Postprocess(i uint64, out onnx.Output, dst []byte) ([]byte, error) {
	if !slices.Equal(out.Shape, s.want) {
		s.t.Errorf("sample %d: output shape %v, want %v", i, out.Shape, s.want)
	}
	row := int(s.want[len(s.want)-1])
	for r := 0; r+row <= len(out.Float32); r += row {
		var sum float64
		for _, v := range out.Float32[r : r+row] {
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-3 {
			s.t.Errorf("sample %d: a row sums to %v, not 1", i, sum)
			break
		}
	}
	return s.RandomTask.Postprocess(i, out, dst)
}

// PaddleOCR's text direction classifier and recognizer, shipped beside
// the detector, run through the SUT in batches: one distribution over
// 2 directions per image, one over 6625 characters per time step.
func TestPaddleOCRClassifierAndRecognizer(t *testing.T) {
	_, models := need(t)
	for _, m := range []struct {
		file        string
		input, want []int64
	}{
		{"ch_ppocr_mobile_v2.0_cls_infer.onnx", []int64{3, 48, 192}, []int64{2}},
		{"ch_PP-OCRv4_rec_infer.onnx", []int64{3, 48, 320}, []int64{40, 6625}},
	} {
		task := &shapeTask{RandomTask: onnx.RandomTask{Shape: m.input, Seed: 1}, want: m.want, t: t}
		s, err := onnx.New(onnx.Options{Model: filepath.Join(models, m.file), Task: task, MaxBatch: 3})
		if err != nil {
			t.Fatal(err)
		}
		ls := loadgen.DefaultSettings()
		ls.Scenario, ls.Mode = loadgen.Offline, loadgen.AccuracyOnly
		res, err := loadgen.Run(t.Context(), s, null.QSL{Total: 4}, ls, nil)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		size := 4
		for _, d := range m.want {
			size *= int(d)
		}
		if len(res.Accuracy) != 4 || len(res.Accuracy[0].Data) != size || res.FailedSamples != 0 {
			t.Errorf("%s: %d responses of %d bytes, %d failed; want 4 of %d bytes", m.file, len(res.Accuracy), len(res.Accuracy[0].Data), res.FailedSamples, size)
		}
	}
}
