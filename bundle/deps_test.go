package bundle

import (
	"os/exec"
	"strings"
	"testing"
)

// The bundle depends on nothing above it: the packages that define raw
// parts (gbt, train, telemetry, invocation …) import bundle, never the
// other way round, and neither do the formats it no longer writes itself.
func TestDependsOnNothingAbove(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the package's dependencies:", err)
	}
	out, err := exec.Command(gotool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	above := []string{"aimeter/gbt", "aimeter/train", "aimeter/telemetry", "aimeter/scrape", "aimeter/mlperflog",
		"aimeter/accuracy", "aimeter/report", "aimeter/sut", "aimeter/derived", "aimeter/benchmark"}
	var project []string
	for _, dep := range strings.Fields(string(out)) {
		if !strings.HasPrefix(dep, "aimeter/") {
			continue
		}
		project = append(project, dep)
		for _, a := range above {
			if dep == a || strings.HasPrefix(dep, a+"/") {
				t.Errorf("bundle depends on %s", dep)
			}
		}
	}
	if len(project) == 0 {
		t.Fatalf("go list -deps named no package of the project:\n%s", out)
	}
}
