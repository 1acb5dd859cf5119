package cli

import (
	"strings"
	"testing"
)

// TestRunHelpGroupsFlags: `aimeter run --help` lists its flags under
// MLPerf, SUT, GB/T, run-control and output headings, each flag once, in
// that order, so a user finds them.
func TestRunHelpGroupsFlags(t *testing.T) {
	r := runCLI(t, "", "run", "--help")
	if r.code != ExitOK {
		t.Fatal(r)
	}
	out := r.stdout
	headings := []string{"MLPerf LoadGen test flags:", "System under test:", "GB/T 45087 inference test flags", "Run control:", "Output:"}
	last := -1
	for _, h := range headings {
		i := strings.Index(out, h)
		if i < 0 || i < last {
			t.Fatalf("heading %q missing or out of order:\n%s", h, out)
		}
		last = i
	}
	for _, row := range []struct{ flag, after, reason string }{
		{"--scenario", "MLPerf LoadGen test flags:", "a LoadGen setting"},
		{"--arrival-mode", "GB/T 45087 inference test flags", "a GB/T flag"},
		{"--output-dir", "Output:", "where results go"},
	} {
		n, at, pos := 0, -1, 0
		for line := range strings.Lines(out) {
			if strings.HasPrefix(strings.TrimLeft(line, " "), row.flag+" ") {
				n++
				at = pos
			}
			pos += len(line)
		}
		if i := strings.Index(out, row.after); at < i {
			t.Errorf("%s (%s) is not under %q", row.flag, row.reason, row.after)
		}
		if n != 1 {
			t.Errorf("%s listed %d times", row.flag, n)
		}
	}
}
