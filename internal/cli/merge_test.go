package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeCommand runs a test as 3 shards and merges them with `aimeter
// merge`: the merge prints the per-shard table and the merged verdict,
// and exits with it; `aimeter report` of the merged bundle gives the same
// verdict and exit code. Two shards of the three are refused (exit 2,
// naming the missing shard, nothing written), and merged with
// --allow-partial are INVALID (exit 3) naming it.
func TestMergeCommand(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i := range 3 {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		if r := runCLI(t, "", shardRun(dir, "--shard", fmt.Sprintf("%d/3", i))...); r.code != ExitOK {
			t.Fatalf("shard %d: %v", i, r)
		}
		dirs = append(dirs, dir)
	}
	merged := filepath.Join(root, "merged")
	m := runCLI(t, "", append([]string{"merge", "--output-dir", merged}, dirs...)...)
	if m.code != ExitOK && m.code != ExitInvalid {
		t.Fatalf("merge: %v", m)
	}
	if !strings.Contains(m.stdout, "Merged 3 of 3 shards") || !strings.Contains(m.stdout, "merge.json") {
		t.Errorf("merge prints no per-shard table:\n%s", m.stdout)
	}
	verdictLine := func(out string) string {
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, "Result is") {
				return line
			}
		}
		return ""
	}
	rep := runCLI(t, "", "report", merged)
	if v := verdictLine(m.stdout); v == "" || v != verdictLine(rep.stdout) || rep.code != m.code || strings.Contains(v, "-") {
		t.Errorf("merge says %q (exit %d), aimeter report %q (exit %d)", v, m.code, verdictLine(rep.stdout), rep.code)
	}
	// After its table, merge prints what aimeter report prints of the
	// merged bundle, from the bundle it wrote (not read back).
	if !strings.HasSuffix(m.stdout, rep.stdout) {
		t.Errorf("merge's output does not end with aimeter report's:\n%s\n---\n%s", m.stdout, rep.stdout)
	}

	missing := filepath.Join(root, "missing")
	r := runCLI(t, "", "merge", "--output-dir", missing, dirs[0], dirs[2])
	if r.code != ExitUsage || !strings.Contains(r.stderr, "shard 1") || !strings.Contains(r.stderr, "missing [1]") {
		t.Errorf("merge of shards 0 and 2: %v; want exit 2 naming shard 1", r)
	}
	r = runCLI(t, "", "merge", "--allow-partial", "--output-dir", missing, dirs[0], dirs[2])
	if r.code != ExitInvalid || !strings.Contains(r.stdout, "shard(s) [1] missing") {
		t.Errorf("merge --allow-partial of shards 0 and 2: %v; want exit 3 naming shard 1", r)
	}
}
