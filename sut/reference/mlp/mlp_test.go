package mlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/dataset"
	"aimeter/model"
)

// writeIDX writes a gzip-compressed IDX file of unsigned bytes.
func writeIDX(t *testing.T, path string, dims []int, data []byte) {
	t.Helper()
	var raw bytes.Buffer
	raw.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		_ = binary.Write(&raw, binary.BigEndian, uint32(d))
	}
	raw.Write(data)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	zw.Close()
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeFashionMNIST writes a tiny Fashion-MNIST (n images of each split) to
// a new directory.
func fakeFashionMNIST(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for _, split := range []dataset.Split{dataset.Train, dataset.Test} {
		writeIDX(t, filepath.Join(dir, string(split)+"-images-idx3-ubyte.gz"), []int{n, 28, 28}, make([]byte, n*28*28))
		labels := make([]byte, n)
		for i := range labels {
			labels[i] = byte(i % 10)
		}
		writeIDX(t, filepath.Join(dir, string(split)+"-labels-idx1-ubyte.gz"), []int{n}, labels)
	}
	return dir
}

func TestLoadData(t *testing.T) {
	fashion := fakeFashionMNIST(t, 3)
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		name, dir string
		wantSet   string // the test split's name
		target    float64
		notified  bool
	}{
		{"synthetic", fashion, "synthetic-shapes-seed2", SyntheticTarget, false},
		{"fashion-mnist", fashion, "fashion-mnist-t10k", FashionMNISTTarget, false},
		{"auto", fashion, "fashion-mnist-t10k", FashionMNISTTarget, false},
		{"auto", missing, "synthetic-shapes-seed2", SyntheticTarget, true},
	} {
		var notes []string
		d, err := LoadData(tc.name, DataOptions{Dir: tc.dir, Notify: func(s string) { notes = append(notes, s) }})
		if err != nil {
			t.Errorf("%s in %s: %v", tc.name, tc.dir, err)
			continue
		}
		if d.Test.Name != tc.wantSet || d.Target != tc.target || d.Train == nil || d.Train.Len() == 0 {
			t.Errorf("%s in %s: test set %s, target %v; want %s and %v", tc.name, tc.dir, d.Test.Name, d.Target, tc.wantSet, tc.target)
		}
		if d.Target == SyntheticTarget && (d.Train.Len() != SyntheticTrainSize || d.Test.Len() != SyntheticTestSize) {
			t.Errorf("%s in %s: synthetic set of %d and %d images", tc.name, tc.dir, d.Train.Len(), d.Test.Len())
		}
		if got := len(notes) == 1 && notes[0] == FallbackNote; got != tc.notified || (!tc.notified && len(notes) > 0) {
			t.Errorf("%s in %s: notes %q, want the fallback note: %v", tc.name, tc.dir, notes, tc.notified)
		}
	}
	// Asked for by name, a missing Fashion-MNIST is an error.
	if _, err := LoadData("fashion-mnist", DataOptions{Dir: missing}); !errors.Is(err, dataset.ErrMissing) {
		t.Errorf("fashion-mnist missing: %v, want dataset.ErrMissing", err)
	}
	// A corrupt file is an error even for auto.
	corrupt := fakeFashionMNIST(t, 3)
	if err := os.WriteFile(filepath.Join(corrupt, "t10k-labels-idx1-ubyte.gz"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadData("auto", DataOptions{Dir: corrupt}); err == nil || errors.Is(err, dataset.ErrMissing) {
		t.Errorf("auto with a corrupt file: %v, want an error", err)
	}
	if _, err := LoadData("mnist", DataOptions{}); !errors.Is(err, ErrUnknownData) || !strings.Contains(err.Error(), `"mnist"`) {
		t.Errorf("unknown name: %v", err)
	}
}

func TestWeightsPath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv("HOME", "/home/x")
	got := WeightsPath(dataset.Synthetic(1, 1))
	if want := "/cache/aimeter/reference-synthetic-shapes-seed1-784-128-10.aimw"; got != want {
		t.Errorf("WeightsPath = %s, want %s", got, want)
	}
}

// tinyConfig trains one quick epoch.
func tinyConfig() *model.TrainConfig {
	cfg := model.DefaultTrainConfig()
	cfg.Epochs = 1
	return &cfg
}

func TestObtainModel(t *testing.T) {
	ctx := context.Background()
	set := dataset.Synthetic(200, 1)
	path := filepath.Join(t.TempDir(), "sub", "w.aimw")

	// No file: trained, reported, and cached (the directory made).
	var epochs []int
	m, got, err := ObtainModel(ctx, set, ModelOptions{Weights: path, Config: tinyConfig(), Progress: func(epoch, n int, _, _ float64) {
		epochs = append(epochs, epoch, n)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Trained || got.Epochs != 1 || got.Path != path || got.SaveErr != nil || len(epochs) != 2 || epochs[0] != 1 || epochs[1] != 1 {
		t.Errorf("trained: %+v, progress %v", got, epochs)
	}
	if !strings.HasPrefix(got.String(), "trained in ") || !strings.HasSuffix(got.String(), " (1 epochs) and saved to "+path) {
		t.Errorf("String = %q", got.String())
	}
	// The file now exists: loaded, the same weights.
	m2, got, err := ObtainModel(ctx, set, ModelOptions{Weights: path, Progress: func(int, int, float64, float64) { t.Error("progress while loading") }})
	if err != nil {
		t.Fatal(err)
	}
	if got.Trained || got.String() != "loaded from "+path {
		t.Errorf("loaded: %+v %q", got, got.String())
	}
	w1, _ := m.Weights(0)
	w2, _ := m2.Weights(0)
	if !equal(w1, w2) {
		t.Error("loaded weights differ from the trained ones")
	}
	// A file in the way of the cache directory: trained, not saved.
	blocked := filepath.Join(filepath.Dir(path), "w.aimw", "x.aimw")
	if _, got, err := ObtainModel(ctx, set, ModelOptions{Weights: blocked, Retrain: true, Config: tinyConfig()}); err != nil || got.SaveErr == nil || !strings.HasSuffix(got.String(), "(1 epochs), not saved to "+blocked) {
		t.Errorf("unsaved: %+v %v", got, err)
	}
	// Retrain trains even so.
	if _, got, err := ObtainModel(ctx, set, ModelOptions{Weights: path, Retrain: true, Config: tinyConfig()}); err != nil || !got.Trained {
		t.Errorf("retrain: %+v %v", got, err)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestObtainModelWeightsErrors(t *testing.T) {
	ctx := context.Background()
	set := dataset.Synthetic(10, 1)
	dir := t.TempDir()

	// Weights for another input size: a mismatch, not silently retrained.
	other := filepath.Join(dir, "other.aimw")
	if err := model.New([]int{16, 8, 10}, 1).SaveFile(other); err != nil {
		t.Fatal(err)
	}
	_, got, err := ObtainModel(ctx, set, ModelOptions{Weights: other})
	var we *WeightsError
	if !errors.As(err, &we) || we.Err != nil || we.Path != other || we.Inputs != 16 || we.Classes != 10 || got != nil {
		t.Fatalf("mismatch: %v (%#v)", err, we)
	}
	if want := "weights file " + other + " is for 16 inputs and 10 classes, not this data set"; err.Error() != want {
		t.Errorf("mismatch error %q, want %q", err, want)
	}

	// A corrupt file: the load error, wrapped.
	corrupt := filepath.Join(dir, "corrupt.aimw")
	if err := os.WriteFile(corrupt, []byte("not weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = ObtainModel(ctx, set, ModelOptions{Weights: corrupt})
	if !errors.As(err, &we) || we.Err == nil || we.Path != corrupt || errors.Unwrap(err) != we.Err {
		t.Errorf("corrupt: %v", err)
	}

	// A cancelled training is an error that is not a WeightsError.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = ObtainModel(cctx, set, ModelOptions{Weights: filepath.Join(dir, "new.aimw"), Config: tinyConfig()})
	if err == nil || errors.As(err, &we) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestServe(t *testing.T) {
	set := dataset.Synthetic(8, 2)
	qsl := dataset.NewQSL(set, QSLPerformanceSamples)
	m := model.New(model.DefaultLayers(), 1)
	sut, err := Serve(m, qsl, ServeOptions{Threads: 1, NoStageTimes: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sut.Close()
	if !strings.Contains(sut.Name(), "MLP") {
		t.Errorf("name %q", sut.Name())
	}
}
