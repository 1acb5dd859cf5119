// Package binarytest builds the aimeter binary for tests that run it as a
// user does: as separate processes, signalled, in a shell.
package binarytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binary is cmd/aimeter built at most once per test process (without
// -race, whatever the test binary's build). The zero value is ready to
// use; a package's tests keep one and call Remove from TestMain.
type Binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Path builds the binary on the first call and returns its path; a
// build that fails fails t (and every later caller) with go build's output.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "aimeter-bin"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "aimeter")
		if out, err := exec.Command("go", "build", "-o", b.path, "aimeter/cmd/aimeter").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the built binary's directory, if one was made.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
