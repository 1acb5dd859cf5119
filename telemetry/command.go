package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// OpenTimeout bounds the first read a command or Redfish source makes
// when it is opened, to check it before the run.
const OpenTimeout = 10 * time.Second

// Command is a Poller that runs a vendor's command-line tool once a read
// and parses what it prints: nvidia-smi (OpenNvidiaSMI), npu-smi
// (OpenNPUSMI) or ipmitool (OpenIPMI). Each read is one process, killed
// when the Sampler's read timeout ends, so that no child outlives a read.
type Command struct {
	powerCeiling
	name, spec string
	node       string
	argv       []string
	parse      func(out []byte, node string) ([]Reading, error)
	notes      []string
}

// Name is the source's name: "nvidia-smi", "npu-smi" or "ipmi".
func (c *Command) Name() string { return c.name }

// Spec is how it was asked for.
func (c *Command) Spec() string { return c.spec }

// Notes says what the command is and what limits it.
func (c *Command) Notes() []string { return c.notes }

// Poll runs the command and parses its output.
func (c *Command) Poll(ctx context.Context) ([]Reading, error) {
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", c.argv[0], ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(string(out))
		}
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, fmt.Errorf("%s: %v: %s", c.argv[0], err, msg)
	}
	return c.parse(out, c.node)
}

// openCommand finds the tool (path, or def on $PATH) and reads it once.
func openCommand(c *Command, path, def string) (*Command, error) {
	if path == "" {
		path = def
	}
	bin, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	c.argv[0] = bin
	ctx, cancel := context.WithTimeout(context.Background(), OpenTimeout)
	defer cancel()
	if _, err := c.Poll(ctx); err != nil {
		return nil, fmt.Errorf("%s: the first read failed: %w", c.name, err)
	}
	return c, nil
}

// NvidiaSMIQuery is the query OpenNvidiaSMI runs, one line per GPU.
var NvidiaSMIQuery = []string{"--query-gpu=index,power.draw,utilization.gpu", "--format=csv,noheader,nounits"}

// OpenNvidiaSMI opens nvidia-smi (path, or "nvidia-smi" on $PATH) as a
// source of each GPU's power (W) and utilisation (%), the fallback for a
// host where NVML cannot be loaded: it has no energy counter, so energy is
// integrated from power. node names this machine in the readings.
func OpenNvidiaSMI(path, node string) (*Command, error) {
	c := &Command{name: "nvidia-smi", spec: joinSpec("nvidia-smi", path), node: node,
		argv:  append([]string{""}, NvidiaSMIQuery...),
		parse: parseNvidiaSMI,
		notes: []string{"nvidia-smi " + strings.Join(NvidiaSMIQuery, " ") + ", one process a read: power and utilisation samples, no energy counter (energy by the trapezoid rule)"}}
	return openCommand(c, path, "nvidia-smi")
}

// OpenNPUSMI opens Huawei Ascend's npu-smi (path, or "npu-smi" on $PATH)
// as a source of each NPU's power (W) and AI Core utilisation (%), read
// from the table "npu-smi info" prints.
func OpenNPUSMI(path, node string) (*Command, error) {
	c := &Command{name: "npu-smi", spec: joinSpec("npu-smi", path), node: node,
		argv:  []string{"", "info"},
		parse: parseNPUSMI,
		notes: []string{"npu-smi info, one process a read: each NPU's power and AI Core utilisation, no energy counter (energy by the trapezoid rule)"}}
	return openCommand(c, path, "npu-smi")
}

// OpenIPMI opens ipmitool (path, or "ipmitool" on $PATH) reading the
// local BMC's DCMI power reading ("ipmitool dcmi power reading": the
// instantaneous whole-machine power, device "bmc").
func OpenIPMI(path, node string) (*Command, error) {
	c := &Command{name: "ipmi", spec: joinSpec("ipmi", path), node: node,
		argv:  []string{"", "dcmi", "power", "reading"},
		parse: parseIPMIDCMI,
		notes: []string{"ipmitool dcmi power reading: a low-rate source; BMC readings lag and may overstate (MLPerf Power does not accept them), so use a --power-period of several seconds"}}
	return openCommand(c, path, "ipmitool")
}

func joinSpec(name, arg string) string {
	if arg == "" {
		return name
	}
	return name + ":" + arg
}

// notAvailable reports whether an nvidia-smi or npu-smi field holds no
// value: "[N/A]", "[Not Supported]", "NA", "N/A", "-".
func notAvailable(f string) bool {
	switch strings.Trim(f, "[] ") {
	case "N/A", "NA", "Not Supported", "Unknown Error", "-", "":
		return true
	}
	return false
}

// parseValue reads a finite, non-negative number; what names the field in
// the error.
func parseValue(f, what string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
	if err != nil || v < 0 || v != v || v > 1e12 {
		return 0, fmt.Errorf("%s %q: want a number ≥ 0", what, f)
	}
	return v, nil
}

// parseNvidiaSMI reads the lines of NvidiaSMIQuery: "index, power.draw,
// utilization.gpu" in W and %, a field "[N/A]" or "[Not Supported]"
// where the GPU does not report it (left out, never made up).
func parseNvidiaSMI(out []byte, node string) ([]Reading, error) {
	var rs []Reading
	gpus := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 3 {
			return nil, fmt.Errorf("nvidia-smi line %d %q: want 3 fields (index, power.draw, utilization.gpu)", n, line)
		}
		idx, err := strconv.ParseUint(strings.TrimSpace(f[0]), 10, 16)
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi line %d: index %q: want a GPU number", n, strings.TrimSpace(f[0]))
		}
		gpus++
		dev := "gpu" + strconv.FormatUint(idx, 10)
		if !notAvailable(f[1]) {
			w, err := parseValue(f[1], "power.draw")
			if err != nil {
				return nil, fmt.Errorf("nvidia-smi line %d: %w", n, err)
			}
			rs = append(rs, Reading{Node: node, Device: dev, Kind: Power, Value: w})
		}
		if !notAvailable(f[2]) {
			u, err := parseValue(f[2], "utilization.gpu")
			if err != nil || u > 100 {
				return nil, fmt.Errorf("nvidia-smi line %d: utilization.gpu %q: want 0 to 100", n, strings.TrimSpace(f[2]))
			}
			rs = append(rs, Reading{Node: node, Device: dev, Kind: Utilization, Value: u})
		}
	}
	if gpus == 0 {
		return nil, errors.New("nvidia-smi printed no GPU")
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("nvidia-smi: none of the %d GPUs reports power or utilisation", gpus)
	}
	return rs, nil
}

// parseNPUSMI reads the device table of "npu-smi info": each NPU is a row
// "| NPU Name | Health | Power(W) Temp(C) Hugepages-Usage(page) |" and,
// per chip, a row "| Chip | Bus-Id | AICore(%) Memory-Usage(MB)
// HBM-Usage(MB) |". Power is the NPU's (device npuN), AI Core utilisation
// the chip's (npuN, or npuN-chipC for chips after the first). The process
// table after the device table is not read.
func parseNPUSMI(out []byte, node string) ([]Reading, error) {
	var rs []Reading
	npu := ""
	npus := 0
	inTable := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		first := strings.Fields(cells[0])
		switch {
		case len(first) >= 2 && first[0] == "NPU" && first[1] == "Name":
			inTable = true
			continue
		case len(first) >= 1 && first[0] == "NPU" || strings.Contains(line, "Process id") || strings.Contains(line, "No running processes"):
			inTable = false // the process table
			continue
		case !inTable || len(first) == 0 || first[0] == "Chip":
			continue
		}
		if len(cells) < 3 {
			return nil, fmt.Errorf("npu-smi line %d %q: want 3 cells", n, line)
		}
		id, err := strconv.ParseUint(first[0], 10, 16)
		if err != nil {
			return nil, fmt.Errorf("npu-smi line %d: %q: want an NPU or chip number", n, first[0])
		}
		vals := strings.Fields(cells[2])
		if len(vals) == 0 {
			return nil, fmt.Errorf("npu-smi line %d %q: no value in the third cell", n, line)
		}
		if len(first) >= 2 { // an NPU's row: its number and name
			npu = "npu" + strconv.FormatUint(id, 10)
			npus++
			if !notAvailable(vals[0]) {
				w, err := parseValue(vals[0], "Power(W)")
				if err != nil {
					return nil, fmt.Errorf("npu-smi line %d: %w", n, err)
				}
				rs = append(rs, Reading{Node: node, Device: npu, Kind: Power, Value: w})
			}
			continue
		}
		if npu == "" {
			return nil, fmt.Errorf("npu-smi line %d: a chip row before any NPU row", n)
		}
		dev := npu
		if id > 0 {
			dev = npu + "-chip" + strconv.FormatUint(id, 10)
		}
		if !notAvailable(vals[0]) {
			u, err := parseValue(vals[0], "AICore(%)")
			if err != nil || u > 100 {
				return nil, fmt.Errorf("npu-smi line %d: AICore(%%) %q: want 0 to 100", n, vals[0])
			}
			rs = append(rs, Reading{Node: node, Device: dev, Kind: Utilization, Value: u})
		}
	}
	if npus == 0 {
		return nil, errors.New("npu-smi info printed no NPU table")
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("npu-smi: none of the %d NPUs reports power or utilisation", npus)
	}
	return rs, nil
}

// parseIPMIDCMI reads "ipmitool dcmi power reading": the line
// "Instantaneous power reading: N Watts" gives the BMC's reading (device
// "bmc"); a reading state other than "activated" is an error.
func parseIPMIDCMI(out []byte, node string) ([]Reading, error) {
	var rs []Reading
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "Instantaneous power reading":
			num, unit, _ := strings.Cut(val, " ")
			if strings.TrimSpace(unit) != "Watts" {
				return nil, fmt.Errorf("ipmitool line %d: %q: want N Watts", n, val)
			}
			w, err := parseValue(num, "instantaneous power reading")
			if err != nil {
				return nil, fmt.Errorf("ipmitool line %d: %w", n, err)
			}
			if len(rs) > 0 {
				return nil, fmt.Errorf("ipmitool line %d: a second instantaneous power reading", n)
			}
			rs = append(rs, Reading{Node: node, Device: "bmc", Kind: Power, Value: w})
		case "Power reading state is":
			if val != "activated" {
				return nil, fmt.Errorf("ipmitool: the BMC's power reading is %s", val)
			}
		}
	}
	if len(rs) == 0 {
		return nil, errors.New("ipmitool printed no instantaneous power reading")
	}
	return rs, nil
}
