package benchmark_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"aimeter/benchmark"
	"aimeter/derived"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// A network-division run against the OpenAI simulator over loopback: the
// bundle carries the division, the system description and its diagram
// (system_desc.json, system_diagram.svg), the LoadGen host's NICs and the
// route its traffic took (the loopback device, for 127.0.0.1).
func TestNetworkDivisionRun(t *testing.T) {
	url, _ := simulator(t, "1ms", "1ms", 0)
	p := openAIPlan(url, 16)
	p.Settings.Scenario = "Offline"
	p.Division, p.SystemDesc = "network", "../examples/system-desc.yaml"
	p.OutputDir = t.TempDir()
	if _, err := benchmark.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	b, err := derived.Read(p.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	rec := sysdesc.Of(b)
	if rec == nil || rec.Division != "network" || rec.Description == nil || rec.Diagram == nil || rec.Problems() != nil {
		t.Fatalf("system description: %+v", rec)
	}
	for _, f := range []string{sysdesc.File, "system_diagram.svg", sysdesc.MLPerfFile} {
		if _, err := os.Stat(filepath.Join(p.OutputDir, f)); err != nil {
			t.Error(err)
		}
	}
	rs := b.System.Routes
	if len(rs) != 1 || !strings.HasPrefix(rs[0].Target, "127.0.0.1:") || rs[0].Method != sysinfo.RouteByLoopback || rs[0].Interface == "" {
		t.Errorf("routes: %+v", rs)
	}
	if runtime.GOOS == "linux" && len(b.System.NICs) == 0 {
		t.Error("no NICs recorded on Linux")
	}
	// MLPerf's network-mode fields, every one present.
	var fields map[string]any
	data, err := os.ReadFile(filepath.Join(p.OutputDir, sysdesc.MLPerfFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range sysdesc.MLPerfNetworkFields {
		if _, ok := fields[k]; !ok {
			t.Errorf("%s has no %s", sysdesc.MLPerfFile, k)
		}
	}
	// result.json says the same.
	res, err := derived.Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := res.Network
	if n == nil || n.Division != "network" || n.SystemName != "Example two-node inference cluster" || n.Diagram != "system_diagram.svg" ||
		len(n.Routes) != 1 || n.Routes[0].Interface != rs[0].Interface || n.Routes[0].Method != sysinfo.RouteByLoopback || n.Problems != nil {
		t.Errorf("result.json's network: %+v", n)
	}
}

// What is refused before anything runs, naming the plan's field: another
// division than network, a description with a missing layer, the network
// division in a scenario outside the datacenter suite.
func TestNetworkDivisionRefused(t *testing.T) {
	url, _ := simulator(t, "1ms", "1ms", 0)
	base, err := os.ReadFile("../examples/system-desc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	noL4 := filepath.Join(t.TempDir(), "desc.yaml")
	if err := os.WriteFile(noL4, []byte(strings.Replace(string(base), "  transport: TCP\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why, division, desc, scenario, field, msg string
	}{
		{"only the network division is declared", "closed", "", "Offline", "Division", `only "network"`},
		{"a protocol stack without layer 4", "network", noL4, "Offline", "SystemDesc", "protocol.transport: missing"},
		{"a description file that is not there", "", "no-such.yaml", "Offline", "SystemDesc", "no-such.yaml"},
		{"the network division has only the datacenter suite", "network", "", "SingleStream", "Division", "Server or Offline"},
	} {
		p := openAIPlan(url, 16)
		p.Settings.Scenario = tc.scenario
		p.Division, p.SystemDesc = tc.division, tc.desc
		p.OutputDir = filepath.Join(t.TempDir(), "out")
		_, err := benchmark.Run(context.Background(), p)
		var ue *benchmark.UsageError
		if !errors.As(err, &ue) || ue.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a usage error naming %s and saying %q", tc.why, err, tc.field, tc.msg)
		}
		if _, err := os.Stat(p.OutputDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the output directory was made", tc.why)
		}
	}
}
