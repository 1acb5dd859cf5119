package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen/loadgentest"
	"aimeter/telemetry"
)

// constantTrace writes a replay of a CPU at 250 W and a GPU at 150 W, one
// reading a second from 5 s before the run to 60 s into it.
func constantTrace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("t_ns,node,device,watts\n")
	for s := int64(-5); s <= 60; s++ {
		fmt.Fprintf(&b, "%d,node-1,cpu,250\n%d,node-1,gpu0,150\n", s*1e9, s*1e9)
	}
	file := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// The check: a constant 250 W cpu + 150 W gpu0 trace gives 400 W
// on average and 400 W × the measured window as energy, and the readings
// are in the bundle.
func TestRunWithPowerReplay(t *testing.T) {
	srcs, err := telemetry.Open("replay:"+constantTrace(t), telemetry.SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Plan{
		Settings:  Settings{Scenario: "Offline", Set: []string{"min_duration=0", "min_query_count=2000"}},
		OutputDir: t.TempDir(), NoReport: true, Power: srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if l := telemetry.LogOf(out.Bundle); l == nil || len(l.Readings) != 2*66 || l.StartUnixNs != out.Result.StartTime.UnixNano() {
		t.Fatalf("telemetry %+v: want the 132 replayed readings on the run's clock", l)
	}
	r, err := out.Derived.Result()
	if err != nil {
		t.Fatal(err)
	}
	p := r.Power
	if p == nil || p.AvgW == nil || p.EnergyJ == nil {
		t.Fatalf("result.json power %+v", p)
	}
	if math.Abs(*p.AvgW-400) > 1e-9 || math.Abs(*p.EnergyJ-400*p.Seconds()) > 1e-9*400*p.Seconds() || p.Seconds() <= 0 {
		t.Errorf("average %v W, energy %v J over %v s: want 400 W and 400 W × the window", *p.AvgW, *p.EnergyJ, p.Seconds())
	}
	if p.Efficiency == nil || p.Efficiency.Name != "samples per joule" ||
		math.Abs(p.Efficiency.Value - float64(r.Samples.OK) / *p.EnergyJ) > 1e-9*p.Efficiency.Value {
		t.Errorf("efficiency %+v: want samples per joule of %d samples", p.Efficiency, r.Samples.OK)
	}
}

// A source with no data leaves a gap and a warning; the run still ends
// VALID and its result says why there is no energy.
func TestRunWithFailingPowerSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	srcs, err := telemetry.Open("prometheus:"+srv.URL+"#dcgm-power", telemetry.SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	out, err := Run(context.Background(), Plan{
		Settings:  Settings{Scenario: "Offline", Set: []string{"min_duration=0", "min_query_count=2000"}},
		OutputDir: t.TempDir(), NoReport: true, Power: srcs,
		Notify: func(n Notice) {
			if n.Kind == Warning {
				warnings = append(warnings, n.Text)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no data over the window") {
		t.Errorf("warnings %q: want one naming the query with no data", warnings)
	}
	r, _ := out.Derived.Result()
	if r.Power == nil || r.Power.EnergyJ != nil || r.Power.Gaps != 1 || !strings.Contains(r.Power.Note, "no power or energy") {
		t.Errorf("power %+v: want no energy, one gap and a note", r.Power)
	}
	if !out.Verdict.Pass {
		t.Errorf("verdict %+v: a failing meter does not fail the run", out.Verdict)
	}
}

// The power sampler runs from before the warm-up: result.json's warm-up
// phase has 400 W × its duration, and the warm-up's start is in the
// bundle so that the phase regenerates from it.
func TestRunWithPowerAndWarmup(t *testing.T) {
	srcs, err := telemetry.Open("replay:"+constantTrace(t), telemetry.SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Plan{
		Settings:  Settings{Concurrency: 2, Set: []string{"min_duration=0", "min_query_count=200"}},
		Warmup:    Warmup{Requests: 50},
		OutputDir: t.TempDir(), NoReport: true, Power: srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	wu := invocation.Of(out.Bundle).Warmup
	if wu == nil || wu.StartUnixNs == 0 || wu.StartUnixNs > out.Result.StartTime.UnixNano() {
		t.Fatalf("warm-up %+v: want its start, before the run's (%d)", wu, out.Result.StartTime.UnixNano())
	}
	// The replay's t_ns are on the run's clock, however long before the
	// run the sampler started: its first reading is at -5 s exactly.
	if l := telemetry.LogOf(out.Bundle); l.Readings[0].T != -5e9 || l.StartUnixNs != out.Result.StartTime.UnixNano() {
		t.Errorf("first reading at %d ns on a log from %d: want -5 s on the run's clock (%d)", l.Readings[0].T, l.StartUnixNs, out.Result.StartTime.UnixNano())
	}
	r, err := out.Derived.Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ph := range r.Power.Phases {
		names = append(names, ph.Name)
		if ph.EnergyJ == nil || math.Abs(*ph.EnergyJ-400*ph.Seconds()) > 1e-6*400*ph.Seconds() {
			t.Errorf("%s: energy %v over %v s: want 400 W × the phase", ph.Name, ph.EnergyJ, ph.Seconds())
		}
	}
	if strings.Join(names, ",") != "warm-up,performance,mlperf-power-window" {
		t.Errorf("phases %v", names)
	}
	if ph := r.Power.Phases[0]; ph.ToNs > 0 || ph.Samples != wu.Requests-wu.Failed {
		t.Errorf("warm-up phase %+v: want it before the run's clock starts, over the warm-up's successful requests", ph)
	}
}

// A GB/T test with a power source: gbt_result.json holds Table 17 and
// the Annex E ratio, from a constant 400 W read every 10 ms.
func TestGBTRunWithPower(t *testing.T) {
	var b strings.Builder
	b.WriteString("t_ns,node,device,watts\n")
	for ms := int64(-1000); ms <= 30000; ms += 10 {
		fmt.Fprintf(&b, "%d,node-1,cpu,250\n%d,node-1,gpu0,150\n", ms*1e6, ms*1e6)
	}
	file := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := telemetry.Open("replay:"+file, telemetry.SpecOptions{Period: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Plan{
		Custom: &Custom{SUT: &loadgentest.StagedSUT{FailEvery: -1}, QSL: &loadgentest.QSL{Total: 64}},
		GBT: &GBT{Input: gbt.PlanInput{
			Arrival:       gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 500, Duration: 500 * time.Millisecond},
			LossThreshold: 0.01,
		}},
		OutputDir: t.TempDir(), NoReport: true, Power: srcs, PowerOptions: telemetry.Options{Period: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out.Dir, bundle.GBTResultFile))
	if err != nil {
		t.Fatal(err)
	}
	rf, err := gbt.ReadResultFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	p := rf.Metrics.Power
	if p == nil || len(p.Servers) != 1 {
		t.Fatalf("gbt_result.json power %+v", p)
	}
	s := p.Servers[0]
	if s.Node != "node-1" || s.RunAvgW == nil || *s.RunAvgW != 400 || *s.PeakW != 400 || s.RunSamples < 40 {
		t.Errorf("server %+v: want 400 W on average and at peak, from about 50 instants", s)
	}
	// The stand-in SUT's stages are instants: no T_IN interval to average over.
	if s.AvgW != nil || !strings.Contains(strings.Join(s.Notes, ";"), "T_IN") {
		t.Errorf("server %+v: want no T_IN average and a note", s)
	}
	// Nor T_DIP intervals of any length (and end-to-end times of a few
	// microseconds, which a 10 ms grid mostly misses): no Annex E ratios,
	// with a note saying why (gbt/power_test.go works them by hand).
	if th := rf.Metrics.Throughput; th.CoverNs != 0 || p.EnergyRatio != nil || !strings.Contains(strings.Join(p.Notes, ";"), "no energy-efficiency ratio") {
		t.Errorf("throughput cover %d ns, energy ratio %+v, notes %q", th.CoverNs, p.EnergyRatio, p.Notes)
	}
}
