package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInapplicableFlagRefusedIssue39: the refusals issue 39 found
// missing, each of which ran (exit 0) before: a flag set where its plan
// field does not apply (benchmark.Rules) is a usage error (exit 2) naming
// the flag, and nothing runs.
func TestInapplicableFlagRefusedIssue39(t *testing.T) {
	for _, c := range []struct {
		why  string
		args []string
		flag string
	}{
		{"the data volume is a peak test's (mode 3): elasticity and pressure tolerance", []string{"--arrival-mode", "0", "--duration", "100ms", "--sample-bytes", "100"}, "--sample-bytes"},
		{"Table 10 gives the offline mode no timeout (IN-51): no threshold column", []string{"--arrival-mode", "4", "--timeout-class", "2"}, "--timeout-class"},
		{"Table 10 gives the offline mode no timeout (IN-51): a job timeout lost every job", []string{"--arrival-mode", "4", "--job-timeout", "1ms"}, "--job-timeout"},
		{"Offline issues at once: the issuer waits for no scheduled time", []string{"--scenario", "Offline", "--spin-window", "1ms"}, "--spin-window"},
		{"the null SUT reports no first token: a TTFT bound measures nothing", []string{"--sut", "null", "--slo", "ttft=1s"}, "--slo"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		r := runCLI(t, dir, append([]string{"run", "-q", "--no-store", "--output-dir", out}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.flag+" applies only to") {
			t.Errorf("%s: want exit %d refusing %s where it does not apply:\n%v", c.why, ExitUsage, c.flag, r)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the output directory was created: the run ran", c.why)
		}
	}
}
