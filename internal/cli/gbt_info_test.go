package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
)

// TestPrintGBTElasticity checks that "Elasticity" is the standard's Table 19
// value (EL × 100, in %) and IN-76's %/MB variant is labelled as such.
func TestPrintGBTElasticity(t *testing.T) {
	res := &loadgen.Result{}
	test := &gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModePeak, Timeout: 2 * time.Second}}
	m := &gbt.Metrics{Elasticity: &gbt.Elasticity{Available: true, Value: 0.0123, Percent: 1.23, PercentPerMB: 45.6}, PressureTolerance: &gbt.PressureTolerance{}}
	var b bytes.Buffer
	bb := &bundle.Bundle{Result: res}
	gbt.SetTest(bb, test)
	printGBT(&b, &benchmark.Outcome{Dir: "out", Result: res, Bundle: bb, GBT: m})
	out := b.String()
	for _, want := range []string{"Elasticity (EL, Table 19): 1.2300 %\n", "Elasticity variant (IN-76, non-standard): 45.6000 %/MB\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Elasticity: 45.6") {
		t.Errorf("the %%/MB variant is printed as the elasticity:\n%s", out)
	}
}

// TestGBTRecordsEveryLifecycleEvent runs a GB/T test and checks that the
// result file holds every event of 7.7.1 j) 1) (GB-7.7.1-j-1), in the
// clause's order, the upload marked when the bundle was written, and the
// precision of a null SUT, which computes nothing, left to --info.
func TestGBTRecordsEveryLifecycleEvent(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, "", "run", "--sut", "null-async", "-q", "--output-dir", dir, "--arrival-mode", "1", "--period", "50ms", "--jobs-per-period", "2", "--duration", "200ms")
	if r.code != ExitOK {
		t.Fatal(r)
	}
	res, err := readGBTResult(filepath.Join(dir, "gbt_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Lifecycle
	clause := []gbt.LifecycleEvent{gbt.EventTestStart, gbt.EventDatasetLoadStart, gbt.EventDatasetLoadEnd, gbt.EventTestEnd, gbt.EventResultUploadComplete}
	var prev time.Time
	for _, e := range clause {
		at := ev.Time(e)
		if at.IsZero() {
			t.Errorf("lifecycle event %s missing: %+v", e, ev)
			continue
		}
		if at.Before(prev) {
			t.Errorf("lifecycle event %s at %v before the previous one at %v", e, at, prev)
		}
		prev = at
	}
	if err := ev.Validate(); err != nil {
		t.Error(err)
	}
	if len(res.Precision) != 0 {
		t.Errorf("null SUT precision %v without --info", res.Precision)
	}
}
