package benchmark

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/accuracy"
	"aimeter/bundle"
)

// TestScoreLogLabels scores a log against labels and tells a bad labels
// file, a bad log and a missing log apart.
func TestScoreLogLabels(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	labels := write("labels.json", "[1, 2, 3]")
	if _, err := ScoreLogLabels(dir, labels, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no log: %v, want the open's error", err)
	}
	write(bundle.AccuracyFile, `[{"seq_id": 0, "qsl_idx": 0, "data": "01"}, {"seq_id": 1, "qsl_idx": 1, "data": "00"}]`)
	target := accuracy.Target{Text: "30", Value: 30}
	s, err := ScoreLogLabels(dir, labels, &target)
	if err != nil {
		t.Fatal(err)
	}
	if s.Correct != 1 || s.Scored != 2 || !s.Passed() {
		t.Errorf("score %+v: want 1 of 3 right (one missing), passing 30%%", s)
	}
	for _, tc := range []struct{ labels, log, field, want string }{
		{filepath.Join(dir, "none.json"), "", "Labels", "none.json"},
		{write("obj.json", `{"a": 1}`), "", "Labels", "want a JSON array of class numbers"},
		{write("big.json", "[1, 300]"), "", "Labels", "entry 1 is 300"},
		{write("short.json", "[1]"), "", "Log", "qsl_idx 1 is outside"},
		{labels, `[{"seq_id": 0, "qsl_idx": 0, "data": "0G"}]`, "Log", "seq_id 0"},
	} {
		if tc.log != "" {
			write(bundle.AccuracyFile, tc.log)
		}
		var ue *UsageError
		_, err := ScoreLogLabels(dir, tc.labels, nil)
		if !errors.As(err, &ue) || ue.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a UsageError on %s saying %q", tc.labels, err, tc.field, tc.want)
		}
	}
}
