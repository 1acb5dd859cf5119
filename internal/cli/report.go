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
	"aimeter/train/trainbundle"
)

func newReportCommand(st *State) *cobra.Command {
	var outDir string
	var ignoreDigests bool
	cmd := &cobra.Command{
		Use:   "report DIR [DIR…]",
		Short: "Regenerate every derived file of a run (summary, detail, GB/T results, report.html) from its raw records",
		Long: `Read the run bundle in DIR, check every file against the SHA-256 digests of
its manifest.json, and regenerate every derived file from the raw parts alone
(settings.json, run.json, events.jsonl, records.parquet or records.csv, stages.parquet, ...): the
summary and detail logs (percentiles, early stopping and validity computed
again from the records), the trace when the run wrote one, the GB/T results
and inference log of a GB/T run, and report.html.

The raw files are never changed. With the same aimeter version the derived
files come out byte for byte as the run wrote them. A file that no longer
matches the manifest is named and nothing is written, unless
--ignore-digests is given (to study a bundle edited on purpose).

A sweep directory ('aimeter sweep') gets its sweep.json and sweep.html again
from its point bundles; several sweep directories get one sweep.html with
their curves side by side, written to --output-dir. A rate search directory
('aimeter sweep --max-rate') gets its rate-search.html again from its
rate-search.json.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && benchmark.IsRateSearch(args[0]) {
				return regenerateRateSearch(st, args[0], outDir, ignoreDigests)
			}
			if len(args) > 1 || isSweepDir(args[0]) {
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
	d := derived.Of(b)
	names, err := d.Regenerate(outDir)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stderr, "regenerated %s in %s\n", strings.Join(names, ", "), outDir)
	if trainbundle.Of(b) != nil {
		tres, err := d.TrainingResult()
		if err != nil {
			return withCode(ExitFailure, err)
		}
		console.WriteTraining(st.Stdout, tres, &trainbundle.Of(b).Run, outDir)
		return nil
	}
	out, err := benchmark.OutcomeOf(b, outDir)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	out.Derived = d
	if out.GBT == nil && out.Result.Summary == nil && out.Accuracy == nil {
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
