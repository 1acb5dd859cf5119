package cli

import (
	"path/filepath"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sysinfo"
)

func TestDemoSpinWindow(t *testing.T) {
	tests := []struct {
		name  string
		flag  time.Duration
		given bool
		cpus  int
		want  time.Duration
	}{
		{"2 cores, default: never spin", loadgen.DefaultSpinWindow, false, 2, -1},
		{"2 cores, given: the flag wins", 3 * time.Millisecond, true, 2, 3 * time.Millisecond},
		{"4 cores, default: spin", loadgen.DefaultSpinWindow, false, 4, loadgen.DefaultSpinWindow},
		{"1 core, given as never", -1, true, 1, -1},
	}
	for _, tt := range tests {
		if got := demoSpinWindow(tt.flag, tt.given, tt.cpus); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

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
