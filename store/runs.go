package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// RunStatus is where a stored run stands.
type RunStatus string

const (
	// StatusRecorded: a run stored as it came (a local run, or an upload
	// not yet checked).
	StatusRecorded RunStatus = "recorded"
	// StatusVerified: the service checked the signature and digests and
	// recomputed the metrics, which agree.
	StatusVerified RunStatus = "verified"
	// StatusFlagged: kept, but something disagrees (its reason says what).
	StatusFlagged RunStatus = "flagged"
	// StatusRejected: refused; kept for the audit trail only.
	StatusRejected RunStatus = "rejected"
)

// Run is one stored run: one bundle, its verdict and headline metric and the
// keys that place it in a series.
type Run struct {
	// ID numbers the runs of the store from 1.
	ID int64 `json:"id"`
	// Key is unique and names the run's result directory.
	Key string `json:"key"`
	// TestItemID is the test item of a network test; "" for a local run.
	TestItemID string `json:"test_item_id,omitempty"`
	// Attempt is the attempt of the test item (1 for the first); 1 for a
	// local run.
	Attempt int `json:"attempt"`
	// Kind is "inference" or "training".
	Kind string `json:"kind"`
	// Scenario and Mode are LoadGen's (for a training run, the training
	// scenario and ""); ArrivalMode is the GB/T arrival mode, -1 for an
	// MLPerf run.
	Scenario    string `json:"scenario"`
	Mode        string `json:"mode"`
	ArrivalMode int    `json:"arrival_mode"`
	// Status and StatusReason say where the run stands.
	Status       RunStatus `json:"status"`
	StatusReason string    `json:"status_reason,omitempty"`
	// VerdictKind, VerdictPass and VerdictWord are result.json's verdict.
	VerdictKind string `json:"verdict_kind"`
	VerdictPass bool   `json:"verdict_pass"`
	VerdictWord string `json:"verdict_word"`
	// SUT and QSL are the names the SUT and QSL gave; Model and DataSet
	// what the SUT configuration names ("" when it names none).
	SUT     string `json:"sut"`
	QSL     string `json:"qsl"`
	Model   string `json:"model,omitempty"`
	DataSet string `json:"data_set,omitempty"`
	// SUTConfig is the SUT configuration (invocation.json's "sut"), {}
	// when the bundle has none; System is run.json's system.
	SUTConfig json.RawMessage `json:"sut_config"`
	System    json.RawMessage `json:"system"`
	// SystemKey, ConfigKey and WorkloadKey identify the system (host,
	// CPU, accelerators), the SUT configuration and the workload
	// (scenario, mode, arrival mode, model, data set, settings that shape
	// the load); SeriesKey joins the three: runs with the same SeriesKey
	// are one series whose history thresholds judge.
	SystemKey   string `json:"system_key"`
	ConfigKey   string `json:"config_key"`
	WorkloadKey string `json:"workload_key"`
	SeriesKey   string `json:"series_key"`
	// BundleDigest is the SHA-256 of the bundle's manifest.json, which
	// lists the digest of every other file.
	BundleDigest string `json:"bundle_digest"`
	// Headline is the run's main figure (result.json's headline); Name ""
	// when it measured none.
	HeadlineName  string  `json:"headline_name,omitempty"`
	HeadlineValue float64 `json:"headline_value"`
	HeadlineUnit  string  `json:"headline_unit,omitempty"`
	// Result is result.json (gbt_training.json for a training run) as
	// stored.
	Result json.RawMessage `json:"result"`
	// Version is the aimeter version that ran the test.
	Version string `json:"version"`
	// Source is where the bundle was ingested from (a directory, or the
	// service's upload label).
	Source string `json:"source,omitempty"`
	// Dir is the run's result directory, relative to the store's
	// FilesDir (slash-separated).
	Dir string `json:"dir"`
	// StartedAt is when the test started; RecordedAt when it was stored.
	StartedAt  time.Time `json:"started_at"`
	RecordedAt time.Time `json:"recorded_at"`
}

// Better says which way a metric improves.
type Better string

const (
	// Lower: smaller is better (latencies, error counts).
	Lower Better = "lower"
	// Higher: larger is better (throughput, accuracy).
	Higher Better = "higher"
	// Neither: not judged (counts, settings).
	Neither Better = ""
)

// Metric is one figure of a run. A scalar has Value only (Count 0 and the
// statistics nil); a distribution (latency_ns, ttft_ns, tpot_ns) has Value =
// Mean and the statistics of its samples, which is what a t-test between two
// runs needs.
type Metric struct {
	// Name is the figure's path in result.json ("headline",
	// "latency_ns.p99", "gbt.throughput.samples_per_s") or the name of a
	// distribution ("latency_ns").
	Name string `json:"name"`
	// Unit is the unit ("ns", "samples/s", …); "" when dimensionless.
	Unit string `json:"unit,omitempty"`
	// Better says which way the figure improves.
	Better Better `json:"better,omitempty"`
	// Value is the figure (a distribution's mean).
	Value float64 `json:"value"`
	// Count is the number of samples of a distribution; 0 for a scalar.
	Count int64 `json:"count,omitempty"`
	// The statistics of a distribution; nil for a scalar. Stddev is the
	// sample standard deviation (n − 1), computed from the records.
	Mean   *float64 `json:"mean,omitempty"`
	Stddev *float64 `json:"stddev,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	P50    *float64 `json:"p50,omitempty"`
	P90    *float64 `json:"p90,omitempty"`
	P95    *float64 `json:"p95,omitempty"`
	P99    *float64 `json:"p99,omitempty"`
	P999   *float64 `json:"p99_9,omitempty"`
}

// Artifact is one file of a stored run's bundle.
type Artifact struct {
	// Name is the file's slash-separated path inside the bundle.
	Name string `json:"name"`
	// Role is the manifest's role ("raw", "derived", "manifest").
	Role string `json:"role"`
	// SHA256 is the hex digest and Bytes the size of the stored file.
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	// Path is where the bytes are kept, relative to the store's FilesDir
	// (slash-separated).
	Path string `json:"path"`
}

// RunFilter selects runs; its zero value selects every run.
type RunFilter struct {
	// TestItemID selects a test item's runs; "" any (Local selects the
	// local runs only).
	TestItemID string
	// Local selects the runs of no test item.
	Local bool
	// SeriesKey selects one series; "" any.
	SeriesKey string
	// BeforeID selects runs older than this ID; 0 no bound.
	BeforeID int64
	// BundleDigest selects the runs of one bundle (the SHA-256 of its
	// manifest.json, hex): a service refuses a replayed upload by it; ""
	// any.
	BundleDigest string
	// Limit is the most runs returned; 0 all.
	Limit int
}

const runColumns = `id, run_key, test_item_id, attempt, kind, scenario, mode, arrival_mode, status, status_reason,
 verdict_kind, verdict_pass, verdict_word, sut, qsl, model, data_set, sut_config, system_info,
 system_key, config_key, workload_key, series_key, bundle_digest, headline_name, headline_value, headline_unit,
 result_json, version, source, dir, started_at, recorded_at`

func scanRun(row interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var item sql.NullString
	var pass int64
	var cfg, sys, res string
	var started, recorded int64
	err := row.Scan(&r.ID, &r.Key, &item, &r.Attempt, &r.Kind, &r.Scenario, &r.Mode, &r.ArrivalMode, &r.Status, &r.StatusReason,
		&r.VerdictKind, &pass, &r.VerdictWord, &r.SUT, &r.QSL, &r.Model, &r.DataSet, &cfg, &sys,
		&r.SystemKey, &r.ConfigKey, &r.WorkloadKey, &r.SeriesKey, &r.BundleDigest, &r.HeadlineName, &r.HeadlineValue, &r.HeadlineUnit,
		&res, &r.Version, &r.Source, &r.Dir, &started, &recorded)
	if err != nil {
		return nil, err
	}
	r.TestItemID = item.String
	r.VerdictPass = pass != 0
	r.SUTConfig, r.System, r.Result = json.RawMessage(cfg), json.RawMessage(sys), json.RawMessage(res)
	r.StartedAt, r.RecordedAt = fromNanos(started), fromNanos(recorded)
	return &r, nil
}

// Run returns the run id; an error wrapping ErrNotFound when there is none.
func (s *Store) Run(ctx context.Context, id int64) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+runColumns+` FROM runs WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %d: %w", id, err)
	}
	return r, nil
}

// Runs returns the runs f selects, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	var where []string
	var args []any
	switch {
	case f.Local:
		where = append(where, "test_item_id IS NULL")
	case f.TestItemID != "":
		where = append(where, "test_item_id = ?")
		args = append(args, f.TestItemID)
	}
	if f.SeriesKey != "" {
		where = append(where, "series_key = ?")
		args = append(args, f.SeriesKey)
	}
	if f.BundleDigest != "" {
		where = append(where, "bundle_digest = ?")
		args = append(args, f.BundleDigest)
	}
	if f.BeforeID > 0 {
		where = append(where, "id < ?")
		args = append(args, f.BeforeID)
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: runs: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// Metrics returns the metrics of run id, by name.
func (s *Store) Metrics(ctx context.Context, id int64) ([]Metric, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT name, unit, better, value, count, mean, stddev, min, max, p50, p90, p95, p99, p999 FROM metrics WHERE run_id = ? ORDER BY name`), id)
	if err != nil {
		return nil, fmt.Errorf("store: metrics of run %d: %w", id, err)
	}
	defer rows.Close()
	var out []Metric
	for rows.Next() {
		var m Metric
		var stats [9]sql.NullFloat64
		if err := rows.Scan(&m.Name, &m.Unit, &m.Better, &m.Value, &m.Count,
			&stats[0], &stats[1], &stats[2], &stats[3], &stats[4], &stats[5], &stats[6], &stats[7], &stats[8]); err != nil {
			return nil, fmt.Errorf("store: metrics of run %d: %w", id, err)
		}
		ptrs := []**float64{&m.Mean, &m.Stddev, &m.Min, &m.Max, &m.P50, &m.P90, &m.P95, &m.P99, &m.P999}
		for i, p := range ptrs {
			if stats[i].Valid {
				v := stats[i].Float64
				*p = &v
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Artifacts returns the files of run id, by name.
func (s *Store) Artifacts(ctx context.Context, id int64) ([]Artifact, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT name, role, sha256, bytes, path FROM artifacts WHERE run_id = ? ORDER BY name`), id)
	if err != nil {
		return nil, fmt.Errorf("store: artifacts of run %d: %w", id, err)
	}
	defer rows.Close()
	var out []Artifact
	for rows.Next() {
		var a Artifact
		if err := rows.Scan(&a.Name, &a.Role, &a.SHA256, &a.Bytes, &a.Path); err != nil {
			return nil, fmt.Errorf("store: artifacts of run %d: %w", id, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Path returns the absolute path of a path relative to FilesDir (an
// Artifact's Path or a Run's Dir).
func (s *Store) Path(rel string) string {
	return filepath.Join(s.filesDir, filepath.FromSlash(rel))
}

// SetRunStatus sets a run's status and reason and appends a run_status
// event.
func (s *Store) SetRunStatus(ctx context.Context, id int64, status RunStatus, reason string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var item sql.NullString
		var attempt int
		err := tx.QueryRowContext(ctx, s.rebind(`SELECT test_item_id, attempt FROM runs WHERE id = ?`), id).Scan(&item, &attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: run %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: run %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE runs SET status = ?, status_reason = ? WHERE id = ?`), string(status), reason, id); err != nil {
			return fmt.Errorf("store: run %d: %w", id, err)
		}
		detail, _ := json.Marshal(map[string]string{"status": string(status), "reason": reason})
		_, err = s.appendEvent(ctx, tx, Event{TestItemID: item.String, RunID: id, Attempt: attempt, Kind: EventRunStatus, Detail: detail})
		return err
	})
}

// Series is a group of runs of the same system, SUT configuration and
// workload.
type Series struct {
	Key         string `json:"key"`
	SystemKey   string `json:"system_key"`
	ConfigKey   string `json:"config_key"`
	WorkloadKey string `json:"workload_key"`
	// Runs counts the series' runs; LatestID is its newest.
	Runs     int   `json:"runs"`
	LatestID int64 `json:"latest_id"`
}

// AllSeries returns every series, the one with the newest run first.
func (s *Store) AllSeries(ctx context.Context) ([]Series, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT series_key, MIN(system_key), MIN(config_key), MIN(workload_key), COUNT(*), MAX(id) FROM runs GROUP BY series_key ORDER BY MAX(id) DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: series: %w", err)
	}
	defer rows.Close()
	var out []Series
	for rows.Next() {
		var x Series
		if err := rows.Scan(&x.Key, &x.SystemKey, &x.ConfigKey, &x.WorkloadKey, &x.Runs, &x.LatestID); err != nil {
			return nil, fmt.Errorf("store: series: %w", err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// VerifyRun rereads every stored file of run id and checks its size and
// SHA-256 against the artifact rows; the error names the first file that
// differs or is missing.
func (s *Store) VerifyRun(ctx context.Context, id int64) error {
	arts, err := s.Artifacts(ctx, id)
	if err != nil {
		return err
	}
	if len(arts) == 0 {
		return fmt.Errorf("store: run %d has no files: %w", id, ErrNotFound)
	}
	for _, a := range arts {
		sum, n, err := hashFile(s.Path(a.Path))
		if err != nil {
			return fmt.Errorf("store: run %d: %s: %w", id, a.Name, err)
		}
		if sum != a.SHA256 || n != a.Bytes {
			return fmt.Errorf("store: run %d: %s has SHA-256 %s, %d bytes; stored as %s, %d bytes: the file changed", id, a.Name, sum, n, a.SHA256, a.Bytes)
		}
	}
	return nil
}
