// Command aimeter benchmarks AI inference systems by the method of the
// MLPerf Inference rules and GB/T 45087-2024. See README.md.
//
// The environment variable AIMETER_CPUPROFILE, when set, names a file to
// which the whole process writes a CPU profile (runtime/pprof), for
// `go tool pprof`; AIMETER_MEMPROFILE names a file to which it writes a
// heap profile (allocations and memory in use) when it exits.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"aimeter/internal/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	if path := os.Getenv("AIMETER_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "aimeter: AIMETER_CPUPROFILE:", err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "aimeter: AIMETER_CPUPROFILE:", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "aimeter: AIMETER_CPUPROFILE:", err)
			}
		}()
	}
	if path := os.Getenv("AIMETER_MEMPROFILE"); path != "" {
		defer func() {
			f, err := os.Create(path)
			if err == nil {
				// The profile holds the allocations up to the last
				// collection: one now counts all of them.
				runtime.GC()
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "aimeter: AIMETER_MEMPROFILE:", err)
			}
		}()
	}
	return cli.Main(cli.NewOSState())
}
