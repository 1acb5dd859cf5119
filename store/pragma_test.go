package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"aimeter/store"
)

// An SQLite store runs in WAL mode (readers go on during an ingest, and a
// crash leaves the last committed state), syncs at every commit
// (synchronous FULL = 2: a run the service acknowledged survives a power
// cut) and waits for another writer's lock instead of failing at once; on
// every connection of the pool, the ones opened later included.
func TestSQLitePragmas(t *testing.T) {
	s := openStore(t, store.Options{DSN: filepath.Join(t.TempDir(), "results.db")})
	ctx := context.Background()
	// Hold several connections at once so that the pool opens more.
	var conns []interface{ Close() error }
	for range 3 {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var mode string
		var sync, busy int
		if err := c.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || sync != 2 || busy < 5000 {
			t.Errorf("connection %d: journal_mode %s, synchronous %d, busy_timeout %d ms; want wal, 2 (FULL), at least 5000", len(conns), mode, sync, busy)
		}
	}
	for _, c := range conns {
		c.Close()
	}
}
