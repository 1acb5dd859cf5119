package cli

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/merge"
	"aimeter/shard"
)

// newMergeCommand is `aimeter merge DIR… --output-dir M` (package merge).
func newMergeCommand(st *State) *cobra.Command {
	var outDir string
	var opts merge.Options
	cmd := &cobra.Command{
		Use:   "merge DIR… --output-dir M",
		Short: "Merge the bundles of a test's shards into the whole test's bundle, with exact percentiles over the union",
		Long:  helpText("merge"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return usageError("--output-dir: give the directory of the merged bundle")
			}
			if opts.MaxClockOffset < 0 {
				return usageError("--max-clock-offset %v: must be ≥ 0 (0: the shards' start tolerance)", opts.MaxClockOffset)
			}
			opts.Version = Version
			b, err := merge.Write(cmd.Context(), args, outDir, opts)
			if err != nil {
				var se *merge.ShardError
				if errors.As(err, &se) {
					return withCode(ExitUsage, err)
				}
				return withCode(ExitFailure, err)
			}
			writeMergeShards(st.Stdout, shard.MergeOf(b))
			// The verdict and figures of the merged bundle merge.Write
			// wrote (as aimeter report prints them), from the bundle it
			// returns: reading the bundle back would hold its records
			// (issue 43: the merge's memory does not grow with them).
			out, err := benchmark.OutcomeOf(b, outDir)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if !out.HasFigures() {
				fmt.Fprintf(st.Stdout, "%s has no performance pass; wrote the accuracy-only summary to %s\n", outDir, outDir)
				return nil
			}
			console.WriteRun(st.Stdout, out)
			return outcomeCode(out, nil)
		},
	}
	cmd.Flags().StringVar(&outDir, "output-dir", "", "write the merged bundle here (required)")
	cmd.Flags().DurationVar(&opts.MaxClockOffset, "max-clock-offset", 0,
		"refuse a shard whose clock's |offset| + uncertainty against the reference exceeds this (0: the shards' --start-tolerance, 100ms by default)")
	cmd.Flags().BoolVar(&opts.AllowPartial, "allow-partial", false, "merge the shards given even if some are missing; the result is INVALID, naming them")
	return cmd
}

// writeMergeShards prints merge.json's table of shards.
func writeMergeShards(w io.Writer, m *shard.Merge) {
	if m == nil {
		return
	}
	fmt.Fprintf(w, "Merged %d of %d shards (%s; clock bound %v, alignment within %v)\n", len(m.Shards), m.Count, m.Rule,
		time.Duration(m.MaxClockOffsetNs), time.Duration(m.AlignmentUncertaintyNs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shard\trecords\tsamples/s\tp50\tp99\tfailed\tlost\tclock offset\tstart late\tmanifest\t")
	for _, s := range m.Shards {
		clock := "not measured"
		if s.ClockMeasured {
			clock = fmt.Sprintf("%v ± %v", time.Duration(s.ClockOffsetNs), time.Duration(s.ClockUncertaintyNs))
		}
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t%v\t%v\t%d\t%d\t%s\t%v\t%s\t\n", s.Index, s.Records, s.SamplesPerSecond,
			time.Duration(s.LatencyP50Ns), time.Duration(s.LatencyP99Ns), s.Failed, s.Lost, clock, time.Duration(s.StartLateNs), s.ManifestSHA256[:12])
	}
	tw.Flush()
	if m.Partial() {
		fmt.Fprintln(w, m.PartialReason())
	}
	fmt.Fprintf(w, "Per-shard figures are in %s of the merged bundle.\n\n", shard.MergeFile)
}
