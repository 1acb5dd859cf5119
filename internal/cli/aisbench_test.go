package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainAisBench: aimeter train --ais-bench runs a testdata package
// (aisbench's tests check the bundles): a complete run exits 0 and prints
// the figures with their sources; a package whose phases were never timed
// is incomplete (3); one whose run_eval fails is a failed run (1); a
// folder without code/benchmark.sh is refused (2).
func TestTrainAisBench(t *testing.T) {
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	pkg := func(name string) string { return filepath.Join("..", "..", "aisbench", "testdata", name) }
	for _, c := range []struct {
		why  string
		args []string
		code int
		want string
	}{
		{"a stubs 1.0 package that completes", []string{"--ais-bench", pkg("resnet50")}, ExitOK, "Th (sum over ranks)"},
		{"no phase banners: no T_TR, incomplete", []string{"--ais-bench", pkg("bert-nvidia")}, ExitInvalid, "has only the day"},
		{"not a package", []string{"--ais-bench", t.TempDir()}, ExitUsage, "no code/benchmark.sh"},
		{"--trials does not apply", []string{"--ais-bench", pkg("resnet50"), "--trials", "2"}, ExitUsage, "--ais-bench runs the package once"},
	} {
		t.Run(c.why, func(t *testing.T) {
			args := append([]string{"train", "-q", "--no-store", "--output-dir", filepath.Join(t.TempDir(), "out")}, c.args...)
			r := runCLI(t, "", args...)
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("exit %d, want %d and %q: %v", r.code, c.code, c.want, r)
			}
		})
	}
}

// TestRunAisBench: aimeter run --ais-bench says why an inference package
// does not run: its LoadGen module missing here.
func TestRunAisBench(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	r := runCLI(t, "", "run", "--ais-bench", filepath.Join("..", "..", "aisbench", "testdata", "resnet50-inference"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "LoadGen Python module `loadgen` is not installed") {
		t.Errorf("exit %d: %v", r.code, r)
	}
	r = runCLI(t, "", "run", "--ais-bench", "x", "--duration", "1s")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "takes no other flag") {
		t.Errorf("exit %d: %v", r.code, r)
	}
}
