package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// aimeter check says of a training bundle what aimeter train said: a
// complete result checks clean (exit 0), an incomplete one is an error
// naming why (exit 3, train's own exit code). It has no MLPerf inference
// logs, and their absence is no error.
func TestCheckTrainingBundle(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		why   string
		out   string
		args  []string
		code  int
		check string // in check's output
	}{
		{"a complete reference training run", "complete", []string{"train", "--workload", "reference", "--dataset", "synthetic", "--trials", "1", "--epochs", "1", "-q", "--output-dir", filepath.Join(dir, "complete")},
			ExitOK, "1 runs checked: 0 errors, 0 warnings"},
		{"a program that logged no training: incomplete", "incomplete", []string{"train", "-q", "--output-dir", filepath.Join(dir, "incomplete"), "--", "sh", "-c", "echo hello"},
			ExitInvalid, "the result is incomplete: no trial has both a training start and a training end"},
	} {
		r := runCLI(t, dir, tc.args...)
		if r.code != tc.code {
			t.Fatalf("%s: train: %v; want exit %d", tc.why, r, tc.code)
		}
		c := runCLI(t, dir, "check", filepath.Join(dir, tc.out))
		if c.code != tc.code || !strings.Contains(c.stdout+c.stderr, tc.check) || strings.Contains(c.stdout, "mlperf_log_summary.txt") {
			t.Errorf("%s: check: %v; want exit %d (train's) saying %q", tc.why, c, tc.code, tc.check)
		}
	}
}
