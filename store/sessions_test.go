package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"aimeter/store"
)

// TestSessions: a session is valid until its absolute expiry and while it
// is used within the idle limit; revoking, expiring or idling ends it for
// good (its row is gone), and DeleteExpiredSessions sweeps the rest.
func TestSessions(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	const idle = time.Hour
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		mk := func(hash string, created time.Time, life time.Duration) {
			t.Helper()
			if err := s.CreateSession(ctx, store.Session{IDHash: hash, CSRFToken: "csrf-" + hash, CreatedAt: created, ExpiresAt: created.Add(life)}); err != nil {
				t.Fatal(err)
			}
		}
		mk("a", t0, 12*time.Hour)
		mk("b", t0, 12*time.Hour)
		mk("c", t0, 12*time.Hour)
		mk("d", t0, 2*time.Hour)
		if err := s.CreateSession(ctx, store.Session{IDHash: "a", CSRFToken: "x", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err == nil {
			t.Error("a second session with the same hash was stored")
		}
		if err := s.CreateSession(ctx, store.Session{IDHash: "e", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err == nil {
			t.Error("a session without a CSRF token was stored")
		}
		// Used every 50 minutes, "a" outlives the idle limit of an hour.
		for i := range 5 {
			now := t0.Add(time.Duration(i) * 50 * time.Minute)
			got, err := s.UseSession(ctx, "a", now, idle)
			if err != nil {
				t.Fatalf("use %d at %v: %v", i, now, err)
			}
			if got.CSRFToken != "csrf-a" || !got.CreatedAt.Equal(t0) || !got.LastSeenAt.Equal(now) || !got.ExpiresAt.Equal(t0.Add(12*time.Hour)) {
				t.Errorf("use %d: %+v", i, got)
			}
		}
		cases := []struct {
			hash string
			at   time.Time
			why  string
		}{
			{"b", t0.Add(idle), "not used for the idle limit"},
			{"c", t0.Add(12 * time.Hour), "used within the idle limit, but past its absolute expiry"},
			{"nope", t0, "never existed"},
		}
		// Keep "c" in use up to its end, so that only its expiry ends it.
		for at := t0; at.Before(t0.Add(12 * time.Hour)); at = at.Add(30 * time.Minute) {
			if _, err := s.UseSession(ctx, "c", at, idle); err != nil {
				t.Fatalf("c at %v: %v", at, err)
			}
		}
		for _, c := range cases {
			if _, err := s.UseSession(ctx, c.hash, c.at, idle); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s (%s): %v, want ErrNotFound", c.hash, c.why, err)
			}
			// Ended for good: even an earlier clock does not bring it back.
			if _, err := s.UseSession(ctx, c.hash, t0, idle); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s (%s) came back: %v", c.hash, c.why, err)
			}
		}
		if err := s.RevokeSession(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UseSession(ctx, "a", t0.Add(4*50*time.Minute), idle); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoked session: %v, want ErrNotFound", err)
		}
		if err := s.RevokeSession(ctx, "a"); err != nil {
			t.Errorf("revoking twice: %v", err)
		}
		// "d" (2 h) is the one left; without an idle limit it lasts until
		// its expiry.
		if n, err := s.DeleteExpiredSessions(ctx, t0.Add(90*time.Minute), 0); err != nil || n != 0 {
			t.Errorf("sweep before d expires: %d, %v", n, err)
		}
		if n, err := s.DeleteExpiredSessions(ctx, t0.Add(90*time.Minute), idle); err != nil || n != 1 {
			t.Errorf("sweep with idle limit: %d, %v; want d deleted", n, err)
		}
		var left int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&left); err != nil || left != 0 {
			t.Errorf("%d sessions left (%v)", left, err)
		}
	})
}
