package derived_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// Run a benchmark, store it as a bundle, read the bundle back and
// regenerate its results from the raw records alone.
func ExampleWrite() {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 100
	s.OfflineExpectedQPS = 1000
	res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 64}, s, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "bundle-example")
	defer os.RemoveAll(dir)
	if err := derived.Write(dir, &bundle.Bundle{Result: res, Version: "example", NoReport: true}); err != nil {
		fmt.Println(err)
		return
	}

	// Later, perhaps on another machine: read and check the digests...
	b, err := bundle.Read(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("records:", b.Result.RecordCount())
	metric, _ := b.Result.Summary.Metric() // recomputed from records.csv
	fmt.Println("metric:", metric)

	// ...and regenerate every derived file from the raw parts.
	out := filepath.Join(dir, "again")
	names, err := derived.Regenerate(out, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range names {
		orig, _ := os.ReadFile(filepath.Join(dir, name))
		again, _ := os.ReadFile(filepath.Join(out, name))
		fmt.Printf("%s identical: %v\n", name, bytes.Equal(orig, again))
	}
	// Output:
	// records: 110
	// metric: Samples per second
	// mlperf_log_summary.txt identical: true
	// result.json identical: true
	// mlperf_log_detail.txt identical: true
}
