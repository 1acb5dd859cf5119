// Package peerstest finds the Python virtualenvs of the third-party peers
// that tests run against (Seldon MLServer, NVIDIA tritonclient, MLCommons'
// mlperf-logging, …).
//
// scripts/install-peers.sh puts them under aimeter's cache ($AIMETER_CACHE,
// default ~/.cache/aimeter): peers-venv holds every peer (`install-peers.sh
// python`, several GB), kserve-venv only the KServe v2 peers, MLServer and
// tritonclient, and mlperf-logging, whose compliance checker and result
// summarizer internal/mllogtest runs (`install-peers.sh kserve-python`, what
// CI installs), and endpoints-venv MLPerf Endpoints' submission checker
// and mlperf-viz (`install-peers.sh endpoints-python`, also in CI). A test that needs a peer is skipped when none of them has
// it, or fails when AIMETER_REQUIRE_PEERS=1 (as in CI).
package peerstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/internal/toolcache"
)

// Venvs are the virtualenv directories under the cache, in the order
// searched.
var Venvs = []string{"peers-venv", "kserve-venv", "endpoints-venv"}

// Required reports whether AIMETER_REQUIRE_PEERS=1 is set, in which case a
// missing peer fails the test instead of skipping it.
func Required() bool { return os.Getenv("AIMETER_REQUIRE_PEERS") == "1" }

// Bin returns the bin directory of the first virtualenv that has every
// executable in exes and whose python imports every module in modules (a
// comma-separated Python import list; empty for none). Otherwise it skips
// t, or fails it under AIMETER_REQUIRE_PEERS=1, saying what was tried.
func Bin(t testing.TB, exes []string, modules string) string {
	t.Helper()
	bin, err := find(exes, modules)
	if err != nil {
		if Required() {
			t.Fatalf("%v (AIMETER_REQUIRE_PEERS=1)", err)
		}
		t.Skip(err)
	}
	return bin
}

func find(exes []string, modules string) (string, error) {
	cache, err := toolcache.Dir()
	if err != nil {
		return "", err
	}
	var tried []string
next:
	for _, v := range Venvs {
		bin := filepath.Join(cache, v, "bin")
		for _, exe := range append([]string{"python"}, exes...) {
			if _, err := os.Stat(filepath.Join(bin, exe)); err != nil {
				tried = append(tried, fmt.Sprintf("%s has no %s", bin, exe))
				continue next
			}
		}
		if modules != "" {
			if out, err := exec.Command(filepath.Join(bin, "python"), "-c", "import "+modules).CombinedOutput(); err != nil {
				tried = append(tried, fmt.Sprintf("%s cannot import %s: %v: %s", bin, modules, err, strings.TrimSpace(lastLine(out))))
				continue
			}
		}
		return bin, nil
	}
	need := append([]string{}, exes...)
	if modules != "" {
		need = append(need, modules)
	}
	return "", fmt.Errorf("no peers virtualenv with %s (scripts/install-peers.sh kserve-python installs MLServer, tritonclient and mlperf-logging; endpoints-python the MLPerf Endpoints checker): %s",
		strings.Join(need, ", "), strings.Join(tried, "; "))
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
