package bundle_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
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
	metric, _ := b.Result.Summary.Metric() // recomputed from records.parquet
	fmt.Println("metric:", metric)

	// Output:
	// records: 110
	// metric: Samples per second
}

// Export the sample data of a bundle, whatever its format version, as the
// samples.csv that bundles held before format version 3 (aimeter export
// --table samples does this).
func ExampleWriteTableCSV() {
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	res, err := loadgen.Run(context.Background(), &loadgentest.WireSUT{}, null.QSL{Total: 64}, s, nil)
	if res == nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "bundle-example")
	defer os.RemoveAll(dir)
	if err := bundle.Write(dir, &bundle.Bundle{Result: res, Version: "example", NoReport: true}, nil); err != nil {
		fmt.Println(err)
		return
	}
	b, err := bundle.Read(dir) // samples.parquet
	if err != nil {
		fmt.Println(err)
		return
	}
	var csv strings.Builder
	if err := bundle.WriteTableCSV(&csv, b, bundle.TableSamples); err != nil {
		fmt.Println(err)
		return
	}
	lines := strings.SplitAfter(csv.String(), "\n")
	fmt.Print(strings.Join(lines[:4], ""))
	fmt.Println("stages:", b.HasTable(bundle.TableStages))

	// Output:
	// seq_id,request_bytes,response_bytes,node,error
	// 0,101,7,2,0
	// 1,102,7,3,0
	// 2,103,7,1,0
	// stages: false
}
