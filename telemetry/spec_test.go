package telemetry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitSpecs(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one spec", "rapl", []string{"rapl"}},
		{"two specs, spaces trimmed", " rapl , replay:a.csv", []string{"rapl", "replay:a.csv"}},
		{"commas inside a PromQL query do not split", `prometheus:http://p:9090#power_w=sum by (Hostname, gpu) (x{a="1",b="2"}),rapl`,
			[]string{`prometheus:http://p:9090#power_w=sum by (Hostname, gpu) (x{a="1",b="2"})`, "rapl"}},
		{"a comma in quotes does not split", `prometheus:http://p#power_w=x{a=",",b="c"}`, []string{`prometheus:http://p#power_w=x{a=",",b="c"}`}},
		{"empty parts dropped", "rapl,,", []string{"rapl"}},
	}
	for _, tt := range tests {
		if got := SplitSpecs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("%s: SplitSpecs(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("t_ns,node,device,watts\n0,n,cpu,x\n"), 0o644)
	tests := []struct {
		name, spec, want string
	}{
		{"nothing", " , ", "no source"},
		{"unknown source", "dcgm", `unknown source "dcgm"`},
		{"ipmi without ipmitool", "ipmi:" + filepath.Join(dir, "ipmitool"), "ipmitool"},
		{"nvidia-smi without the tool", "nvidia-smi:" + filepath.Join(dir, "nvidia-smi"), "nvidia-smi"},
		{"npu-smi without the tool", "npu-smi:" + filepath.Join(dir, "npu-smi"), "npu-smi"},
		{"redfish without a URL", "redfish:", "want http(s)://"},
		{"replay without a file", "replay:", "want replay:FILE"},
		{"replay of a missing file", "replay:" + filepath.Join(dir, "none.csv"), "no such file"},
		{"replay of a bad file names the line", "replay:" + bad, "line 2: watts"},
		{"prometheus without a URL", "prometheus:", "want http://HOST:PORT"},
		{"prometheus with an unknown preset", "prometheus:http://p:9090#dcgm-fans", "want a preset"},
		{"prometheus with an unknown kind", "prometheus:http://p:9090#volts=x", `kind "volts"`},
		{"rapl on a machine without it", "rapl:" + dir, "no RAPL on this host"},
		{"nvml on a machine without it", "nvml:" + filepath.Join(dir, "libnvidia-ml.so.1"), "no NVML on this host"},
	}
	for _, tt := range tests {
		_, err := Open(tt.spec, SpecOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open(%q) error %v, want it to contain %q", tt.name, tt.spec, err, tt.want)
		}
	}
}

func TestOpenPrometheusQueries(t *testing.T) {
	srcs, err := Open("prometheus:http://p:9090#energy_mj=sum(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION),prometheus:https://q#dcgm-util", SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := srcs[0].(*Prometheus), srcs[1].(*Prometheus)
	if len(a.Queries) != 1 || a.Queries[0].Kind != Energy || a.Queries[0].Scale != 0.001 || a.URL != "http://p:9090" {
		t.Errorf("first source %+v", a)
	}
	if len(b.Queries) != 1 || b.Queries[0].Query != DCGMGPUUtil {
		t.Errorf("second source %+v", b)
	}
}

func TestLogRoundTrip(t *testing.T) {
	l := &Log{StartUnixNs: 5, PeriodNs: sec, Sources: []SourceInfo{{Name: "rapl", Spec: "rapl", Polled: true}},
		Readings: []Reading{{T: 1, Source: "rapl", Device: "package-0", Kind: Energy, Value: 2.5}}, Gaps: []Gap{{Source: "rapl", T: 3, Reason: "x"}}}
	var b strings.Builder
	if err := l.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLog(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Readings[0] != l.Readings[0] || got.Gaps[0] != l.Gaps[0] || got.Sources[0].Name != "rapl" {
		t.Errorf("read back %+v", got)
	}
	for _, bad := range []struct{ name, in, want string }{
		{"no period", `{"start_unix_ns":0,"period_ns":0,"sources":[],"readings":[]}`, "period_ns 0"},
		{"unknown kind names the reading", `{"period_ns":1,"sources":[],"readings":[{"t_ns":0,"source":"a","node":"","device":"d","kind":"volts","value":1}]}`, "unknown reading kind"},
		{"negative power names the reading", `{"period_ns":1,"sources":[],"readings":[{"t_ns":0,"source":"a","node":"","device":"d","kind":"power_w","value":1},{"t_ns":0,"source":"a","node":"","device":"d","kind":"power_w","value":-1}]}`, "readings[1]: value -1"},
		{"utilisation over 100", `{"period_ns":1,"sources":[],"readings":[{"t_ns":0,"source":"a","node":"","device":"d","kind":"utilization_pct","value":101}]}`, "at most 100"},
		{"unknown field", `{"period_ns":1,"volts":3}`, "unknown field"},
	} {
		if _, err := ReadLog(strings.NewReader(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want it to contain %q", bad.name, err, bad.want)
		}
	}
}

func FuzzReadLog(f *testing.F) {
	f.Add(`{"start_unix_ns":0,"period_ns":1000000000,"sources":[],"readings":[{"t_ns":0,"source":"a","node":"","device":"d","kind":"power_w","value":1}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ReadLog(strings.NewReader(in))
		if err != nil {
			return
		}
		Summarize(l, Window{0, sec})
	})
}
