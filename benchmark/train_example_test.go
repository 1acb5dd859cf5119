package benchmark_test

import (
	"context"
	"fmt"
	"os"

	"aimeter/benchmark"
)

// A GB/T 45087 training test over an existing MLPerf Training result log:
// one call reads it as the trials of a test, computes the clause 6 and
// MLPerf metrics and writes the bundle.
func ExampleTrain() {
	dir, _ := os.MkdirTemp("", "train-example")
	defer os.RemoveAll(dir)
	out, err := benchmark.Train(context.Background(), benchmark.TrainPlan{
		Logs:      []string{"testdata/train/result_0.txt"},
		Node:      "node0",
		OutputDir: dir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tm := out.Result.Metrics.Trials[0]
	fmt.Printf("trials: %d, T_TR %.0f ms, incomplete %q\n", len(out.Result.Metrics.Trials), *tm.TTRMs, out.Incomplete)
	// Output:
	// trials: 1, T_TR 4501 ms, incomplete ""
}

// A plan that cannot run names the field that is wrong.
func ExampleTrainPlan_Validate() {
	p := benchmark.TrainPlan{Reference: &benchmark.TrainReference{}, Target: new(85.0), OutputDir: "out"}
	var ue *benchmark.UsageError
	err := p.Validate()
	if e, ok := err.(*benchmark.UsageError); ok {
		ue = e
	}
	fmt.Println(ue.Field)
	// Output:
	// TrainPlan.Target
}
