package cli

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/derived"
	"aimeter/store"
)

// storeFlags are --store and --no-store of the commands that record their
// run into the results store.
type storeFlags struct {
	dsn     string
	noStore bool
}

func addStoreFlags(cmd *cobra.Command, f *storeFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.dsn, "store", "", "results store to record the run into: an SQLite file or a postgres:// DSN (default: $AIMETER_STORE, else results.db in the user's data directory; docs/store.md)")
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the run into the results store")
	cmd.MarkFlagsMutuallyExclusive("store", "no-store")
}

// openStore opens the store that dsn names, else the State's, else the
// default one.
func openStore(ctx context.Context, st *State, dsn string) (*store.Store, error) {
	if dsn == "" {
		dsn = st.Store
	}
	return store.Open(ctx, store.Options{DSN: dsn})
}

// recordRun records the bundle in dir into the results store; a failure is
// a warning, never the run's failure (the bundle stays where it is).
func recordRun(ctx context.Context, st *State, f storeFlags, dir string, d *derived.Set, quiet bool) {
	if f.noStore || dir == "" || d == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	s, err := openStore(ctx, st, f.dsn)
	if err != nil {
		fmt.Fprintf(st.Stderr, "warning: the run was not recorded in the results store (the bundle in %s is complete): %v\n", dir, err)
		return
	}
	defer s.Close()
	run, err := s.Ingest(ctx, dir, store.IngestOptions{Bundle: d.Bundle(), Derived: d})
	if err != nil {
		fmt.Fprintf(st.Stderr, "warning: the run was not recorded in the results store (the bundle in %s is complete): %v\n", dir, err)
		return
	}
	if !quiet {
		fmt.Fprintf(st.Stderr, "aimeter: recorded as run %d in the results store (aimeter results show %d)\n", run.ID, run.ID)
	}
}

// recordDone returns a benchmark.Plan.Done that records each run of a
// study (a sweep's points, an audit's runs, the demo's runs) as recordRun
// does; nil with --no-store.
func recordDone(ctx context.Context, st *State, f storeFlags, quiet bool) func(*benchmark.Outcome) {
	if f.noStore {
		return nil
	}
	return func(out *benchmark.Outcome) { recordRun(ctx, st, f, out.Dir, out.Derived, quiet) }
}

func newResultsCommand(st *State) *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "results",
		Short: "List, show, compare and export the runs of the results store",
		Long: `The results store keeps every run that 'aimeter run' and 'aimeter train'
made (unless --no-store): its verdict, every metric of result.json, the
latency spread and a copy of its bundle. See docs/store.md.

Runs of the same system, SUT configuration and workload form a series.
'aimeter results compare' puts runs side by side and judges the newest one
against its series' history (or the runs named) with the thresholds stored
for the series, or the ones given as flags: a percentage change, a z-score
over a lookback window, or Welch's t-test on the latency samples.

Exit codes: 0 success, 1 failure, 2 bad usage, 5 a regression with
--fail-on-regression.`,
		Example: `  aimeter results list
  aimeter results show 12
  aimeter results compare 11 12
  aimeter results compare --fail-on-regression --test zscore --metric latency_ns.p99
  aimeter results export --format csv --output results.csv`,
	}
	cmd.PersistentFlags().StringVar(&dsn, "store", "", "results store: an SQLite file or a postgres:// DSN (default: $AIMETER_STORE, else results.db in the user's data directory)")
	cmd.AddCommand(newResultsListCommand(st, &dsn), newResultsShowCommand(st, &dsn), newResultsCompareCommand(st, &dsn),
		newResultsExportCommand(st, &dsn), newResultsThresholdCommand(st, &dsn), newResultsAddCommand(st, &dsn))
	return cmd
}

// withStore opens the store for a results subcommand and runs fn.
func withStore(cmd *cobra.Command, st *State, dsn string, fn func(ctx context.Context, s *store.Store) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := openStore(ctx, st, dsn)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	defer s.Close()
	return fn(ctx, s)
}

// parseRunIDs reads run IDs from arguments.
func parseRunIDs(args []string) ([]int64, error) {
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, usageError("run ID %q: want a positive number (aimeter results list shows them)", a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func loadRuns(ctx context.Context, s *store.Store, ids []int64) ([]store.Run, error) {
	out := make([]store.Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, withCode(ExitUsage, fmt.Errorf("no run %d in the results store", id))
		}
		if err != nil {
			return nil, withCode(ExitFailure, err)
		}
		out = append(out, *r)
	}
	return out, nil
}

func headlineText(r *store.Run) string {
	if r.HeadlineName == "" {
		return "-"
	}
	return fmt.Sprintf("%s %s %s", r.HeadlineName, formatValue(r.HeadlineValue), r.HeadlineUnit)
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return fmt.Sprint(v)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func newResultsAddCommand(st *State, dsn *string) *cobra.Command {
	return &cobra.Command{
		Use:   "add DIR...",
		Short: "Record run bundles made elsewhere or with --no-store into the store",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				for _, dir := range args {
					run, err := store.RecordBundle(ctx, s, dir)
					if err != nil {
						return withCode(ExitFailure, fmt.Errorf("%s: %w", dir, err))
					}
					fmt.Fprintf(st.Stdout, "%s: run %d\n", dir, run.ID)
				}
				return nil
			})
		},
	}
}

func newResultsListCommand(st *State, dsn *string) *cobra.Command {
	var limit int
	var series, item string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "One line a run, newest first: ID, time, test, verdict, headline metric",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageError("--limit %d: want 0 (all) or more", limit)
			}
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				runs, err := s.Runs(ctx, store.RunFilter{SeriesKey: series, TestItemID: item, Limit: limit})
				if err != nil {
					return withCode(ExitFailure, err)
				}
				if asJSON {
					return writeJSON(st.Stdout, runsForList(runs))
				}
				if len(runs) == 0 {
					fmt.Fprintln(st.Stdout, "no runs in the results store")
					return nil
				}
				tw := tabwriter.NewWriter(st.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tRECORDED (UTC)\tKIND\tSCENARIO\tMODE\tSUT\tVERDICT\tSTATUS\tHEADLINE\tSERIES")
				for i := range runs {
					r := &runs[i]
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.RecordedAt.Format("2006-01-02 15:04:05"), r.Kind,
						dash(r.Scenario), dash(r.Mode), dash(r.SUT), r.VerdictWord, r.Status, headlineText(r), r.SeriesKey)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many runs (0: all)")
	cmd.Flags().StringVar(&series, "series", "", "only the runs of this series key")
	cmd.Flags().StringVar(&item, "item", "", "only the runs of this test item")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as a JSON array")
	return cmd
}

// runsForList drops the bulky documents from runs for list --json.
func runsForList(runs []store.Run) []store.Run {
	out := slices.Clone(runs)
	for i := range out {
		out[i].Result, out[i].SUTConfig, out[i].System = nil, nil, nil
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runDetail is everything of one run, as show --json and export print it.
type runDetail struct {
	Run       store.Run        `json:"run"`
	Metrics   []store.Metric   `json:"metrics"`
	Artifacts []store.Artifact `json:"artifacts,omitempty"`
	Events    []store.Event    `json:"events,omitempty"`
}

func newResultsShowCommand(st *State, dsn *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Everything of one run: its description, every metric, its files and events",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseRunIDs(args)
			if err != nil {
				return err
			}
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				runs, err := loadRuns(ctx, s, ids)
				if err != nil {
					return err
				}
				r := runs[0]
				d := runDetail{Run: r}
				if d.Metrics, err = s.Metrics(ctx, r.ID); err != nil {
					return withCode(ExitFailure, err)
				}
				if d.Artifacts, err = s.Artifacts(ctx, r.ID); err != nil {
					return withCode(ExitFailure, err)
				}
				if d.Events, err = s.Events(ctx, store.EventFilter{RunID: r.ID}); err != nil {
					return withCode(ExitFailure, err)
				}
				if asJSON {
					return writeJSON(st.Stdout, d)
				}
				printRunDetail(st.Stdout, s, &d)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run, its metrics, files and events as JSON")
	return cmd
}

func printRunDetail(w io.Writer, s *store.Store, d *runDetail) {
	r := &d.Run
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("run", strconv.FormatInt(r.ID, 10))
	row("key", r.Key)
	if r.TestItemID != "" {
		row("test item", fmt.Sprintf("%s, attempt %d", r.TestItemID, r.Attempt))
	}
	row("kind", r.Kind)
	row("scenario", dash(r.Scenario))
	row("mode", dash(r.Mode))
	if r.ArrivalMode >= 0 {
		row("arrival mode", strconv.Itoa(r.ArrivalMode))
	}
	row("SUT", dash(r.SUT))
	row("QSL", dash(r.QSL))
	if r.Model != "" {
		row("model", r.Model)
	}
	if r.DataSet != "" {
		row("data set", r.DataSet)
	}
	row("verdict", fmt.Sprintf("%s (%s)", r.VerdictWord, r.VerdictKind))
	status := string(r.Status)
	if r.StatusReason != "" {
		status += ": " + r.StatusReason
	}
	row("status", status)
	row("headline", headlineText(r))
	row("started", r.StartedAt.Format(time.RFC3339))
	row("recorded", r.RecordedAt.Format(time.RFC3339))
	row("aimeter", dash(r.Version))
	row("series", fmt.Sprintf("%s (system %s, SUT configuration %s, workload %s)", r.SeriesKey, r.SystemKey, r.ConfigKey, r.WorkloadKey))
	row("bundle digest", "sha256:"+r.BundleDigest)
	row("source", r.Source)
	row("stored in", s.Path(r.Dir))
	tw.Flush()

	fmt.Fprintln(w, "\nmetrics:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tVALUE\tUNIT\tBETTER\tCOUNT\tSTDDEV\tP50\tP90\tP99\tMAX")
	opt := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return formatValue(*p)
	}
	for _, m := range d.Metrics {
		count := "-"
		if m.Count > 0 {
			count = strconv.FormatInt(m.Count, 10)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, formatValue(m.Value), dash(m.Unit), dash(string(m.Better)),
			count, opt(m.Stddev), opt(m.P50), opt(m.P90), opt(m.P99), opt(m.Max))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nfiles:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, a := range d.Artifacts {
		fmt.Fprintf(tw, "  %s\t%s\t%d bytes\tsha256:%s\n", a.Name, a.Role, a.Bytes, a.SHA256)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nevents:")
	for _, e := range d.Events {
		fmt.Fprintf(w, "  %d  %s  %s  %s\n", e.Seq, e.At.Format(time.RFC3339Nano), e.Kind, e.Detail)
	}
}

// thresholdFlags describe one threshold on the command line.
type thresholdFlags struct {
	test       string
	metric     string
	limit      float64
	lookback   int
	minSamples int
	minChange  float64
}

func addThresholdFlags(cmd *cobra.Command, f *thresholdFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.test, "test", "", "statistical test: percent (change against the baseline's mean), zscore (over a lookback window), welch (Welch's t-test on the latency samples)")
	fl.StringVar(&f.metric, "metric", "", `metric to judge (default "headline", "latency_ns" for welch; aimeter results show lists them)`)
	fl.Float64Var(&f.limit, "limit", 0, "bound of the test: percent change (default 5), z (default 5) or significance level (default 0.05)")
	fl.IntVar(&f.lookback, "lookback", 0, "earlier runs of the series in the baseline (default 1 for percent and welch, 100 for zscore)")
	fl.IntVar(&f.minSamples, "min-samples", 0, "least data to judge: earlier runs (percent 1, zscore 3) or samples per side (welch 30)")
	fl.Float64Var(&f.minChange, "min-change", 0, "a change below this many percent is never a regression (zscore, welch)")
}

// threshold returns the threshold the flags describe, and whether any was
// given.
func (f *thresholdFlags) threshold(cmd *cobra.Command) (store.Threshold, bool, error) {
	given := false
	for _, n := range []string{"test", "metric", "limit", "lookback", "min-samples", "min-change"} {
		given = given || cmd.Flags().Changed(n)
	}
	t := store.Threshold{Test: store.Test(f.test), Metric: f.metric, Limit: f.limit, Lookback: f.lookback, MinSamples: f.minSamples, MinChange: f.minChange}
	if err := t.Validate(); err != nil {
		return t, given, usageError("%s", strings.TrimPrefix(err.Error(), "store: "))
	}
	return t, given, nil
}

func newResultsCompareCommand(st *State, dsn *string) *cobra.Command {
	var tf thresholdFlags
	var failOn, asJSON bool
	cmd := &cobra.Command{
		Use:   "compare [ID...]",
		Short: "Runs side by side, and the newest judged against the others or its series' history",
		Long: `Without IDs, the newest run of the store is compared with the earlier runs
of its series; with one ID, that run; with two or more, the runs named side
by side, the newest judged against the others (all of them, unless
--lookback or a stored threshold's lookback says fewer).

The judgement uses the threshold given by --test and its flags, else the
thresholds stored for the series ('aimeter results threshold'), else a 5 %
change of the headline metric against the previous run.
--fail-on-regression exits with 5 when the newest run regressed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseRunIDs(args)
			if err != nil {
				return err
			}
			th, given, err := tf.threshold(cmd)
			if err != nil {
				return err
			}
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				var ts []store.Threshold
				if given {
					ts = []store.Threshold{th}
				}
				var cand store.Run
				var base []store.Run
				var checks []store.Check
				switch len(ids) {
				case 0, 1:
					if len(ids) == 0 {
						latest, err := s.Runs(ctx, store.RunFilter{Limit: 1})
						if err != nil {
							return withCode(ExitFailure, err)
						}
						if len(latest) == 0 {
							return withCode(ExitUsage, errors.New("no runs in the results store to compare"))
						}
						cand = latest[0]
					} else {
						runs, err := loadRuns(ctx, s, ids)
						if err != nil {
							return err
						}
						cand = runs[0]
					}
					if checks, err = s.CheckRun(ctx, &cand, ts); err != nil {
						return withCode(ExitFailure, err)
					}
					lookback := 1
					for _, c := range checks {
						lookback = max(lookback, c.Threshold.Lookback)
					}
					if base, err = s.Baseline(ctx, &cand, min(lookback, 4)); err != nil {
						return withCode(ExitFailure, err)
					}
				default:
					runs, err := loadRuns(ctx, s, ids)
					if err != nil {
						return err
					}
					slices.SortFunc(runs, func(a, b store.Run) int { return cmp.Compare(b.ID, a.ID) })
					cand, base = runs[0], runs[1:]
					if ts == nil {
						if ts, err = s.Thresholds(ctx, cand.SeriesKey); err != nil {
							return withCode(ExitFailure, err)
						}
					}
					for _, b := range base {
						if b.SeriesKey != cand.SeriesKey {
							fmt.Fprintf(st.Stderr, "warning: run %d is in series %s, run %d in %s: they differ in system, SUT configuration or workload\n", b.ID, b.SeriesKey, cand.ID, cand.SeriesKey)
						}
					}
					if ts == nil {
						ts = []store.Threshold{{}}
					}
					for i := range ts {
						if ts[i].Lookback == 0 {
							ts[i].Lookback = len(base) // every run named
						}
					}
					if checks, err = s.CheckAgainst(ctx, &cand, base, ts); err != nil {
						return withCode(ExitFailure, err)
					}
				}
				all, err := s.WithMetrics(ctx, append([]store.Run{cand}, base...))
				if err != nil {
					return withCode(ExitFailure, err)
				}
				slices.Reverse(all) // oldest first, the candidate last
				if asJSON {
					err = writeJSON(st.Stdout, struct {
						Runs      []store.RunMetrics `json:"runs"`
						Checks    []store.Check      `json:"checks"`
						Regressed bool               `json:"regressed"`
					}{all, checks, store.Regressed(checks)})
				} else {
					printComparison(st.Stdout, all, checks)
				}
				if err != nil {
					return withCode(ExitFailure, err)
				}
				if failOn && store.Regressed(checks) {
					return withCode(ExitRegression, fmt.Errorf("run %d regressed", cand.ID))
				}
				return nil
			})
		},
	}
	addThresholdFlags(cmd, &tf)
	cmd.Flags().BoolVar(&failOn, "fail-on-regression", false, "exit with 5 when the newest run regressed (for CI)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs, their metrics and the checks as JSON")
	return cmd
}

// comparedMetrics are the rows of the side-by-side table, when present.
var comparedMetrics = []string{"headline", "samples.ok", "samples.failed", "samples.lost", "latency_ns.mean", "latency_ns.p50", "latency_ns.p90", "latency_ns.p99", "latency_ns.max", "tokens.ttft_ns.p99", "tokens.tpot_ns.p99", "gbt.throughput.samples_per_s", "gbt.loss.rate", "power.energy_j"}

func printComparison(w io.Writer, runs []store.RunMetrics, checks []store.Check) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{"run"}
	for _, r := range runs {
		head = append(head, strconv.FormatInt(r.Run.ID, 10))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	line := func(name string, cell func(r *store.RunMetrics) string) {
		cells := []string{name}
		for i := range runs {
			cells = append(cells, cell(&runs[i]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	line("recorded", func(r *store.RunMetrics) string { return r.Run.RecordedAt.Format("01-02 15:04:05") })
	line("scenario", func(r *store.RunMetrics) string { return dash(r.Run.Scenario) })
	line("verdict", func(r *store.RunMetrics) string { return r.Run.VerdictWord })
	line("series", func(r *store.RunMetrics) string { return r.Run.SeriesKey })
	for _, name := range comparedMetrics {
		has := slices.ContainsFunc(runs, func(r store.RunMetrics) bool { _, ok := r.Metrics[name]; return ok })
		if !has {
			continue
		}
		label := name
		if name == "headline" && len(runs) > 0 {
			label = dash(runs[len(runs)-1].Run.HeadlineName)
		}
		line(label, func(r *store.RunMetrics) string {
			m, ok := r.Metrics[name]
			if !ok {
				return "-"
			}
			return formatValue(m.Value)
		})
	}
	line("latency stddev", func(r *store.RunMetrics) string {
		if m, ok := r.Metrics["latency_ns"]; ok && m.Stddev != nil {
			return formatValue(math.Round(*m.Stddev))
		}
		return "-"
	})
	tw.Flush()
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, c := range checks {
		t := c.Threshold
		desc := fmt.Sprintf("%s %s", t.Test, t.Metric)
		var verdict string
		switch {
		case !c.Judged:
			verdict = "not judged: " + c.Note
		case c.Regressed:
			verdict = "REGRESSION"
		default:
			verdict = "ok"
		}
		detail := fmt.Sprintf("run %d: %s against %s of runs %v (%+.2f %%", c.RunID, formatValue(c.Value), formatValue(c.BaselineValue), c.Baseline, c.Change)
		switch t.Test {
		case store.Percent:
			detail += fmt.Sprintf(", limit %g %%)", t.Limit)
		case store.ZScore:
			detail += fmt.Sprintf(", z = %.2f, limit %g)", c.Statistic, t.Limit)
		case store.Welch:
			detail += fmt.Sprintf(", t = %.2f, df = %.1f, p = %.3g, alpha %g)", c.Statistic, c.DF, c.P, t.Limit)
		}
		if !c.Judged {
			detail = ""
		}
		fmt.Fprintf(w, "%s: %s %s\n", desc, verdict, detail)
	}
}

func newResultsExportCommand(st *State, dsn *string) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export [ID...]",
		Short: "Export runs and their metrics as JSON or CSV (all runs when no ID is given)",
		Long: `Export writes the runs named (all runs, newest first, when none is named)
with every metric. JSON: an array of {run, metrics}. CSV: one row a metric
of a run, with the run's ID, key, time, test, verdict and series.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" && format != "csv" {
				return usageError("--format %q: want json or csv", format)
			}
			ids, err := parseRunIDs(args)
			if err != nil {
				return err
			}
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				var runs []store.Run
				if len(ids) == 0 {
					runs, err = s.Runs(ctx, store.RunFilter{})
				} else {
					runs, err = loadRuns(ctx, s, ids)
				}
				if err != nil {
					return withCode(ExitFailure, err)
				}
				var details []runDetail
				for _, r := range runs {
					ms, err := s.Metrics(ctx, r.ID)
					if err != nil {
						return withCode(ExitFailure, err)
					}
					details = append(details, runDetail{Run: r, Metrics: ms})
				}
				w := st.Stdout
				var f *os.File
				if output != "" && output != "-" {
					if f, err = os.Create(output); err != nil {
						return withCode(ExitFailure, err)
					}
					w = f
				}
				if format == "json" {
					if details == nil {
						details = []runDetail{}
					}
					err = writeJSON(w, details)
				} else {
					err = writeResultsCSV(w, details)
				}
				if f != nil {
					err = errors.Join(err, f.Close())
				}
				if err != nil {
					return withCode(ExitFailure, err)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "json or csv")
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default: standard output)")
	return cmd
}

// ResultsCSVHeader is the header of aimeter results export --format csv.
const resultsCSVHeader = "run_id,run_key,recorded_at,test_item_id,attempt,kind,scenario,mode,sut,verdict,status,series_key,metric,unit,better,value,count,mean,stddev,min,p50,p90,p95,p99,p99_9,max"

func writeResultsCSV(w io.Writer, details []runDetail) error {
	cw := csv.NewWriter(w)
	cw.Write(strings.Split(resultsCSVHeader, ","))
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, d := range details {
		r := &d.Run
		for _, m := range d.Metrics {
			count := ""
			if m.Count > 0 {
				count = strconv.FormatInt(m.Count, 10)
			}
			cw.Write([]string{strconv.FormatInt(r.ID, 10), r.Key, r.RecordedAt.Format(time.RFC3339Nano), r.TestItemID, strconv.Itoa(r.Attempt),
				r.Kind, r.Scenario, r.Mode, r.SUT, r.VerdictWord, string(r.Status), r.SeriesKey,
				m.Name, m.Unit, string(m.Better), strconv.FormatFloat(m.Value, 'g', -1, 64), count,
				opt(m.Mean), opt(m.Stddev), opt(m.Min), opt(m.P50), opt(m.P90), opt(m.P95), opt(m.P99), opt(m.P999), opt(m.Max)})
		}
	}
	cw.Flush()
	return cw.Error()
}

func newResultsThresholdCommand(st *State, dsn *string) *cobra.Command {
	var tf thresholdFlags
	var series string
	var del bool
	cmd := &cobra.Command{
		Use:   "threshold",
		Short: "List, set or delete the thresholds that judge a series",
		Long: `Without threshold flags, list the stored thresholds (of --series, with the
defaults that apply to it). With --test and its flags, store that threshold
for --series (every series without its own when --series is not given);
with --delete, remove it.`,
		Example: `  aimeter results threshold
  aimeter results threshold --test zscore --metric latency_ns.p99 --lookback 30
  aimeter results threshold --series 3f2a… --test welch --limit 0.01 --min-change 2
  aimeter results threshold --series 3f2a… --test welch --delete`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			th, given, err := tf.threshold(cmd)
			if err != nil {
				return err
			}
			th.SeriesKey = series
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				switch {
				case del:
					d := th.WithDefaults()
					if err := s.DeleteThreshold(ctx, series, d.Metric, d.Test); err != nil {
						return withCode(ExitUsage, err)
					}
					return nil
				case given:
					if err := s.SetThreshold(ctx, th); err != nil {
						return withCode(ExitFailure, err)
					}
					return nil
				}
				ts, err := s.Thresholds(ctx, series)
				if err != nil {
					return withCode(ExitFailure, err)
				}
				if len(ts) == 0 {
					fmt.Fprintln(st.Stdout, "no thresholds stored: compare uses a 5 % change of the headline metric against the previous run")
					return nil
				}
				tw := tabwriter.NewWriter(st.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SERIES\tMETRIC\tTEST\tLIMIT\tLOOKBACK\tMIN SAMPLES\tMIN CHANGE %")
				for _, t := range ts {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%d\t%d\t%g\n", dash(t.SeriesKey), t.Metric, t.Test, t.Limit, t.Lookback, t.MinSamples, t.MinChange)
				}
				return tw.Flush()
			})
		},
	}
	addThresholdFlags(cmd, &tf)
	cmd.Flags().StringVar(&series, "series", "", "series key (aimeter results list shows it); empty: the default for every series")
	cmd.Flags().BoolVar(&del, "delete", false, "delete the threshold of --series, --metric and --test")
	return cmd
}
