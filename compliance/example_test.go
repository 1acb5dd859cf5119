package compliance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/benchmark"
	"aimeter/compliance"
	"aimeter/sut"
)

// Run TEST01 against the in-process null SUT: an accuracy run, a
// reference performance run and the audit run, each a run bundle, then
// MLPerf's verification. The null SUT's answers are empty, so every
// logged answer agrees with the accuracy run's; whether the performance
// check passes depends on this machine's noise, so it is not printed.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "aimeter-audit")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	plan := benchmark.Plan{
		SUT:       sut.Config{Kind: sut.Null},
		Settings:  benchmark.Settings{Scenario: "Offline", Set: []string{"min_duration=100", "min_query_count=2000"}},
		OutputDir: dir,
		NoReport:  true,
	}
	res, err := compliance.Audit(context.Background(), compliance.TEST01, plan)
	if err != nil {
		panic(err)
	}
	fmt.Println("answers agree:", res.Accuracy.Pass)
	for _, f := range []string{"audit.config", "accuracy/manifest.json", "performance/run_1/manifest.json", "audit/manifest.json",
		"TEST01/verify_accuracy.txt", "TEST01/verify_performance.txt"} {
		_, err := os.Stat(filepath.Join(dir, f))
		fmt.Println(f, err == nil)
	}
	// Output:
	// answers agree: true
	// audit.config true
	// accuracy/manifest.json true
	// performance/run_1/manifest.json true
	// audit/manifest.json true
	// TEST01/verify_accuracy.txt true
	// TEST01/verify_performance.txt true
}
