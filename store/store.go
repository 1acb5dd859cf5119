// Package store is aimeter's results database: test items, their runs, every
// metric of each run with the statistics a comparison needs, the files of
// each run bundle and a hash-chained log of lifecycle events.
//
// One schema serves two databases through database/sql: an embedded SQLite
// file (modernc.org/sqlite, no cgo), the default, under the user's data
// directory, and a PostgreSQL server (pgx) for a shared lab, chosen by a DSN
// that starts with postgres:// or postgresql://. The schema comes from SQL
// files embedded in the package and applied in order by a small migrator that
// records the version it reached in a schema_version table.
//
// The bundle files of a run stay files: Ingest places them in a result
// directory of their own, one directory per test item (GB-7.7.1-l) and one
// below it per run, and records each file's name, SHA-256 and size as an
// artifact row. Per-sample records never become rows; the database holds the
// summary statistics of result.json and the latency spreads computed from the
// records. Ingest is atomic: the rows are written in one transaction and the
// files are moved into place only once that transaction is ready to commit,
// so a crash leaves either the whole run or none of it; a result directory
// that a killed process moved into place without committing is removed by
// the next Open (see staging.go). A test item's run is stored once: its
// bundle's manifest SHA-256 and the upload ID it came under are unique keys,
// checked in the transaction that stores it, so a retried upload is stored
// exactly once however often it is sent.
//
// An SQLite database runs in WAL mode with synchronous=FULL and a 10 s busy
// timeout.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// EnvDSN names the environment variable that, when set, replaces the default
// DSN of DefaultDSN (tests point it at a temporary file).
const EnvDSN = "AIMETER_STORE"

// DBFileName is the SQLite file in the data directory.
const DBFileName = "results.db"

// ErrNotFound is returned (wrapped) when a test item or run does not exist.
var ErrNotFound = errors.New("not found")

// ErrRetestsExhausted is returned (wrapped) by ClaimAttempt when a test item
// has used its first attempt and every retest it was allowed.
var ErrRetestsExhausted = errors.New("no retest left")

// ErrExpired is returned (wrapped) by ClaimAttempt and TestItemByToken for a
// test item whose expiry has passed.
var ErrExpired = errors.New("test item expired")

// Dialect names the database behind a Store.
type Dialect string

const (
	// SQLite is the embedded database (modernc.org/sqlite).
	SQLite Dialect = "sqlite"
	// Postgres is a PostgreSQL server reached through pgx.
	Postgres Dialect = "postgres"
)

// Options configure Open.
type Options struct {
	// DSN chooses the database. "" means DefaultDSN(). A DSN that starts
	// with postgres:// or postgresql:// opens a PostgreSQL server (pgx's
	// syntax); anything else is an SQLite file: a path, or "sqlite:PATH"
	// or "file:PATH" with optional SQLite query parameters.
	DSN string
	// FilesDir is the directory that holds the result directories. ""
	// means "results" beside an SQLite file, and for PostgreSQL
	// DataDir()/results.
	FilesDir string
	// Now returns the current time; nil means time.Now. Tests fix it.
	Now func() time.Time
	// BeforeCommit, when not nil, is called by Ingest once every row of
	// the run is written and its result directory is in place, just
	// before the transaction commits; an error aborts the ingest as a
	// failed commit would. Tests of crash safety use it to stop a process
	// at that moment. Nil calls nothing.
	BeforeCommit func(ctx context.Context, run *Run) error
}

// Store is an open results database. It is safe for concurrent use.
type Store struct {
	db       *sql.DB
	dialect  Dialect
	filesDir string
	now      func() time.Time
	// beforeCommit is Options.BeforeCommit.
	beforeCommit func(ctx context.Context, run *Run) error
	// stagingMu guards staging, the store's own staging directory
	// (staging.go), made by the first Ingest.
	stagingMu sync.Mutex
	staging   staging
}

// DataDir returns aimeter's data directory: $XDG_DATA_HOME/aimeter, or
// ~/.local/share/aimeter when XDG_DATA_HOME is unset, or os.UserConfigDir()/
// aimeter where there is no home directory.
func DataDir() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "aimeter"), nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "aimeter"), nil
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("store: no data directory: set XDG_DATA_HOME or --store: %w", err)
	}
	return filepath.Join(cfg, "aimeter"), nil
}

// DefaultDSN returns $AIMETER_STORE when set, else the SQLite file
// DataDir()/results.db.
func DefaultDSN() (string, error) {
	if v := os.Getenv(EnvDSN); v != "" {
		return v, nil
	}
	d, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, DBFileName), nil
}

// IsPostgres says whether dsn names a PostgreSQL server.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the database that opts name, creating it (and the SQLite file's
// directory) when missing, and brings its schema up to date.
func Open(ctx context.Context, opts Options) (*Store, error) {
	dsn := opts.DSN
	if dsn == "" {
		var err error
		if dsn, err = DefaultDSN(); err != nil {
			return nil, err
		}
	}
	s := &Store{now: opts.Now, filesDir: opts.FilesDir, beforeCommit: opts.BeforeCommit}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if IsPostgres(dsn) {
		s.dialect = Postgres
		s.db, err = sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", redactDSN(dsn), err)
		}
		if s.filesDir == "" {
			d, err := DataDir()
			if err != nil {
				s.db.Close()
				return nil, err
			}
			s.filesDir = filepath.Join(d, "results")
		}
	} else {
		s.dialect = SQLite
		path, query, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:"), "?")
		if path == "" {
			return nil, fmt.Errorf("store: DSN %q names no SQLite file", dsn)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		if s.filesDir == "" {
			s.filesDir = filepath.Join(filepath.Dir(path), "results")
		}
		// WAL lets readers go on while a run is stored; synchronous FULL
		// syncs the log at every commit, so that a run the service
		// acknowledged survives a power cut as well as a crash of the
		// process (NORMAL survives only the latter); a writer waits up
		// to 10 s for another's lock, and every transaction takes the
		// write lock when it begins (immediate), so two never deadlock
		// upgrading a read lock.
		q := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"
		if query != "" {
			q += "&" + query
		}
		s.db, err = sql.Open("sqlite", "file:"+path+"?"+q)
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
	}
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", redactDSN(dsn), err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	if err := s.sweepStaging(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database and removes the store's staging directory.
func (s *Store) Close() error {
	s.closeStaging()
	return s.db.Close()
}

// Dialect says which database the store uses.
func (s *Store) Dialect() Dialect { return s.dialect }

// FilesDir returns the directory that holds the result directories.
func (s *Store) FilesDir() string { return s.filesDir }

// DB returns the underlying database, for a caller that needs a query the
// Store has no method for. Writes through it bypass the event chain.
func (s *Store) DB() *sql.DB { return s.db }

// redactDSN drops the password of a PostgreSQL URL for error messages.
func redactDSN(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	scheme, rest, _ := strings.Cut(dsn, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, _, _ := strings.Cut(rest[:at], ":")
		rest = user + ":xxx" + rest[at:]
	}
	return scheme + "://" + rest
}

// rebind turns ? placeholders into PostgreSQL's $n.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
