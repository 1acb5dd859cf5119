package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

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
	dsn := f.dsn
	if dsn == "" {
		dsn = st.Store
	}
	run, err := store.Record(context.WithoutCancel(ctx), dsn, dir, store.IngestOptions{Bundle: d.Bundle(), Derived: d})
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
		Long:  helpText("results"),
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

// loadRuns loads the runs ids name; a missing one is a usage error.
func loadRuns(ctx context.Context, s *store.Store, ids []int64) ([]store.Run, error) {
	runs, err := s.RunsByID(ctx, ids)
	return runs, storeCode(err)
}

// storeCode gives a store error its exit code: ExitUsage for a run that
// is not there (or no run at all), ExitFailure for any other.
func storeCode(err error) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNoRuns) {
		return withCode(ExitUsage, err)
	}
	if err != nil {
		return withCode(ExitFailure, err)
	}
	return nil
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
		Short: "One line a run, newest first: ID, time, kind, scenario, mode, SUT, verdict, status, headline metric, series",
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
					return writeJSON(st.Stdout, store.WithoutDocuments(runs))
				}
				return store.WriteRuns(st.Stdout, runs)
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many runs (0: all)")
	cmd.Flags().StringVar(&series, "series", "", "only the runs of this series key")
	cmd.Flags().StringVar(&item, "item", "", "only the runs of this test item")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as a JSON array")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
				d, err := s.Detail(ctx, runs[0])
				if err != nil {
					return withCode(ExitFailure, err)
				}
				if asJSON {
					return writeJSON(st.Stdout, d)
				}
				return s.WriteDetail(st.Stdout, d)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run, its metrics, files and events as JSON")
	return cmd
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

// parseBaseline reads --baseline: a run ID or latest-of:SERIES. args are
// the command's arguments, to show the one-word form when the series was
// given as the next one.
func parseBaseline(v string, args []string) (store.BaselineChoice, error) {
	if key, ok := strings.CutPrefix(v, "latest-of:"); ok {
		if key == "" {
			return store.BaselineChoice{}, usageError("--baseline %s: name the series after the colon, as in latest-of:6b9ce791e35c0f45 (aimeter results list shows each run's series key)", v)
		}
		return store.BaselineChoice{LatestOf: key}, nil
	}
	if v == "latest-of" {
		key := "SERIES"
		if len(args) > 0 {
			key = args[0]
		}
		return store.BaselineChoice{}, usageError("--baseline latest-of: write the series in the same word, --baseline latest-of:%s (latest-of SERIES as two words is not taken)", key)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return store.BaselineChoice{}, usageError("--baseline %q: want a run ID or latest-of:SERIES (aimeter results list shows both)", v)
	}
	return store.BaselineChoice{RunID: id}, nil
}

// noBaselineError is the error of a gate that had nothing to compare
// with: why the run has no baseline, the nearest series, and how to pick
// one.
func noBaselineError(c *store.Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d was not judged: it has no baseline, because no earlier run shares its series %s", c.Candidate.ID, c.Series)
	pick := "--baseline latest-of:SERIES"
	if len(c.Nearest) > 0 {
		fmt.Fprintf(&b, "; nearest series: %s", c.Nearest[0])
		pick = "--baseline latest-of:" + c.Nearest[0].Key
	}
	fmt.Fprintf(&b, ". A gate without a baseline does not pass: pick one with --baseline ID or %s, or let a run without one pass with --allow-no-baseline", pick)
	return withCode(ExitNoBaseline, errors.New(b.String()))
}

// judgedAny reports whether any check judged the run: a gate whose every
// check lacked data (a metric the run does not have, too few earlier runs)
// has no baseline to speak of.
func judgedAny(checks []store.Check) bool {
	for _, c := range checks {
		if c.Judged {
			return true
		}
	}
	return false
}

// notJudgedText joins the notes of the checks that judged nothing.
func notJudgedText(checks []store.Check) string {
	if len(checks) == 0 {
		return "no threshold applies to it"
	}
	notes := make([]string, 0, len(checks))
	for _, c := range checks {
		notes = append(notes, c.Note)
	}
	return strings.Join(notes, "; ")
}

func newResultsCompareCommand(st *State, dsn *string) *cobra.Command {
	var tf thresholdFlags
	var failOn, allowNoBase, asJSON bool
	var baseline string
	cmd := &cobra.Command{
		Use:   "compare [ID...]",
		Short: "Runs side by side, and the newest judged against the others or its series' history",
		Long:  helpText("results_compare"),
		Example: `  aimeter results compare --fail-on-regression
  aimeter results compare 23 --baseline 22 --fail-on-regression
  aimeter results compare --baseline latest-of:6b9ce791e35c0f45 --fail-on-regression
  aimeter results compare --fail-on-regression --allow-no-baseline`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if allowNoBase && !failOn {
				return usageError("--allow-no-baseline applies only with --fail-on-regression; drop it")
			}
			var choice store.BaselineChoice
			if cmd.Flags().Changed("baseline") {
				var err error
				if choice, err = parseBaseline(baseline, args); err != nil {
					return err
				}
				if len(args) > 1 {
					return usageError("--baseline applies only to one run ID or none: with %d IDs the others named are the baseline; drop it", len(args))
				}
			}
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
				c, err := s.CompareWith(ctx, store.CompareOptions{IDs: ids, Thresholds: ts, Baseline: choice})
				var be *store.BaselineError
				if errors.As(err, &be) {
					return withCode(ExitUsage, fmt.Errorf("--baseline %s: %w", be.Choice, err))
				}
				if err != nil {
					return storeCode(err)
				}
				for _, b := range c.OtherSeries {
					differs := store.ComponentsText(c.Series.Differs(b.Keys()))
					fmt.Fprintf(st.Stderr, "warning: run %d is in series %s, run %d in %s: they differ in %s\n", b.ID, b.SeriesKey, c.Candidate.ID, c.Candidate.SeriesKey, differs)
				}
				if asJSON {
					err = writeJSON(st.Stdout, c)
				} else {
					err = c.WriteComparison(st.Stdout)
				}
				if err != nil {
					return withCode(ExitFailure, err)
				}
				switch {
				case !failOn:
				case c.NoBaseline && allowNoBase:
					fmt.Fprintf(st.Stderr, "aimeter: run %d not judged: no baseline (allowed by --allow-no-baseline)\n", c.Candidate.ID)
				case c.NoBaseline:
					return noBaselineError(c)
				case c.Regressed:
					return withCode(ExitRegression, fmt.Errorf("run %d regressed", c.Candidate.ID))
				case !judgedAny(c.Checks) && allowNoBase:
					fmt.Fprintf(st.Stderr, "aimeter: run %d not judged: %s (allowed by --allow-no-baseline)\n", c.Candidate.ID, notJudgedText(c.Checks))
				case !judgedAny(c.Checks):
					return withCode(ExitNoBaseline, fmt.Errorf("run %d was not judged: %s. A gate that judged nothing does not pass: fix the threshold, or let it pass with --allow-no-baseline", c.Candidate.ID, notJudgedText(c.Checks)))
				}
				return nil
			})
		},
	}
	addThresholdFlags(cmd, &tf)
	cmd.Flags().BoolVar(&failOn, "fail-on-regression", false, "exit with 5 when the newest run regressed, with 7 when it has no baseline (for CI)")
	cmd.Flags().BoolVar(&allowNoBase, "allow-no-baseline", false, "with --fail-on-regression: exit 0, not 7, when the run has no baseline (the first run of a series)")
	cmd.Flags().StringVar(&baseline, "baseline", "", "the baseline: a run `ID`, or latest-of:SERIES for the newest run of that series recorded before the run judged (default: the earlier runs of its series)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs, their metrics, the series keys, the baseline and the checks as JSON")
	return cmd
}

func newResultsExportCommand(st *State, dsn *string) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export [ID...]",
		Short: "Export runs and their metrics as JSON or CSV (all runs when no ID is given)",
		Long:  helpText("results_export"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != store.ExportJSON && format != store.ExportCSV {
				return usageError("--format %q: want json or csv", format)
			}
			ids, err := parseRunIDs(args)
			if err != nil {
				return err
			}
			return withStore(cmd, st, *dsn, func(ctx context.Context, s *store.Store) error {
				details, err := s.Export(ctx, ids)
				if err != nil {
					return withCode(ExitFailure, err)
				}
				w := st.Stdout
				var f *os.File
				if output != "" && output != "-" {
					if f, err = os.Create(output); err != nil {
						return withCode(ExitFailure, err)
					}
					w = f
				}
				err = store.WriteExport(w, details, format)
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

func newResultsThresholdCommand(st *State, dsn *string) *cobra.Command {
	var tf thresholdFlags
	var series string
	var del bool
	cmd := &cobra.Command{
		Use:   "threshold",
		Short: "List, set or delete the thresholds that judge a series",
		Long:  helpText("results_threshold"),
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
				return store.WriteThresholds(st.Stdout, ts)
			})
		},
	}
	addThresholdFlags(cmd, &tf)
	cmd.Flags().StringVar(&series, "series", "", "series key (aimeter results list shows it); empty: the default for every series")
	cmd.Flags().BoolVar(&del, "delete", false, "delete the threshold of --series, --metric and --test")
	return cmd
}
