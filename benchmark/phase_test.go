package benchmark

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut"
)

// Plan.Phase hears DataLoadStart before the data is loaded and DataLoadEnd
// once the QSL is built, before the first sample is issued; a run whose
// loading fails hears DataLoadEnd with the error. Plan.Done hears of the
// written bundle only.
func TestPhaseReportsDataLoad(t *testing.T) {
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	var phases []Phase
	var done []*Outcome
	progressBeforeEnd := false
	out, err := Run(context.Background(), Plan{
		SUT:       sut.Config{Kind: sut.Null, QSLSize: 200, PerformanceSampleCount: 100},
		Settings:  Settings{Explicit: &s},
		OutputDir: filepath.Join(t.TempDir(), "out"),
		NoReport:  true,
		Phase:     func(p Phase) { phases = append(phases, p) },
		Done:      func(o *Outcome) { done = append(done, o) },
		Progress: func(Progress) {
			if len(phases) < 2 {
				progressBeforeEnd = true
			}
		},
	})
	if err != nil || out == nil {
		t.Fatalf("run: %v", err)
	}
	if len(done) != 1 || done[0] != out {
		t.Errorf("Done called with %v, want once with the outcome", done)
	}
	if len(phases) != 2 || phases[0].Kind != DataLoadStart || phases[1].Kind != DataLoadEnd {
		t.Fatalf("phases %+v, want DataLoadStart then DataLoadEnd", phases)
	}
	if end := phases[1]; end.Err != nil || end.QSL == "" || end.TotalSamples != 200 || end.PerformanceSamples != 100 {
		t.Errorf("DataLoadEnd %+v, want the null QSL of 200 samples, 100 for performance", end)
	}
	if progressBeforeEnd {
		t.Error("the run made progress before DataLoadEnd")
	}
	if DataLoadStart.String() != "data_download_start" || DataLoadEnd.String() != "data_download_end" {
		t.Errorf("names %s, %s", DataLoadStart, DataLoadEnd)
	}

	phases = nil
	_, err = Run(context.Background(), Plan{
		GBT:       &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 10, Duration: time.Second}}, InfoFile: filepath.Join(t.TempDir(), "missing.yaml")},
		OutputDir: filepath.Join(t.TempDir(), "out"),
		Phase:     func(p Phase) { phases = append(phases, p) },
		Done:      func(o *Outcome) { done = append(done, o) },
	})
	if err == nil {
		t.Fatal("a missing --info file was accepted")
	}
	if len(phases) != 2 || phases[1].Kind != DataLoadEnd || phases[1].Err == nil {
		t.Errorf("phases %+v, want DataLoadEnd with the error", phases)
	}
	if len(done) != 1 {
		t.Error("Done was called for a run that wrote no bundle")
	}
}
