package mlp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/accuracy"
	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/sut/reference/mlp"
)

// The reference SUT from scratch: a small synthetic data set, a model
// trained for two epochs and cached in a file (a second ObtainModel loads
// it), served to loadgen for an accuracy run over the test split. With
// mlp.LoadData("auto", ...) and zero ModelOptions this is what
// aimeter run --sut reference does, the model cached in the user cache
// directory.
func Example() {
	trainSet, testSet := dataset.Synthetic(3000, 1), dataset.Synthetic(500, 2)
	dir, err := os.MkdirTemp("", "mlp-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cfg := model.DefaultTrainConfig()
	cfg.Epochs = 2
	opts := mlp.ModelOptions{Weights: filepath.Join(dir, "weights.aimw"), Config: &cfg}
	ctx := context.Background()
	if _, got, err := mlp.ObtainModel(ctx, trainSet, opts); err != nil || !got.Trained {
		fmt.Println("training failed:", err)
		return
	}
	m, got, err := mlp.ObtainModel(ctx, trainSet, opts) // now cached
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("MLP %v, trained: %v\n", m.Layers(), got.Trained)

	qsl := dataset.NewQSL(testSet, mlp.QSLPerformanceSamples)
	sut, err := mlp.Serve(m, qsl, mlp.ServeOptions{NoStageTimes: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sut.Close()
	s := loadgen.DefaultSettings()
	s.Scenario, s.Mode = loadgen.Offline, loadgen.AccuracyOnly
	res, err := loadgen.Run(ctx, sut, qsl, s, nil)
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	score, err := accuracy.Top1(res.Accuracy, testSet.Len(), qsl.Label)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d samples scored; top-1 above 70 %%: %v\n", testSet.Len(), score.Value > 0.7)
	// Output:
	// MLP [784 128 10], trained: false
	// 500 samples scored; top-1 above 70 %: true
}
