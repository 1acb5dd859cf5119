// Package golden compares test output with golden files, the one place
// that registers the -update flag:
//
//	go test ./report -run TestGolden -update
//
// rewrites every golden file that the selected tests check, instead of
// comparing with it. Import it from a _test.go file only; a package's
// tests must not define an "update" flag of their own.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files that tests compare with (package aimeter/internal/golden)")

// Update reports whether the test binary was run with -update.
func Update() bool { return *update }

// Check compares got with the file at path. With -update it writes got
// to path instead, creating the file's directory, and passes. Without it,
// a missing or unreadable file stops the test (t.Fatalf), and a file that
// differs from got fails it (t.Errorf) with the first differing line of
// each and the advice to run with -update if the change is intended.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run go test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from golden file %s (run go test with -update if the change is intended):\n%s", path, Diff(got, want))
	}
}

// Diff describes where got and want first differ: the 1-based line
// number and both lines, each cut to 300 bytes. It returns "" when they
// are equal.
func Diff(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		gl, gok := line(g, i)
		wl, wok := line(w, i)
		if gl == wl && gok == wok {
			continue
		}
		return fmt.Sprintf("first difference at line %d:\n got: %s\nwant: %s", i+1, show(gl, gok), show(wl, wok))
	}
	// Unreachable: equal line lists join to equal bytes.
	return "the bytes differ"
}

func line(lines []string, i int) (string, bool) {
	if i < len(lines) {
		return lines[i], true
	}
	return "", false
}

func show(s string, ok bool) string {
	if !ok {
		return "(end of file)"
	}
	const limit = 300
	if len(s) > limit {
		return fmt.Sprintf("%q… (%d bytes)", s[:limit], len(s))
	}
	return fmt.Sprintf("%q", s)
}
