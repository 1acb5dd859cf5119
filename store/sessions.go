package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Session is a dashboard session of the tester's service as the store keeps
// it. The session id the browser holds is never stored: IDHash is its
// SHA-256 in hex, so a copy of the database cannot be used to sign in.
type Session struct {
	// IDHash is the hex SHA-256 of the session id. Required, unique.
	IDHash string
	// CSRFToken is the session's synchronizer token, which every form
	// that changes state must carry. Required.
	CSRFToken string
	// CreatedAt is when the session was made (the sign-in), LastSeenAt
	// when it was last used (UseSession keeps it, to a minute or less,
	// up to date), ExpiresAt when it ends whatever its use.
	CreatedAt, LastSeenAt, ExpiresAt time.Time
}

// CreateSession stores a new session. LastSeenAt defaults to CreatedAt.
func (s *Store) CreateSession(ctx context.Context, sess Session) error {
	if sess.IDHash == "" || sess.CSRFToken == "" || sess.CreatedAt.IsZero() || sess.ExpiresAt.IsZero() {
		return errors.New("store: CreateSession: IDHash, CSRFToken, CreatedAt and ExpiresAt are required")
	}
	if sess.LastSeenAt.IsZero() {
		sess.LastSeenAt = sess.CreatedAt
	}
	_, err := s.db.ExecContext(ctx, s.rebind(`INSERT INTO sessions (id_hash, csrf_token, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?)`),
		sess.IDHash, sess.CSRFToken, nanos(sess.CreatedAt), nanos(sess.LastSeenAt), nanos(sess.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// UseSession returns the session whose id hashes to idHash, if it is valid
// at now, and records the use. A session is valid until its ExpiresAt, and
// while it was last used less than idle ago (idle ≤ 0: no idle limit). One
// that is not valid is deleted; the error then wraps ErrNotFound, as it
// does for a session that does not exist or was revoked.
func (s *Store) UseSession(ctx context.Context, idHash string, now time.Time, idle time.Duration) (*Session, error) {
	var sess Session
	var created, seen, expires int64
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT id_hash, csrf_token, created_at, last_seen_at, expires_at FROM sessions WHERE id_hash = ?`), idHash).
		Scan(&sess.IDHash, &sess.CSRFToken, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read session: %w", err)
	}
	sess.CreatedAt, sess.LastSeenAt, sess.ExpiresAt = fromNanos(created), fromNanos(seen), fromNanos(expires)
	var why string
	switch {
	case !now.Before(sess.ExpiresAt):
		why = "session expired at " + sess.ExpiresAt.Format(time.RFC3339)
	case idle > 0 && now.Sub(sess.LastSeenAt) >= idle:
		why = "session idle since " + sess.LastSeenAt.Format(time.RFC3339)
	}
	if why != "" {
		if err := s.RevokeSession(ctx, idHash); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", why, ErrNotFound)
	}
	// Recording every request would make each page view a write; to a
	// minute (or a sixteenth of the idle limit) is close enough.
	if idle > 0 && now.Sub(sess.LastSeenAt) >= min(time.Minute, idle/16) {
		if _, err := s.db.ExecContext(ctx, s.rebind(`UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?`), nanos(now), idHash); err != nil {
			return nil, fmt.Errorf("store: touch session: %w", err)
		}
		sess.LastSeenAt = now
	}
	return &sess, nil
}

// RevokeSession deletes the session whose id hashes to idHash; there is
// no error when there is none.
func (s *Store) RevokeSession(ctx context.Context, idHash string) error {
	if _, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM sessions WHERE id_hash = ?`), idHash); err != nil {
		return fmt.Errorf("store: revoke session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions deletes the sessions that are not valid at now
// (UseSession's rule, with the same idle) and returns how many it deleted.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time, idle time.Duration) (int64, error) {
	q, args := `DELETE FROM sessions WHERE expires_at <= ?`, []any{nanos(now)}
	if idle > 0 {
		q += ` OR last_seen_at <= ?`
		args = append(args, nanos(now.Add(-idle)))
	}
	res, err := s.db.ExecContext(ctx, s.rebind(q), args...)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", err)
	}
	return res.RowsAffected()
}
