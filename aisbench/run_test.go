package aisbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// needTools skips a test that runs packages where bash or python3 is
// missing (the CI machine has both).
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
}

func TestExecuteResnet50(t *testing.T) {
	needTools(t)
	run, out, err := Execute(context.Background(), Options{Dir: filepath.Join("testdata", "resnet50")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", run)
	t.Logf("%s", out.Stdout)
	for n := range out.Files {
		t.Log(n)
	}
	_ = os.Stdout
}
