package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"aimeter/bundle"
)

// Shards of sharded tests (issue 43; the tester's service, docs/server.md
// "Sharded tests"). A test split over N load generators uploads N shard
// bundles; each is stored by PutShard as a shard of its test (a shard set,
// keyed by what identifies the test), not as a run, and once all N are
// stored the service merges them and stores the merged bundle with Ingest as
// one run, then records it with FinishShardSet.

// ShardSetState is where a shard set stands.
type ShardSetState string

const (
	// ShardsWaiting: some of the test's shards have not arrived.
	ShardsWaiting ShardSetState = "waiting"
	// ShardsMerging: every shard is stored; the merged run is not (yet).
	ShardsMerging ShardSetState = "merging"
	// ShardsMerged: the merged run is stored (ShardSet.RunID).
	ShardsMerged ShardSetState = "merged"
	// ShardsFailed: the merge, or the merged run's recomputation or
	// storing, was refused (ShardSet.Reason says why); the shards stay.
	ShardsFailed ShardSetState = "failed"
)

// Events PutShard and FinishShardSet append.
const (
	// EventShardStored: a shard was stored; its detail names the set, the
	// index and the upload ID.
	EventShardStored = "shard_stored"
	// EventShardsFailed: a complete set could not be merged and stored;
	// its detail gives the reason.
	EventShardsFailed = "shards_failed"
)

// ShardSet is one sharded test of a test item and its shards stored.
type ShardSet struct {
	TestItemID string `json:"test_item_id"`
	// Key identifies the test among the item's (the caller derives it).
	Key string `json:"key"`
	// Count is the number of shards the test was split into;
	// ScheduleSHA256 the whole test's schedule digest.
	Count          int           `json:"count"`
	ScheduleSHA256 string        `json:"schedule_sha256"`
	State          ShardSetState `json:"state"`
	// Reason says why a failed set failed; "" otherwise.
	Reason string `json:"reason,omitempty"`
	// RunID is the merged run of a merged set; 0 otherwise.
	RunID     int64     `json:"run_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Shards are the shards stored, by index.
	Shards []StoredShard `json:"shards"`
}

// StoredShard is one shard stored.
type StoredShard struct {
	Index        int       `json:"index"`
	UploadID     string    `json:"upload_id"`
	BundleDigest string    `json:"bundle_digest"`
	Status       RunStatus `json:"status"`
	StatusReason string    `json:"status_reason"`
	// Dir is the shard's directory relative to the files directory
	// (Store.Path gives its path).
	Dir        string    `json:"dir"`
	ReceivedAt time.Time `json:"received_at"`
}

// Missing returns the indexes of the shards not stored, in order.
func (ss *ShardSet) Missing() []int {
	have := make(map[int]bool, len(ss.Shards))
	for _, sh := range ss.Shards {
		have[sh.Index] = true
	}
	var out []int
	for i := range ss.Count {
		if !have[i] {
			out = append(out, i)
		}
	}
	return out
}

// ShardOptions describe the shard PutShard stores.
type ShardOptions struct {
	// TestItemID is the test item; required, and it must exist.
	TestItemID string
	// Key identifies the shard's test among the item's: 1 to 128 letters,
	// digits, '-' or '_'. Required.
	Key string
	// Count is the number of shards of the test (at least 2), Index the
	// shard's, from 0; ScheduleSHA256 the test's schedule digest.
	Count, Index   int
	ScheduleSHA256 string
	// UploadID is the upload the shard came under: spent with the shard,
	// as Ingest spends a run's. "" spends none.
	UploadID string
	// Status and StatusReason are the shard's verification; "" means
	// StatusVerified.
	Status       RunStatus
	StatusReason string
	// Move moves the bundle's files into the store instead of copying
	// them (for a staging directory the caller owns).
	Move bool
	// Events, when not nil, returns events to append after shard_stored
	// in the transaction that stores the shard. An event's zero
	// TestItemID is set to the shard's.
	Events func(set *ShardSet) []Event
}

// ShardIndexError refuses a shard whose index is stored already for its
// test, naming the first upload of it. It wraps ErrDuplicate.
type ShardIndexError struct {
	TestItemID, Key string
	// First is the shard stored under the index.
	First StoredShard
}

func (e *ShardIndexError) Error() string {
	return fmt.Sprintf("store: shard %d of test %s is stored already: from upload %s at %s (bundle manifest SHA-256 %s)",
		e.First.Index, e.Key, e.First.UploadID, e.First.ReceivedAt.Format(time.RFC3339), e.First.BundleDigest)
}

func (e *ShardIndexError) Unwrap() error { return ErrDuplicate }

// ShardStoredError refuses a shard bundle stored already as a shard of the
// test item: a retried upload. It wraps ErrDuplicate.
type ShardStoredError struct {
	// Set is the shard's set as stored, Index the shard's index in it.
	Set   *ShardSet
	Index int
}

func (e *ShardStoredError) Error() string {
	return fmt.Sprintf("store: the bundle is stored already as shard %d of test %s", e.Index, e.Set.Key)
}

func (e *ShardStoredError) Unwrap() error { return ErrDuplicate }

// ErrShardSetClosed is returned (wrapped) by PutShard for a shard of a set
// that is merged or failed already.
var ErrShardSetClosed = errors.New("the sharded test is closed")

// PutShard stores the shard bundle in dir (checked against its manifest)
// as shard opts.Index of the test opts.Key of the test item, in
// FilesDir/<item>/shards/<key>/, and returns its set as stored. complete is
// true for the one call whose shard completed the set: that call's
// transaction moved the set to ShardsMerging, so of two last shards stored
// at once exactly one is told (the set's row is locked by the transaction
// that stores a shard), and the caller merges.
//
// It refuses a bundle stored already as a shard of the item with a
// *ShardStoredError, an index stored already with a *ShardIndexError, an
// upload ID spent with an *UploadSpentError, and a shard of a set merged
// or failed with ErrShardSetClosed; a refused shard leaves nothing.
func (s *Store) PutShard(ctx context.Context, dir string, opts ShardOptions) (set *ShardSet, complete bool, err error) {
	if opts.TestItemID == "" || !shardKeyOK(opts.Key) {
		return nil, false, fmt.Errorf("store: shard: test item %q, key %q: want a test item and a key of 1 to 128 letters, digits, '-' or '_'", opts.TestItemID, opts.Key)
	}
	if opts.Count < 2 || opts.Index < 0 || opts.Index >= opts.Count {
		return nil, false, fmt.Errorf("store: shard %d of %d: not a shard of a sharded test", opts.Index, opts.Count)
	}
	if opts.Status == "" {
		opts.Status = StatusVerified
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	digest, err := bundle.Digest(abs)
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	if err := s.shardStored(ctx, s.db, opts.TestItemID, digest); err != nil {
		return nil, false, err
	}
	man, err := bundle.ReadManifest(abs)
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	stagingRoot, err := s.ownStaging()
	if err != nil {
		return nil, false, err
	}
	var r [4]byte
	rand.Read(r[:])
	name := fmt.Sprintf("%d-%s", opts.Index, hex.EncodeToString(r[:]))
	staged := filepath.Join(stagingRoot, "shard-"+name)
	defer os.RemoveAll(staged)
	entries := append(slices.Clone(man.Files), bundle.ManifestEntry{Name: bundle.ManifestFile, SHA256: digest, Bytes: -1})
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, e := range entries {
		if !safeName(e.Name) {
			return nil, false, fmt.Errorf("store: bundle file name %q leaves the bundle", e.Name)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sum, n, err := placeFile(filepath.Join(abs, filepath.FromSlash(e.Name)), filepath.Join(staged, filepath.FromSlash(e.Name)), opts.Move, false)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("store: %s: %w", e.Name, err)
			case sum != e.SHA256 || (e.Bytes >= 0 && n != e.Bytes):
				errs[i] = fmt.Errorf("store: %s: SHA-256 %s, %d bytes, but the manifest says %s, %d bytes: the file changed since the run wrote it", e.Name, sum, n, e.SHA256, e.Bytes)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	rel := opts.TestItemID + "/shards/" + opts.Key + "/" + name
	final := s.Path(rel)
	now := s.now().UnixNano()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO shard_sets (test_item_id, set_key, shard_count, schedule_sha256, state, reason, created_at, updated_at)
 VALUES (?, ?, ?, ?, ?, '', ?, ?) ON CONFLICT DO NOTHING`), opts.TestItemID, opts.Key, opts.Count, opts.ScheduleSHA256, string(ShardsWaiting), now, now); err != nil {
			return fmt.Errorf("store: shard set %s: %w", opts.Key, err)
		}
		// The set's row is locked until commit (PostgreSQL; SQLite's
		// immediate transaction holds the database's write lock), so
		// the shards stored at once are counted one after another.
		q := `SELECT state, shard_count FROM shard_sets WHERE test_item_id = ? AND set_key = ?`
		if s.dialect == Postgres {
			q += ` FOR UPDATE`
		}
		var state string
		var count int
		if err := tx.QueryRowContext(ctx, s.rebind(q), opts.TestItemID, opts.Key).Scan(&state, &count); err != nil {
			return fmt.Errorf("store: shard set %s: %w", opts.Key, err)
		}
		if st := ShardSetState(state); st == ShardsMerged || st == ShardsFailed {
			return fmt.Errorf("store: shard %d of test %s: the test is %s: %w", opts.Index, opts.Key, st, ErrShardSetClosed)
		}
		if count != opts.Count {
			return fmt.Errorf("store: shard %d of %d shards of test %s, which has %d", opts.Index, opts.Count, opts.Key, count)
		}
		if err := s.shardStored(ctx, tx, opts.TestItemID, digest); err != nil {
			return err
		}
		if first, err := s.shardAt(ctx, tx, opts.TestItemID, opts.Key, opts.Index); err != nil || first != nil {
			if err != nil {
				return err
			}
			return &ShardIndexError{TestItemID: opts.TestItemID, Key: opts.Key, First: *first}
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO shard_uploads (test_item_id, set_key, shard_index, upload_id, bundle_digest, status, status_reason, dir, received_at)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`), opts.TestItemID, opts.Key, opts.Index, opts.UploadID, digest, string(opts.Status), opts.StatusReason, rel, now); err != nil {
			return fmt.Errorf("store: shard %d of test %s: %w", opts.Index, opts.Key, err)
		}
		if opts.UploadID != "" {
			if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO uploads (test_item_id, upload_id, received_at) VALUES (?, ?, ?)`),
				opts.TestItemID, opts.UploadID, now); err != nil {
				if isUniqueViolation(err, "uploads_pkey", "uploads.upload_id") {
					return &UploadSpentError{TestItemID: opts.TestItemID, UploadID: opts.UploadID}
				}
				return fmt.Errorf("store: upload %s: %w", opts.UploadID, err)
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM shard_uploads WHERE test_item_id = ? AND set_key = ?`), opts.TestItemID, opts.Key).Scan(&n); err != nil {
			return fmt.Errorf("store: shard set %s: %w", opts.Key, err)
		}
		if n == count {
			complete = true
			if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE shard_sets SET state = ?, updated_at = ? WHERE test_item_id = ? AND set_key = ?`),
				string(ShardsMerging), now, opts.TestItemID, opts.Key); err != nil {
				return fmt.Errorf("store: shard set %s: %w", opts.Key, err)
			}
		}
		if set, err = s.shardSet(ctx, tx, opts.TestItemID, opts.Key); err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]any{"key": opts.Key, "index": opts.Index, "count": opts.Count, "upload_id": opts.UploadID,
			"bundle_digest": digest, "status": opts.Status, "missing": set.Missing()})
		events := []Event{{TestItemID: opts.TestItemID, Kind: EventShardStored, Detail: detail}}
		if opts.Events != nil {
			events = append(events, opts.Events(set)...)
		}
		for _, e := range events {
			if e.TestItemID == "" {
				e.TestItemID = opts.TestItemID
			}
			if _, err := s.appendEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		// Every row is written: move the files into place, then commit.
		// A crash between the two leaves a directory no row names, which
		// holds nothing of a result.
		if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if err := os.Rename(staged, final); err != nil {
			return fmt.Errorf("store: move the shard's directory into place: %w", err)
		}
		syncDir(filepath.Dir(final))
		return nil
	})
	if err != nil {
		var ce *commitError
		if !errors.As(err, &ce) {
			os.RemoveAll(final)
		}
		var idx *ShardIndexError
		var dup *ShardStoredError
		if errors.As(err, &idx) || errors.As(err, &dup) {
			return nil, false, err
		}
		if isUniqueViolation(err, "shard_uploads_pkey", "shard_uploads.shard_index") || isUniqueViolation(err, "shard_uploads_bundle", "shard_uploads.bundle_digest") {
			// Another process's shard committed in between (the
			// lock makes this rare): name it.
			if derr := s.shardStored(ctx, s.db, opts.TestItemID, digest); derr != nil {
				return nil, false, derr
			}
			if first, ferr := s.shardAt(ctx, s.db, opts.TestItemID, opts.Key, opts.Index); ferr == nil && first != nil {
				return nil, false, &ShardIndexError{TestItemID: opts.TestItemID, Key: opts.Key, First: *first}
			}
		}
		return nil, false, err
	}
	return set, complete, nil
}

// shardKeyOK says whether a set key is one PutShard accepts (it names a
// directory).
func shardKeyOK(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// shardStored returns a *ShardStoredError when the bundle digest is stored
// as a shard of the test item.
func (s *Store) shardStored(ctx context.Context, q queryer, item, digest string) error {
	var key string
	var index int
	err := q.QueryRowContext(ctx, s.rebind(`SELECT set_key, shard_index FROM shard_uploads WHERE test_item_id = ? AND bundle_digest = ?`), item, digest).Scan(&key, &index)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("store: shards of test item %q: %w", item, err)
	}
	set, err := s.shardSet(ctx, q, item, key)
	if err != nil {
		return err
	}
	return &ShardStoredError{Set: set, Index: index}
}

// ShardByDigest returns the set holding the test item's shard bundle of the
// manifest digest and the shard's index; ErrNotFound when none does.
func (s *Store) ShardByDigest(ctx context.Context, item, digest string) (*ShardSet, int, error) {
	err := s.shardStored(ctx, s.db, item, digest)
	var dup *ShardStoredError
	if errors.As(err, &dup) {
		return dup.Set, dup.Index, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return nil, 0, fmt.Errorf("store: shard %s of test item %s: %w", digest, item, ErrNotFound)
}

const shardColumns = `shard_index, upload_id, bundle_digest, status, status_reason, dir, received_at`

func scanShard(sc interface{ Scan(...any) error }) (StoredShard, error) {
	var sh StoredShard
	var status string
	var at int64
	err := sc.Scan(&sh.Index, &sh.UploadID, &sh.BundleDigest, &status, &sh.StatusReason, &sh.Dir, &at)
	sh.Status, sh.ReceivedAt = RunStatus(status), fromNanos(at)
	return sh, err
}

// shardAt returns the shard stored under the index, nil when none is.
func (s *Store) shardAt(ctx context.Context, q queryer, item, key string, index int) (*StoredShard, error) {
	sh, err := scanShard(q.QueryRowContext(ctx, s.rebind(`SELECT `+shardColumns+` FROM shard_uploads WHERE test_item_id = ? AND set_key = ? AND shard_index = ?`), item, key, index))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: shard %d of test %s: %w", index, key, err)
	}
	return &sh, nil
}

// rowsQueryer is a *sql.DB or *sql.Tx.
type rowsQueryer interface {
	queryer
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

const setColumns = `test_item_id, set_key, shard_count, schedule_sha256, state, reason, run_id, created_at, updated_at`

func scanSet(sc interface{ Scan(...any) error }) (*ShardSet, error) {
	ss := &ShardSet{}
	var state string
	var run sql.NullInt64
	var created, updated int64
	if err := sc.Scan(&ss.TestItemID, &ss.Key, &ss.Count, &ss.ScheduleSHA256, &state, &ss.Reason, &run, &created, &updated); err != nil {
		return nil, err
	}
	ss.State, ss.RunID, ss.CreatedAt, ss.UpdatedAt = ShardSetState(state), run.Int64, fromNanos(created), fromNanos(updated)
	return ss, nil
}

// shardSet reads a set and its shards as q sees them.
func (s *Store) shardSet(ctx context.Context, q queryer, item, key string) (*ShardSet, error) {
	ss, err := scanSet(q.QueryRowContext(ctx, s.rebind(`SELECT `+setColumns+` FROM shard_sets WHERE test_item_id = ? AND set_key = ?`), item, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: sharded test %s of test item %s: %w", key, item, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: sharded test %s: %w", key, err)
	}
	rq, ok := q.(rowsQueryer)
	if !ok {
		return nil, errors.New("store: shard set: the queryer cannot list rows")
	}
	rows, err := rq.QueryContext(ctx, s.rebind(`SELECT `+shardColumns+` FROM shard_uploads WHERE test_item_id = ? AND set_key = ? ORDER BY shard_index`), item, key)
	if err != nil {
		return nil, fmt.Errorf("store: sharded test %s: %w", key, err)
	}
	defer rows.Close()
	ss.Shards = []StoredShard{}
	for rows.Next() {
		sh, err := scanShard(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sharded test %s: %w", key, err)
		}
		ss.Shards = append(ss.Shards, sh)
	}
	return ss, rows.Err()
}

// ShardSet returns the test item's sharded test key with its shards;
// ErrNotFound when the item has none of that key.
func (s *Store) ShardSet(ctx context.Context, item, key string) (*ShardSet, error) {
	return s.shardSet(ctx, s.db, item, key)
}

// ShardSets returns the test item's sharded tests ("" for every item's) in
// state ("" for any), oldest first.
func (s *Store) ShardSets(ctx context.Context, item string, state ShardSetState) ([]*ShardSet, error) {
	var where []string
	var args []any
	if item != "" {
		where, args = append(where, "test_item_id = ?"), append(args, item)
	}
	if state != "" {
		where, args = append(where, "state = ?"), append(args, string(state))
	}
	q := `SELECT test_item_id, set_key FROM shard_sets`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q+` ORDER BY created_at, set_key`), args...)
	if err != nil {
		return nil, fmt.Errorf("store: shard sets: %w", err)
	}
	var keys [][2]string
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: shard sets: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: shard sets: %w", err)
	}
	out := make([]*ShardSet, 0, len(keys))
	for _, k := range keys {
		ss, err := s.shardSet(ctx, s.db, k[0], k[1])
		if err != nil {
			return nil, err
		}
		out = append(out, ss)
	}
	return out, nil
}

// ShardSetOfRun returns the set whose merge is run id; ErrNotFound when the
// run is no merge of shards.
func (s *Store) ShardSetOfRun(ctx context.Context, id int64) (*ShardSet, error) {
	var item, key string
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT test_item_id, set_key FROM shard_sets WHERE run_id = ?`), id).Scan(&item, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: run %d: no merge of shards: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %d: %w", id, err)
	}
	return s.shardSet(ctx, s.db, item, key)
}

// FinishShardSet records the end of a complete set's merge: ShardsMerged
// with its merged run runID, or ShardsFailed with the reason (and a
// shards_failed event). A set merged already stays merged (a second
// merge's outcome is ignored); the set as it then stands is returned.
func (s *Store) FinishShardSet(ctx context.Context, item, key string, state ShardSetState, runID int64, reason string) (*ShardSet, error) {
	if state != ShardsMerged && state != ShardsFailed {
		return nil, fmt.Errorf("store: shard set %s: finish as %q: want %q or %q", key, state, ShardsMerged, ShardsFailed)
	}
	var out *ShardSet
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		q := `SELECT state FROM shard_sets WHERE test_item_id = ? AND set_key = ?`
		if s.dialect == Postgres {
			q += ` FOR UPDATE`
		}
		var cur string
		err := tx.QueryRowContext(ctx, s.rebind(q), item, key).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: sharded test %s of test item %s: %w", key, item, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: sharded test %s: %w", key, err)
		}
		if ShardSetState(cur) != ShardsMerged {
			var run any
			if state == ShardsMerged {
				run, reason = runID, ""
			}
			if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE shard_sets SET state = ?, reason = ?, run_id = ?, updated_at = ? WHERE test_item_id = ? AND set_key = ?`),
				string(state), reason, run, s.now().UnixNano(), item, key); err != nil {
				return fmt.Errorf("store: sharded test %s: %w", key, err)
			}
			if state == ShardsFailed {
				detail, _ := json.Marshal(map[string]string{"key": key, "reason": reason})
				if _, err := s.appendEvent(ctx, tx, Event{TestItemID: item, Kind: EventShardsFailed, Detail: detail}); err != nil {
					return err
				}
			}
		}
		out, err = s.shardSet(ctx, tx, item, key)
		return err
	})
	return out, err
}

// EventShardStarted: a shard of a sharded test started under an attempt
// (ClaimShardAttempt); its detail holds the shard's index and count.
const EventShardStarted = "shard_started"

// ClaimShardAttempt is ClaimAttempt for the start of shard index of a test
// of count shards: the shards of one test run as one attempt. The shard
// joins the item's latest attempt when that attempt holds no run yet and a
// shard of a test of the same count, but no shard of the same index,
// started under it; otherwise it claims the next attempt as ClaimAttempt
// does (with its errors). Either way a shard_started event records it, in
// the transaction that decides, which holds the item's row: of the shards
// starting at once, one claims and the others join. joined says which.
func (s *Store) ClaimShardAttempt(ctx context.Context, id string, index, count int) (attempt int, joined bool, err error) {
	if count < 2 || index < 0 || index >= count {
		return 0, false, fmt.Errorf("store: shard %d of %d: not a shard of a sharded test", index, count)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		it, err := s.lockItem(ctx, tx, id)
		if err != nil {
			return err
		}
		if !it.ExpiresAt.IsZero() && !s.now().Before(it.ExpiresAt) {
			return fmt.Errorf("store: test item %s: expired at %s: %w", id, it.ExpiresAt.Format(time.RFC3339), ErrExpired)
		}
		if it.Attempts > 0 {
			join, err := s.shardMayJoin(ctx, tx, id, it.Attempts, index, count)
			if err != nil {
				return err
			}
			if join {
				attempt, joined = it.Attempts, true
			}
		}
		if !joined {
			if it.Attempts >= 1+it.RetestAllowance {
				return fmt.Errorf("store: test item %s: %d attempts used, %d retests allowed: %w", id, it.Attempts, it.RetestAllowance, ErrRetestsExhausted)
			}
			attempt = it.Attempts + 1
			if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE test_items SET attempts = ? WHERE id = ?`), attempt, id); err != nil {
				return fmt.Errorf("store: test item %s: %w", id, err)
			}
			if _, err := s.appendEvent(ctx, tx, Event{TestItemID: id, Attempt: attempt, Kind: EventAttemptClaimed}); err != nil {
				return err
			}
		}
		detail, _ := json.Marshal(map[string]int{"index": index, "count": count})
		_, err = s.appendEvent(ctx, tx, Event{TestItemID: id, Attempt: attempt, Kind: EventShardStarted, Detail: detail})
		return err
	})
	return attempt, joined, err
}

// shardMayJoin says whether shard index of count may join the item's
// attempt: it holds no run, a shard of count shards started under it, and
// none of this index.
func (s *Store) shardMayJoin(ctx context.Context, tx *sql.Tx, id string, attempt, index, count int) (bool, error) {
	var runs int
	if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM runs WHERE test_item_id = ? AND attempt = ?`), id, attempt).Scan(&runs); err != nil {
		return false, fmt.Errorf("store: test item %s: %w", id, err)
	}
	if runs > 0 {
		return false, nil
	}
	rows, err := tx.QueryContext(ctx, s.rebind(`SELECT detail FROM events WHERE test_item_id = ? AND attempt = ? AND kind = ?`), id, attempt, EventShardStarted)
	if err != nil {
		return false, fmt.Errorf("store: test item %s: %w", id, err)
	}
	defer rows.Close()
	sameTest := false
	for rows.Next() {
		var detail string
		if err := rows.Scan(&detail); err != nil {
			return false, fmt.Errorf("store: test item %s: %w", id, err)
		}
		var d struct{ Index, Count int }
		if json.Unmarshal([]byte(detail), &d) != nil || d.Count != count {
			continue
		}
		if d.Index == index {
			return false, nil // a second run of the shard: a new attempt
		}
		sameTest = true
	}
	return sameTest, rows.Err()
}
