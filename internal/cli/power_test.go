package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
)

// The done-when check through the command line: --power with a
// constant 250 W cpu + 150 W gpu0 trace prints and stores 400 W on average
// and 400 W × the measured window as energy.
func TestRunPowerReplay(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("t_ns,node,device,watts\n")
	for s := int64(-5); s <= 60; s++ {
		fmt.Fprintf(&b, "%d,node-1,cpu,250\n%d,node-1,gpu0,150\n", s*1e9, s*1e9)
	}
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	res := runCLI(t, "", quickArgs("Offline", out, "--power", "replay:"+trace)...)
	if res.code != ExitOK {
		t.Fatalf("want exit 0\n%s", res)
	}
	if !strings.Contains(res.stdout, "2 devices): average 400.0 W, peak 400.0 W, energy ") || !strings.Contains(res.stdout, "Samples per joule : ") ||
		!strings.Contains(res.stdout, "Energy per sample : ") {
		t.Errorf("no power line in the output:\n%s", res.stdout)
	}
	if _, err := os.Stat(filepath.Join(out, bundle.TelemetryFile)); err != nil {
		t.Errorf("no %s in the bundle: %v", bundle.TelemetryFile, err)
	}
	var r struct {
		Power struct {
			FromNs  int64   `json:"from_ns"`
			ToNs    int64   `json:"to_ns"`
			AvgW    float64 `json:"avg_w"`
			EnergyJ float64 `json:"energy_j"`
		} `json:"power"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(out, bundle.ResultFile))), &r); err != nil {
		t.Fatal(err)
	}
	window := float64(r.Power.ToNs-r.Power.FromNs) / 1e9
	if math.Abs(r.Power.AvgW-400) > 1e-9 || window <= 0 || math.Abs(r.Power.EnergyJ-400*window) > 1e-9*400*window {
		t.Errorf("result.json power %+v: want 400 W and 400 W × %v s", r.Power, window)
	}
}

// The second reproduction: a replayed reading of 1e12 W was
// accepted ("average 500078754714.5 W"). It is left out as a gap that the
// console names, and the average is the 500 W of the other readings.
func TestRunPowerAbsurdReplayReading(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("t_ns,node,device,watts\n")
	for s := int64(-5); s <= 60; s++ {
		w := "500"
		if s == 1 {
			w = "1e12"
		}
		fmt.Fprintf(&b, "%d,node-1,gpu0,%s\n", s*1e9, w)
	}
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A 3 s run, so that the reading at 1 s falls inside its window.
	res := runCLI(t, "", "run", "-q", "--scenario", "SingleStream", "--output-dir", filepath.Join(dir, "out"),
		"--set", "min_duration=3000", "--set", "min_query_count=1", "--power", "replay:"+trace)
	if res.code != ExitOK {
		t.Fatalf("want exit 0\n%s", res)
	}
	for _, want := range []string{"1 devices): average 500.0 W, peak 500.0 W", "Gap at 0.000 s, replay node-1/gpu0 power_w, 2.000 s left out: a reading of 1e+12 W is above the ceiling of 100000 W"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("want %q in the output:\n%s", want, res.stdout)
		}
	}
}

func TestRunPowerBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown source", []string{"--power", "dcgm"}, `unknown source "dcgm"`},
		{"a replay file that is not there", []string{"--power", "replay:" + filepath.Join(t.TempDir(), "none.csv")}, "no such file"},
		{"a period of zero", []string{"--power", "rapl", "--power-period", "0s"}, "--power-period 0s"},
		{"a negative ceiling", []string{"--power", "rapl", "--power-max-w", "-1"}, "--power-max-w -1: want watts > 0"},
		{"a ceiling without sources", []string{"--power-max-w", "500"}, "--power-max-w applies only with --power"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", quickArgs("Offline", out, tt.args...)...)
			if res.code != ExitUsage || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("want exit %d naming %q\n%s", ExitUsage, tt.want, res)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a refused run wrote its output directory")
			}
		})
	}
}
