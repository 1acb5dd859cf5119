package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// EventUploadReceived: BeginUpload saw an upload begin; its detail names
// the upload ID.
const EventUploadReceived = "upload_received"

// ErrDuplicate is returned (wrapped) when the database refuses a second copy
// of what may be stored once: an upload ID already spent (BeginUpload,
// Ingest, as an *UploadSpentError), a bundle already stored as a test
// item's run (Ingest, as a *DuplicateBundleError).
var ErrDuplicate = errors.New("stored already")

// DuplicateBundleError is Ingest's refusal of a bundle that is stored
// already as a test item's run. It wraps ErrDuplicate.
type DuplicateBundleError struct {
	// Digest is the bundle's manifest SHA-256 (hex).
	Digest string
	// RunID and TestItemID name the stored run; 0 and "" when it could
	// not be read back.
	RunID      int64
	TestItemID string
}

func (e *DuplicateBundleError) Error() string {
	if e.RunID == 0 {
		return fmt.Sprintf("store: the bundle (manifest SHA-256 %s) is stored already", e.Digest)
	}
	return fmt.Sprintf("store: the bundle (manifest SHA-256 %s) is stored already as run %d of test item %s", e.Digest, e.RunID, e.TestItemID)
}

func (e *DuplicateBundleError) Unwrap() error { return ErrDuplicate }

// UploadSpentError is the refusal of an upload ID that a stored run spent
// already (BeginUpload, Ingest with IngestOptions.UploadID). It wraps
// ErrDuplicate.
type UploadSpentError struct {
	// TestItemID and UploadID name the upload ID.
	TestItemID, UploadID string
	// RunID is the run stored under the upload ID and Digest its bundle's
	// manifest SHA-256 (hex); 0 and "" for an ID spent by a version of
	// aimeter that spent IDs when an upload began, whatever became of it.
	RunID  int64
	Digest string
}

func (e *UploadSpentError) Error() string {
	if e.RunID == 0 {
		return fmt.Sprintf("store: upload ID %s of test item %s was used before", e.UploadID, e.TestItemID)
	}
	return fmt.Sprintf("store: upload ID %s of test item %s was used before, for run %d (bundle manifest SHA-256 %s)", e.UploadID, e.TestItemID, e.RunID, e.Digest)
}

func (e *UploadSpentError) Unwrap() error { return ErrDuplicate }

// BeginUpload checks, when an upload begins, that its upload ID uploadID is
// not spent for the test item, and appends an upload_received event naming
// it. A spent ID is refused with an *UploadSpentError (wrapping
// ErrDuplicate) that names the run stored under it, and no event.
//
// BeginUpload does not spend the ID: Ingest does, with
// IngestOptions.UploadID, in the transaction that stores the run. An upload
// that fails or is cut off, a crash of the process included, leaves the ID
// unspent, so the same upload can be retried under it; once a run is stored
// the ID names that run for good. The database's unique key (test item,
// upload ID) decides between two uploads under one ID at once, from this
// process or any other sharing the database.
func (s *Store) BeginUpload(ctx context.Context, testItemID, uploadID string, attempt int) error {
	if testItemID == "" || uploadID == "" {
		return errors.New("store: upload: empty test item or upload ID")
	}
	if err := s.uploadSpent(ctx, s.db, testItemID, uploadID); err != nil {
		return err
	}
	detail, _ := json.Marshal(map[string]string{"upload_id": uploadID})
	_, err := s.AppendEvent(ctx, Event{TestItemID: testItemID, Attempt: attempt, Kind: EventUploadReceived, Detail: detail})
	return err
}

// queryer is a *sql.DB or *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// uploadSpent returns an *UploadSpentError when the upload ID is spent, nil
// when it is not.
func (s *Store) uploadSpent(ctx context.Context, q queryer, testItemID, uploadID string) error {
	var n int
	if err := q.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM uploads WHERE test_item_id = ? AND upload_id = ?`), testItemID, uploadID).Scan(&n); err != nil {
		return fmt.Errorf("store: upload %s: %w", uploadID, err)
	}
	if n == 0 {
		return nil
	}
	e := &UploadSpentError{TestItemID: testItemID, UploadID: uploadID}
	// The run that spent it names the ID in its run_recorded event.
	field := `json_extract(detail, '$.upload_id')`
	digest := `json_extract(detail, '$.bundle_digest')`
	if s.dialect == Postgres {
		field, digest = `detail::jsonb->>'upload_id'`, `detail::jsonb->>'bundle_digest'`
	}
	var d sql.NullString
	err := q.QueryRowContext(ctx, s.rebind(`SELECT run_id, `+digest+` FROM events WHERE test_item_id = ? AND kind = ? AND `+field+` = ? ORDER BY seq LIMIT 1`),
		testItemID, EventRunRecorded, uploadID).Scan(&e.RunID, &d)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: upload %s: %w", uploadID, err)
	}
	e.Digest = d.String
	return e
}

// isUniqueViolation says whether err is the database's refusal of a row
// that breaks a unique key or index: PostgreSQL's SQLSTATE 23505 on the
// constraint pgName, SQLite's SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY
// naming the column sqliteColumn ("table.column").
func isUniqueViolation(err error, pgName, sqliteColumn string) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505" && pe.ConstraintName == pgName
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return (c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) &&
			strings.Contains(se.Error(), sqliteColumn)
	}
	return false
}
