// Package pgtest gives tests a PostgreSQL database of their own on the
// server that scripts/start-postgres.sh starts (its DSN in
// AIMETER_TEST_POSTGRES; CI sets AIMETER_REQUIRE_POSTGRES=1).
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// DSN returns the test server's DSN from AIMETER_TEST_POSTGRES, or "" when
// it is unset; with AIMETER_REQUIRE_POSTGRES=1 an unset DSN fails t.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("AIMETER_TEST_POSTGRES")
	if dsn == "" && os.Getenv("AIMETER_REQUIRE_POSTGRES") == "1" {
		t.Fatal("AIMETER_REQUIRE_POSTGRES=1 but AIMETER_TEST_POSTGRES is empty: run scripts/start-postgres.sh")
	}
	return dsn
}

// Fresh creates a database named prefix plus a random suffix on the server
// of dsn, drops it when t ends, and returns its DSN.
func Fresh(t testing.TB, dsn, prefix string) string {
	t.Helper()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var r [6]byte
	rand.Read(r[:])
	name := prefix + hex.EncodeToString(r[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("pgx", dsn); err == nil {
			a.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			a.Close()
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
