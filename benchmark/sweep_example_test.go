package benchmark_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"aimeter/benchmark"
	"aimeter/sut"
	"aimeter/sweep"
)

// A sweep of the null SUT at three listed concurrencies, with a goodput
// SLO: one bundle per point in the sweep directory, and a summary that
// is a function of those bundles (sweep.json).
func ExampleRunSweep() {
	dir, _ := os.MkdirTemp("", "sweep-example")
	defer os.RemoveAll(dir)
	sum, err := benchmark.RunSweep(context.Background(), benchmark.SweepPlan{
		Base: benchmark.Plan{
			SUT:      sut.Config{Kind: sut.NullAsync},
			Settings: benchmark.Settings{Set: []string{"min_duration=50", "min_query_count=100"}},
			NoReport: true,
		},
		Dir:    dir,
		Points: []uint64{1, 2, 4},
		SLO:    sweep.SLO{E2E: time.Minute},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range sum.Points {
		fmt.Printf("concurrency %d in %s: %s, errors %d, goodput %.0f %%\n", p.Concurrency, p.Dir, p.Verdict, p.Errors, 100*p.Goodput.Fraction)
	}
	// Output:
	// concurrency 1 in c00001: VALID, errors 0, goodput 100 %
	// concurrency 2 in c00002: VALID, errors 0, goodput 100 %
	// concurrency 4 in c00004: VALID, errors 0, goodput 100 %
}
