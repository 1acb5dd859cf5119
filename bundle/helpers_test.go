package bundle

import (
	"aimeter/internal/golden"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// golden compares got with testdata/golden/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

// fixtureStart is the wall-clock start of the hand-made results.
var fixtureStart = time.Date(2026, 8, 20, 13, 4, 5, 123456789, time.UTC)

// failWriter accepts n bytes, then fails.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyDir copies the files (not the subdirectories) of from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		data := readAll(t, filepath.Join(from, e.Name()))
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
