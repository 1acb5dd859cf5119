package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/console"
	"aimeter/derived"
	"aimeter/sweep"
)

func newReportCommand(st *State) *cobra.Command {
	var outDir string
	var ignoreDigests bool
	cmd := &cobra.Command{
		Use:   "report DIR [DIR…]",
		Short: "Regenerate every derived file of a run (summary, detail, GB/T results, report.html) from its raw records",
		Long:  helpText("report"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && benchmark.IsRateSearch(args[0]) {
				return regenerateRateSearch(st, args[0], outDir, ignoreDigests)
			}
			if len(args) > 1 || sweep.IsSweep(args[0]) {
				return regenerateSweeps(st, args, outDir, ignoreDigests)
			}
			return regenerateReport(st, args[0], outDir, ignoreDigests)
		},
	}
	cmd.Flags().StringVar(&outDir, "output-dir", "", "write the regenerated files here instead of DIR")
	cmd.Flags().BoolVar(&ignoreDigests, "ignore-digests", false, "read the bundle even if its files no longer match manifest.json")
	return cmd
}

func regenerateReport(st *State, dir, outDir string, ignoreDigests bool) error {
	if outDir == "" {
		outDir = dir
	}
	b, err := readBundleArg(dir, ignoreDigests)
	if err != nil {
		return err
	}
	if ignoreDigests {
		if err := b.Manifest.Verify(dir); err != nil {
			fmt.Fprintf(st.Stderr, "warning: reading a bundle that no longer matches its manifest:\n  %s\n",
				strings.ReplaceAll(err.Error(), "\n", "\n  "))
		}
	}
	reg, err := benchmark.Regenerate(b, outDir)
	if reg != nil {
		fmt.Fprintf(st.Stderr, "regenerated %s in %s\n", strings.Join(reg.Files, ", "), outDir)
	}
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if t := reg.Training; t != nil {
		console.WriteTraining(st.Stdout, t.Result, t.Run(), outDir)
		return nil
	}
	out := reg.Outcome
	if !out.HasFigures() {
		fmt.Fprintf(st.Stdout, "%s has no performance pass; wrote the accuracy-only summary to %s\n", dir, outDir)
		return nil
	}
	console.WriteRun(st.Stdout, out)
	return outcomeCode(out, nil)
}

// readBundleArg reads the bundle a command was given (aimeter report,
// aimeter export), checking its manifest digests unless ignoreDigests: a
// bundle changed after its run is an error that names --ignore-digests.
func readBundleArg(dir string, ignoreDigests bool) (*bundle.Bundle, error) {
	b, err := derived.ReadWith(dir, bundle.ReadOptions{SkipVerify: ignoreDigests})
	if err != nil {
		var de *bundle.DigestError
		if errors.As(err, &de) {
			return nil, withCode(ExitFailure, fmt.Errorf("%w\n(the bundle was changed after the run; --ignore-digests reads it anyway)", err))
		}
		return nil, withCode(ExitFailure, err)
	}
	return b, nil
}
