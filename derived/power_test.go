package derived

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
	"aimeter/telemetry"
)

// telemetry.json is a raw file: it reads back equal, and result.json's
// power figures regenerate byte for byte from it.
func TestTelemetryRoundTrip(t *testing.T) {
	b := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.MultiStream, loadgen.PerformanceOnly))
	w, ok := PowerWindow(b.Result)
	if !ok || w.ToNs <= w.FromNs {
		t.Fatalf("power window %+v", w)
	}
	// 100 W before, during and after the window: 100 W × the window.
	telemetry.SetLog(b, &telemetry.Log{StartUnixNs: b.Result.StartTime.UnixNano(), PeriodNs: 1e9, Sources: []telemetry.SourceInfo{{Name: "replay", Spec: "replay:x.csv"}},
		Readings: []telemetry.Reading{{T: w.FromNs - 1e8, Source: "replay", Device: "node", Kind: telemetry.Power, Value: 100},
			{T: w.ToNs + 1e8, Source: "replay", Device: "node", Kind: telemetry.Power, Value: 100}}})
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	r, err := Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := r.Power
	if p == nil || !near(*p.EnergyJ, 100*w.Seconds()) || p.Efficiency == nil || p.Efficiency.Name != "millijoules per query" ||
		!near(p.Efficiency.Value, *p.EnergyJ*1000/float64(r.Samples.OK/b.Result.Effective.SamplesPerQuery)) {
		t.Errorf("power %+v: want 100 W × %v s and mJ per query of 8-sample queries", p, w.Seconds())
	}
	back, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if telemetry.LogOf(back) == nil || len(telemetry.LogOf(back).Readings) != 2 || telemetry.LogOf(back).Readings[1] != telemetry.LogOf(b).Readings[1] {
		t.Fatalf("telemetry read back %+v", telemetry.LogOf(back))
	}
	again := t.TempDir()
	if _, err := Regenerate(again, back); err != nil {
		t.Fatal(err)
	}
	one, _ := os.ReadFile(filepath.Join(dir, bundle.ResultFile))
	two, _ := os.ReadFile(filepath.Join(again, bundle.ResultFile))
	if !bytes.Equal(one, two) || !bytes.Contains(one, []byte(`"power"`)) {
		t.Errorf("result.json differs after regeneration, or has no power:\n%s\n---\n%s", one, two)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9*b && d > -1e-9*b }
