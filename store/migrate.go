package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The migrations are numbered SQL files, one directory per dialect, applied
// in order. A home-made migrator rather than goose: the schema is small, the
// two dialects need their own files anyway, and it keeps goose's many
// database drivers out of go.sum.
//
//go:embed migrations
var migrationFS embed.FS

// migration is one numbered SQL file.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the dialect's migrations in order of version.
func migrations(d Dialect) ([]migration, error) {
	dir := path.Join("migrations", string(d))
	ents, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range ents {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("store: migration %s is not named NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("store: migration %s: want version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int {
	ms, err := migrations(SQLite)
	if err != nil {
		panic(err)
	}
	return len(ms)
}

// migrate applies the migrations the database lacks, each in a transaction
// of its own with the schema_version row that records it. Two processes
// migrating at once are serialised: SQLite by its write lock, PostgreSQL by
// an advisory lock.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations(s.dialect)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: create schema_version: %w", err)
	}
	for _, m := range ms {
		if err := s.apply(ctx, m); err != nil {
			return err
		}
	}
	var top int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&top); err != nil {
		return fmt.Errorf("store: read schema_version: %w", err)
	}
	if top > len(ms) {
		return fmt.Errorf("store: the database has schema version %d, newer than this aimeter's %d: use a newer aimeter", top, len(ms))
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	defer tx.Rollback()
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7301031)`); err != nil {
			return fmt.Errorf("store: migration %s: lock: %w", m.name, err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM schema_version WHERE version = ?`), m.version).Scan(&n); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if n > 0 {
		return nil
	}
	for stmt := range strings.SplitSeq(m.sql, ";") {
		if strings.TrimSpace(stripComments(stmt)) == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("store: migration %s: %w", m.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`), m.version, m.name, s.now().UnixNano()); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	return nil
}

// stripComments removes -- comments from a statement.
func stripComments(stmt string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(stmt, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
