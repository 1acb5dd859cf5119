package benchmark

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/model"
)

func TestObtainReferenceUnknownDataset(t *testing.T) {
	_, err := ObtainReference(context.Background(), ReferenceOptions{Dataset: "cifar"})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Field != "ReferenceOptions.Dataset" || !strings.HasPrefix(ue.Err.Error(), `"cifar": want`) {
		t.Fatalf("err = %#v, want a UsageError on ReferenceOptions.Dataset", err)
	}
}

func TestObtainReferenceLoadsWeights(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := model.New(model.DefaultLayers(), 1).SaveFile(path); err != nil {
		t.Fatal(err)
	}
	ref, err := ObtainReference(context.Background(), ReferenceOptions{Dataset: "synthetic", Weights: path})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Data.Train != nil || ref.Data.Test == nil || ref.Model == nil {
		t.Errorf("Data.Train %v, Data.Test %v, Model %v: want the training split let go", ref.Data.Train != nil, ref.Data.Test != nil, ref.Model != nil)
	}
	if ref.How != "loaded from "+path || ref.SaveErr != nil {
		t.Errorf("How %q, SaveErr %v", ref.How, ref.SaveErr)
	}
}

func TestObtainReferenceWeightsError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := model.New([]int{3, 4, 2}, 1).SaveFile(path); err != nil {
		t.Fatal(err)
	}
	_, err := ObtainReference(context.Background(), ReferenceOptions{Dataset: "synthetic", Weights: path})
	var we *WeightsError
	if !errors.As(err, &we) || we.Path != path || we.Err != nil {
		t.Fatalf("err = %v, want a WeightsError for a file of another shape", err)
	}
}
