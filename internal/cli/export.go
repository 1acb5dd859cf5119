package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"aimeter/bundle"
)

func newExportCommand(st *State) *cobra.Command {
	var format, output, table string
	var ignoreDigests bool
	var endpointsOut, submissionFile string
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write the records (or stages, samples, tokens) of a run bundle as CSV or JSON Lines",
		Long:  helpText("export"),
		Example: `  aimeter export aimeter-run > records.csv
  aimeter export --endpoints submission --submission submission.yaml aimeter-sweep`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if endpointsOut != "" || submissionFile != "" {
				return exportEndpoints(st, args[0], endpointsOut, submissionFile)
			}
			return exportRecords(st, args[0], format, output, table, ignoreDigests)
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "csv or jsonl")
	cmd.Flags().StringVar(&table, "table", "records", "records, stages, samples or tokens")
	cmd.Flags().StringVarP(&output, "output", "o", "-", "the file to write; - is standard output")
	cmd.Flags().StringVar(&endpointsOut, "endpoints", "", "write the sweep DIR as an MLPerf Endpoints submission tree under this directory")
	cmd.Flags().StringVar(&submissionFile, "submission", "", "with --endpoints: the YAML or JSON file of what aimeter cannot know (names, links, seed set, system, accuracy)")
	cmd.Flags().BoolVar(&ignoreDigests, "ignore-digests", false, "read the bundle even if its files no longer match manifest.json")
	return cmd
}

func exportEndpoints(st *State, dir, out, submissionFile string) error {
	e, err := endpointsFromFlags(out, submissionFile)
	if err != nil {
		return err
	}
	return e.write(st, dir, "export")
}

func exportRecords(st *State, dir, format, output, tableName string, ignoreDigests bool) error {
	if format != "csv" && format != "jsonl" {
		return usageError("--format %q: want csv or jsonl", format)
	}
	table, err := bundle.ParseTable(tableName)
	if err != nil {
		return usageError("--table: %v", err)
	}
	b, err := readBundleArg(dir, ignoreDigests)
	if err != nil {
		return err
	}
	if b.Result == nil {
		return withCode(ExitFailure, fmt.Errorf("%s is a training bundle: it has no records", dir))
	}
	if !b.HasTable(table) {
		return withCode(ExitFailure, fmt.Errorf("%s has no %s: its SUT reported none", dir, table))
	}
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
		err = bundle.WriteTableCSV(bw, b, table)
	} else {
		err = bundle.WriteTableJSONL(bw, b, table)
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
