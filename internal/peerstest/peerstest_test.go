package peerstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: the first virtualenv with every executable wins; one that lacks
// an executable is passed over, and nothing found names what was tried and
// how to install it.
func TestFind(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("AIMETER_CACHE", cache)
	mk := func(venv string, exes ...string) {
		bin := filepath.Join(cache, venv, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range exes {
			if err := os.WriteFile(filepath.Join(bin, e), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := find([]string{"mlserver"}, ""); err == nil || !strings.Contains(err.Error(), "install-peers.sh kserve-python") {
		t.Fatalf("empty cache: %v", err)
	}
	mk("peers-venv", "python")              // no mlserver
	mk("kserve-venv", "python", "mlserver") // the one to find
	bin, err := find([]string{"mlserver"}, "")
	if err != nil || bin != filepath.Join(cache, "kserve-venv", "bin") {
		t.Fatalf("got %q, %v: want kserve-venv", bin, err)
	}
	mk("peers-venv", "mlserver")
	if bin, _ := find([]string{"mlserver"}, ""); bin != filepath.Join(cache, "peers-venv", "bin") {
		t.Errorf("got %q: peers-venv comes first once it has mlserver", bin)
	}
	if _, err := find([]string{"tritonserver"}, ""); err == nil || !strings.Contains(err.Error(), "has no tritonserver") {
		t.Errorf("missing everywhere: %v", err)
	}
}
