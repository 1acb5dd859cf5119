package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/benchmark"
)

// fromFlags are the flags that may go with --from: where to write, and
// how much to print. Every other flag would change the run the bundle
// recorded, so it is refused.
var fromFlags = map[string]bool{"from": true, "output-dir": true, "quiet": true, "json": true, "store": true, "no-store": true}

// runFrom repeats the run the bundle in f.from recorded into --output-dir.
func runFrom(cmd *cobra.Command, st *State, f *runFlags) error {
	var refused []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !fromFlags[fl.Name] {
			refused = append(refused, "--"+fl.Name)
		}
	})
	if len(refused) > 0 {
		return usageError("--from repeats the recorded run as it was: %v would change it; drop it (only --output-dir and --quiet go with --from)", refused)
	}
	p, err := benchmark.PlanFromBundle(f.from)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	p.OutputDir = f.plan.OutputDir
	p.CommandLine = append([]string{"aimeter"}, st.Args...)
	p.Backends = st.Backends
	if err := benchmark.SameDir(f.from, f.plan.OutputDir); err != nil {
		return withCode(ExitUsage, err)
	}
	return runPlan(cmd.Context(), st, p, f.quiet, f.json, f.store)
}
