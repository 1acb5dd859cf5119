package cli

import (
	"path/filepath"
	"testing"

	"aimeter/bundle"
	"aimeter/sysinfo"
)

// TestRunRecordsHostLoad: aimeter run keeps the machine's load in run.json
// wherever /proc can be read.
func TestRunRecordsHostLoad(t *testing.T) {
	if _, err := sysinfo.ReadCPUUsage(); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	// Server lasts 300 ms, long enough for the CPU time counters (10 ms
	// ticks) to move; the bundle is written, VALID or not.
	out := filepath.Join(t.TempDir(), "out")
	if r := runCLI(t, "", quickArgs("Server", out)...); r.code != 0 && r.code != int(ExitInvalid) {
		t.Fatal(r)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if l := b.HostLoad; l == nil || l.CPUs < 1 || l.WallSeconds <= 0 {
		t.Errorf("host load %+v, want a measured one", l)
	}
}
