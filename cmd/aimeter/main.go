// Command aimeter benchmarks AI inference systems by the method of the
// MLPerf Inference rules and GB/T 45087-2024. See README.md.
package main

import (
	"os"

	"aimeter/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.NewOSState()))
}
