package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of lifecycle events. The service may append kinds of its own.
const (
	// EventTestCreated: CreateTestItem stored a test item.
	EventTestCreated = "test_created"
	// EventAttemptClaimed: ClaimAttempt started an attempt.
	EventAttemptClaimed = "attempt_claimed"
	// EventTestStart, EventDataDownloadStart, EventDataDownloadEnd,
	// EventTestEnd and EventUploadComplete are the client's lifecycle
	// (GB/T 45087 Annex A), appended by the service as they arrive.
	EventTestStart         = "test_start"
	EventDataDownloadStart = "data_download_start"
	EventDataDownloadEnd   = "data_download_end"
	EventTestEnd           = "test_end"
	EventUploadComplete    = "upload_complete"
	// EventRunRecorded: Ingest stored a run; its detail holds the run's
	// key and bundle digest.
	EventRunRecorded = "run_recorded"
	// EventRunStatus: SetRunStatus changed a run's status.
	EventRunStatus = "run_status"
	// EventItemStatus: SetTestItemStatus changed a test item's status.
	EventItemStatus = "item_status"
	// EventTokenSet: SetToken replaced a test item's token.
	EventTokenSet = "token_set"
)

// Event is one row of the lifecycle log. Rows form a hash chain: each row's
// Hash is the SHA-256 of the previous row's Hash and of its own content, so
// an edit, insertion or removal of any earlier row breaks every later link
// (VerifyChain finds it).
type Event struct {
	// Seq numbers the rows from 1 in order of appending; set by
	// AppendEvent.
	Seq int64 `json:"seq"`
	// TestItemID is the test item the event belongs to; "" for none.
	TestItemID string `json:"test_item_id,omitempty"`
	// RunID is the run the event belongs to; 0 for none.
	RunID int64 `json:"run_id,omitempty"`
	// Attempt is the attempt of the test item; 0 for none.
	Attempt int `json:"attempt,omitempty"`
	// Kind is one of the Event… constants or a kind of the caller's.
	Kind string `json:"kind"`
	// At is when the event happened; the zero time means now.
	At time.Time `json:"at"`
	// Detail is a JSON document; nil is stored as {}.
	Detail json.RawMessage `json:"detail"`
	// PrevHash and Hash are hex SHA-256 digests, set by AppendEvent;
	// PrevHash is "" for the first row.
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
}

// ChainError says where the event chain breaks.
type ChainError struct {
	Seq    int64  // the first row that does not verify
	Reason string // what is wrong with it
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("store: event chain broken at seq %d: %s", e.Seq, e.Reason)
}

// eventHash is the SHA-256 of prev (hex) and e's content, each field
// length-prefixed so that no two contents encode alike.
func eventHash(prev string, e *Event) string {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	num := func(v int64) {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	field([]byte(prev))
	num(e.Seq)
	field([]byte(e.TestItemID))
	num(e.RunID)
	num(int64(e.Attempt))
	field([]byte(e.Kind))
	num(e.At.UnixNano())
	field(e.Detail)
	return hex.EncodeToString(h.Sum(nil))
}

// AppendEvent appends e to the log and returns it with its Seq and hashes.
func (s *Store) AppendEvent(ctx context.Context, e Event) (Event, error) {
	var out Event
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.appendEvent(ctx, tx, e)
		return err
	})
	return out, err
}

// appendEvent appends e within tx. The table is locked against concurrent
// appends for the rest of the transaction (SQLite's write lock; in
// PostgreSQL an exclusive table lock), so the chain never forks.
func (s *Store) appendEvent(ctx context.Context, tx *sql.Tx, e Event) (Event, error) {
	if e.Kind == "" {
		return e, errors.New("store: event: empty kind")
	}
	if len(e.Detail) == 0 {
		e.Detail = json.RawMessage("{}")
	}
	if !json.Valid(e.Detail) {
		return e, fmt.Errorf("store: event %s: detail is not JSON", e.Kind)
	}
	if e.At.IsZero() {
		e.At = s.now()
	}
	e.At = e.At.UTC()
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `LOCK TABLE events IN EXCLUSIVE MODE`); err != nil {
			return e, fmt.Errorf("store: event: lock: %w", err)
		}
	}
	var last sql.NullInt64
	var prev sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&last, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("store: event: %w", err)
	}
	e.Seq = last.Int64 + 1
	e.PrevHash = prev.String
	e.Hash = eventHash(e.PrevHash, &e)
	if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO events (seq, test_item_id, run_id, attempt, kind, at, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		e.Seq, e.TestItemID, e.RunID, e.Attempt, e.Kind, e.At.UnixNano(), string(e.Detail), e.PrevHash, e.Hash); err != nil {
		return e, fmt.Errorf("store: event %s: %w", e.Kind, err)
	}
	return e, nil
}

// EventFilter selects events; its zero value selects all.
type EventFilter struct {
	// TestItemID selects one test item's events; "" any.
	TestItemID string
	// RunID selects one run's events; 0 any.
	RunID int64
}

const eventColumns = `seq, test_item_id, run_id, attempt, kind, at, detail, prev_hash, hash`

func scanEvent(rows *sql.Rows) (Event, error) {
	var e Event
	var at int64
	var detail string
	err := rows.Scan(&e.Seq, &e.TestItemID, &e.RunID, &e.Attempt, &e.Kind, &at, &detail, &e.PrevHash, &e.Hash)
	e.At = time.Unix(0, at).UTC()
	e.Detail = json.RawMessage(detail)
	return e, err
}

// Events returns the events f selects, in order of Seq.
func (s *Store) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	var where []string
	var args []any
	if f.TestItemID != "" {
		where = append(where, "test_item_id = ?")
		args = append(args, f.TestItemID)
	}
	if f.RunID != 0 {
		where = append(where, "run_id = ?")
		args = append(args, f.RunID)
	}
	q := `SELECT ` + eventColumns + ` FROM events`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q+" ORDER BY seq"), args...)
	if err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("store: events: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// VerifyChain rereads the whole event log and checks every link: numbering
// from 1 without gaps, each PrevHash equal to the previous row's Hash and
// each Hash recomputed from the row. It returns the number of rows checked,
// and a *ChainError for the first row that fails.
func (s *Store) VerifyChain(ctx context.Context) (int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM events ORDER BY seq`)
	if err != nil {
		return 0, fmt.Errorf("store: events: %w", err)
	}
	defer rows.Close()
	var n int64
	prev := ""
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return n, fmt.Errorf("store: events: %w", err)
		}
		switch {
		case e.Seq != n+1:
			return n, &ChainError{Seq: e.Seq, Reason: fmt.Sprintf("follows seq %d: a row was removed", n)}
		case e.PrevHash != prev:
			return n, &ChainError{Seq: e.Seq, Reason: "prev_hash is not the previous row's hash"}
		case eventHash(prev, &e) != e.Hash:
			return n, &ChainError{Seq: e.Seq, Reason: "hash does not match the row's content: the row was edited"}
		}
		prev = e.Hash
		n++
	}
	return n, rows.Err()
}
