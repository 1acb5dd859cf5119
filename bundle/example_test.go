package bundle_test

import (
	"context"
	"fmt"
	"os"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// Run a benchmark, store its raw parts as a bundle and read the bundle
// back: the summary is recomputed from the records (package derived
// writes and regenerates the derived files).
func ExampleRead() {
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
	if err := bundle.Write(dir, &bundle.Bundle{Result: res, Version: "example", NoReport: true}, nil); err != nil {
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

	// Output:
	// records: 110
	// metric: Samples per second
}
