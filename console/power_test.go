package console

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/telemetry"
)

// The reproduction, end to end: a run reads a powercap tree whose
// package counter rises at 100 W and drops by 500 J 1.5 s in. The drop is
// no wrap of its 262,143 J range, so it is a gap the console names, it
// adds nothing, and the average stays near 100 W (it was 38,966.7 W when
// the drop counted as a wrap). The counter follows the wall clock, so the
// figures do not depend on how fast the machine runs the writer.
func TestWritePowerNamesARAPLCounterGap(t *testing.T) {
	root := t.TempDir()
	zone := filepath.Join(root, "intel-rapl:0")
	if err := os.MkdirAll(zone, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"name": "package-0", "max_energy_range_uj": "262143328850"} {
		if err := os.WriteFile(filepath.Join(zone, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	write := func() {
		el := time.Since(start)
		uj := int64(1000e6) + el.Microseconds()*100 // 100 W is 100 µJ a µs
		if el > 1500*time.Millisecond {
			uj -= 500e6
		}
		tmp := filepath.Join(zone, "energy_uj.tmp")
		if err := os.WriteFile(tmp, []byte(strconv.FormatInt(uj, 10)+"\n"), 0o644); err == nil {
			os.Rename(tmp, filepath.Join(zone, "energy_uj"))
		}
	}
	write()
	src, err := telemetry.OpenRAPL(root, "")
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				write()
			}
		}
	}()
	out, err := benchmark.Run(context.Background(), benchmark.Plan{
		Settings:  benchmark.Settings{Scenario: "SingleStream", Set: []string{"min_duration=3000", "min_query_count=1"}},
		OutputDir: t.TempDir(), NoReport: true, Power: []telemetry.Source{src}, PowerOptions: telemetry.Options{Period: 250 * time.Millisecond},
	})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WritePower(&b, out)
	text := b.String()
	t.Log(text)
	for _, want := range []string{"Gap at ", "rapl package-0 energy_j", "s left out: energy_uj: the counter went down", "not a wrap of its 262143.3 J range"} {
		if !strings.Contains(text, want) {
			t.Errorf("console says %q: want it to contain %q", text, want)
		}
	}
	r, err := out.Derived.Result()
	if err != nil {
		t.Fatal(err)
	}
	p := r.Power
	// Some 0.25 s of 3 s left out; 100 W on the rest (reads a few ms
	// late or early on a loaded machine move it by a few W). A read that
	// timed out on a loaded machine is a gap too, but of no series.
	if p == nil || p.AvgW == nil || *p.AvgW < 80 || *p.AvgW > 120 || p.Coverage >= 1 || p.Coverage < 0.5 {
		t.Fatalf("result.json power %+v: want about 100 W, coverage below 1", p)
	}
	var drops []telemetry.Gap
	for _, g := range p.GapList {
		if g.Device != "" {
			drops = append(drops, g)
		}
	}
	if len(drops) != 1 || drops[0].Device != "package-0" || drops[0].Kind != telemetry.Energy || drops[0].DurationNs <= 0 || p.Gaps != len(p.GapList) {
		t.Errorf("result.json gaps %+v: want the drop of package-0 listed, with its length", p.GapList)
	}
}
