package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/store"
	"aimeter/sut"
)

// backend is one database the suite runs against.
type backend struct {
	name string
	open func(t *testing.T) *store.Store
}

// backends returns SQLite, and PostgreSQL when AIMETER_TEST_POSTGRES holds
// a DSN (scripts/start-postgres.sh prints one). AIMETER_REQUIRE_POSTGRES=1
// makes a missing DSN a failure instead of a skip.
func backends(t *testing.T) []backend {
	t.Helper()
	bs := []backend{{name: "sqlite", open: func(t *testing.T) *store.Store {
		return openStore(t, store.Options{DSN: filepath.Join(t.TempDir(), "results.db")})
	}}}
	dsn := os.Getenv("AIMETER_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("AIMETER_REQUIRE_POSTGRES") == "1" {
			t.Fatal("AIMETER_REQUIRE_POSTGRES=1 but AIMETER_TEST_POSTGRES is empty: run scripts/start-postgres.sh")
		}
		t.Log("PostgreSQL not tested: AIMETER_TEST_POSTGRES is unset (scripts/start-postgres.sh prints a DSN)")
		return bs
	}
	return append(bs, backend{name: "postgres", open: func(t *testing.T) *store.Store {
		return openStore(t, store.Options{DSN: freshDatabase(t, dsn), FilesDir: t.TempDir()})
	}})
}

// forEach runs fn as a subtest per backend.
func forEach(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { fn(t, b.open(t)) })
	}
}

func openStore(t *testing.T, opts store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// freshDatabase creates a schema of its own for the test on the server of
// dsn, dropped at the end, and returns a DSN whose search_path is that
// schema (faster than a database per test).
func freshDatabase(t *testing.T, dsn string) string {
	t.Helper()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var r [6]byte
	rand.Read(r[:])
	name := "aimeter_test_" + hex.EncodeToString(r[:])
	if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("create schema on %s: %v", dsn, err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA IF EXISTS " + name + " CASCADE") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// makeBundle runs a short Offline test against a SUT that answers every
// sample after delay, and returns the bundle's directory.
func makeBundle(t testing.TB, delay time.Duration) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	_, err := benchmark.Run(context.Background(), benchmark.Plan{
		Custom:    &benchmark.Custom{SUT: loadgentest.DelaySUT{Delay: delay}, QSL: &loadgentest.QSL{Total: 64}},
		SUT:       sut.Config{Kind: sut.Custom, Name: "delay"},
		Settings:  benchmark.Settings{Explicit: &s},
		OutputDir: dir,
		NoReport:  true,
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return dir
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
