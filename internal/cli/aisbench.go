package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/aisbench"
	"aimeter/train"
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

// writeReported prints what an ais-bench package reported: each figure
// with its source, then the problems found.
func writeReported(w io.Writer, rep *train.WorkloadReport) {
	fmt.Fprintf(w, "ais-bench package %s: %d results set; figures and their sources:\n", rep.Package, len(rep.Keys))
	for _, f := range rep.Figures {
		v := f.Text
		if f.Value != nil {
			v = strings.TrimSpace(strconv.FormatFloat(*f.Value, 'g', 6, 64) + " " + f.Unit)
		}
		fmt.Fprintf(w, "  %-22s %-24s %s (%s)\n", f.Name, v, f.Source, f.From)
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(w, "ais-bench problems (%d):\n", len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}
