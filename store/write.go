package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Record opens the store that dsn names (Options.DSN; "" is DefaultDSN),
// stores the bundle in dir (Ingest) and closes the store: a run recorded
// by a command that made it.
func Record(ctx context.Context, dsn, dir string, opts IngestOptions) (*Run, error) {
	s, err := Open(ctx, Options{DSN: dsn})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Ingest(ctx, dir, opts)
}

// WriteRuns writes runs as a table, one line a run (aimeter results list):
// ID, time, kind, scenario, mode, SUT, verdict, status, headline metric and
// series; a line saying so when there is none.
func WriteRuns(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs in the results store")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRECORDED (UTC)\tKIND\tSCENARIO\tMODE\tSUT\tVERDICT\tSTATUS\tHEADLINE\tSERIES")
	for i := range runs {
		r := &runs[i]
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.RecordedAt.Format("2006-01-02 15:04:05"), r.Kind,
			dash(r.Scenario), dash(r.Mode), dash(r.SUT), r.VerdictWord, r.Status, r.HeadlineText(), r.SeriesKey)
	}
	return tw.Flush()
}

// WriteThresholds writes the stored thresholds as a table (aimeter results
// threshold); without any, a line saying what compare uses instead.
func WriteThresholds(w io.Writer, ts []Threshold) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no thresholds stored: compare uses a 5 % change of the headline metric against the previous run")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIES\tMETRIC\tTEST\tLIMIT\tLOOKBACK\tMIN SAMPLES\tMIN CHANGE %")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%d\t%d\t%g\n", dash(t.SeriesKey), t.Metric, t.Test, t.Limit, t.Lookback, t.MinSamples, t.MinChange)
	}
	return tw.Flush()
}

// Export returns the runs ids name, or every run when ids is empty, each
// with its metrics (WithMetricList): what aimeter results export writes.
func (s *Store) Export(ctx context.Context, ids []int64) ([]RunDetail, error) {
	var runs []Run
	var err error
	if len(ids) == 0 {
		runs, err = s.Runs(ctx, RunFilter{})
	} else {
		runs, err = s.RunsByID(ctx, ids)
	}
	if err != nil {
		return nil, err
	}
	return s.WithMetricList(ctx, runs)
}

// Export formats of WriteExport.
const (
	ExportJSON = "json"
	ExportCSV  = "csv"
)

// WriteExport writes details in format, ExportJSON (an indented array) or
// ExportCSV (WriteCSV).
func WriteExport(w io.Writer, details []RunDetail, format string) error {
	switch format {
	case ExportJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(details)
	case ExportCSV:
		return WriteCSV(w, details)
	}
	return fmt.Errorf("store: export format %q: want %s or %s", format, ExportJSON, ExportCSV)
}
