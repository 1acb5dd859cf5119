package telemetry

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// standIn writes an executable script that checks its arguments and
// prints a recorded output file, standing in for a vendor tool on a
// machine without its hardware: the source runs it as it would run the
// real tool.
func standIn(t testing.TB, name, wantArgs, output string) string {
	t.Helper()
	abs, err := filepath.Abs(output)
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		"if [ \"$*\" != '" + wantArgs + "' ]; then echo \"unexpected arguments: $*\" >&2; exit 2; fi\n" +
		"cat '" + abs + "'\n"
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each tool through the source's own code path (find it, run it, parse
// it), against outputs in the tools' published formats. No GPU, NPU or
// BMC is on the machines these tests run on.
func TestCommandSources(t *testing.T) {
	cases := []struct {
		name string
		open func(path, node string) (*Command, error)
		args string
		file string
		want []Reading
	}{
		{"nvidia-smi: a GPU without power or utilisation gives no reading, one without utilisation its power only",
			OpenNvidiaSMI, strings.Join(NvidiaSMIQuery, " "), "testdata/nvidia-smi-query.txt", []Reading{
				{Node: "n1", Device: "gpu0", Kind: Power, Value: 68.47}, {Node: "n1", Device: "gpu0", Kind: Utilization, Value: 0},
				{Node: "n1", Device: "gpu1", Kind: Power, Value: 312.9}, {Node: "n1", Device: "gpu1", Kind: Utilization, Value: 97},
				{Node: "n1", Device: "gpu3", Kind: Power, Value: 71.03}}},
		{"npu-smi info: each NPU's power and AI Core share; the process table is not read",
			OpenNPUSMI, "info", "testdata/npu-smi-info.txt", []Reading{
				{Node: "n1", Device: "npu0", Kind: Power, Value: 101.8}, {Node: "n1", Device: "npu0", Kind: Utilization, Value: 0},
				{Node: "n1", Device: "npu1", Kind: Power, Value: 143.2}, {Node: "n1", Device: "npu1", Kind: Utilization, Value: 11}}},
		{"ipmitool dcmi power reading: the instantaneous reading, not the period's average",
			OpenIPMI, "dcmi power reading", "testdata/ipmitool-dcmi-power-reading.txt", []Reading{
				{Node: "n1", Device: "bmc", Kind: Power, Value: 220}}},
	}
	for _, c := range cases {
		bin := standIn(t, "tool", c.args, c.file)
		src, err := c.open(bin, "n1")
		if err != nil {
			t.Fatalf("%s: open: %v", c.name, err)
		}
		if src.Spec() != src.Name()+":"+bin || len(src.Notes()) == 0 {
			t.Errorf("%s: spec %q, notes %q", c.name, src.Spec(), src.Notes())
		}
		got, err := src.Poll(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// A missing tool, a failing one and a slow one: open fails naming the
// tool, a read fails with the tool's message, and a slow read ends with
// its context instead of hanging.
func TestCommandFailures(t *testing.T) {
	if _, err := OpenNvidiaSMI(filepath.Join(t.TempDir(), "nvidia-smi"), ""); err == nil || !strings.Contains(err.Error(), "nvidia-smi") {
		t.Errorf("a missing nvidia-smi: %v", err)
	}
	dir := t.TempDir()
	failing := filepath.Join(dir, "fail")
	os.WriteFile(failing, []byte("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2\nexit 9\n"), 0o755)
	if _, err := OpenNvidiaSMI(failing, ""); err == nil || !strings.Contains(err.Error(), "could not communicate") {
		t.Errorf("a failing nvidia-smi: %v", err)
	}
	slow := filepath.Join(dir, "slow")
	os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755)
	c := &Command{name: "ipmi", argv: []string{slow}, parse: parseIPMIDCMI}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Poll(ctx); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("a slow tool: %v after %v", err, time.Since(start))
	}
}

// Outputs that must be refused, each for its reason.
func TestParseCommandOutputs(t *testing.T) {
	cases := []struct {
		why   string
		parse func([]byte, string) ([]Reading, error)
		out   string
		want  string
	}{
		{"nvidia-smi: no GPU", parseNvidiaSMI, "\n", "no GPU"},
		{"nvidia-smi: units left in (no nounits)", parseNvidiaSMI, "0, 68.47 W, 0 %\n", "power.draw"},
		{"nvidia-smi: a header line (no noheader)", parseNvidiaSMI, "index, power.draw [W], utilization.gpu [%]\n", "index"},
		{"nvidia-smi: a negative power", parseNvidiaSMI, "0, -5, 0\n", "power.draw"},
		{"nvidia-smi: a utilisation over 100 %", parseNvidiaSMI, "0, 5, 101\n", "utilization.gpu"},
		{"nvidia-smi: too few fields", parseNvidiaSMI, "0, 5\n", "want 3 fields"},
		{"nvidia-smi: nothing reported", parseNvidiaSMI, "0, [N/A], [N/A]\n", "none of the 1 GPUs"},
		{"npu-smi: no table", parseNPUSMI, "npu-smi: command failed\n", "no NPU table"},
		{"npu-smi: a power that is no number", parseNPUSMI, "| NPU   Name | Health | Power(W) |\n| 0  910B | OK | hot 1 |\n", "Power(W)"},
		{"npu-smi: a chip row first", parseNPUSMI, "| NPU   Name | Health | Power(W) |\n| 0 | 0000:C1:00.0 | 5 |\n", "before any NPU"},
		{"ipmitool: no reading", parseIPMIDCMI, "Sampling period: 00000005 Seconds.\n", "no instantaneous"},
		{"ipmitool: deactivated", parseIPMIDCMI, "Instantaneous power reading: 0 Watts\nPower reading state is: deactivated\n", "deactivated"},
		{"ipmitool: not in watts", parseIPMIDCMI, "Instantaneous power reading: 220 BTU\n", "N Watts"},
	}
	for _, c := range cases {
		_, err := c.parse([]byte(c.out), "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.why, err, c.want)
		}
	}
}

// The parsers never panic, and whatever they return passes the Log's
// checks.
func FuzzParseCommandOutputs(f *testing.F) {
	for _, file := range []string{"testdata/nvidia-smi-query.txt", "testdata/npu-smi-info.txt", "testdata/ipmitool-dcmi-power-reading.txt"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("0, 1e308, 100\n| NPU Name | x | y |\n| 0 a | b | NaN |\nInstantaneous power reading: NaN Watts\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func([]byte, string) ([]Reading, error){parseNvidiaSMI, parseNPUSMI, parseIPMIDCMI} {
			rs, err := parse(b, "n")
			if err != nil {
				continue
			}
			if len(rs) == 0 {
				t.Fatal("no error and no reading")
			}
			for _, r := range rs {
				if err := r.check(); err != nil {
					t.Fatalf("%+v: %v", r, err)
				}
			}
		}
	})
}
