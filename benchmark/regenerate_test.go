package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// TestRegenerate: a run's derived files, written again in a new directory
// from its bundle, come with the same verdict the run had.
func TestRegenerate(t *testing.T) {
	s := loadgen.DefaultSettings()
	s.MinDurationMs, s.MinQueryCount = 0, 32
	s.SingleStreamExpectedLatencyNs = 100_000
	ran, err := Run(context.Background(), Plan{
		Custom:    &Custom{SUT: &loadgentest.StagedSUT{FailEvery: -1}, QSL: &loadgentest.QSL{Total: 64}},
		Settings:  Settings{Explicit: &s},
		OutputDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := derived.Read(ran.Dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "again")
	reg, err := Regenerate(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Training != nil || reg.Outcome == nil || reg.Outcome.Dir != dir {
		t.Fatalf("regenerated %+v: want a run's outcome in %s", reg, dir)
	}
	if !reg.Outcome.HasFigures() || !reflect.DeepEqual(reg.Outcome.Verdict, ran.Verdict) {
		t.Errorf("verdict %+v, want the run's %+v", reg.Outcome.Verdict, ran.Verdict)
	}
	if !slices.Contains(reg.Files, "mlperf_log_summary.txt") {
		t.Errorf("files %v, want mlperf_log_summary.txt among them", reg.Files)
	}
	for _, name := range reg.Files {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s listed but not written: %v", name, err)
		}
	}
}

// TestHasFigures: an outcome without a summary, GB/T metrics or an
// accuracy check has nothing to show.
func TestHasFigures(t *testing.T) {
	o := &Outcome{Result: &loadgen.Result{}}
	if o.HasFigures() {
		t.Error("an empty outcome has figures")
	}
	o.Result.Summary = &loadgen.Summary{}
	if !o.HasFigures() {
		t.Error("an outcome with a summary has none")
	}
}
