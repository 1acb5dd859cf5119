package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.fatal = true
}

func TestDiff(t *testing.T) {
	tests := []struct{ got, want, out string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n got: \"b\"\nwant: \"c\""},
		{"a\n", "a\nb\n", "line 2:\n got: \"\"\nwant: \"b\""},
		{"a\nb", "a\nb\n", "line 3:\n got: (end of file)\nwant: \"\""},
	}
	for _, tc := range tests {
		d := Diff([]byte(tc.got), []byte(tc.want))
		if tc.out == "" && d != "" || !strings.HasSuffix(d, tc.out) {
			t.Errorf("Diff(%q, %q) = %q, want it to end with %q", tc.got, tc.want, d, tc.out)
		}
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("x\n"))
	if !r.fatal || !strings.Contains(r.errs[0], "-update") {
		t.Errorf("missing file: %q, want a fatal error advising -update", r.errs)
	}

	*update = true
	Check(t, path, []byte("one\ntwo\n"))
	*update = false
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("after -update: %q, %v", b, err)
	}

	r = &recorder{TB: t}
	Check(r, path, []byte("one\ntwo\n"))
	if len(r.errs) != 0 {
		t.Errorf("equal bytes: %q", r.errs)
	}
	Check(r, path, []byte("one\nTWO\n"))
	if len(r.errs) != 1 || r.fatal || !strings.Contains(r.errs[0], "line 2") || !strings.Contains(r.errs[0], path) || !strings.Contains(r.errs[0], "-update") {
		t.Errorf("differing bytes: %q, want one error naming %s, line 2 and -update", r.errs, path)
	}
}
