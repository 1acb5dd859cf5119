package endpoints

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/internal/peerstest"
)

// TestCheckerSteadyState writes goldenSweep's tree and runs MLCommons'
// checker (endpoints-submission-cli 1.5.3.0) on it: every steady_state
// block is valid and consistent with its window, the point with a window
// found has the window as its official result (no steady-state-basis
// warning), the points without one fall back to the whole run by their
// status, and only the point with no analysis has no block. (The hand-made
// sweep has 4 points, so the checker fails it on point-count; this test
// reads only the steady-state rules.)
func TestCheckerSteadyState(t *testing.T) {
	bin := peerstest.Bin(t, []string{"endpoints-submission-cli"}, "submission_checker")
	files, err := Build(goldenSweep(), readTestSubmission(t))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for name, data := range files {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "endpoints-submission-cli"), "check-submission", filepath.Join(out, "Example"), "--json", "--no-annotate")
	data, _ := cmd.Output() // exit 1: point-count
	var rep struct {
		Results []struct {
			Rule, Severity, Message string
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("endpoints-submission-cli: %v: %s", err, data)
	}
	basis := map[string]string{}
	valid, consistent := 0, 0
	for _, r := range rep.Results {
		switch r.Rule {
		case "steady-state-valid", "steady-state-consistency":
			if r.Severity != "info" {
				t.Errorf("%s %s: %s", r.Severity, r.Rule, r.Message)
			} else if r.Rule == "steady-state-valid" {
				valid++
			} else {
				consistent++
			}
		case "steady-state-basis":
			point, _, _ := strings.Cut(r.Message, ":")
			basis[point] = r.Severity + ": " + r.Message
		}
	}
	if valid != 3 || consistent != 3 {
		t.Errorf("%d blocks valid and %d consistent, want 3 and 3 (r1, r4, r12)", valid, consistent)
	}
	want := map[string]string{
		"Point 1":  "info: Point 1: official result is the steady-state window (6 super-passes)",
		"Point 4":  "warning: Point 4: status 'insufficient_passes'",
		"Point 12": "warning: Point 12: status 'insufficient_duration'",
		"Point 40": "warning: Point 40: no steady_state block",
	}
	for point, w := range want {
		if !strings.HasPrefix(basis[point], w) {
			t.Errorf("steady-state-basis of %s: %q, want %q…", point, basis[point], w)
		}
	}
}
