package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/sut/reference/mlp"
)

func TestDemoSpinWindow(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		given  bool
		cpus   int
		want   time.Duration
	}{
		{"2 cores, default: never spin", loadgen.DefaultSpinWindow, false, 2, -1},
		{"2 cores, given: the caller's wins", 3 * time.Millisecond, true, 2, 3 * time.Millisecond},
		{"4 cores, default: spin", loadgen.DefaultSpinWindow, false, 4, loadgen.DefaultSpinWindow},
		{"1 core, given as never", -1, true, 1, -1},
	}
	for _, tt := range tests {
		if got := DemoSpinWindow(tt.window, tt.given, tt.cpus); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNewDemoRefusesAnIncompletePlan(t *testing.T) {
	m := model.New(model.DefaultLayers(), 1)
	for name, p := range map[string]DemoPlan{
		"no data":     {Model: m, Duration: time.Second},
		"no duration": {Model: m, Data: &mlp.Data{}},
	} {
		if _, err := NewDemo(p); !IsUsage(err) {
			t.Errorf("%s: got %v, want a usage error", name, err)
		}
	}
}

// TestDemo runs the demo on the synthetic set with an untrained model (the
// runs are what is checked, not what the model learned): five bundles in
// order, each run prepared by the caller, and a report naming the data set.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five benchmarks")
	}
	data, err := mlp.LoadData("synthetic", mlp.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data.Train = nil
	dir := t.TempDir()
	d, err := NewDemo(DemoPlan{Data: data, Model: model.New(model.DefaultLayers(), 1), OutputDir: dir,
		Duration: 20 * time.Millisecond, SpinWindow: -1,
		Prepare: func(name string, p *Plan) { p.Name = "prepared " + name },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Calibration.Single <= 0 || d.Plans.Server.ServerTargetQPS <= 0 {
		t.Errorf("calibration %+v, plans %+v: want a measured model", d.Calibration, d.Plans)
	}
	out, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	invalid := false
	for _, r := range out.Runs {
		names = append(names, r.Name)
		if r.Outcome.Bundle.Name != "prepared "+r.Name {
			t.Errorf("%s: bundle named %q, want the name Prepare gave", r.Name, r.Outcome.Bundle.Name)
		}
		if _, err := os.Stat(filepath.Join(dir, strings.ToLower(r.Name))); err != nil {
			t.Errorf("%s: no bundle directory: %v", r.Name, err)
		}
		if r.Name != "Accuracy" && r.Stages.Samples == 0 {
			t.Errorf("%s: no stage times", r.Name)
		}
		invalid = invalid || (r.Outcome.Verdict.Kind != VerdictNone && !r.Outcome.Verdict.Pass)
	}
	if want := "Accuracy SingleStream MultiStream Server Offline"; strings.Join(names, " ") != want {
		t.Errorf("runs %v, want %s", names, want)
	}
	if out.Invalid() != invalid {
		t.Errorf("Invalid() = %v, want %v", out.Invalid(), invalid)
	}
	path, err := out.WriteReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "aimeter demo: reference MLP on "+data.Test.Name) {
		t.Errorf("%s does not name the data set", path)
	}
}

func TestDemoRunStopsAtAnInterrupt(t *testing.T) {
	data, err := mlp.LoadData("synthetic", mlp.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDemo(DemoPlan{Data: data, Model: model.New(model.DefaultLayers(), 1), OutputDir: t.TempDir(), Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := d.Run(ctx)
	if err == nil || out == nil {
		t.Fatalf("outcome %v, error %v: want the outcome so far and an error", out, err)
	}
	if len(out.Runs) > 1 {
		t.Errorf("%d runs after an interrupt before the first, want at most 1", len(out.Runs))
	}
}
