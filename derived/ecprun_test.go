package derived

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
)

// TestReadECPRun: a GB/T run's bundle read back is a run of ECP with its
// Table 18 throughput; an MLPerf run's is refused, naming its directory.
func TestReadECPRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		plan, err := gbt.NewRunPlan(gbt.StreamPlanInput(50, 2, 400*time.Millisecond, 4*time.Second), loadgen.DefaultSettings(), nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := plan.Options()
		opts.SpinWindow = -1
		res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 64}, plan.Settings, &opts)
		if err != nil {
			t.Fatal(err)
		}
		b := &bundle.Bundle{Result: res, Version: "test"}
		test := plan.Test
		gbt.SetTest(b, &test)
		dir := t.TempDir()
		if err := Write(dir, b); err != nil {
			t.Fatal(err)
		}
		run, err := ReadECPRun("fixed", dir, "fixed="+dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if run.Name != "fixed" || run.Label != "fixed="+dir || !(run.Throughput > 0) || run.Basis == "" {
			t.Errorf("run %+v: want a positive throughput with its basis", run)
		}
	})
	mlperf := writeRunDir(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	if _, err := ReadECPRun("x", mlperf, "", false); err == nil || !strings.Contains(err.Error(), mlperf) {
		t.Errorf("an MLPerf run: %v, want an error naming its directory", err)
	}
}
