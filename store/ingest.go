package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/stats"
	"aimeter/train/trainbundle"
)

// LocalDir is the directory, under FilesDir, of the runs of no test item.
const LocalDir = "local"

// stagingDir is the directory, under FilesDir, where Ingest assembles a
// run's files before they move into place: one directory per open Store
// (staging.go); Open removes those of Stores that died.
const stagingDir = ".staging"

// IngestOptions control Ingest. The zero value records a local run.
type IngestOptions struct {
	// TestItemID is the test item the run belongs to; "" for a local run.
	// The item must exist.
	TestItemID string
	// Attempt is the run's attempt of its test item; 0 means the item's
	// latest claimed attempt (ClaimAttempt), or 1 for a local run or an
	// item that claimed none.
	Attempt int
	// NextAttempt, for a test item's run with Attempt 0, gives the run the
	// item's latest claimed attempt when no run holds it yet, and else
	// claims the next one (as ClaimAttempt does, with its errors
	// ErrRetestsExhausted and ErrExpired), in the transaction that stores
	// the run: two stores at once, from one process or several sharing
	// the database, never take the same attempt or waste one.
	NextAttempt bool
	// Status is the run's status; "" means StatusRecorded. StatusReason
	// says why.
	Status       RunStatus
	StatusReason string
	// Source records where the bundle came from; "" means the absolute
	// directory.
	Source string
	// Bundle is the bundle in the directory, as bundle.Write or bundle.Read
	// left it (its Manifest set), to save reading it again; nil reads and
	// verifies it with bundle.Read.
	Bundle *bundle.Bundle
	// Derived is derived.Of(Bundle) as the run already used it, to reuse
	// the metrics it computed; nil makes one.
	Derived *derived.Set
	// Move moves the files into the store instead of linking or copying
	// them (for a staging directory the caller owns); the directory is
	// left empty of bundle files on success.
	Move bool
	// Link hard-links the files into the store where it can instead of
	// copying them: cheaper, but a later edit in place of a file of dir
	// (bundle.Write never does one; an editor may) then changes the
	// stored copy too, which VerifyRun would report. The zero value
	// copies.
	Link bool
	// UploadID, for a test item's run, is the upload ID the bundle came
	// under: Ingest spends it in the transaction that stores the run, and
	// refuses, with an *UploadSpentError, an ID that a stored run spent
	// already (see BeginUpload). "" spends none.
	UploadID string
	// Events, when not nil, returns events to append after run_recorded
	// in the transaction that stores the run, given the run with its ID
	// and attempt: they commit with the run or not at all. An event's
	// zero TestItemID, RunID and Attempt are set to the run's.
	Events func(run *Run) []Event
}

// RecordBundle stores the bundle in dir as a local run: Ingest with zero
// options.
func RecordBundle(ctx context.Context, s *Store, dir string) (*Run, error) {
	return s.Ingest(ctx, dir, IngestOptions{})
}

// Ingest stores the run bundle in dir: a runs row, its metrics (every number
// of result.json, and the latency distributions computed from the records),
// an artifact row per file and a run_recorded event, all in one transaction;
// and the files themselves in the run's own result directory,
// FilesDir/<test item or "local">/<run key>/ (GB-7.7.1-l). Each file is
// copied (or moved or linked, as opts say) into a staging directory first,
// and checked against the manifest's SHA-256 there; the staged directory is renamed into place
// only when every row is written, just before the commit. A crash at any
// point leaves no row without its files and no directory that a row names
// half-filled.
//
// A test item's run is refused with a *DuplicateBundleError (wrapping
// ErrDuplicate) when a run with the same bundle digest is stored already,
// and with an *UploadSpentError when opts.UploadID was spent by another
// run: the database's unique keys decide, so two processes sharing the
// database cannot both store one bundle or use one upload ID, and a
// refused or failed ingest takes no attempt and spends no upload ID. Both
// are checked before the files are staged as well, so that a replay costs
// no copy.
//
// A process killed at any moment of Ingest leaves no row of the run; the
// files it staged and a result directory it moved into place without
// committing are removed by the next Open on the files directory.
func (s *Store) Ingest(ctx context.Context, dir string, opts IngestOptions) (*Run, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	b := opts.Bundle
	if b == nil {
		if b, err = derived.Read(abs); err != nil {
			return nil, fmt.Errorf("store: read bundle: %w", err)
		}
	}
	if b.Manifest == nil {
		if b.Manifest, err = bundle.ReadManifest(abs); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	manifestBytes, err := os.ReadFile(filepath.Join(abs, bundle.ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	digest := sha256.Sum256(manifestBytes)

	set := opts.Derived
	if set == nil || set.Bundle() != b {
		set = derived.Of(b)
	}
	run, metrics, err := describe(set)
	if err != nil {
		return nil, err
	}
	run.BundleDigest = hex.EncodeToString(digest[:])
	run.TestItemID = opts.TestItemID
	run.Status = opts.Status
	if run.Status == "" {
		run.Status = StatusRecorded
	}
	run.StatusReason = opts.StatusReason
	run.Source = opts.Source
	if run.Source == "" {
		run.Source = abs
	}
	run.RecordedAt = s.now().UTC()
	run.Key = runKey(run.RecordedAt.Format("20060102T150405Z"))
	parent := LocalDir
	if opts.TestItemID != "" {
		if strings.ContainsAny(opts.TestItemID, `/\`) || opts.TestItemID == "." || opts.TestItemID == ".." || opts.TestItemID == LocalDir || strings.HasPrefix(opts.TestItemID, ".") {
			return nil, fmt.Errorf("store: test item id %q cannot name a directory", opts.TestItemID)
		}
		parent = opts.TestItemID
	}
	run.Dir = parent + "/" + run.Key
	if opts.UploadID != "" && opts.TestItemID == "" {
		return nil, errors.New("store: an upload ID needs a test item")
	}
	if opts.TestItemID != "" {
		if err := s.storedAlready(ctx, run.BundleDigest, opts); err != nil {
			return nil, err
		}
	}

	// Stage the files.
	stagingRoot, err := s.ownStaging()
	if err != nil {
		return nil, err
	}
	staged := filepath.Join(stagingRoot, run.Key)
	if err := os.MkdirAll(staged, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer os.RemoveAll(staged)
	entries := slices.Clone(b.Manifest.Files)
	entries = append(entries, bundle.ManifestEntry{Name: bundle.ManifestFile, Role: "manifest", Bytes: int64(len(manifestBytes)), SHA256: run.BundleDigest})
	for _, e := range entries {
		if !safeName(e.Name) {
			return nil, fmt.Errorf("store: bundle file name %q leaves the bundle", e.Name)
		}
	}
	// The files are placed in parallel: most of the time is each file's
	// fsync, which the file system can overlap.
	arts := make([]Artifact, len(entries))
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, e := range entries {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			src := filepath.Join(abs, filepath.FromSlash(e.Name))
			dst := filepath.Join(staged, filepath.FromSlash(e.Name))
			sum, n, err := placeFile(src, dst, opts.Move, opts.Link)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("store: %s: %w", e.Name, err)
			case sum != e.SHA256 || n != e.Bytes:
				errs[i] = fmt.Errorf("store: %s: SHA-256 %s, %d bytes, but the manifest says %s, %d bytes: the file changed since the run wrote it", e.Name, sum, n, e.SHA256, e.Bytes)
			}
			arts[i] = Artifact{Name: e.Name, Role: string(e.Role), SHA256: sum, Bytes: n, Path: run.Dir + "/" + e.Name}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	synced := map[string]bool{}
	for _, e := range entries {
		if d := filepath.Dir(filepath.Join(staged, filepath.FromSlash(e.Name))); !synced[d] {
			synced[d] = true
			syncDir(d)
		}
	}

	final := s.Path(run.Dir)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if opts.TestItemID != "" {
			if err := s.ingestAttempt(ctx, tx, run, opts); err != nil {
				return err
			}
		} else {
			run.Attempt = max(opts.Attempt, 1)
		}
		if err := s.insertRun(ctx, tx, run); err != nil {
			if run.TestItemID != "" && isUniqueViolation(err, "runs_item_bundle", "runs.bundle_digest") {
				return &DuplicateBundleError{Digest: run.BundleDigest}
			}
			return err
		}
		for _, m := range metrics {
			if err := s.insertMetric(ctx, tx, run.ID, m); err != nil {
				return err
			}
		}
		for _, a := range arts {
			if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO artifacts (run_id, name, role, sha256, bytes, path) VALUES (?, ?, ?, ?, ?, ?)`),
				run.ID, a.Name, a.Role, a.SHA256, a.Bytes, a.Path); err != nil {
				return fmt.Errorf("store: artifact %s: %w", a.Name, err)
			}
		}
		ev := map[string]any{"key": run.Key, "bundle_digest": run.BundleDigest, "status": run.Status, "verdict": run.VerdictWord}
		if opts.UploadID != "" {
			// uploadSpent finds the run of a spent upload ID here.
			ev["upload_id"] = opts.UploadID
			if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO uploads (test_item_id, upload_id, received_at) VALUES (?, ?, ?)`),
				run.TestItemID, opts.UploadID, s.now().UnixNano()); err != nil {
				if isUniqueViolation(err, "uploads_pkey", "uploads.upload_id") {
					return &UploadSpentError{TestItemID: run.TestItemID, UploadID: opts.UploadID}
				}
				return fmt.Errorf("store: upload %s: %w", opts.UploadID, err)
			}
		}
		detail, _ := json.Marshal(ev)
		if _, err := s.appendEvent(ctx, tx, Event{TestItemID: run.TestItemID, RunID: run.ID, Attempt: run.Attempt, Kind: EventRunRecorded, Detail: detail}); err != nil {
			return err
		}
		if opts.Events != nil {
			for _, e := range opts.Events(run) {
				if e.TestItemID == "" {
					e.TestItemID = run.TestItemID
				}
				if e.RunID == 0 {
					e.RunID = run.ID
				}
				if e.Attempt == 0 {
					e.Attempt = run.Attempt
				}
				if _, err := s.appendEvent(ctx, tx, e); err != nil {
					return err
				}
			}
		}
		// Every row is written: move the files into place, then commit.
		if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if err := markPending(stagingRoot, run.Key, run.Dir); err != nil {
			return fmt.Errorf("store: mark the result directory pending: %w", err)
		}
		if err := os.Rename(staged, final); err != nil {
			return fmt.Errorf("store: move the result directory into place: %w", err)
		}
		syncDir(filepath.Dir(final))
		if s.beforeCommit != nil {
			return s.beforeCommit(ctx, run)
		}
		return nil
	})
	if err != nil {
		committed, known := false, true
		var ce *commitError
		if errors.As(err, &ce) {
			committed, known = s.runCommitted(run.Key)
		}
		switch {
		case committed:
			// The commit's answer was lost, but it committed.
			clearPending(stagingRoot, run.Key)
			return run, nil
		case known:
			os.RemoveAll(final)
			clearPending(stagingRoot, run.Key)
		}
		// Else whether it committed is unknown (the database went away
		// during the commit): the files stay in place with their
		// marker, for the sweep of a later Open to decide.
		var dup *DuplicateBundleError
		if errors.As(err, &dup) && dup.RunID == 0 {
			// The other copy committed first: name it.
			if prev, perr := s.Runs(ctx, RunFilter{BundleDigest: dup.Digest, Limit: 1}); perr == nil && len(prev) > 0 {
				dup.RunID, dup.TestItemID = prev[0].ID, prev[0].TestItemID
			}
		}
		var spent *UploadSpentError
		if errors.As(err, &spent) && spent.RunID == 0 {
			// The other use of the ID committed first: name its run.
			var named *UploadSpentError
			if errors.As(s.uploadSpent(ctx, s.db, spent.TestItemID, spent.UploadID), &named) {
				*spent = *named
			}
		}
		return nil, err
	}
	clearPending(stagingRoot, run.Key)
	return run, nil
}

// CheckNotStored returns a *DuplicateBundleError (which wraps ErrDuplicate)
// when a test item's run with the bundle manifest digest is stored already,
// nil when none is. It lets a service refuse a replay before it spends
// memory recomputing the bundle; Ingest checks again in its transaction,
// which is what decides between two uploads at once.
func (s *Store) CheckNotStored(ctx context.Context, digest string) error {
	return s.storedAlready(ctx, digest, IngestOptions{})
}

// storedAlready refuses, before any file is staged, a test item's bundle
// stored already or an upload ID spent already. The transaction checks
// again: this only spares a replay the copy.
func (s *Store) storedAlready(ctx context.Context, digest string, opts IngestOptions) error {
	if err := s.bundleStored(ctx, s.db, digest, opts.TestItemID); err != nil {
		return err
	}
	if opts.UploadID != "" {
		return s.uploadSpent(ctx, s.db, opts.TestItemID, opts.UploadID)
	}
	return nil
}

// bundleStored returns a *DuplicateBundleError when a test item's run with
// the bundle digest is stored (as q sees it: the database, or a
// transaction), nil when none is; item names the test item in any other
// error.
func (s *Store) bundleStored(ctx context.Context, q queryer, digest, item string) error {
	var prevID int64
	var prevItem sql.NullString
	err := q.QueryRowContext(ctx, s.rebind(`SELECT id, test_item_id FROM runs WHERE bundle_digest = ? AND test_item_id IS NOT NULL LIMIT 1`), digest).Scan(&prevID, &prevItem)
	switch {
	case err == nil:
		return &DuplicateBundleError{Digest: digest, RunID: prevID, TestItemID: prevItem.String}
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: test item %q: %w", item, err)
	}
	return nil
}

// runCommitted says whether the run key has a row, reading with a context
// of its own (the caller's may be what ended the commit); known is false
// when the database cannot say.
func (s *Store) runCommitted(key string) (committed, known bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := s.db.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM runs WHERE run_key = ?`), key).Scan(&n); err != nil {
		return false, false
	}
	return n > 0, true
}

// ingestAttempt sets the attempt of a test item's run within Ingest's
// transaction: it locks the item's row (PostgreSQL; SQLite's write lock
// holds the whole database), refuses a bundle stored already, and takes or
// claims the attempt as opts say.
func (s *Store) ingestAttempt(ctx context.Context, tx *sql.Tx, run *Run, opts IngestOptions) error {
	it, err := s.lockItem(ctx, tx, opts.TestItemID)
	if err != nil {
		return err
	}
	// A copy committed before this transaction began its wait is seen
	// here; one committed later trips the unique index at the insert.
	if err := s.bundleStored(ctx, tx, run.BundleDigest, opts.TestItemID); err != nil {
		return err
	}
	run.Attempt = opts.Attempt
	if run.Attempt != 0 {
		return nil
	}
	if !opts.NextAttempt {
		run.Attempt = max(it.Attempts, 1)
		return nil
	}
	if it.Attempts > 0 {
		var n int
		if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM runs WHERE test_item_id = ? AND attempt = ?`), it.ID, it.Attempts).Scan(&n); err != nil {
			return fmt.Errorf("store: test item %q: %w", it.ID, err)
		}
		if n == 0 {
			run.Attempt = it.Attempts
			return nil
		}
	}
	if !it.ExpiresAt.IsZero() && !s.now().Before(it.ExpiresAt) {
		return fmt.Errorf("store: test item %s: expired at %s: %w", it.ID, it.ExpiresAt.Format(time.RFC3339), ErrExpired)
	}
	if it.Attempts >= 1+it.RetestAllowance {
		return fmt.Errorf("store: test item %s: %d attempts used, %d retests allowed: %w", it.ID, it.Attempts, it.RetestAllowance, ErrRetestsExhausted)
	}
	run.Attempt = it.Attempts + 1
	if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE test_items SET attempts = ? WHERE id = ?`), run.Attempt, it.ID); err != nil {
		return fmt.Errorf("store: test item %s: %w", it.ID, err)
	}
	_, err = s.appendEvent(ctx, tx, Event{TestItemID: it.ID, Attempt: run.Attempt, Kind: EventAttemptClaimed})
	return err
}

func (s *Store) insertRun(ctx context.Context, tx *sql.Tx, r *Run) error {
	var item any
	if r.TestItemID != "" {
		item = r.TestItemID
	}
	q := s.rebind(`INSERT INTO runs (run_key, test_item_id, attempt, kind, scenario, mode, arrival_mode, status, status_reason,
 verdict_kind, verdict_pass, verdict_word, sut, qsl, model, data_set, sut_config, system_info,
 system_key, config_key, workload_key, series_key, bundle_digest, headline_name, headline_value, headline_unit,
 result_json, version, source, dir, started_at, recorded_at)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	err := tx.QueryRowContext(ctx, q, r.Key, item, r.Attempt, r.Kind, r.Scenario, r.Mode, r.ArrivalMode, string(r.Status), r.StatusReason,
		r.VerdictKind, boolInt(r.VerdictPass), r.VerdictWord, r.SUT, r.QSL, r.Model, r.DataSet, string(r.SUTConfig), string(r.System),
		r.SystemKey, r.ConfigKey, r.WorkloadKey, r.SeriesKey, r.BundleDigest, r.HeadlineName, r.HeadlineValue, r.HeadlineUnit,
		string(r.Result), r.Version, r.Source, r.Dir, nanos(r.StartedAt), nanos(r.RecordedAt)).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("store: insert run: %w", err)
	}
	return nil
}

func (s *Store) insertMetric(ctx context.Context, tx *sql.Tx, id int64, m Metric) error {
	f := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	_, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO metrics (run_id, name, unit, better, value, count, mean, stddev, min, max, p50, p90, p95, p99, p999) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		id, m.Name, m.Unit, string(m.Better), m.Value, m.Count, f(m.Mean), f(m.Stddev), f(m.Min), f(m.Max), f(m.P50), f(m.P90), f(m.P95), f(m.P99), f(m.P999))
	if err != nil {
		return fmt.Errorf("store: metric %s: %w", m.Name, err)
	}
	return nil
}

// runKey returns a unique key: the time and 8 random hex digits.
func runKey(stamp string) string {
	var r [4]byte
	rand.Read(r[:])
	return stamp + "-" + hex.EncodeToString(r[:])
}

// safeName says whether a manifest name stays inside its bundle.
func safeName(name string) bool {
	if name == "" || strings.Contains(name, `\`) || path.IsAbs(name) {
		return false
	}
	c := path.Clean(name)
	return c == name && c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

// placeFile puts src at dst (moved, hard-linked or copied) and returns the
// SHA-256 and size of what is at dst.
func placeFile(src, dst string, move, link bool) (string, int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, err
	}
	placed := false
	if move {
		placed = os.Rename(src, dst) == nil
	}
	if !placed && link {
		placed = os.Link(src, dst) == nil
	}
	if !placed {
		if err := copyFile(src, dst); err != nil {
			return "", 0, err
		}
	}
	return hashFile(dst)
}

// hashFile returns the SHA-256 and size of a file.
func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, bundle.FileMode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// describe derives the run row and its metrics from a bundle.
func describe(set *derived.Set) (*Run, []Metric, error) {
	b := set.Bundle()
	r := &Run{Kind: "inference", ArrivalMode: -1, SUTConfig: json.RawMessage("{}"), Version: b.Version}
	sys, err := json.Marshal(b.System)
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	r.System = sys
	if invocation.Of(b) != nil {
		cfg, err := json.Marshal(invocation.Of(b).SUT)
		if err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
		r.SUTConfig = cfg
	}
	r.Model = findString(r.SUTConfig, "model", "served_model")
	r.DataSet = findString(r.SUTConfig, "dataset", "data_set")
	v, err := set.Verdict()
	if err != nil {
		return nil, nil, fmt.Errorf("store: verdict: %w", err)
	}
	r.VerdictKind, r.VerdictPass, r.VerdictWord = string(v.Kind), v.Pass, v.Word()

	var metrics []Metric
	var shape any
	if trainbundle.Of(b) != nil {
		r.Kind, r.Mode = "training", "training"
		tr, err := set.TrainingResult()
		if err != nil {
			return nil, nil, fmt.Errorf("store: training result: %w", err)
		}
		if tr.Scenario != nil {
			r.Scenario = tr.Scenario.ID
		}
		if r.Result, err = json.Marshal(tr); err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
		var doc any
		if tr.Metrics != nil {
			mb, _ := json.Marshal(tr.Metrics)
			json.Unmarshal(mb, &doc)
		}
		metrics = flatten("", doc, nil)
		for _, m := range metrics {
			if m.Name == "mean_t_tr_ms" {
				// The headline of a training run: GB/T 45087's mean
				// time to train.
				r.HeadlineName, r.HeadlineValue, r.HeadlineUnit = "Mean time to train", m.Value, "ms"
				metrics = append(metrics, Metric{Name: "headline", Unit: "ms", Better: Lower, Value: m.Value})
				break
			}
		}
		shape = map[string]any{"config": tr.Config, "scenario": r.Scenario}
		r.StartedAt = trainbundle.Of(b).Run.Origin.UTC()
		if b.System.Hostname == "" && b.System.CPU == "" {
			b.System = trainbundle.Of(b).Run.System
			if r.System, err = json.Marshal(b.System); err != nil {
				return nil, nil, fmt.Errorf("store: %w", err)
			}
		}
	} else {
		res, err := set.Result()
		if err != nil {
			return nil, nil, fmt.Errorf("store: result: %w", err)
		}
		var buf bytes.Buffer
		if err := derived.WriteResult(&buf, res); err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
		r.Result = json.RawMessage(bytes.TrimSpace(buf.Bytes()))
		r.Scenario, r.Mode, r.ArrivalMode = res.Scenario, res.Mode, res.ArrivalMode
		r.SUT, r.QSL = res.SUT, res.QSL
		if res.Headline != nil {
			r.HeadlineName, r.HeadlineValue, r.HeadlineUnit = res.Headline.Name, res.Headline.Value, res.Headline.Unit
		}
		if b.Result != nil {
			r.StartedAt = b.Result.StartTime.UTC()
		}
		var doc map[string]any
		if err := json.Unmarshal(r.Result, &doc); err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
		delete(doc, "settings")
		delete(doc, "headline")
		delete(doc, "arrival_mode")
		delete(doc, "concurrency")
		metrics = flatten("", doc, nil)
		if res.Headline != nil {
			metrics = append(metrics, Metric{Name: "headline", Unit: res.Headline.Unit, Better: headlineBetter(res.Headline.Name, res.Headline.Unit), Value: res.Headline.Value})
		}
		metrics = append(metrics, distributions(b.Result, res)...)
		shape = map[string]any{"scenario": res.Scenario, "mode": res.Mode, "arrival_mode": res.ArrivalMode, "concurrency": res.Concurrency, "settings": res.Settings, "qsl": res.QSL}
	}
	slices.SortFunc(metrics, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	metrics = slices.CompactFunc(metrics, func(a, b Metric) bool { return a.Name == b.Name })

	r.SystemKey = keyOf(map[string]any{"hostname": b.System.Hostname, "os": b.System.OS, "arch": b.System.Arch, "cpu": b.System.CPU, "cores": b.System.Cores, "memory": b.System.MemoryBytes, "accelerators": b.System.Accelerators})
	r.ConfigKey = keyOf(r.SUTConfig)
	r.WorkloadKey = keyOf(map[string]any{"kind": r.Kind, "model": r.Model, "data_set": r.DataSet, "shape": shape})
	r.SeriesKey = keyOf([]string{r.SystemKey, r.ConfigKey, r.WorkloadKey})
	return r, metrics, nil
}

// keyOf is the first 16 hex digits of the SHA-256 of v's JSON (maps are
// encoded with sorted keys, so equal values give equal keys).
func keyOf(v any) string {
	b, _ := json.Marshal(v)
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			b, _ = json.Marshal(x)
		}
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// findString returns the first non-empty string value of any of keys found
// anywhere in the JSON document doc.
func findString(doc json.RawMessage, keys ...string) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return ""
	}
	var walk func(v any) string
	walk = func(v any) string {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		for _, k := range keys {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if s := walk(m[k]); s != "" {
				return s
			}
		}
		return ""
	}
	return walk(v)
}

// flatten returns a metric for every number and boolean leaf of doc outside
// arrays, named by its dotted path.
func flatten(prefix string, doc any, out []Metric) []Metric {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			out = flatten(name, x, out)
		}
	case float64:
		out = append(out, Metric{Name: prefix, Unit: unitOf(prefix), Better: betterOf(prefix), Value: v})
	case bool:
		out = append(out, Metric{Name: prefix, Value: float64(boolInt(v))})
	}
	return out
}

// unitOf guesses a flattened figure's unit from its name.
func unitOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".count"):
		return "" // how many values a distribution holds, whatever their unit
	case strings.Contains(name, "_ns."), strings.HasSuffix(name, "_ns"):
		return "ns"
	case strings.HasSuffix(name, "per_s"), strings.HasSuffix(name, "_per_second"):
		return "1/s"
	case strings.HasSuffix(name, "_w"):
		return "W"
	case strings.HasSuffix(name, "_j"):
		return "J"
	}
	return ""
}

// betterOf says which way a flattened figure of result.json improves.
func betterOf(name string) Better {
	last := name[strings.LastIndex(name, ".")+1:]
	switch {
	case strings.HasPrefix(name, "latency_ns."), strings.HasPrefix(name, "tokens.ttft_ns."), strings.HasPrefix(name, "tokens.tpot_ns."):
		if last == "count" {
			return Neither
		}
		return Lower
	case last == "failed", last == "lost", last == "error_rate", last == "rate", last == "lost_samples", last == "failed_samples":
		return Lower
	case strings.HasSuffix(last, "per_s"), last == "ok", last == "Value", last == "value":
		return Higher
	case strings.HasPrefix(name, "power.") && (last == "energy_j" || last == "avg_w" || last == "peak_w"):
		return Lower
	// Training (gbt_training.json's metrics): throughputs and efficiency
	// higher, times to train lower.
	case last == "th", last == "th_cl", strings.HasPrefix(last, "training_efficiency"):
		return Higher
	case last == "mean_t_tr_ms", last == "mean_min":
		return Lower
	}
	return Neither
}

// headlineBetter says which way LoadGen's headline metric improves: a
// latency (SingleStream, MultiStream) is better lower, a rate higher.
func headlineBetter(name, unit string) Better {
	l := strings.ToLower(name + " " + unit)
	if strings.Contains(l, "latency") || strings.HasSuffix(unit, "ns") || unit == "ms" || unit == "s" {
		return Lower
	}
	return Higher
}

// distributions returns latency_ns (and, for a token-latency run, ttft_ns)
// of the reported pass: result.json's percentiles with the exact mean and
// sample standard deviation of the same latencies (the loadgen Summary's
// moments: completed samples, lost ones censored at the end of the pass,
// failed ones left out).
func distributions(res *loadgen.Result, r *derived.ResultJSON) []Metric {
	if res == nil || res.Summary == nil || r.LatencyNs == nil {
		return nil
	}
	out := []Metric{dist("latency_ns", *r.LatencyNs, res.Summary.SampleLatencyMoments)}
	if r.Tokens != nil {
		out = append(out, dist("ttft_ns", r.Tokens.TTFTNs, res.Summary.FirstTokenLatencyMoments))
	}
	return out
}

func dist(name string, st derived.Stats, m stats.Moments) Metric {
	p := func(v int64) *float64 { f := float64(v); return &f }
	mean, sd := m.Mean, m.Stddev
	out := Metric{Name: name, Unit: "ns", Better: Lower, Value: mean, Count: m.N,
		Mean: &mean, Min: p(st.Min), Max: p(st.Max), P50: p(st.P50), P90: p(st.P90), P95: p(st.P95), P99: p(st.P99), P999: p(st.P999)}
	if m.N >= 2 {
		out.Stddev = &sd
	}
	return out
}
