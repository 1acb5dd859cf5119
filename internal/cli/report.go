package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/spf13/cobra"

	"aimeter/loadgen"
	"aimeter/mlperflog"
)

func newReportCommand(st *State) *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Recompute the summary and detail results of a run from its records.csv and settings.json",
		Long: `Recompute a run's results from its raw records alone: read DIR/settings.json
and DIR/records.csv, summarise the reported pass again (percentiles, early
stopping, validity) and rewrite mlperf_log_summary.txt and
mlperf_log_detail.txt (in DIR, or in --output-dir). The detail log then holds
the settings and results; the run-time events of the original are not in
those two files and are not reproduced.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return regenerateReport(st, args[0], outDir)
		},
	}
	cmd.Flags().StringVar(&outDir, "output-dir", "", "write the regenerated logs here instead of DIR")
	return cmd
}

func regenerateReport(st *State, dir, outDir string) error {
	if outDir == "" {
		outDir = dir
	}
	info, err := readRunInfo(filepath.Join(dir, "settings.json"))
	if err != nil {
		return withCode(ExitFailure, err)
	}
	recs, err := readRecords(filepath.Join(dir, "records.csv"))
	if err != nil {
		return withCode(ExitFailure, err)
	}
	res := &loadgen.Result{
		SUTName: info.SUTName, QSLName: info.QSLName,
		QSLTotalCount: info.QSLTotalCount, QSLPerformanceCount: info.QSLPerformanceCount,
		Requested: info.Requested, Effective: info.Effective, StartTime: info.StartTime,
		Passes: info.Passes, Interrupted: info.Interrupted,
	}
	res.AttachRecords(recs)
	idx := slices.IndexFunc(info.Passes, func(p loadgen.PassInfo) bool { return p.Reported })
	if idx >= 0 {
		res.Summary, err = loadgen.SummarizePass(info.SUTName, info.Effective, info.Passes[idx], recs)
		if err != nil {
			return withCode(ExitFailure, fmt.Errorf("%s: %w", dir, err))
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return withCode(ExitFailure, err)
	}
	// The summary ends with the run's warning and error counts, which
	// neither settings.json nor records.csv keeps: carry them over from the
	// run's own summary, read before it may be overwritten.
	footer := summaryFooter(filepath.Join(dir, "mlperf_log_summary.txt"))
	if err := writeFile(filepath.Join(outDir, "mlperf_log_summary.txt"), func(w *bufio.Writer) error {
		return writeSummaryWithFooter(w, res, footer)
	}); err != nil {
		return withCode(ExitFailure, err)
	}
	if err := writeFile(filepath.Join(outDir, "mlperf_log_detail.txt"), func(w *bufio.Writer) error {
		return mlperflog.WriteDetail(w, res, mlperflog.DetailOptions{Version: Version})
	}); err != nil {
		return withCode(ExitFailure, err)
	}
	if res.Summary == nil {
		fmt.Fprintf(st.Stdout, "%s has no performance pass; wrote the accuracy-only summary to %s\n", dir, outDir)
		return nil
	}
	printOutcome(st, res, outDir)
	if !res.Summary.Valid {
		return withCode(ExitInvalid, nil)
	}
	return nil
}

func readRunInfo(path string) (mlperflog.RunInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return mlperflog.RunInfo{}, err
	}
	defer f.Close()
	info, err := mlperflog.ReadRunInfo(bufio.NewReader(f))
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

func readRecords(path string) ([]loadgen.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := mlperflog.ReadRecords(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// writeFile writes path through a buffered writer, replacing it only when
// everything was written.
func writeFile(path string, write func(*bufio.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<16)
	if err := write(w); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// footerRE matches the warning and error counts that end a summary.
var footerRE = regexp.MustCompile(`\n(?:No warnings encountered during test\.|1 warning encountered\. See detailed log\.|\d+ warnings encountered\. See detailed log\.)\n` +
	`\n(?:No errors encountered during test\.|1 ERROR encountered\. See detailed log\.|\d+ ERRORS encountered\. See detailed log\.)\n$`)

// summaryFooter returns the counts footer of the summary at path, or "" if
// there is none.
func summaryFooter(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return footerRE.FindString(string(b))
}

// writeSummaryWithFooter writes res's summary with footer (when not empty)
// in place of the counts of res's own events.
func writeSummaryWithFooter(w io.Writer, res *loadgen.Result, footer string) error {
	var buf bytes.Buffer
	if err := mlperflog.WriteSummary(&buf, res); err != nil {
		return err
	}
	out := buf.Bytes()
	if loc := footerRE.FindIndex(out); footer != "" && loc != nil {
		out = append(out[:loc[0]:loc[0]], footer...)
	}
	_, err := w.Write(out)
	return err
}
