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
	"testing/synctest"
	"time"
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

// The powercap counter of package-0 through the Sampler, read at 0, 1, 2
// and 3 s (and at Stop, 3.5 s) on synctest's clock, with energy_uj set to
// the row's values just before each read; its range is 262,143.328850 J.
// The window 0–3 s holds three steps; each row works out the energy of
// those counted, the coverage and the gap of those that are not.
func TestRAPLCounterSteps(t *testing.T) {
	tests := []struct {
		why      string
		uj       [4]string // energy_uj at the reads at 0, 1, 2 and 3 s
		limitUW  string    // constraint_0_max_power_uw, "" for none
		energy   float64   // J over the window
		coverage float64
		gap      string // "" for none; else what its reason says, the gap being from 1 to 2 s
	}{
		{"a steady 100 W: three steps of 100 J", [4]string{"1000000000", "1100000000", "1200000000", "1300000000"}, "",
			300, 1, ""},
		{"a wrap: 262,100 J, then 56.67115 J is 262,143.32885 − 262,100 + 56.67115 = 100 J: all three steps count",
			[4]string{"262000000000", "262100000000", "56671150", "156671150"}, "", 300, 1, ""},
		{"the issue's case: 500 J backwards is no wrap (261,643 J in 1 s): the step adds nothing, 2 s of 3 covered",
			[4]string{"1000000000", "1100000000", "600000000", "700000000"}, "", 200, 2.0 / 3, "not a wrap of its 262143.3 J range"},
		{"a reset to 0 from 1100 J is no wrap either (261,043 J in 1 s)",
			[4]string{"1000000000", "1100000000", "0", "100000000"}, "", 200, 2.0 / 3, "so a reset or a backwards step"},
		{"a jump of 200,000 J in 1 s (200 kW) is above the default ceiling of 100 kW",
			[4]string{"1000000000", "1100000000", "201100000000", "201200000000"}, "", 200, 2.0 / 3, "jumped by 200000.0 J"},
		{"the domain's constraint of 100 W makes the ceiling 150 W: a step of 200 J in 1 s is a jump",
			[4]string{"1000000000", "1100000000", "1300000000", "1400000000"}, "100000000", 200, 2.0 / 3, "above the ceiling of 150 W"},
		{"with that constraint, a wrap that means 200 J in 1 s is no wrap",
			[4]string{"262000000000", "262100000000", "156671150", "256671150"}, "100000000", 200, 2.0 / 3, "not a wrap"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			root := raplFixture(t, tt.uj[0], "0", "262143328850")
			if tt.limitUW != "" {
				if err := os.WriteFile(filepath.Join(root, "intel-rapl:0", "constraint_0_max_power_uw"), []byte(tt.limitUW+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			synctest.Test(t, func(t *testing.T) {
				r, err := OpenRAPL(root, "")
				if err != nil {
					t.Fatal(err)
				}
				s := Start(time.Now(), []Source{r}, Options{})
				for _, v := range tt.uj[1:] {
					time.Sleep(500 * time.Millisecond)
					setCounter(t, root, "intel-rapl:0", v)
					time.Sleep(500 * time.Millisecond)
				}
				time.Sleep(500 * time.Millisecond)
				l, err := s.Stop(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var gaps []Gap
				for _, g := range l.Gaps {
					if g.Device == "package-0" {
						gaps = append(gaps, g)
					}
				}
				if tt.gap == "" && len(gaps) != 0 || tt.gap != "" && (len(gaps) != 1 || gaps[0].T != sec || gaps[0].DurationNs != sec ||
					gaps[0].Kind != Energy || gaps[0].Source != "rapl" || !strings.Contains(gaps[0].Reason, tt.gap)) {
					t.Fatalf("gaps %+v, want %q from 1 to 2 s", l.Gaps, tt.gap)
				}
				var pkg SeriesSummary
				for _, ss := range Summarize(l, Window{0, 3 * sec}).Series {
					if ss.Device == "package-0" {
						pkg = ss
					}
				}
				if !near(val(pkg.EnergyJ), tt.energy) || !near(pkg.Coverage, tt.coverage) || !near(val(pkg.AvgW), 100) {
					t.Errorf("package-0 %v J, coverage %v, average %v W: want %v J, %v, 100 W", val(pkg.EnergyJ), pkg.Coverage, val(pkg.AvgW), tt.energy, tt.coverage)
				}
			})
		})
	}
}
