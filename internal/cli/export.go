package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"aimeter/bundle"
)

func newExportCommand(st *State) *cobra.Command {
	var format, output string
	var ignoreDigests bool
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write the records of a run bundle as CSV or JSON Lines",
		Long: `Read the run bundle in DIR (checking its manifest.json, as aimeter report
does) and write its records, one per issued sample, to standard output or
--output FILE:

  --format csv    records.csv exactly as aimeter wrote it before bundles
                  held records.parquet (format version 1): the header
                  seq_id,query_id,sample_index,scheduled_ns,issued_ns,
                  first_token_ns,completed_ns,tokens,status, then one row per
                  record; a missing time is an empty field.
  --format jsonl  one JSON object per line with the same keys; a missing
                  time is null.

Works on bundles of either format (records.parquet or records.csv). See
docs/records.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return exportRecords(st, args[0], format, output, ignoreDigests)
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "csv or jsonl")
	cmd.Flags().StringVarP(&output, "output", "o", "-", "the file to write; - is standard output")
	cmd.Flags().BoolVar(&ignoreDigests, "ignore-digests", false, "read the bundle even if its files no longer match manifest.json")
	return cmd
}

func exportRecords(st *State, dir, format, output string, ignoreDigests bool) error {
	if format != "csv" && format != "jsonl" {
		return usageError("--format %q: want csv or jsonl", format)
	}
	b, err := readBundleArg(dir, ignoreDigests)
	if err != nil {
		return err
	}
	if b.Result == nil {
		return withCode(ExitFailure, fmt.Errorf("%s is a training bundle: it has no records", dir))
	}
	recs := slices.Collect(b.Result.Records())
	var w io.Writer = st.Stdout
	var f *os.File
	if output != "-" {
		if f, err = os.Create(output); err != nil {
			return withCode(ExitFailure, err)
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if format == "csv" {
		err = bundle.WriteRecords(bw, recs)
	} else {
		err = bundle.WriteRecordsJSONL(bw, recs)
	}
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("export: %w", err))
	}
	return nil
}
