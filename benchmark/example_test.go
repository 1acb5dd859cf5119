package benchmark_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"aimeter/benchmark"
	"aimeter/gbt"
)

// A GB/T 45087 inference test in arrival mode 2 (Poisson arrivals, Table
// 10) against the null SUT: one call plans it, runs it and writes its
// bundle; the verdict is the loss-rate verdict.
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "benchmark-example")
	defer os.RemoveAll(dir)
	out, err := benchmark.Run(context.Background(), benchmark.Plan{
		GBT: &benchmark.GBT{Input: gbt.PlanInput{
			Arrival:       gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 1000, Duration: 200 * time.Millisecond},
			LossThreshold: 0.01,
		}},
		OutputDir: dir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("verdict:", out.Verdict.Kind, out.Verdict.Pass)
	fmt.Println("lost:", out.GBT.Loss.Lost)
	// Output:
	// verdict: GB/T 45087 true
	// lost: 0
}
