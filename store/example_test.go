package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/benchmark"
	"aimeter/store"
)

// A run's bundle recorded into an SQLite store, listed and judged against
// the run before it.
func ExampleRecordBundle() {
	tmp, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(tmp)
	ctx := context.Background()

	s, err := store.Open(ctx, store.Options{DSN: filepath.Join(tmp, "results.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for i := range 2 {
		dir := filepath.Join(tmp, fmt.Sprint("run", i))
		if _, err := benchmark.Run(ctx, benchmark.Plan{Settings: benchmark.Settings{Scenario: "Offline"}, OutputDir: dir}); err != nil {
			fmt.Println(err)
			return
		}
		if _, err := store.RecordBundle(ctx, s, dir); err != nil {
			fmt.Println(err)
			return
		}
	}
	runs, _ := s.Runs(ctx, store.RunFilter{})
	newest := runs[0]
	fmt.Println(len(runs), "runs; newest:", newest.ID, newest.Scenario, newest.HeadlineName)
	fmt.Println("same series:", newest.SeriesKey == runs[1].SeriesKey)

	// Welch's t-test of the newest run's latencies against the previous run's.
	checks, _ := s.CheckRun(ctx, &newest, []store.Threshold{{Test: store.Welch, MinChange: 1000}})
	fmt.Println(checks[0].Threshold.Metric, "judged:", checks[0].Judged, "baseline:", checks[0].Baseline)
	// Output:
	// 2 runs; newest: 2 Offline Samples per second
	// same series: true
	// latency_ns judged: true baseline: [1]
}
