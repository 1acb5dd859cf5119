package telemetry

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestOpenRAPL(t *testing.T) {
	root := raplFixture(t, "1000", "20", "262143328850")
	r, err := OpenRAPL(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Devices(); !slices.Equal(got, []string{"package-0", "package-0/dram"}) {
		t.Errorf("devices %v: want package-0 and its dram, not core", got)
	}
	// The first poll is the zero of every counter; the next counts from it.
	rs, err := r.Poll(context.Background())
	if err != nil || len(rs) != 2 || rs[0].Value != 0 || rs[1].Value != 0 {
		t.Fatalf("first poll %+v, %v", rs, err)
	}
	setCounter(t, root, "intel-rapl:0:0", "2000020") // +2 J of DRAM
	rs, _ = r.Poll(context.Background())
	if rs[1].Value != 2 || rs[1].Device != "package-0/dram" || rs[0].Value != 0 {
		t.Errorf("second poll %+v: want 2 J of DRAM", rs)
	}
}

func TestOpenRAPLErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(root string)
		want  string
	}{
		{"no zones at all: a VM or a container", func(root string) {
			os.RemoveAll(filepath.Join(root, "intel-rapl:0"))
			os.RemoveAll(filepath.Join(root, "intel-rapl:0:0"))
			os.RemoveAll(filepath.Join(root, "intel-rapl:0:1"))
		}, "no RAPL on this host"},
		{"a range that is no number", func(root string) {
			os.WriteFile(filepath.Join(root, "intel-rapl:0", "max_energy_range_uj"), []byte("lots"), 0o644)
		}, "max_energy_range_uj \"lots\""},
		{"a counter that is no number", func(root string) {
			os.WriteFile(filepath.Join(root, "intel-rapl:0", "energy_uj"), []byte("-3"), 0o644)
		}, "not a whole number of µJ"},
		{"a counter file missing", func(root string) {
			os.Remove(filepath.Join(root, "intel-rapl:0:0", "energy_uj"))
		}, "rapl package-0/dram"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := raplFixture(t, "1", "1", "100")
			tt.setup(root)
			_, err := OpenRAPL(root, "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A counter above its range is a lying source: the poll fails (a gap),
// it does not count a negative wrap.
func TestRAPLCounterAboveRange(t *testing.T) {
	root := raplFixture(t, "1", "1", "100")
	r, err := OpenRAPL(root, "")
	if err != nil {
		t.Fatal(err)
	}
	setCounter(t, root, "intel-rapl:0", "101")
	if _, err := r.Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "exceeds max_energy_range_uj") {
		t.Errorf("error %v", err)
	}
}

func TestRAPLRootOnlyNote(t *testing.T) {
	err := raplReadError("package-0", "/x/energy_uj", &fs.PathError{Op: "open", Path: "/x/energy_uj", Err: fs.ErrPermission})
	if !strings.Contains(err.Error(), "readable by root only") || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("error %v", err)
	}
	if os.Geteuid() == 0 {
		t.Skip("running as root, which reads any file: the chmod half of this test needs an ordinary user")
	}
	root := raplFixture(t, "1", "1", "100")
	if err := os.Chmod(filepath.Join(root, "intel-rapl:0", "energy_uj"), 0o200); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRAPL(root, ""); err == nil || !strings.Contains(err.Error(), "readable by root only") {
		t.Errorf("error %v", err)
	}
}

// The real powercap files, where this machine has them and lets us read.
func TestRAPLRealFiles(t *testing.T) {
	if _, err := os.Stat(DefaultPowercap); err != nil {
		t.Skipf("no %s on this machine (a VM or container without RAPL): the fixture tests cover the same code", DefaultPowercap)
	}
	r, err := OpenRAPL("", "")
	if err != nil {
		t.Skipf("RAPL not readable here: %v", err)
	}
	if _, err := r.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	rs, err := r.Poll(context.Background())
	if err != nil || len(rs) == 0 || rs[0].Value < 0 {
		t.Errorf("second poll %+v, %v", rs, err)
	}
}
