package console_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/sut"
)

// The summary aimeter run prints, written by a Go program that ran the
// benchmark itself: here an accuracy run of the null SUT over a QSL of 16
// samples, whose text holds no timing (the bundle's directory is shown
// as DIR).
func ExampleWriteRun() {
	dir, _ := os.MkdirTemp("", "console-example")
	defer os.RemoveAll(dir)
	out, err := benchmark.Run(context.Background(), benchmark.Plan{
		SUT:       sut.Config{Kind: sut.Null, QSLSize: 16},
		Settings:  benchmark.Settings{Scenario: "Offline", Mode: "accuracy"},
		OutputDir: dir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var b strings.Builder
	console.WriteRun(&b, out)
	fmt.Print(strings.ReplaceAll(b.String(), dir, "DIR"))
	// Output:
	// SUT NullSUT, QSL NullQSL (16 samples), Offline, AccuracyOnly
	// Accuracy log: 16 responses
	// Logs written to DIR
}
