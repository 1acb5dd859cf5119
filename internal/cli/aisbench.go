package cli

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/aisbench"
)

// runAisBench is aimeter run --ais-bench DIR: an inference package is
// checked, and refused with the reason (its LoadGen module missing, or
// aimeter not running inference packages); nothing runs. Every other flag
// is refused with it.
func runAisBench(cmd *cobra.Command, dir string) error {
	var others []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "ais-bench" {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 {
		return usageError("--ais-bench takes no other flag (got %v): the package's config/config.sh sets its run", others)
	}
	err := aisbench.CheckInference(cmd.Context(), dir, "")
	switch {
	case errors.Is(err, aisbench.ErrNoEntryScript):
		return usageError("--ais-bench %s: %v", dir, err)
	case errors.Is(err, aisbench.ErrNoLoadGen):
		return withCode(ExitUsage, err)
	}
	return withCode(ExitUsage, err)
}
