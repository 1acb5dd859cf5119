package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/model"
	"aimeter/sut"
	"aimeter/sut/reference/mlp"
)

// gbtInput is a GB/T plan's input in arrival mode with aimeter run's
// defaults for everything else (the flags of internal/cli's gbtFlags).
func gbtInput(mode gbt.ArrivalMode) gbt.PlanInput {
	return gbt.PlanInput{
		Arrival: gbt.Arrival{Mode: mode, Lambda: gbt.DefaultLambda, Period: gbt.DefaultPeriod, N: gbt.DefaultN, Duration: 10 * time.Second,
			Bursts: 2, BurstLength: 5 * time.Second, BurstPeriod: 10 * time.Millisecond, BurstN: 11},
		UnderlyingMode: gbt.ModePoisson,
		Mixed:          gbt.Mixed{Lambda: 1, QSLSize: 256, Seed: 1},
		LossThreshold:  0.01,
		SampleBytes:    3136,
	}
}

// delaySUT answers every sample after its duration.
type delaySUT time.Duration

func (delaySUT) Name() string { return "DelaySUT" }

func (d delaySUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	go func() {
		time.Sleep(time.Duration(d))
		for _, q := range samples {
			r.Complete(q.ID, nil, 0)
		}
	}()
}

func (delaySUT) FlushQueries() {}

// untrainedWeights points the user cache at a new folder holding
// untrained weights of the reference model for the data set it loads, so
// that a reference run neither trains nor reads the user's cache.
func untrainedWeights(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	data, err := mlp.LoadData("auto", mlp.DataOptions{Notify: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	path := mlp.WeightsPath(data.Train)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := model.New(model.DefaultLayers(), 1).SaveFile(path); err != nil {
		t.Fatal(err)
	}
}

// TestGBTFilesRegenerateFromTheRun: for every arrival mode, derived.Of
// regenerates every derived file of a GB/T run's bundle (the MLPerf logs,
// gbt_result.json, gbt_inference.log, report.html, and the foreign jobs'
// logs of mode 5) byte for byte from the raw parts alone. The runs go on
// synctest's clock, so their seconds of arrivals cost none. (This was
// internal/cli's test of the same name, through aimeter run and aimeter
// report.)
func TestGBTFilesRegenerateFromTheRun(t *testing.T) {
	untrainedWeights(t)
	with := func(mode gbt.ArrivalMode, f func(*gbt.PlanInput)) gbt.PlanInput {
		in := gbtInput(mode)
		f(&in)
		return in
	}
	tests := []struct {
		reason string
		sut    sut.Kind
		in     gbt.PlanInput
		set    []string
	}{
		{"mode 0, LoadGen's SingleStream", sut.Custom, with(gbt.ModeContinuous, func(in *gbt.PlanInput) { in.Arrival.Duration = 300 * time.Millisecond }), nil},
		{"mode 1, the plan's schedule", sut.NullAsync, with(gbt.ModeFixedPeriod, func(in *gbt.PlanInput) {
			in.Arrival.Period, in.Arrival.N, in.Arrival.Duration = 50*time.Millisecond, 2, 1100*time.Millisecond
		}), nil},
		{"mode 2, LoadGen's Poisson schedule hashed from the records", sut.NullAsync, with(gbt.ModePoisson, func(in *gbt.PlanInput) {
			in.Arrival.Lambda, in.Arrival.Duration = 100, 1200*time.Millisecond
		}), nil},
		{"mode 3, bursts and the peak metrics", sut.NullAsync, with(gbt.ModePeak, func(in *gbt.PlanInput) {
			in.Arrival.Lambda, in.Arrival.Duration, in.Arrival.Bursts = 50, time.Second, 1
			in.Arrival.BurstLength, in.Arrival.BurstPeriod, in.Arrival.BurstN = 300*time.Millisecond, 10*time.Millisecond, 2
		}), nil},
		{"mode 4, offline with no timeout", sut.NullAsync, gbtInput(gbt.ModeOffline), []string{"min_query_count=200"}},
		{"mode 5, foreign jobs stored beside the main run", sut.NullAsync, with(gbt.ModeMixed, func(in *gbt.PlanInput) {
			in.Arrival.Lambda, in.Arrival.Duration, in.Mixed.Lambda = 100, time.Second, 50
		}), nil},
		{"mode 1 on the reference SUT: the log's accuracy from the stored online score", sut.Reference, with(gbt.ModeFixedPeriod, func(in *gbt.PlanInput) {
			in.Arrival.Period, in.Arrival.N, in.Arrival.Duration = 50*time.Millisecond, 4, 1100*time.Millisecond
		}), []string{"min_query_count=88"}},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			dir := t.TempDir()
			p := Plan{SUT: sut.Config{Kind: tc.sut}, GBT: &GBT{Input: tc.in}, Settings: Settings{Set: tc.set}, Trace: true, OutputDir: dir,
				Notify: func(Notice) {}, SpinWindow: -1}
			// aimeter run's defaults where they do not apply are dropped,
			// as its flags are when not given (and the spin window, which
			// synctest's clock needs off, where nothing is scheduled).
			p.ClearInapplicable(func(string) bool { return false })
			if tc.sut == sut.Custom {
				// Mode 0 issues the next job when the last completes: the
				// null SUT's, at once on synctest's clock, would never let
				// the duration pass.
				p.SUT = sut.Config{}
				p.Custom = &Custom{SUT: delaySUT(time.Millisecond), QSL: &loadgentest.QSL{Total: 1024}}
			}
			var out *Outcome
			var err error
			synctest.Test(t, func(t *testing.T) { out, err = Run(context.Background(), p) })
			if err != nil {
				t.Fatal(err)
			}
			if !out.Verdict.Pass {
				t.Fatalf("verdict %+v", out.Verdict)
			}
			b, err := bundle.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			regen := t.TempDir()
			if _, err := derived.Of(b).Regenerate(regen); err != nil {
				t.Fatal(err)
			}
			m := b.Manifest
			n := 0
			for _, e := range m.Files {
				if e.Role != bundle.Derived {
					continue
				}
				n++
				want, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Name)))
				if got, err := os.ReadFile(filepath.Join(regen, filepath.FromSlash(e.Name))); err != nil || string(got) != string(want) {
					t.Errorf("regenerated %s differs from the run's (%v)", e.Name, err)
				}
			}
			for _, name := range []string{bundle.GBTResultFile, bundle.GBTLogFile, bundle.SummaryFile, bundle.DetailFile, bundle.TraceFile, bundle.ReportFile} {
				if _, ok := m.Entry(name); !ok {
					t.Errorf("the bundle has no %s", name)
				}
			}
			if tc.in.Arrival.Mode == gbt.ModeMixed {
				if _, ok := m.Entry(bundle.ForeignDir + "/" + bundle.RecordsFile); !ok {
					t.Error("the foreign jobs' records are not stored")
				}
			}
			if tc.sut == sut.Reference {
				// The reference SUT's answers are scored online: the log
				// has a cumulative accuracy, not "--" (GB-7.3-f-2).
				if log, _ := os.ReadFile(filepath.Join(dir, bundle.GBTLogFile)); strings.Contains(string(log), "[--]") {
					t.Errorf("no accuracy in the log:\n%s", log)
				}
				f, err := os.Open(filepath.Join(dir, bundle.GBTResultFile))
				if err != nil {
					t.Fatal(err)
				}
				res, err := gbt.ReadResultFile(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(res.Precision, testinfo.PrecisionList{testinfo.FP32}) || res.Info.BatchSize != mlp.MaxBatch || res.Info.Framework.Name != mlp.Framework {
					t.Errorf("precision %v (GB-7.3-c), batch size %d (GB-7.2-e), framework %+v", res.Precision, res.Info.BatchSize, res.Info.Framework)
				}
			}
			t.Logf("%d derived files identical", n)
		})
	}
}
