package store

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// This file holds what a reader of the store builds from it beside the
// queries: a run's full detail, the comparison of runs with its checks,
// and their text, table and CSV forms, as aimeter results prints them.

// RunNotFoundError is the error of RunsByID for an ID the store lacks; it
// matches ErrNotFound under errors.Is.
type RunNotFoundError struct{ ID int64 }

func (e *RunNotFoundError) Error() string {
	return fmt.Sprintf("no run %d in the results store", e.ID)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *RunNotFoundError) Is(target error) bool { return target == ErrNotFound }

// ErrNoRuns is Compare's error when no ID is given and the store holds no
// run.
var ErrNoRuns = errors.New("no runs in the results store to compare")

// RunsByID returns the runs ids name, in their order; a *RunNotFoundError
// for the first the store lacks.
func (s *Store) RunsByID(ctx context.Context, ids []int64) ([]Run, error) {
	out := make([]Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.Run(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil, &RunNotFoundError{ID: id}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// RunDetail is everything of one run: aimeter results show --json prints
// it, and export prints the run and its metrics.
type RunDetail struct {
	Run       Run        `json:"run"`
	Metrics   []Metric   `json:"metrics"`
	Artifacts []Artifact `json:"artifacts,omitempty"`
	Events    []Event    `json:"events,omitempty"`
}

// Detail returns r with its metrics, files and events.
func (s *Store) Detail(ctx context.Context, r Run) (*RunDetail, error) {
	d := &RunDetail{Run: r}
	var err error
	if d.Metrics, err = s.Metrics(ctx, r.ID); err != nil {
		return nil, err
	}
	if d.Artifacts, err = s.Artifacts(ctx, r.ID); err != nil {
		return nil, err
	}
	if d.Events, err = s.Events(ctx, EventFilter{RunID: r.ID}); err != nil {
		return nil, err
	}
	return d, nil
}

// WithMetricList returns runs each with its metrics (no files or events),
// as aimeter results export writes them; an empty, non-nil slice for no
// runs.
func (s *Store) WithMetricList(ctx context.Context, runs []Run) ([]RunDetail, error) {
	out := make([]RunDetail, 0, len(runs))
	for _, r := range runs {
		ms, err := s.Metrics(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, RunDetail{Run: r, Metrics: ms})
	}
	return out, nil
}

// WithoutDocuments returns a copy of runs without their bulky documents
// (result, SUT configuration, system), for a listing.
func WithoutDocuments(runs []Run) []Run {
	out := slices.Clone(runs)
	for i := range out {
		out[i].Result, out[i].SUTConfig, out[i].System = nil, nil, nil
	}
	return out
}

// Comparison is runs side by side and the newest judged against the
// others; its JSON form is aimeter results compare --json.
type Comparison struct {
	// Runs are the runs compared with their metrics, oldest first, the
	// candidate last.
	Runs []RunMetrics `json:"runs"`
	// Checks are the thresholds applied to the candidate.
	Checks []Check `json:"checks"`
	// Regressed is Regressed(Checks).
	Regressed bool `json:"regressed"`
	// Series are the keys of the candidate's series.
	Series SeriesKeys `json:"series"`
	// Baseline says how the baseline was chosen, which runs it holds and
	// their series.
	Baseline BaselineInfo `json:"baseline"`
	// NoBaseline is true when no baseline run was found (the candidate's
	// series has no earlier run): the checks judged nothing, and a gate
	// must not pass on that by accident.
	NoBaseline bool `json:"no_baseline"`
	// Nearest are, when NoBaseline, the series nearest the candidate's
	// (Store.NearestSeries): why the run started a series of its own.
	Nearest []NearSeries `json:"nearest_series,omitempty"`
	// Candidate is the run judged.
	Candidate Run `json:"-"`
	// OtherSeries are the baseline runs that are in another series than
	// the candidate (another system, SUT configuration or workload).
	OtherSeries []Run `json:"-"`
}

// BaselineInfo is where a comparison's baseline came from.
type BaselineInfo struct {
	// Source says how the runs were chosen.
	Source BaselineSource `json:"source"`
	// RunIDs are the baseline runs shown beside the candidate, newest
	// first (each check lists the ones it used); empty when none was
	// found.
	RunIDs []int64 `json:"run_ids"`
	// Series are the keys of the baseline runs' series, the newest run's
	// first, each once.
	Series []SeriesKeys `json:"series"`
}

// CompareOptions say which run Compare judges and against what; the zero
// value judges the newest run of the store against the earlier runs of its
// series with its series' thresholds.
type CompareOptions struct {
	// IDs name the runs: none, the newest run of the store; one, that
	// run; two or more, the runs side by side, the newest judged against
	// the others.
	IDs []int64
	// Thresholds judge the candidate; nil means the thresholds stored for
	// its series, else a 5 % change of the headline metric.
	Thresholds []Threshold
	// Baseline picks the baseline run explicitly; its zero value means the
	// earlier runs of the candidate's series (with two or more IDs, the
	// others named). It goes with at most one ID.
	Baseline BaselineChoice
}

// Compare is CompareWith of the runs ids name and thresholds ts.
func (s *Store) Compare(ctx context.Context, ids []int64, ts []Threshold) (*Comparison, error) {
	return s.CompareWith(ctx, CompareOptions{IDs: ids, Thresholds: ts})
}

// CompareWith judges a run as aimeter results compare does. With no IDs
// the newest run of the store (ErrNoRuns when there is none), with one
// that run, is checked against its series' history with the thresholds,
// else the series' stored thresholds; the comparison shows it beside up to
// four earlier runs of its series (more when a threshold looks further
// back). When the series has no earlier run, NoBaseline is set and Nearest
// lists the series nearest the candidate's. With o.Baseline, the run it
// picks is the baseline instead (a *BaselineError when there is none),
// judged as a named run. With two or more IDs the newest is judged against
// all the others (each threshold's Lookback defaulting to their number)
// with the thresholds, else the candidate's series' stored thresholds,
// else the default threshold. A missing run is a *RunNotFoundError.
func (s *Store) CompareWith(ctx context.Context, o CompareOptions) (*Comparison, error) {
	var c Comparison
	var base []Run
	var err error
	ts := o.Thresholds
	if len(o.IDs) > 1 && !o.Baseline.IsZero() {
		return nil, errors.New("store: a baseline choice goes with at most one run ID; with more, the others named are the baseline")
	}
	switch len(o.IDs) {
	case 0:
		latest, err := s.Runs(ctx, RunFilter{Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(latest) == 0 {
			return nil, ErrNoRuns
		}
		c.Candidate = latest[0]
	case 1:
		runs, err := s.RunsByID(ctx, o.IDs)
		if err != nil {
			return nil, err
		}
		c.Candidate = runs[0]
	default:
		runs, err := s.RunsByID(ctx, o.IDs)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(runs, func(a, b Run) int { return cmp.Compare(b.ID, a.ID) })
		c.Candidate, base = runs[0], runs[1:]
		c.Baseline.Source = FromNamed
	}
	switch {
	case len(o.IDs) < 2 && o.Baseline.IsZero():
		c.Baseline.Source = FromSeries
		if c.Checks, err = s.CheckRun(ctx, &c.Candidate, ts); err != nil {
			return nil, err
		}
		lookback := 1
		for _, ch := range c.Checks {
			lookback = max(lookback, ch.Threshold.Lookback)
		}
		if base, err = s.Baseline(ctx, &c.Candidate, min(lookback, 4)); err != nil {
			return nil, err
		}
	default:
		if len(o.IDs) < 2 {
			b, err := s.resolveBaseline(ctx, &c.Candidate, o.Baseline)
			if err != nil {
				return nil, err
			}
			base = []Run{*b}
			c.Baseline.Source = FromRun
			if o.Baseline.LatestOf != "" {
				c.Baseline.Source = FromLatestOf
			}
		}
		ts = slices.Clone(ts)
		if ts == nil {
			if ts, err = s.Thresholds(ctx, c.Candidate.SeriesKey); err != nil {
				return nil, err
			}
		}
		if ts == nil {
			ts = []Threshold{{}}
		}
		for i := range ts {
			if ts[i].Lookback == 0 {
				ts[i].Lookback = len(base) // every run named
			}
		}
		if c.Checks, err = s.CheckAgainst(ctx, &c.Candidate, base, ts); err != nil {
			return nil, err
		}
	}
	c.Series = c.Candidate.Keys()
	c.Baseline.RunIDs = make([]int64, 0, len(base))
	c.Baseline.Series = []SeriesKeys{}
	for _, b := range base {
		c.Baseline.RunIDs = append(c.Baseline.RunIDs, b.ID)
		if !slices.ContainsFunc(c.Baseline.Series, func(k SeriesKeys) bool { return k.Key == b.SeriesKey }) {
			c.Baseline.Series = append(c.Baseline.Series, b.Keys())
		}
		if b.SeriesKey != c.Candidate.SeriesKey {
			c.OtherSeries = append(c.OtherSeries, b)
		}
	}
	if len(base) == 0 {
		c.NoBaseline = true
		if c.Nearest, err = s.NearestSeries(ctx, &c.Candidate); err != nil {
			return nil, err
		}
	}
	if c.Runs, err = s.WithMetrics(ctx, append([]Run{c.Candidate}, base...)); err != nil {
		return nil, err
	}
	slices.Reverse(c.Runs) // oldest first, the candidate last
	c.Regressed = Regressed(c.Checks)
	return &c, nil
}

// FormatValue formats a metric's value for a table: an integral value
// below 1e15 as an integer, others with six significant digits.
func FormatValue(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return fmt.Sprint(v)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// HeadlineText is the run's headline metric as "name value unit", or "-".
func (r *Run) HeadlineText() string {
	if r.HeadlineName == "" {
		return "-"
	}
	return fmt.Sprintf("%s %s %s", r.HeadlineName, FormatValue(r.HeadlineValue), r.HeadlineUnit)
}

// WriteDetail writes d as aimeter results show prints it: the run's
// description, then its metrics, files and events, each a table.
func (s *Store) WriteDetail(w io.Writer, d *RunDetail) error {
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
	row("headline", r.HeadlineText())
	row("started", r.StartedAt.Format(time.RFC3339))
	row("recorded", r.RecordedAt.Format(time.RFC3339))
	row("aimeter", dash(r.Version))
	row("series", fmt.Sprintf("%s (system %s, SUT configuration %s, workload %s)", r.SeriesKey, r.SystemKey, r.ConfigKey, r.WorkloadKey))
	row("bundle digest", "sha256:"+r.BundleDigest)
	row("source", r.Source)
	row("stored in", s.Path(r.Dir))
	err := tw.Flush()

	fmt.Fprintln(w, "\nmetrics:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tVALUE\tUNIT\tBETTER\tCOUNT\tSTDDEV\tP50\tP90\tP99\tMAX")
	opt := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return FormatValue(*p)
	}
	for _, m := range d.Metrics {
		count := "-"
		if m.Count > 0 {
			count = strconv.FormatInt(m.Count, 10)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, FormatValue(m.Value), dash(m.Unit), dash(string(m.Better)),
			count, opt(m.Stddev), opt(m.P50), opt(m.P90), opt(m.P99), opt(m.Max))
	}
	err = errors.Join(err, tw.Flush())

	fmt.Fprintln(w, "\nfiles:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, a := range d.Artifacts {
		fmt.Fprintf(tw, "  %s\t%s\t%d bytes\tsha256:%s\n", a.Name, a.Role, a.Bytes, a.SHA256)
	}
	err = errors.Join(err, tw.Flush())

	fmt.Fprintln(w, "\nevents:")
	for _, e := range d.Events {
		if _, werr := fmt.Fprintf(w, "  %d  %s  %s  %s\n", e.Seq, e.At.Format(time.RFC3339Nano), e.Kind, e.Detail); werr != nil {
			return werr
		}
	}
	return err
}

// ComparedMetrics are the metrics of WriteComparison's table, in its
// order; a metric no run has is left out.
var comparedMetrics = []string{"headline", "samples.ok", "samples.failed", "samples.lost", "latency_ns.mean", "latency_ns.p50", "latency_ns.p90", "latency_ns.p99", "latency_ns.max", "tokens.ttft_ns.p99", "tokens.tpot_ns.p99", "gbt.throughput.samples_per_s", "gbt.loss.rate", "power.energy_j"}

// WriteComparison writes c as aimeter results compare prints it: the runs
// side by side, one column a run (the candidate last) and one row a
// metric, then a line for each check.
func (c *Comparison) WriteComparison(w io.Writer) error {
	runs := c.Runs
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{"run"}
	for _, r := range runs {
		head = append(head, strconv.FormatInt(r.Run.ID, 10))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	line := func(name string, cell func(r *RunMetrics) string) {
		cells := []string{name}
		for i := range runs {
			cells = append(cells, cell(&runs[i]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	line("recorded", func(r *RunMetrics) string { return r.Run.RecordedAt.Format("01-02 15:04:05") })
	line("scenario", func(r *RunMetrics) string { return dash(r.Run.Scenario) })
	line("verdict", func(r *RunMetrics) string { return r.Run.VerdictWord })
	line("series", func(r *RunMetrics) string { return r.Run.SeriesKey })
	for _, name := range comparedMetrics {
		has := slices.ContainsFunc(runs, func(r RunMetrics) bool { _, ok := r.Metrics[name]; return ok })
		if !has {
			continue
		}
		label := name
		if name == "headline" && len(runs) > 0 {
			label = dash(runs[len(runs)-1].Run.HeadlineName)
		}
		line(label, func(r *RunMetrics) string {
			m, ok := r.Metrics[name]
			if !ok {
				return "-"
			}
			return FormatValue(m.Value)
		})
	}
	line("latency stddev", func(r *RunMetrics) string {
		if m, ok := r.Metrics["latency_ns"]; ok && m.Stddev != nil {
			return FormatValue(math.Round(*m.Stddev))
		}
		return "-"
	})
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := c.writeBaseline(w); err != nil || len(c.Checks) == 0 {
		return err
	}
	fmt.Fprintln(w)
	for _, ch := range c.Checks {
		if _, err := fmt.Fprintln(w, ch.String()); err != nil {
			return err
		}
	}
	return nil
}

// writeBaseline writes the series of the run judged, where its baseline
// came from and, when it has none, the nearest series and what differs.
func (c *Comparison) writeBaseline(w io.Writer) error {
	id := c.Candidate.ID
	fmt.Fprintf(w, "series of run %d: %s\n", id, c.Series)
	if c.NoBaseline {
		fmt.Fprintf(w, "no baseline: no run of series %s was recorded before run %d\n", c.Series.Key, id)
		if len(c.Nearest) == 0 {
			_, err := fmt.Fprintln(w, "no other series in the store")
			return err
		}
		fmt.Fprintln(w, "nearest series:")
		for _, n := range c.Nearest {
			if _, err := fmt.Fprintf(w, "  %s\n", n); err != nil {
				return err
			}
		}
		return nil
	}
	how := map[BaselineSource]string{
		FromSeries:   "the earlier runs of its series",
		FromNamed:    "the runs named",
		FromRun:      "the run picked by ID",
		FromLatestOf: "the newest earlier run of the series picked",
	}[c.Baseline.Source]
	ids := make([]string, len(c.Baseline.RunIDs))
	for i, b := range c.Baseline.RunIDs {
		ids[i] = strconv.FormatInt(b, 10)
	}
	runs := "runs"
	if len(ids) == 1 {
		runs = "run"
	}
	fmt.Fprintf(w, "baseline: %s %s (%s)\n", runs, strings.Join(ids, ", "), how)
	for _, k := range c.Baseline.Series {
		if k.Key == c.Series.Key {
			fmt.Fprintf(w, "series of the baseline: %s, the same\n", k.Key)
			continue
		}
		fmt.Fprintf(w, "series of the baseline: %s, differs in %s\n", k, ComponentsText(k.Differs(c.Series)))
	}
	return nil
}

// String describes the check in one line: the test and metric, the
// verdict (ok, REGRESSION or not judged and why) and, when judged, the
// values, the change and the test's statistic and limit.
func (c Check) String() string {
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
	detail := fmt.Sprintf("run %d: %s against %s of runs %v (%+.2f %%", c.RunID, FormatValue(c.Value), FormatValue(c.BaselineValue), c.Baseline, c.Change)
	switch t.Test {
	case Percent:
		detail += fmt.Sprintf(", limit %g %%)", t.Limit)
	case ZScore:
		detail += fmt.Sprintf(", z = %.2f, limit %g)", c.Statistic, t.Limit)
	case Welch:
		detail += fmt.Sprintf(", t = %.2f, df = %.1f, p = %.3g, alpha %g)", c.Statistic, c.DF, c.P, t.Limit)
	}
	if !c.Judged {
		detail = ""
	}
	return fmt.Sprintf("%s: %s %s", desc, verdict, detail)
}

// CSVHeader is the header row of WriteCSV, comma-separated.
const CSVHeader = "run_id,run_key,recorded_at,test_item_id,attempt,kind,scenario,mode,sut,verdict,status,series_key,metric,unit,better,value,count,mean,stddev,min,p50,p90,p95,p99,p99_9,max"

// WriteCSV writes details as aimeter results export --format csv does:
// CSVHeader, then one row a metric of a run, with the run's ID, key, time,
// test, verdict and series; an absent statistic is an empty cell.
func WriteCSV(w io.Writer, details []RunDetail) error {
	cw := csv.NewWriter(w)
	cw.Write(strings.Split(CSVHeader, ","))
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
