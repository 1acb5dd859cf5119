package sysinfo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Hardware is what DetectHardware finds out about the machine it runs on
// (GB-7.7.1-a, GB-6.1-a-12). Zero fields are unknown.
type Hardware struct {
	// Vendor is the DMI system vendor.
	Vendor string `json:"vendor,omitempty"`
	// Product is the DMI product name: the server model (12.1); a virtual
	// machine reports its hypervisor's.
	Product string `json:"product,omitempty"`
	// CPU describes the processors (12.4, 12.5).
	CPU CPU `json:"cpu"`
	// MemoryBytes is the OS-visible total memory (MemTotal, 12.8).
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// Accelerators lists the accelerators found by nvidia-smi and npu-smi,
	// one entry per device (12.3, 12.6).
	Accelerators []Accelerator `json:"accelerators,omitempty"`
	// NICs are the network interfaces (/sys/class/net), sorted by name;
	// nil where Linux's sysfs is not there.
	NICs []NIC `json:"nics,omitempty"`
	// Notes records probes that were present but failed; detection itself
	// never fails.
	Notes []string `json:"notes,omitempty"`
}

// CPU describes the processors.
type CPU struct {
	// Model is the CPU model name.
	Model string `json:"model,omitempty"`
	// Sockets is the number of physical packages.
	Sockets int `json:"sockets,omitempty"`
	// PhysicalCores is the number of cores over all sockets.
	PhysicalCores int `json:"physical_cores,omitempty"`
	// LogicalCores is the number of logical CPUs (hardware threads).
	LogicalCores int `json:"logical_cores,omitempty"`
	// FrequencyMHz is the nominal clock frequency.
	FrequencyMHz float64 `json:"frequency_mhz,omitempty"`
	// FrequencySource says where FrequencyMHz came from: "base_frequency",
	// "model name", "cpuinfo_max_freq" or "cpu MHz" (the current clock, the
	// last resort).
	FrequencySource string `json:"frequency_source,omitempty"`
}

// Accelerator is one accelerator device.
type Accelerator struct {
	// Vendor is "NVIDIA" or "Huawei".
	Vendor string `json:"vendor"`
	// Name is the device model, e.g. "NVIDIA H100 80GB HBM3" or "910B3".
	Name string `json:"name"`
	// MemoryBytes is the device memory.
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// DriverVersion is the driver (NVIDIA) or npu-smi (Huawei) version.
	DriverVersion string `json:"driver_version,omitempty"`
	// Source is the command that reported the device.
	Source string `json:"source"`
}

// Software is what DetectSoftware finds out about the operating system and
// the virtualization around the test system (GB-6.1-a-15, -17, -18,
// GB-7.7.1-g). Zero fields are unknown or absent.
type Software struct {
	// OSName is the PRETTY_NAME of os-release, e.g. "Ubuntu 22.04.4 LTS".
	OSName string `json:"os_name,omitempty"`
	// KernelName is uname's system name, e.g. "Linux".
	KernelName string `json:"kernel_name,omitempty"`
	// Kernel is uname's release, e.g. "6.8.0-45-generic".
	Kernel string `json:"kernel,omitempty"`
	// Arch is the architecture aimeter was built for (runtime.GOARCH).
	Arch string `json:"arch,omitempty"`
	// Container is the container runtime the test system runs in —
	// "docker", "podman", "kubernetes", "containerd", "lxc" or another
	// systemd-detect-virt name — or "" when none was found.
	Container string `json:"container,omitempty"`
	// VirtualMachine is the hypervisor — "kvm", "qemu", "vmware",
	// "microsoft", "xen", "oracle", "amazon", "google", … or "unknown" when
	// only the CPU's hypervisor flag shows one — or "" when none was found.
	VirtualMachine string `json:"virtual_machine,omitempty"`
	// Notes records probes that were present but failed.
	Notes []string `json:"notes,omitempty"`
}

// Detector reads hardware and software facts from a file-system root and a
// command runner, so that tests can point it at fixture trees. The zero
// Detector reads the real machine.
type Detector struct {
	// FS is the root file system: paths such as "proc/cpuinfo" are read from
	// it. nil means os.DirFS("/").
	FS fs.FS
	// Run runs a command and returns its standard output. It returns an
	// error wrapping exec.ErrNotFound when the command does not exist, which
	// Detector treats as "no such device", never as a failure. nil means
	// running the real command with a Timeout.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
	// Timeout bounds each command; 0 means DefaultTimeout.
	Timeout time.Duration
	// Rlimit returns the soft limit of "RLIMIT_AS" or "RLIMIT_DATA" in
	// bytes, RlimInfinity for none (MemoryLimit). nil means the process's
	// own, through getrlimit(2) where the OS has it.
	Rlimit func(resource string) (uint64, error)
	// Addrs returns the addresses of the network interface name (NICs,
	// RouteTo). nil means the kernel's, through net.InterfaceByName:
	// a Detector reading a fixture tree sets it.
	Addrs func(name string) ([]netip.Prefix, error)
}

// DefaultTimeout bounds each detection command (nvidia-smi, npu-smi,
// systemd-detect-virt).
const DefaultTimeout = 5 * time.Second

// Host is everything a Detector finds out about a machine.
type Host struct {
	// Hardware is the machine: DMI model, CPUs, memory, accelerators.
	Hardware Hardware `json:"hardware"`
	// Software is the operating system and the virtualization around it.
	Software Software `json:"software"`
}

// Detect detects the hardware and software of the machine it runs on.
func Detect() Host { return Detector{}.Detect() }

// DetectHardware detects the hardware of the machine it runs on.
func DetectHardware() Hardware { return Detector{}.Hardware() }

// DetectSoftware detects the software of the machine it runs on.
func DetectSoftware() Software { return Detector{}.Software() }

func (d Detector) fsys() fs.FS {
	if d.FS != nil {
		return d.FS
	}
	return os.DirFS("/")
}

func (d Detector) read(name string) string {
	b, err := fs.ReadFile(d.fsys(), name)
	if err != nil {
		return ""
	}
	return string(b)
}

func (d Detector) exists(name string) bool {
	_, err := fs.Stat(d.fsys(), name)
	return err == nil
}

// run runs a command with the timeout. present is false when the command
// does not exist.
func (d Detector) run(name string, args ...string) (out []byte, present bool, err error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	runner := d.Run
	if runner == nil {
		runner = execRun
	}
	out, err = runner(ctx, name, args...)
	if errors.Is(err, exec.ErrNotFound) {
		return nil, false, err
	}
	return out, true, err
}

func execRun(ctx context.Context, name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	return cmd.Output()
}

// Detect detects the hardware and software facts.
func (d Detector) Detect() Host { return Host{Hardware: d.Hardware(), Software: d.Software()} }

// Hardware detects the hardware facts.
func (d Detector) Hardware() Hardware {
	var hw Hardware
	hw.Vendor = strings.TrimSpace(d.read("sys/class/dmi/id/sys_vendor"))
	hw.Product = strings.TrimSpace(d.read("sys/class/dmi/id/product_name"))
	hw.CPU = d.cpu()
	hw.MemoryBytes = parseMemTotal(d.read("proc/meminfo"))
	hw.NICs = d.NICs()

	if out, present, err := d.run("nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"); present {
		if err != nil {
			hw.Notes = append(hw.Notes, fmt.Sprintf("nvidia-smi: %v", err))
		} else {
			hw.Accelerators = append(hw.Accelerators, parseNvidiaSMI(string(out))...)
		}
	}
	if out, present, err := d.run("npu-smi", "info"); present {
		if err != nil {
			hw.Notes = append(hw.Notes, fmt.Sprintf("npu-smi: %v", err))
		} else {
			hw.Accelerators = append(hw.Accelerators, parseNPUSMI(string(out))...)
		}
	}
	return hw
}

// Software detects the software facts.
func (d Detector) Software() Software {
	sw := Software{Arch: runtime.GOARCH}
	osr := d.read("etc/os-release")
	if osr == "" {
		osr = d.read("usr/lib/os-release")
	}
	sw.OSName = osReleaseName(osr)
	// The kernel's own uname(2) fields, as /proc/sys/kernel exposes them on
	// Linux (ostype = sysname, osrelease = release).
	sw.KernelName = strings.TrimSpace(d.read("proc/sys/kernel/ostype"))
	sw.Kernel = strings.TrimSpace(d.read("proc/sys/kernel/osrelease"))

	// systemd-detect-virt knows the most environments; it prints "none"
	// and exits 1 when there is none.
	virt := func(flag string) string {
		out, present, err := d.run("systemd-detect-virt", flag)
		if !present {
			return ""
		}
		v := strings.TrimSpace(string(out))
		if v == "" && err != nil {
			sw.Notes = append(sw.Notes, fmt.Sprintf("systemd-detect-virt %s: %v", flag, err))
		}
		if v == "none" {
			return ""
		}
		return v
	}
	sw.Container = virt("--container")
	if sw.Container == "" {
		sw.Container = d.container()
	}
	sw.VirtualMachine = virt("--vm")
	if sw.VirtualMachine == "" {
		sw.VirtualMachine = d.virtualMachine()
	}
	return sw
}

// container looks for the marks container runtimes leave.
func (d Detector) container() string {
	switch {
	case d.exists(".dockerenv"):
		return "docker"
	case d.exists("run/.containerenv"):
		return "podman"
	}
	cg := d.read("proc/1/cgroup")
	for _, c := range []struct{ mark, name string }{
		{"kubepods", "kubernetes"},
		{"libpod", "podman"},
		{"docker", "docker"},
		{"containerd", "containerd"},
		{"/lxc/", "lxc"},
		{"lxc.payload", "lxc"},
	} {
		if strings.Contains(cg, c.mark) {
			return c.name
		}
	}
	return ""
}

// dmiHypervisors maps substrings of the DMI vendor or product name to the
// systemd-detect-virt names of hypervisors.
var dmiHypervisors = []struct{ mark, name string }{
	{"kvm", "kvm"},
	{"qemu", "qemu"},
	{"standard pc (", "qemu"},
	{"vmware", "vmware"},
	{"virtualbox", "oracle"},
	{"innotek", "oracle"},
	{"microsoft corporation virtual machine", "microsoft"},
	{"hvm domu", "xen"},
	{"xen", "xen"},
	{"amazon ec2", "amazon"},
	{"google compute engine", "google"},
	{"openstack", "kvm"},
	{"alibaba cloud ecs", "alibaba"},
	{"bhyve", "bhyve"},
	{"parallels", "parallels"},
	{"apple virtualization", "apple"},
}

// virtualMachine reads the DMI identification and the CPU's hypervisor flag.
func (d Detector) virtualMachine() string {
	vendor := strings.ToLower(strings.TrimSpace(d.read("sys/class/dmi/id/sys_vendor")))
	product := strings.ToLower(strings.TrimSpace(d.read("sys/class/dmi/id/product_name")))
	id := vendor + " " + product
	for _, h := range dmiHypervisors {
		if strings.Contains(id, h.mark) {
			return h.name
		}
	}
	if cpuFlags(d.read("proc/cpuinfo"))["hypervisor"] {
		return "unknown"
	}
	return ""
}

// cpuFlags returns the flags of the first processor of /proc/cpuinfo.
func cpuFlags(cpuinfo string) map[string]bool {
	flags := map[string]bool{}
	if blocks := cpuinfoBlocks(cpuinfo); len(blocks) > 0 {
		for _, f := range strings.Fields(blocks[0]["flags"]) {
			flags[f] = true
		}
	}
	return flags
}

// cpuinfoBlocks splits /proc/cpuinfo into its blank-line-separated records.
func cpuinfoBlocks(text string) []map[string]string {
	var blocks []map[string]string
	cur := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				blocks = append(blocks, cur)
				cur = map[string]string{}
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if _, seen := cur[k]; !seen {
			cur[k] = strings.TrimSpace(v)
		}
	}
	if len(cur) > 0 {
		blocks = append(blocks, cur)
	}
	return blocks
}

var ghzRE = regexp.MustCompile(`@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz`)

func (d Detector) cpu() CPU {
	var c CPU
	blocks := cpuinfoBlocks(d.read("proc/cpuinfo"))
	type core struct{ pkg, id string }
	pkgs, cores := map[string]bool{}, map[core]bool{}
	coresPerPkg := 0
	for _, b := range blocks {
		if _, ok := b["processor"]; !ok {
			continue
		}
		c.LogicalCores++
		if c.Model == "" {
			for _, k := range []string{"model name", "Model", "cpu model", "cpu", "Hardware", "uarch"} {
				if v := b[k]; v != "" {
					c.Model = v
					break
				}
			}
		}
		if p, ok := b["physical id"]; ok {
			pkgs[p] = true
			if id, ok := b["core id"]; ok {
				cores[core{p, id}] = true
			}
		}
		if n, err := strconv.Atoi(b["cpu cores"]); err == nil && coresPerPkg == 0 {
			coresPerPkg = n
		}
	}
	c.Sockets = len(pkgs)
	c.PhysicalCores = len(cores)
	if c.PhysicalCores == 0 && coresPerPkg > 0 && c.Sockets > 0 {
		c.PhysicalCores = coresPerPkg * c.Sockets
	}
	if c.Sockets == 0 || c.PhysicalCores == 0 || c.LogicalCores == 0 {
		s, p, l := d.sysfsTopology()
		if c.Sockets == 0 {
			c.Sockets = s
		}
		if c.PhysicalCores == 0 {
			c.PhysicalCores = p
		}
		if c.LogicalCores == 0 {
			c.LogicalCores = l
		}
	}

	// Frequency: the nominal (base) clock where the kernel knows it, else
	// the one in the model name, else the maximum, else the current clock.
	khz := func(name string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSpace(d.read("sys/devices/system/cpu/cpu0/cpufreq/"+name)), 64)
		if err != nil || v <= 0 {
			return 0
		}
		return v / 1000
	}
	if f := khz("base_frequency"); f > 0 {
		c.FrequencyMHz, c.FrequencySource = f, "base_frequency"
	} else if m := ghzRE.FindStringSubmatch(c.Model); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		c.FrequencyMHz, c.FrequencySource = f*1000, "model name"
	} else if f := khz("cpuinfo_max_freq"); f > 0 {
		c.FrequencyMHz, c.FrequencySource = f, "cpuinfo_max_freq"
	} else if len(blocks) > 0 {
		if f, err := strconv.ParseFloat(blocks[0]["cpu MHz"], 64); err == nil && f > 0 {
			c.FrequencyMHz, c.FrequencySource = f, "cpu MHz"
		}
	}
	return c
}

// sysfsTopology counts packages, cores and logical CPUs from
// /sys/devices/system/cpu/cpuN/topology, for architectures whose
// /proc/cpuinfo has no physical id or core id.
func (d Detector) sysfsTopology() (sockets, cores, logical int) {
	dirs, _ := fs.Glob(d.fsys(), "sys/devices/system/cpu/cpu[0-9]*/topology")
	pkgs, cs := map[string]bool{}, map[[2]string]bool{}
	for _, dir := range dirs {
		pkg := strings.TrimSpace(d.read(dir + "/physical_package_id"))
		id := strings.TrimSpace(d.read(dir + "/core_id"))
		if pkg == "" || id == "" {
			continue
		}
		logical++
		pkgs[pkg] = true
		// cluster_id distinguishes cores that share a core_id on some arm64
		// machines.
		cs[[2]string{pkg, strings.TrimSpace(d.read(dir+"/cluster_id")) + "/" + id}] = true
	}
	if logical == 0 {
		logical = countCPUList(d.read("sys/devices/system/cpu/online"))
	}
	return len(pkgs), len(cs), logical
}

// countCPUList counts the CPUs of a list such as "0-63,128-191".
func countCPUList(s string) int {
	n := 0
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		n += b - a + 1
	}
	return n
}

// parseMemTotal returns MemTotal of /proc/meminfo in bytes (0 if absent).
func parseMemTotal(text string) uint64 {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			n *= 1024
		}
		return n
	}
	return 0
}

// osReleaseName returns PRETTY_NAME, or NAME and VERSION, of os-release.
func osReleaseName(text string) string {
	kv := map[string]string{}
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		kv[k] = v
	}
	if v := kv["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(kv["NAME"] + " " + kv["VERSION"])
}

// parseNvidiaSMI reads
// `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader`:
// one "name, 81559 MiB, 550.54.15" line per GPU.
func parseNvidiaSMI(out string) []Accelerator {
	var accs []Accelerator
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 3 {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		// A name containing a comma would split into more fields: the last
		// two are always memory and driver.
		name := strings.Join(f[:len(f)-2], ",")
		a := Accelerator{Vendor: "NVIDIA", Name: name, DriverVersion: notNA(f[len(f)-1]), Source: "nvidia-smi"}
		a.MemoryBytes = parseSMIMemory(f[len(f)-2])
		accs = append(accs, a)
	}
	return accs
}

// parseSMIMemory reads nvidia-smi's memory.total, "81559 MiB" (the csv
// format always gives MiB; KiB and GiB are accepted too, with or without a
// space). Anything else, such as "[N/A]", is 0: unknown.
func parseSMIMemory(s string) uint64 {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0
	}
	var mult float64
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "kib":
		mult = 1 << 10
	case "mib":
		mult = 1 << 20
	case "gib":
		mult = 1 << 30
	default:
		return 0
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || f*mult >= math.MaxUint64 {
		return 0
	}
	return uint64(math.Round(f * mult))
}

func notNA(s string) string {
	if s == "[N/A]" || s == "N/A" || s == "[Not Supported]" {
		return ""
	}
	return s
}

var (
	npuVersionRE = regexp.MustCompile(`Version:\s*(\S+)`)
	npuUsageRE   = regexp.MustCompile(`([0-9]+)\s*/\s*([0-9]+)`)
	npuBusIDRE   = regexp.MustCompile(`^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$`)
)

// parseNPUSMI reads the device table of `npu-smi info`. Each NPU has a row
// "| <npu> <name> | <health> | …" followed by one row per chip
// "| <chip> | <bus id> | <AICore> <memory used / total> <HBM used / total> |";
// every chip is one accelerator, named after its NPU, with the total of its
// last "used / total" pair (HBM where present) in MB. The process table that
// follows is ignored.
func parseNPUSMI(out string) []Accelerator {
	var accs []Accelerator
	version, name := "", ""
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if m := npuVersionRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "npu-smi") {
			version = m[1]
			continue
		}
		if strings.Contains(line, "Process id") || strings.Contains(line, "Process name") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			continue
		}
		first := strings.Fields(cells[0])
		second := strings.TrimSpace(cells[1])
		switch {
		case len(first) >= 2 && isUint(first[0]) && !npuBusIDRE.MatchString(second):
			// NPU row: id, name, health.
			name = strings.Join(first[1:], " ")
		case len(first) == 1 && isUint(first[0]) && npuBusIDRE.MatchString(second) && name != "":
			a := Accelerator{Vendor: "Huawei", Name: name, DriverVersion: version, Source: "npu-smi"}
			if m := npuUsageRE.FindAllStringSubmatch(cells[2], -1); len(m) > 0 {
				if mb, err := strconv.ParseUint(m[len(m)-1][2], 10, 64); err == nil {
					a.MemoryBytes = mb << 20
				}
			}
			accs = append(accs, a)
		}
	}
	return accs
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// MemoryTotal returns the OS-visible total memory in bytes (MemTotal of
// /proc/meminfo), or 0 when it cannot be read.
func (d Detector) MemoryTotal() uint64 { return parseMemTotal(d.read("proc/meminfo")) }
