// Package toolcache locates aimeter's cache of third-party tools that tests
// and benchmarks use (Ollama, the peers' Python virtualenvs, wrk, vegeta,
// ghz): the directory that scripts/install-ollama.sh and
// scripts/install-peers.sh install into.
package toolcache

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir returns $AIMETER_CACHE, or $HOME/.cache/aimeter when it is unset, as
// the install scripts choose it. It fails only when neither is known.
func Dir() (string, error) {
	if dir := os.Getenv("AIMETER_CACHE"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no AIMETER_CACHE and no home directory for aimeter's tool cache: %v", err)
	}
	return filepath.Join(home, ".cache", "aimeter"), nil
}
