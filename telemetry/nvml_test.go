//go:build linux && (amd64 || arm64)

package telemetry

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestNVMLMissingLibrary(t *testing.T) {
	_, err := OpenNVML(filepath.Join(t.TempDir(), "libnvidia-ml.so.1"), "")
	if !errors.Is(err, ErrNoNVML) || !strings.Contains(err.Error(), "no NVML on this host") {
		t.Errorf("error %v: want ErrNoNVML", err)
	}
}

// fakeNVML builds testdata/nvml/fakenvml.c into a shared library with the
// C compiler, for the machines without a GPU that CI runs on.
func fakeNVML(t testing.TB) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("needs a C compiler (cc) to build the stand-in libnvidia-ml.so.1; TestNVMLMissingLibrary covers a host without NVML")
	}
	lib := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, filepath.Join("testdata", "nvml", "fakenvml.c")).CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in NVML: %v\n%s", err, out)
	}
	return lib
}

// Through purego, the same code path a real driver takes: gpu0's energy
// counter (5,001,000 mJ at open, then 1000 mJ more at each call), power
// 250,500 mW = 250.5 W, utilisation 75 %; gpu1 has no counter, so power
// and utilisation only.
func TestNVMLStandIn(t *testing.T) {
	lib := fakeNVML(t)
	synctest.Test(t, func(t *testing.T) { nvmlStandIn(t, lib) })
}

// nvmlStandIn is TestNVMLStandIn on synctest's clock, so that the counter's
// 1 J a read is 1 W, below the ceiling.
func nvmlStandIn(t *testing.T, lib string) {
	n, err := OpenNVML(lib, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if c := n.PowerCeiling("n1", "gpu0"); c != 1050 {
		t.Errorf("gpu0's ceiling %v W: want its 700 W limit × 1.5", c)
	}
	if c := n.PowerCeiling("n1", "gpu1"); c != DefaultMaxPowerW {
		t.Errorf("gpu1's ceiling %v W: want the default, it reports no limit", c)
	}
	if d := n.Devices(); len(d) != 2 || d[0] != "gpu0" {
		t.Fatalf("devices %v", d)
	}
	if notes := n.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "gpu1 has no total energy counter") {
		t.Errorf("notes %q", notes)
	}
	rs, err := n.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Reading{
		{Node: "n1", Device: "gpu0", Kind: Energy, Value: 0}, // the counter's first read
		{Node: "n1", Device: "gpu0", Kind: Power, Value: 250.5},
		{Node: "n1", Device: "gpu0", Kind: Utilization, Value: 75},
		{Node: "n1", Device: "gpu1", Kind: Power, Value: 250.5},
		{Node: "n1", Device: "gpu1", Kind: Utilization, Value: 75},
	}
	if len(rs) != len(want) {
		t.Fatalf("readings %+v, want %+v", rs, want)
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("reading %d = %+v, want %+v", i, rs[i], want[i])
		}
	}
	time.Sleep(time.Second)
	rs, err = n.Poll(context.Background())
	if err != nil || rs[0].Value != 1 {
		t.Errorf("second energy reading %v J, %v: want 1 J counted (5,003,000 − 5,002,000 mJ)", rs[0].Value, err)
	}
}

// The real driver, where this machine has one (not on CI).
func TestNVMLRealDriver(t *testing.T) {
	n, err := OpenNVML("", "")
	if errors.Is(err, ErrNoNVML) {
		t.Skipf("no NVIDIA driver here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rs, err := n.Poll(context.Background())
	if err != nil || len(rs) == 0 {
		t.Fatalf("poll %+v, %v", rs, err)
	}
	for _, r := range rs {
		t.Logf("%s %s %v", r.Device, r.Kind, r.Value)
	}
}

// NVML through its function table with stubs in place of the driver (the
// same table purego fills), read by the Sampler at 0, 1, 2 and 3 s on
// synctest's clock. gpu0's enforced power limit is 700 W, so its ceiling
// is 1050 W; its counter and power take the row's values at each read.
// The window 0–3 s holds three steps; each row works out the energy of
// those counted and the gap of those that are not (from 1 to 2 s).
func TestNVMLCounterSteps(t *testing.T) {
	const top = ^uint64(0) // the counter's largest value, mJ
	tests := []struct {
		why      string
		mj       [4]uint64 // the counter at each read
		mw       uint32    // the power at every read but the 2 s one, which is 250 W
		mw2      uint32    // the power at the 2 s read
		energy   float64   // J over the window, by the counter
		coverage float64
		gap      string // what the gap's reason says; "" for none
	}{
		{"a steady 250 W: three steps of 250 J", [4]uint64{5_000_000, 5_250_000, 5_500_000, 5_750_000}, 250_000, 250_000,
			750, 1, ""},
		{"a wrap of the 64 bits: 2^64 − 1 − 100,000 mJ, then 149,999 mJ is 250 J: counted",
			[4]uint64{top - 350_000, top - 100_000, 149_999, 399_999}, 250_000, 250_000, 750, 1, ""},
		{"a reset (a driver reload): 5,250 J to 10 J is no wrap (1.8e13 J in 1 s)",
			[4]uint64{5_000_000, 5_250_000, 10_000, 260_000}, 250_000, 250_000, 500, 2.0 / 3, "a reset or a backwards step"},
		{"a backwards step of 1 J is no wrap either",
			[4]uint64{5_000_000, 5_250_000, 5_249_000, 5_499_000}, 250_000, 250_000, 500, 2.0 / 3, "went down from 5250.0 to 5249.0 J"},
		{"a jump of 2000 J in 1 s (2 kW) is above the ceiling of 1050 W",
			[4]uint64{5_000_000, 5_250_000, 7_250_000, 7_500_000}, 250_000, 250_000, 500, 2.0 / 3, "above the ceiling of 1050 W"},
		{"an absurd power reading (4 GW at 2 s) is left out: the counter still counts 750 J",
			[4]uint64{5_000_000, 5_250_000, 5_500_000, 5_750_000}, 250_000, 4_000_000_000, 750, 1, "4e+06 W is above the ceiling of 1050 W"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				read := 0
				n := &NVML{node: "n1", devices: []nvmlDevice{{handle: 1, name: "gpu0", energy: true, limitW: 700}},
					getEnergy: func(_ uintptr, mj *uint64) int32 { *mj = tt.mj[min(read, 3)]; return 0 },
					getPower: func(_ uintptr, mw *uint32) int32 {
						*mw = tt.mw
						if read == 2 {
							*mw = tt.mw2
						}
						read++ // the last function of a read of gpu0 but one
						return 0
					},
					getUtil:   func(_ uintptr, u *nvmlUtilization) int32 { u.GPU = 75; return 0 },
					getLimit:  func(_ uintptr, mw *uint32) int32 { *mw = 700_000; return 0 },
					errString: func(int32) string { return "stub" },
				}
				s := Start(time.Now(), []Source{n}, Options{})
				time.Sleep(3*time.Second + 500*time.Millisecond)
				l, err := s.Stop(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if tt.gap == "" && len(l.Gaps) != 0 || tt.gap != "" && (len(l.Gaps) != 1 || l.Gaps[0].Device != "gpu0" ||
					!strings.Contains(l.Gaps[0].Reason, tt.gap) || l.Gaps[0].DurationNs == 0) {
					t.Fatalf("gaps %+v, want one saying %q", l.Gaps, tt.gap)
				}
				if g := l.Gaps; tt.gap != "" && g[0].Kind == Energy && (g[0].T != sec || g[0].DurationNs != sec) {
					t.Errorf("gap %+v: want from 1 to 2 s", g[0])
				}
				if g := l.Gaps; tt.gap != "" && g[0].Kind == Power && (g[0].T != sec || g[0].DurationNs != 2*sec) {
					t.Errorf("gap %+v: want from 1 to 3 s, the power readings either side of the one left out", g[0])
				}
				var e SeriesSummary
				for _, ss := range Summarize(l, Window{0, 3 * sec}).Series {
					if ss.Kind == Energy {
						e = ss
					}
					if ss.Kind == Power && val(ss.PeakW) > 1050 {
						t.Errorf("power %+v: a reading above the ceiling was kept", ss)
					}
				}
				if !near(val(e.EnergyJ), tt.energy) || !near(e.Coverage, tt.coverage) {
					t.Errorf("gpu0 counter %v J, coverage %v: want %v J, %v", val(e.EnergyJ), e.Coverage, tt.energy, tt.coverage)
				}
			})
		})
	}
}
