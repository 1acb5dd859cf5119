package store

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// TestItem is one test a tester registered for a tested party (GB/T 45087
// Annex A, steps a–c): its ID, the party, the test information of clauses
// 6.1/7.1 as a JSON document, how many retests it may use, the client's
// public key for signed uploads and the hash of its access token.
type TestItem struct {
	// ID is the test ID; CreateTestItem refuses an empty one.
	ID string `json:"id"`
	// Party names the tested party.
	Party string `json:"party"`
	// Info is the test information (clauses 6.1 and 7.1) as JSON; nil is
	// stored as {}.
	Info json.RawMessage `json:"info"`
	// RetestAllowance is how many retests the item may use after its first
	// attempt; 0 allows the first attempt only.
	RetestAllowance int `json:"retest_allowance"`
	// Attempts counts the attempts claimed so far (ClaimAttempt); the
	// first is not a retest.
	Attempts int `json:"attempts"`
	// PublicKey is the client's Ed25519 key that signs its uploads; nil
	// when none was registered.
	PublicKey ed25519.PublicKey `json:"public_key,omitempty"`
	// TokenHash is HashToken of the item's access token; the token itself
	// is never stored. Nil for an item without a token.
	TokenHash []byte `json:"-"`
	// ExpiresAt is when the token stops working; the zero time never.
	ExpiresAt time.Time `json:"expires_at"`
	// CreatedAt is set by CreateTestItem.
	CreatedAt time.Time `json:"created_at"`
	// Status is the item's state in its lifecycle, free text for the
	// service ("registered", "running", "closed", …); "" is stored as
	// "registered".
	Status string `json:"status"`
}

// RetestsUsed is the number of attempts after the first.
func (it *TestItem) RetestsUsed() int { return max(it.Attempts-1, 0) }

// HashToken returns the SHA-256 of a token, the form in which tokens are kept.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CreateTestItem stores a new test item and appends a test_created event.
func (s *Store) CreateTestItem(ctx context.Context, it TestItem) (*TestItem, error) {
	if it.ID == "" {
		return nil, errors.New("store: test item: empty id")
	}
	if it.RetestAllowance < 0 {
		return nil, fmt.Errorf("store: test item %s: retest_allowance %d is negative", it.ID, it.RetestAllowance)
	}
	if it.PublicKey != nil && len(it.PublicKey) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("store: test item %s: public_key has %d bytes, want %d", it.ID, len(it.PublicKey), ed25519.PublicKeySize)
	}
	if len(it.Info) == 0 {
		it.Info = json.RawMessage("{}")
	}
	if !json.Valid(it.Info) {
		return nil, fmt.Errorf("store: test item %s: info is not JSON", it.ID)
	}
	if it.Status == "" {
		it.Status = "registered"
	}
	it.CreatedAt = s.now().UTC()
	it.Attempts = 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var pk, th any
		if it.PublicKey != nil {
			pk = []byte(it.PublicKey)
		}
		if it.TokenHash != nil {
			th = it.TokenHash
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO test_items (id, party, info, retest_allowance, attempts, public_key, token_hash, expires_at, created_at, status) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`),
			it.ID, it.Party, string(it.Info), it.RetestAllowance, pk, th, nanos(it.ExpiresAt), nanos(it.CreatedAt), it.Status); err != nil {
			return fmt.Errorf("store: create test item %s: %w", it.ID, err)
		}
		_, err := s.appendEvent(ctx, tx, Event{TestItemID: it.ID, Kind: EventTestCreated})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &it, nil
}

const itemColumns = `id, party, info, retest_allowance, attempts, public_key, token_hash, expires_at, created_at, status`

func scanItem(row interface{ Scan(...any) error }) (*TestItem, error) {
	var it TestItem
	var info string
	var pk, th []byte
	var exp, created int64
	if err := row.Scan(&it.ID, &it.Party, &info, &it.RetestAllowance, &it.Attempts, &pk, &th, &exp, &created, &it.Status); err != nil {
		return nil, err
	}
	it.Info = json.RawMessage(info)
	if len(pk) > 0 {
		it.PublicKey = ed25519.PublicKey(pk)
	}
	if len(th) > 0 {
		it.TokenHash = th
	}
	it.ExpiresAt, it.CreatedAt = fromNanos(exp), fromNanos(created)
	return &it, nil
}

// TestItem returns the test item id; an error wrapping ErrNotFound when
// there is none.
func (s *Store) TestItem(ctx context.Context, id string) (*TestItem, error) {
	it, err := scanItem(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+itemColumns+` FROM test_items WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: test item %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: test item %q: %w", id, err)
	}
	return it, nil
}

// TestItemByToken returns the test item whose token is token: an error
// wrapping ErrNotFound for an unknown token, ErrExpired for an expired one.
func (s *Store) TestItemByToken(ctx context.Context, token string) (*TestItem, error) {
	it, err := scanItem(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+itemColumns+` FROM test_items WHERE token_hash = ?`), HashToken(token)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: token: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: token: %w", err)
	}
	if !it.ExpiresAt.IsZero() && !s.now().Before(it.ExpiresAt) {
		return nil, fmt.Errorf("store: test item %s: token expired at %s: %w", it.ID, it.ExpiresAt.Format(time.RFC3339), ErrExpired)
	}
	return it, nil
}

// TestItems returns every test item, newest first.
func (s *Store) TestItems(ctx context.Context) ([]TestItem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+itemColumns+` FROM test_items ORDER BY created_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("store: test items: %w", err)
	}
	defer rows.Close()
	var out []TestItem
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("store: test items: %w", err)
		}
		out = append(out, *it)
	}
	return out, rows.Err()
}

// ClaimAttempt starts the next attempt of a test item and returns its number
// (1 for the first): an error wrapping ErrRetestsExhausted when the first
// attempt and RetestAllowance retests are used up, ErrExpired past the
// item's expiry. The count is raised in the same transaction as the check,
// so concurrent claims never exceed the allowance. It appends an
// attempt_claimed event.
func (s *Store) ClaimAttempt(ctx context.Context, id string) (int, error) {
	var attempt int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		it, err := s.lockItem(ctx, tx, id)
		if err != nil {
			return err
		}
		if !it.ExpiresAt.IsZero() && !s.now().Before(it.ExpiresAt) {
			return fmt.Errorf("store: test item %s: expired at %s: %w", id, it.ExpiresAt.Format(time.RFC3339), ErrExpired)
		}
		if it.Attempts >= 1+it.RetestAllowance {
			return fmt.Errorf("store: test item %s: %d attempts used, %d retests allowed: %w", id, it.Attempts, it.RetestAllowance, ErrRetestsExhausted)
		}
		attempt = it.Attempts + 1
		if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE test_items SET attempts = ? WHERE id = ?`), attempt, id); err != nil {
			return fmt.Errorf("store: test item %s: %w", id, err)
		}
		_, err = s.appendEvent(ctx, tx, Event{TestItemID: id, Attempt: attempt, Kind: EventAttemptClaimed})
		return err
	})
	return attempt, err
}

// SetTestItemStatus sets a test item's status and appends an
// item_status event with the status and reason.
func (s *Store) SetTestItemStatus(ctx context.Context, id, status, reason string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE test_items SET status = ? WHERE id = ?`), status, id)
		if err != nil {
			return fmt.Errorf("store: test item %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("store: test item %q: %w", id, ErrNotFound)
		}
		detail, _ := json.Marshal(map[string]string{"status": status, "reason": reason})
		_, err = s.appendEvent(ctx, tx, Event{TestItemID: id, Kind: EventItemStatus, Detail: detail})
		return err
	})
}

// SetToken replaces a test item's token hash (HashToken of the new token)
// and its expiry (the zero time: never), and appends a token_set event.
func (s *Store) SetToken(ctx context.Context, id string, tokenHash []byte, expires time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE test_items SET token_hash = ?, expires_at = ? WHERE id = ?`), tokenHash, nanos(expires), id)
		if err != nil {
			return fmt.Errorf("store: test item %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("store: test item %q: %w", id, ErrNotFound)
		}
		_, err = s.appendEvent(ctx, tx, Event{TestItemID: id, Kind: EventTokenSet})
		return err
	})
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return &commitError{err: err}
	}
	return nil
}

// commitError is inTx's failure to commit, after fn succeeded: whether the
// transaction committed can be unknown (the connection broke during the
// commit).
type commitError struct{ err error }

func (e *commitError) Error() string { return "store: commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// lockItem reads test item id within tx, locking its row against other
// writers until tx ends (PostgreSQL's FOR NO KEY UPDATE; SQLite's write
// lock holds the whole database).
func (s *Store) lockItem(ctx context.Context, tx *sql.Tx, id string) (*TestItem, error) {
	q := `SELECT ` + itemColumns + ` FROM test_items WHERE id = ?`
	if s.dialect == Postgres {
		q += ` FOR NO KEY UPDATE`
	}
	it, err := scanItem(tx.QueryRowContext(ctx, s.rebind(q), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: test item %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: test item %q: %w", id, err)
	}
	return it, nil
}
