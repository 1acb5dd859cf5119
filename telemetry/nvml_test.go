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
