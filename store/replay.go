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

// EventUploadReceived: ClaimUpload spent an upload ID; its detail names it.
const EventUploadReceived = "upload_received"

// ErrDuplicate is returned (wrapped) when the database refuses a second copy
// of what may be stored once: an upload ID already spent (ClaimUpload), a
// bundle already stored as a test item's run (Ingest, as a
// *DuplicateBundleError).
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

// ClaimUpload spends the upload ID uploadID of a test item: it records it
// and appends an upload_received event naming it, in one transaction. The
// database's unique key (test item, upload ID) refuses a second claim, from
// this process or any other sharing the database, with an error wrapping
// ErrDuplicate.
func (s *Store) ClaimUpload(ctx context.Context, testItemID, uploadID string, attempt int) error {
	if testItemID == "" || uploadID == "" {
		return errors.New("store: upload: empty test item or upload ID")
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO uploads (test_item_id, upload_id, received_at) VALUES (?, ?, ?)`),
			testItemID, uploadID, s.now().UnixNano()); err != nil {
			if isUniqueViolation(err, "uploads_pkey", "uploads.upload_id") {
				return fmt.Errorf("store: upload ID %s of test item %s: %w", uploadID, testItemID, ErrDuplicate)
			}
			return fmt.Errorf("store: upload %s: %w", uploadID, err)
		}
		detail, _ := json.Marshal(map[string]string{"upload_id": uploadID})
		_, err := s.appendEvent(ctx, tx, Event{TestItemID: testItemID, Attempt: attempt, Kind: EventUploadReceived, Detail: detail})
		return err
	})
	return err
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
