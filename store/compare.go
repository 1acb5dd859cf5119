package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Test names the statistical test of a threshold.
type Test string

const (
	// Percent compares the metric with the mean of the baseline runs'
	// values: a regression is a change in the bad direction of more than
	// Limit percent (default 5, as Conbench's default).
	Percent Test = "percent"
	// ZScore compares the metric with the distribution of the baseline
	// runs' values over a lookback window (Conbench's method): z = (x −
	// mean) / stddev, a regression when z is more than Limit (default 5)
	// standard deviations in the bad direction.
	ZScore Test = "zscore"
	// Welch compares the samples of a distribution metric (latency_ns:
	// count, mean and standard deviation) of the run with those of the
	// baseline runs pooled, by Welch's unequal-variances t-test (as
	// Bencher's t-test threshold): a regression when the one-sided p-value
	// in the bad direction is below Limit (default 0.05).
	Welch Test = "welch"
)

// Threshold is how a series' runs are judged.
type Threshold struct {
	// SeriesKey is the series it applies to; "" applies to every series
	// that has no threshold of its own for the metric and test.
	SeriesKey string `json:"series_key"`
	// Metric is the metric's name ("headline", "latency_ns.p99",
	// "latency_ns" for Welch); "" means "headline", or "latency_ns" for
	// Welch.
	Metric string `json:"metric"`
	// Test is the statistical test; "" means Percent.
	Test Test `json:"test"`
	// Limit is the test's bound: the largest allowed change in percent
	// (Percent), the largest allowed z (ZScore) or the significance level
	// (Welch); 0 means 5, 5 and 0.05.
	Limit float64 `json:"limit"`
	// Lookback is how many earlier runs of the series form the baseline;
	// 0 means 1 for Percent and Welch, 100 for ZScore (Conbench's window).
	Lookback int `json:"lookback"`
	// MinSamples is the least data to judge: earlier runs for Percent and
	// ZScore (0 means 1 and 3), samples on each side for Welch (0 means
	// 30). With less, the check says so and finds no regression.
	MinSamples int `json:"min_samples"`
	// MinChange is a change in percent below which ZScore and Welch find
	// no regression however significant it is (large samples make tiny
	// differences significant); 0 means none.
	MinChange float64 `json:"min_change"`
}

// WithDefaults returns t with its zero fields replaced by their defaults.
func (t Threshold) WithDefaults() Threshold {
	if t.Test == "" {
		t.Test = Percent
	}
	if t.Metric == "" {
		t.Metric = "headline"
		if t.Test == Welch {
			t.Metric = "latency_ns"
		}
	}
	switch t.Test {
	case Percent:
		t.Limit = cmp0(t.Limit, 5)
		t.Lookback = int(cmp0(float64(t.Lookback), 1))
		t.MinSamples = int(cmp0(float64(t.MinSamples), 1))
	case ZScore:
		t.Limit = cmp0(t.Limit, 5)
		t.Lookback = int(cmp0(float64(t.Lookback), 100))
		t.MinSamples = int(cmp0(float64(t.MinSamples), 3))
	case Welch:
		t.Limit = cmp0(t.Limit, 0.05)
		t.Lookback = int(cmp0(float64(t.Lookback), 1))
		t.MinSamples = int(cmp0(float64(t.MinSamples), 30))
	}
	return t
}

func cmp0(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// Validate checks the threshold's fields.
func (t Threshold) Validate() error {
	switch t.Test {
	case "", Percent, ZScore, Welch:
	default:
		return fmt.Errorf("store: threshold test %q: want percent, zscore or welch", t.Test)
	}
	switch {
	case t.Limit < 0 || math.IsNaN(t.Limit) || math.IsInf(t.Limit, 0):
		return fmt.Errorf("store: threshold limit %v: want a finite value ≥ 0", t.Limit)
	case t.Test == Welch && t.Limit >= 1:
		return fmt.Errorf("store: threshold limit %v: a significance level is below 1", t.Limit)
	case t.Lookback < 0:
		return fmt.Errorf("store: threshold lookback %d is negative", t.Lookback)
	case t.MinSamples < 0:
		return fmt.Errorf("store: threshold min_samples %d is negative", t.MinSamples)
	case t.MinChange < 0 || math.IsNaN(t.MinChange):
		return fmt.Errorf("store: threshold min_change %v is negative", t.MinChange)
	}
	return nil
}

// SetThreshold stores t, replacing the threshold of the same series, metric
// and test.
func (s *Store) SetThreshold(ctx context.Context, t Threshold) error {
	if err := t.Validate(); err != nil {
		return err
	}
	t = t.WithDefaults()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM thresholds WHERE series_key = ? AND metric = ? AND test = ?`), t.SeriesKey, t.Metric, string(t.Test)); err != nil {
			return fmt.Errorf("store: threshold: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO thresholds (series_key, metric, test, max_change, lookback, min_samples, min_change) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			t.SeriesKey, t.Metric, string(t.Test), t.Limit, t.Lookback, t.MinSamples, t.MinChange); err != nil {
			return fmt.Errorf("store: threshold: %w", err)
		}
		return nil
	})
}

// Thresholds returns the thresholds that apply to a series: its own, and the
// defaults (SeriesKey "") for the metrics and tests it has none for. With
// seriesKey "", every stored threshold.
func (s *Store) Thresholds(ctx context.Context, seriesKey string) ([]Threshold, error) {
	q, args := `SELECT series_key, metric, test, max_change, lookback, min_samples, min_change FROM thresholds ORDER BY series_key, metric, test`, []any(nil)
	if seriesKey != "" {
		q = `SELECT series_key, metric, test, max_change, lookback, min_samples, min_change FROM thresholds WHERE series_key = ? OR series_key = '' ORDER BY series_key DESC, metric, test`
		args = []any{seriesKey}
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: thresholds: %w", err)
	}
	defer rows.Close()
	var out []Threshold
	seen := map[[2]string]bool{}
	for rows.Next() {
		var t Threshold
		if err := rows.Scan(&t.SeriesKey, &t.Metric, &t.Test, &t.Limit, &t.Lookback, &t.MinSamples, &t.MinChange); err != nil {
			return nil, fmt.Errorf("store: thresholds: %w", err)
		}
		k := [2]string{t.Metric, string(t.Test)}
		if seriesKey != "" && seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	return out, rows.Err()
}

// DeleteThreshold removes a stored threshold; an error wrapping ErrNotFound
// when there is none.
func (s *Store) DeleteThreshold(ctx context.Context, seriesKey, metric string, test Test) error {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM thresholds WHERE series_key = ? AND metric = ? AND test = ?`), seriesKey, metric, string(test))
	if err != nil {
		return fmt.Errorf("store: threshold: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: threshold %s/%s/%s: %w", seriesKey, metric, test, ErrNotFound)
	}
	return nil
}

// Baseline returns up to n runs of run's series older than it, newest first.
func (s *Store) Baseline(ctx context.Context, run *Run, n int) ([]Run, error) {
	return s.Runs(ctx, RunFilter{SeriesKey: run.SeriesKey, BeforeID: run.ID, Limit: n})
}

// RunMetrics is a run with its metrics by name.
type RunMetrics struct {
	Run     Run
	Metrics map[string]Metric
}

// WithMetrics loads the metrics of runs.
func (s *Store) WithMetrics(ctx context.Context, runs []Run) ([]RunMetrics, error) {
	out := make([]RunMetrics, len(runs))
	for i, r := range runs {
		ms, err := s.Metrics(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		out[i] = RunMetrics{Run: r, Metrics: make(map[string]Metric, len(ms))}
		for _, m := range ms {
			out[i].Metrics[m.Name] = m
		}
	}
	return out, nil
}

// Check is the outcome of one threshold on one run.
type Check struct {
	// Threshold is the threshold applied, with its defaults filled in.
	Threshold Threshold `json:"threshold"`
	// RunID is the run judged; Baseline the runs it was compared with
	// (at most Lookback, newest first, those that have the metric).
	RunID    int64   `json:"run_id"`
	Baseline []int64 `json:"baseline"`
	// Better is the metric's direction.
	Better Better `json:"better"`
	// Value is the run's value, BaselineValue the baseline's (the mean of
	// the baseline runs' values; for Welch the pooled mean).
	Value         float64 `json:"value"`
	BaselineValue float64 `json:"baseline_value"`
	// Change is (Value − BaselineValue) / |BaselineValue| in percent.
	Change float64 `json:"change_pct"`
	// Statistic is z (ZScore) or t (Welch); DF Welch's degrees of freedom
	// and P its one-sided p-value in the bad direction.
	Statistic float64 `json:"statistic,omitempty"`
	DF        float64 `json:"df,omitempty"`
	P         float64 `json:"p,omitempty"`
	// Judged is false when there was too little data (Note says what);
	// Regressed is true when the run is worse beyond the threshold.
	Judged    bool   `json:"judged"`
	Regressed bool   `json:"regressed"`
	Note      string `json:"note,omitempty"`
}

// Evaluate applies t to candidate against baseline (newest first). It is
// pure: the store's data come in through the arguments.
func Evaluate(candidate RunMetrics, baseline []RunMetrics, t Threshold) Check {
	t = t.WithDefaults()
	c := Check{Threshold: t, RunID: candidate.Run.ID}
	m, ok := candidate.Metrics[t.Metric]
	if !ok {
		c.Note = fmt.Sprintf("run %d has no metric %s", candidate.Run.ID, t.Metric)
		return c
	}
	c.Value, c.Better = m.Value, m.Better
	if c.Better == Neither {
		c.Note = fmt.Sprintf("%s has no better direction; not judged", t.Metric)
		return c
	}
	var base []Metric
	for _, b := range baseline {
		if len(base) == t.Lookback {
			break
		}
		if bm, ok := b.Metrics[t.Metric]; ok {
			base = append(base, bm)
			c.Baseline = append(c.Baseline, b.Run.ID)
		}
	}
	sign := 1.0 // +1: larger is worse
	if c.Better == Higher {
		sign = -1
	}
	switch t.Test {
	case Percent, ZScore:
		if len(base) < t.MinSamples || len(base) == 0 {
			c.Note = fmt.Sprintf("%d earlier runs with %s, %d needed", len(base), t.Metric, max(t.MinSamples, 1))
			return c
		}
		vals := make([]float64, len(base))
		for i, b := range base {
			vals[i] = b.Value
		}
		mean, sd := meanStddev(vals)
		c.BaselineValue = mean
		c.Change = PercentChange(mean, c.Value)
		c.Judged = true
		if t.Test == Percent {
			c.Regressed = sign*c.Change > t.Limit
			return c
		}
		c.Statistic = zOf(c.Value, mean, sd)
		c.Regressed = sign*c.Statistic > t.Limit && math.Abs(c.Change) >= t.MinChange
	case Welch:
		if m.Count == 0 || m.Stddev == nil {
			c.Note = fmt.Sprintf("%s is not a distribution; Welch's test needs count, mean and stddev", t.Metric)
			return c
		}
		var samples []Sample
		for _, b := range base {
			if b.Stddev != nil {
				samples = append(samples, Sample{N: b.Count, Mean: b.Value, Stddev: *b.Stddev})
			}
		}
		pooled := Pool(samples...)
		cand := Sample{N: m.Count, Mean: m.Value, Stddev: *m.Stddev}
		if pooled.N < int64(t.MinSamples) || cand.N < int64(t.MinSamples) {
			c.Note = fmt.Sprintf("%d and %d samples, %d needed on each side", cand.N, pooled.N, t.MinSamples)
			return c
		}
		c.BaselineValue = pooled.Mean
		c.Change = PercentChange(pooled.Mean, c.Value)
		tv, df := WelchT(cand, pooled)
		c.Statistic, c.DF = tv, df
		c.P = 1 - StudentTCDF(sign*tv, df) // P(T ≥ observed in the bad direction)
		c.Judged = true
		c.Regressed = c.P < t.Limit && sign*c.Change > 0 && math.Abs(c.Change) >= t.MinChange
	}
	return c
}

// CheckRun judges a stored run against the earlier runs of its series with
// thresholds ts; nil ts means the series' stored thresholds, or, where none
// is stored, a 5 % change of the headline metric against the previous run.
func (s *Store) CheckRun(ctx context.Context, run *Run, ts []Threshold) ([]Check, error) {
	if ts == nil {
		var err error
		if ts, err = s.Thresholds(ctx, run.SeriesKey); err != nil {
			return nil, err
		}
		if len(ts) == 0 {
			ts = []Threshold{{}}
		}
	}
	lookback := 0
	for _, t := range ts {
		if err := t.Validate(); err != nil {
			return nil, err
		}
		lookback = max(lookback, t.WithDefaults().Lookback)
	}
	base, err := s.Baseline(ctx, run, lookback)
	if err != nil {
		return nil, err
	}
	return s.checkAgainst(ctx, run, base, ts)
}

// CheckAgainst judges run against the given baseline runs (newest first)
// with thresholds ts (nil: a 5 % change of the headline metric).
func (s *Store) CheckAgainst(ctx context.Context, run *Run, baseline []Run, ts []Threshold) ([]Check, error) {
	if ts == nil {
		ts = []Threshold{{}}
	}
	for _, t := range ts {
		if err := t.Validate(); err != nil {
			return nil, err
		}
	}
	return s.checkAgainst(ctx, run, baseline, ts)
}

func (s *Store) checkAgainst(ctx context.Context, run *Run, baseline []Run, ts []Threshold) ([]Check, error) {
	all, err := s.WithMetrics(ctx, append([]Run{*run}, baseline...))
	if err != nil {
		return nil, err
	}
	out := make([]Check, len(ts))
	for i, t := range ts {
		out[i] = Evaluate(all[0], all[1:], t)
	}
	return out, nil
}

// Regressed says whether any check found a regression.
func Regressed(checks []Check) bool {
	return slices.ContainsFunc(checks, func(c Check) bool { return c.Regressed })
}

// PercentChange is (x − base) / |base| × 100; ±Inf for a change from 0, 0
// for no change.
func PercentChange(base, x float64) float64 {
	if x == base {
		return 0
	}
	if base == 0 {
		return math.Copysign(math.Inf(1), x)
	}
	return (x - base) / math.Abs(base) * 100
}

// ZScoreOf returns (x − mean) / stddev of history (sample standard deviation,
// n − 1); it needs at least two values.
func ZScoreOf(history []float64, x float64) (float64, error) {
	if len(history) < 2 {
		return 0, errors.New("store: a z-score needs at least two earlier values")
	}
	mean, sd := meanStddev(history)
	return zOf(x, mean, sd), nil
}

// zOf is (x − mean)/sd, with 0 for x = mean and ±Inf for sd = 0.
func zOf(x, mean, sd float64) float64 {
	if x == mean {
		return 0
	}
	if sd == 0 || math.IsNaN(sd) {
		return math.Copysign(math.Inf(1), x-mean)
	}
	return (x - mean) / sd
}

// meanStddev is the mean and sample standard deviation (NaN for one value).
func meanStddev(v []float64) (mean, sd float64) {
	var w welford
	for _, x := range v {
		w.add(x)
	}
	return w.mean, w.stddev()
}

// welford accumulates a mean and variance in one pass (Welford's method).
type welford struct {
	n    int64
	mean float64
	m2   float64
}

func (w *welford) add(x float64) {
	w.n++
	d := x - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (x - w.mean)
}

// stddev is the sample standard deviation (n − 1); NaN below 2 samples.
func (w *welford) stddev() float64 {
	if w.n < 2 {
		return math.NaN()
	}
	return math.Sqrt(w.m2 / float64(w.n-1))
}

// Sample summarises the samples of a distribution.
type Sample struct {
	N      int64   // the number of samples
	Mean   float64 // their mean
	Stddev float64 // their sample standard deviation (n − 1)
}

// Pool combines samples into the summary of their union.
func Pool(ss ...Sample) Sample {
	var n int64
	var sum float64
	for _, s := range ss {
		n += s.N
		sum += float64(s.N) * s.Mean
	}
	if n == 0 {
		return Sample{}
	}
	mean := sum / float64(n)
	var ss2 float64
	for _, s := range ss {
		d := s.Mean - mean
		ss2 += float64(s.N-1)*s.Stddev*s.Stddev + float64(s.N)*d*d
	}
	if n < 2 {
		return Sample{N: n, Mean: mean}
	}
	return Sample{N: n, Mean: mean, Stddev: math.Sqrt(ss2 / float64(n-1))}
}

// WelchT returns Welch's t statistic of a − b, t = (ā − b̄) / √(sa²/na +
// sb²/nb), and its Welch–Satterthwaite degrees of freedom.
func WelchT(a, b Sample) (t, df float64) {
	va := a.Stddev * a.Stddev / float64(a.N)
	vb := b.Stddev * b.Stddev / float64(b.N)
	se2 := va + vb
	if se2 == 0 {
		switch {
		case a.Mean == b.Mean:
			return 0, math.Inf(1)
		default:
			return math.Copysign(math.Inf(1), a.Mean-b.Mean), math.Inf(1)
		}
	}
	t = (a.Mean - b.Mean) / math.Sqrt(se2)
	df = se2 * se2 / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return t, df
}

// StudentTCDF is P(T ≤ t) for Student's t distribution with df degrees of
// freedom (df = +Inf gives the normal distribution), through the regularized
// incomplete beta function: P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
func StudentTCDF(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || math.IsNaN(df) || df <= 0:
		return math.NaN()
	case math.IsInf(t, 1):
		return 1
	case math.IsInf(t, -1):
		return 0
	case math.IsInf(df, 1) || df > 1e7:
		return 0.5 * math.Erfc(-t/math.Sqrt2)
	}
	tail := 0.5 * regIncBeta(df/2, 0.5, df/(df+t*t))
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (betacf), with the symmetry
// I_x(a, b) = 1 − I_{1−x}(b, a) for fast convergence.
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betacf(a, b, x) / a
	}
	return 1 - front*betacf(b, a, 1-x)/b
}

func betacf(a, b, x float64) float64 {
	const eps, tiny = 1e-15, 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// SeriesKeys are the keys that put a run into its series: the system, the
// SUT configuration and the workload, and the series key that joins them.
// Two runs are in one series exactly when all three agree.
type SeriesKeys struct {
	Key         string `json:"key"`
	SystemKey   string `json:"system_key"`
	ConfigKey   string `json:"config_key"`
	WorkloadKey string `json:"workload_key"`
}

// Keys returns the keys of r's series.
func (r *Run) Keys() SeriesKeys {
	return SeriesKeys{Key: r.SeriesKey, SystemKey: r.SystemKey, ConfigKey: r.ConfigKey, WorkloadKey: r.WorkloadKey}
}

// String is "KEY (system S, SUT configuration C, workload W)".
func (k SeriesKeys) String() string {
	return fmt.Sprintf("%s (system %s, SUT configuration %s, workload %s)", k.Key, k.SystemKey, k.ConfigKey, k.WorkloadKey)
}

// The components of a series key, as NearSeries.Differs and
// FieldDiff.Component name them.
const (
	ComponentSystem   = "system"
	ComponentConfig   = "sut_config"
	ComponentWorkload = "workload"
)

// ComponentsText is how components read in a sentence: "system, SUT
// configuration, workload".
func ComponentsText(cs []string) string {
	words := make([]string, len(cs))
	for i, c := range cs {
		words[i] = c
		if c == ComponentConfig {
			words[i] = "SUT configuration"
		}
	}
	return strings.Join(words, ", ")
}

// Differs returns the components of k that differ from o's, in the order
// system, SUT configuration, workload.
func (k SeriesKeys) Differs(o SeriesKeys) []string {
	var out []string
	if k.SystemKey != o.SystemKey {
		out = append(out, ComponentSystem)
	}
	if k.ConfigKey != o.ConfigKey {
		out = append(out, ComponentConfig)
	}
	if k.WorkloadKey != o.WorkloadKey {
		out = append(out, ComponentWorkload)
	}
	return out
}

// FieldDiff is one field of a run's identity whose value differs between
// the run judged and another series' newest run.
type FieldDiff struct {
	// Component is the key the field goes into (ComponentSystem,
	// ComponentConfig or ComponentWorkload).
	Component string `json:"component"`
	// Path is the field's dotted path in the component's document
	// (run.json's system, invocation.json's sut, or the workload: kind,
	// model, data_set, scenario, mode, arrival_mode, qsl and result.json's
	// settings and concurrency), array elements as [i].
	Path string `json:"path"`
	// Here is the value of the run judged and There the other run's, as
	// JSON; "" when the run has no such field.
	Here  string `json:"here"`
	There string `json:"there"`
}

// String is `path "there" there, "here" here`.
func (d FieldDiff) String() string {
	return fmt.Sprintf("%s %s there, %s here", d.Path, dash(d.There), dash(d.Here))
}

// NearSeries is a series close to the one of a run that has no baseline:
// which of its keys differ, and in which fields.
type NearSeries struct {
	Series
	// Differs names the components whose keys differ (ComponentSystem,
	// ComponentConfig, ComponentWorkload).
	Differs []string `json:"differs"`
	// Fields are the fields that differ between the run judged and the
	// series' newest run, at most maxFieldDiffs of each component; empty
	// when the component's key differs in a field the stored documents do
	// not show.
	Fields []FieldDiff `json:"fields,omitempty"`
}

// String describes the series in one line: its key, its runs and what
// differs.
func (n NearSeries) String() string {
	s := fmt.Sprintf("%s (%d runs, newest %d) differs in %s", n.Key, n.Runs, n.LatestID, ComponentsText(n.Differs))
	if len(n.Fields) > 0 {
		fields := make([]string, len(n.Fields))
		for i, f := range n.Fields {
			fields[i] = f.String()
		}
		s += ": " + strings.Join(fields, "; ")
	}
	return s
}

// maxNearSeries is how many nearest series Compare lists; maxFieldDiffs
// how many fields of one component a NearSeries lists.
const (
	maxNearSeries = 3
	maxFieldDiffs = 6
)

// NearestSeries returns up to three series other than run's, nearest
// first: those with the same workload (the same test) before others, then
// those that differ in fewer keys, then the newest. Each says which keys
// differ and in which fields of the stored documents.
func (s *Store) NearestSeries(ctx context.Context, run *Run) ([]NearSeries, error) {
	all, err := s.AllSeries(ctx)
	if err != nil {
		return nil, err
	}
	here := run.Keys()
	var near []NearSeries
	for _, x := range all {
		if x.Key == run.SeriesKey {
			continue
		}
		near = append(near, NearSeries{Series: x, Differs: here.Differs(SeriesKeys{Key: x.Key, SystemKey: x.SystemKey, ConfigKey: x.ConfigKey, WorkloadKey: x.WorkloadKey})})
	}
	slices.SortStableFunc(near, func(a, b NearSeries) int {
		aw, bw := slices.Contains(a.Differs, ComponentWorkload), slices.Contains(b.Differs, ComponentWorkload)
		if aw != bw {
			if aw {
				return 1
			}
			return -1
		}
		if c := len(a.Differs) - len(b.Differs); c != 0 {
			return c
		}
		return cmp.Compare(b.LatestID, a.LatestID)
	})
	near = near[:min(len(near), maxNearSeries)]
	hereDocs := identityDocs(run)
	for i := range near {
		other, err := s.Run(ctx, near[i].LatestID)
		if err != nil {
			return nil, err
		}
		thereDocs := identityDocs(other)
		for _, c := range near[i].Differs {
			near[i].Fields = append(near[i].Fields, diffDocs(c, hereDocs[c], thereDocs[c])...)
		}
	}
	return near, nil
}

// identityDocs returns, by component, the documents a run's keys are
// computed from, as far as the stored run keeps them: run.json's system
// (without the Go and aimeter versions, which the key leaves out),
// invocation.json's sut, and the workload's fields.
func identityDocs(r *Run) map[string]any {
	var sys map[string]any
	json.Unmarshal(r.System, &sys)
	for k := range sys {
		switch k {
		case "Hostname", "OS", "Arch", "CPU", "Cores", "MemoryBytes", "Accelerators":
		default:
			delete(sys, k)
		}
	}
	var cfg any
	json.Unmarshal(r.SUTConfig, &cfg)
	work := map[string]any{"kind": r.Kind, "model": r.Model, "data_set": r.DataSet, "scenario": r.Scenario, "mode": r.Mode, "arrival_mode": r.ArrivalMode, "qsl": r.QSL}
	var res map[string]any
	if json.Unmarshal(r.Result, &res) == nil {
		for _, k := range []string{"settings", "concurrency", "config"} {
			if v, ok := res[k]; ok {
				work[k] = v
			}
		}
	}
	return map[string]any{ComponentSystem: sys, ComponentConfig: cfg, ComponentWorkload: work}
}

// diffDocs returns the leaves of two JSON documents that differ, by path,
// at most maxFieldDiffs.
func diffDocs(component string, here, there any) []FieldDiff {
	h, t := map[string]string{}, map[string]string{}
	leaves("", here, h)
	leaves("", there, t)
	paths := make([]string, 0, len(h)+len(t))
	for p := range h {
		paths = append(paths, p)
	}
	for p := range t {
		if _, ok := h[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var out []FieldDiff
	for _, p := range paths {
		if h[p] != t[p] && len(out) < maxFieldDiffs {
			out = append(out, FieldDiff{Component: component, Path: p, Here: h[p], There: t[p]})
		}
	}
	return out
}

// leaves puts every leaf of doc into out by its path, as JSON.
func leaves(prefix string, doc any, out map[string]string) {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			leaves(p, x, out)
		}
	case []any:
		for i, x := range v {
			leaves(fmt.Sprintf("%s[%d]", prefix, i), x, out)
		}
	case nil:
		if prefix != "" {
			out[prefix] = "null"
		}
	default:
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
}

// BaselineSource says how Compare chose the baseline.
type BaselineSource string

const (
	// FromSeries: the earlier runs of the candidate's series.
	FromSeries BaselineSource = "series"
	// FromNamed: the other runs named beside the candidate.
	FromNamed BaselineSource = "named"
	// FromRun: a run picked by its ID (aimeter results compare --baseline
	// ID).
	FromRun BaselineSource = "run"
	// FromLatestOf: the newest run of a series recorded before the
	// candidate (--baseline latest-of:SERIES).
	FromLatestOf BaselineSource = "latest-of"
)

// BaselineChoice picks a baseline run explicitly; its zero value picks
// none (the earlier runs of the candidate's series are the baseline).
// At most one field is set.
type BaselineChoice struct {
	// RunID picks a stored run; 0 none.
	RunID int64
	// LatestOf picks the newest run of the series with this key that was
	// recorded before the candidate; "" none.
	LatestOf string
}

// IsZero reports whether c picks nothing.
func (c BaselineChoice) IsZero() bool { return c.RunID == 0 && c.LatestOf == "" }

// String is the choice as the command line spells it: the run's ID or
// latest-of:SERIES.
func (c BaselineChoice) String() string {
	if c.LatestOf != "" {
		return "latest-of:" + c.LatestOf
	}
	return strconv.FormatInt(c.RunID, 10)
}

// BaselineError is Compare's error when the baseline a BaselineChoice
// names is not there; it matches ErrNotFound under errors.Is.
type BaselineError struct {
	// Choice is the choice that found nothing.
	Choice BaselineChoice
	// Reason says why, in words.
	Reason string
}

func (e *BaselineError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *BaselineError) Is(target error) bool { return target == ErrNotFound }

// resolveBaseline returns the run c picks as the baseline of candidate.
func (s *Store) resolveBaseline(ctx context.Context, candidate *Run, c BaselineChoice) (*Run, error) {
	switch {
	case c.RunID != 0 && c.LatestOf != "":
		return nil, errors.New("store: a baseline choice sets a run ID or a series, not both")
	case c.RunID != 0:
		r, err := s.Run(ctx, c.RunID)
		if errors.Is(err, ErrNotFound) {
			return nil, &BaselineError{Choice: c, Reason: fmt.Sprintf("no run %d in the results store (aimeter results list shows the runs)", c.RunID)}
		}
		if err != nil {
			return nil, err
		}
		if r.ID == candidate.ID {
			return nil, &BaselineError{Choice: c, Reason: fmt.Sprintf("run %d is the run being judged; a run compared with itself never regresses", r.ID)}
		}
		return r, nil
	}
	runs, err := s.Runs(ctx, RunFilter{SeriesKey: c.LatestOf, BeforeID: candidate.ID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(runs) == 1 {
		return &runs[0], nil
	}
	exists, err := s.Runs(ctx, RunFilter{SeriesKey: c.LatestOf, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(exists) == 0 {
		return nil, &BaselineError{Choice: c, Reason: fmt.Sprintf("no series %s in the results store (aimeter results list shows each run's series key)", c.LatestOf)}
	}
	return nil, &BaselineError{Choice: c, Reason: fmt.Sprintf("series %s has no run recorded before run %d", c.LatestOf, candidate.ID)}
}
