package sysinfo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"
)

// fixtureRunner answers commands from testdata/<name>/cmd: <cmd>.out is
// the output, <cmd>.exit an exit status that makes the command fail; a
// command without an .out file does not exist. systemd-detect-virt's flag
// is part of the name: systemd-detect-virt_vm.out.
type fixtureRunner struct {
	dir   string
	mu    sync.Mutex
	calls []string
}

func (r *fixtureRunner) run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, strings.Join(append([]string{name}, args...), " "))
	r.mu.Unlock()
	base := name
	if name == "systemd-detect-virt" && len(args) > 0 {
		base += "_" + strings.TrimPrefix(args[0], "--")
	}
	out, err := os.ReadFile(filepath.Join(r.dir, "cmd", base+".out"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	if err != nil {
		return nil, err
	}
	if code, err := os.ReadFile(filepath.Join(r.dir, "cmd", base+".exit")); err == nil {
		return out, fmt.Errorf("exit status %s", strings.TrimSpace(string(code)))
	}
	return out, nil
}

func fixtureDetector(t *testing.T, name string) Detector {
	t.Helper()
	dir := filepath.Join("testdata", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	r := &fixtureRunner{dir: dir}
	return Detector{FS: os.DirFS(dir), Run: r.run}
}

func notFound(context.Context, string, ...string) ([]byte, error) {
	return nil, &exec.Error{Name: "x", Err: exec.ErrNotFound}
}

// GB-7.7.1-a (auto-detection of 7.1 a) fields 12 and 15), GB-7.7.1-g (no
// virtualization on bare metal): an x86 server with two NVIDIA GPUs.
func TestDetectHostGPU(t *testing.T) {
	r := &fixtureRunner{dir: "testdata/host-gpu"}
	d := Detector{FS: os.DirFS(r.dir), Run: r.run}
	hw, sw := d.Hardware(), d.Software()
	gpu := Accelerator{Vendor: "NVIDIA", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, DriverVersion: "550.54.15", Source: "nvidia-smi"}
	wantHW := Hardware{
		Vendor: "Supermicro", Product: "SYS-821GE-TNHR",
		CPU: CPU{Model: "Intel(R) Xeon(R) Platinum 8480+", Sockets: 2, PhysicalCores: 4, LogicalCores: 8,
			FrequencyMHz: 2000, FrequencySource: "base_frequency"},
		MemoryBytes:  2113451776 * 1024,
		Accelerators: []Accelerator{gpu, gpu},
	}
	if !reflect.DeepEqual(hw, wantHW) {
		t.Errorf("hardware = %+v\nwant %+v", hw, wantHW)
	}
	wantSW := Software{OSName: "Ubuntu 22.04.4 LTS", KernelName: "Linux", Kernel: "5.15.0-105-generic", Arch: runtime.GOARCH}
	if !reflect.DeepEqual(sw, wantSW) {
		t.Errorf("software = %+v\nwant %+v", sw, wantSW)
	}
	// The exact query of the brief, and npu-smi probed.
	if !slices.Contains(r.calls, "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader") ||
		!slices.Contains(r.calls, "npu-smi info") {
		t.Errorf("commands run: %q", r.calls)
	}
}

// An arm64 server with Ascend NPUs (npu-smi), inside Docker (GB-7.7.1-g):
// the CPU topology comes from sysfs, the frequency from cpuinfo_max_freq.
func TestDetectARMNPUDocker(t *testing.T) {
	d := fixtureDetector(t, "arm-npu-docker")
	hw, sw := d.Hardware(), d.Software()
	npu := Accelerator{Vendor: "Huawei", Name: "910B3", MemoryBytes: 65536 << 20, DriverVersion: "24.1.rc1", Source: "npu-smi"}
	wantHW := Hardware{
		Vendor: "Huawei", Product: "Atlas 800I A2",
		CPU:          CPU{Sockets: 2, PhysicalCores: 4, LogicalCores: 4, FrequencyMHz: 2600, FrequencySource: "cpuinfo_max_freq"},
		MemoryBytes:  1573563968 * 1024,
		Accelerators: []Accelerator{npu, npu},
	}
	if !reflect.DeepEqual(hw, wantHW) {
		t.Errorf("hardware = %+v\nwant %+v", hw, wantHW)
	}
	wantSW := Software{OSName: "openEuler 22.03 (LTS-SP3)", KernelName: "Linux", Kernel: "5.10.0-182.0.0.95.oe2203sp3.aarch64",
		Arch: runtime.GOARCH, Container: "docker"}
	if !reflect.DeepEqual(sw, wantSW) {
		t.Errorf("software = %+v\nwant %+v", sw, wantSW)
	}
}

// A KVM guest (systemd-detect-virt) running Podman (/run/.containerenv,
// which systemd-detect-virt --container missed); nvidia-smi is installed but
// fails, which is a note, not an error.
func TestDetectKVMPodman(t *testing.T) {
	d := fixtureDetector(t, "kvm-podman")
	hw, sw := d.Hardware(), d.Software()
	wantHW := Hardware{
		Vendor: "QEMU", Product: "Standard PC (Q35 + ICH9, 2009)",
		CPU: CPU{Model: "AMD EPYC 7763 64-Core Processor", Sockets: 1, PhysicalCores: 2, LogicalCores: 2,
			FrequencyMHz: 2445.432, FrequencySource: "cpu MHz"},
		MemoryBytes: 8145416 * 1024,
		Notes:       []string{"nvidia-smi: exit status 9"},
	}
	if !reflect.DeepEqual(hw, wantHW) {
		t.Errorf("hardware = %+v\nwant %+v", hw, wantHW)
	}
	wantSW := Software{OSName: "Rocky Linux 9.4 (Blue Onyx)", KernelName: "Linux", Kernel: "6.8.0-45-generic",
		Arch: runtime.GOARCH, Container: "podman", VirtualMachine: "kvm"}
	if !reflect.DeepEqual(sw, wantSW) {
		t.Errorf("software = %+v\nwant %+v", sw, wantSW)
	}
}

// Nothing readable and no commands: every fact unknown, nothing fails.
func TestDetectNothing(t *testing.T) {
	d := Detector{FS: fstest.MapFS{}, Run: notFound}
	if hw := d.Hardware(); !reflect.ValueOf(hw).IsZero() {
		t.Errorf("hardware = %+v", hw)
	}
	if sw := d.Software(); !reflect.DeepEqual(sw, Software{Arch: runtime.GOARCH}) {
		t.Errorf("software = %+v", sw)
	}
}

// Virtual machines recognised from DMI and the hypervisor CPU flag when
// systemd-detect-virt is absent (GB-7.7.1-g).
func TestDetectVirtualMachineFallbacks(t *testing.T) {
	tests := []struct{ vendor, product, flags, want string }{
		{"QEMU", "Standard PC (i440FX + PIIX, 1996)", "", "qemu"},
		{"Red Hat", "KVM", "", "kvm"},
		{"VMware, Inc.", "VMware Virtual Platform", "", "vmware"},
		{"innotek GmbH", "VirtualBox", "", "oracle"},
		{"Microsoft Corporation", "Virtual Machine", "", "microsoft"},
		{"Xen", "HVM domU", "", "xen"},
		{"Amazon EC2", "c5.xlarge", "", "amazon"},
		{"Google", "Google Compute Engine", "", "google"},
		{"Dell Inc.", "PowerEdge R750xa", "fpu hypervisor", "unknown"},
		{"Dell Inc.", "PowerEdge R750xa", "fpu vme", ""},
	}
	for _, tc := range tests {
		fsys := fstest.MapFS{
			"sys/class/dmi/id/sys_vendor":   {Data: []byte(tc.vendor + "\n")},
			"sys/class/dmi/id/product_name": {Data: []byte(tc.product + "\n")},
			"proc/cpuinfo":                  {Data: []byte("processor\t: 0\nflags\t\t: " + tc.flags + "\n")},
		}
		sw := Detector{FS: fsys, Run: notFound}.Software()
		if sw.VirtualMachine != tc.want {
			t.Errorf("%s / %s / %q: vm = %q, want %q", tc.vendor, tc.product, tc.flags, sw.VirtualMachine, tc.want)
		}
	}
}

func TestDetectContainerFromCgroup(t *testing.T) {
	tests := []struct{ cgroup, want string }{
		{"11:pids:/kubepods/besteffort/pod1/abc\n", "kubernetes"},
		{"0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope\n", "kubernetes"},
		{"0::/system.slice/docker-0123.scope\n", "docker"},
		{"0::/machine.slice/libpod-0123.scope\n", "podman"},
		{"0::/lxc.payload.c1\n", "lxc"},
		{"0::/system.slice/containerd.service/abc\n", "containerd"},
		{"0::/init.scope\n", ""},
	}
	for _, tc := range tests {
		sw := Detector{FS: fstest.MapFS{"proc/1/cgroup": {Data: []byte(tc.cgroup)}}, Run: notFound}.Software()
		if sw.Container != tc.want {
			t.Errorf("%q: container = %q, want %q", tc.cgroup, sw.Container, tc.want)
		}
	}
}

// A hanging command is cut off by the timeout and noted; detection goes on.
func TestDetectCommandTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := func(ctx context.Context, name string, args ...string) ([]byte, error) {
			if name != "nvidia-smi" {
				return nil, &exec.Error{Name: name, Err: exec.ErrNotFound}
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		start := time.Now()
		hw := Detector{FS: fstest.MapFS{}, Run: hang, Timeout: 2 * time.Second}.Hardware()
		if el := time.Since(start); el != 2*time.Second {
			t.Errorf("took %v, want the 2 s timeout", el)
		}
		if len(hw.Notes) != 1 || !strings.Contains(hw.Notes[0], "deadline exceeded") || len(hw.Accelerators) != 0 {
			t.Errorf("hardware = %+v", hw)
		}
	})
}

// The real command runner: an absent command is "not found".
func TestExecRunNotFound(t *testing.T) {
	_, err := execRun(context.Background(), "aimeter-no-such-command-for-tests")
	if !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("err = %v, want exec.ErrNotFound", err)
	}
	_, present, _ := Detector{FS: fstest.MapFS{}}.run("aimeter-no-such-command-for-tests")
	if present {
		t.Error("absent command reported present")
	}
}

// Detection of this machine never fails; on Linux it finds the CPUs and the
// kernel.
func TestDetectThisMachine(t *testing.T) {
	hw, sw := DetectHardware(), DetectSoftware()
	t.Logf("hardware: %+v", hw)
	t.Logf("software: %+v", sw)
	if runtime.GOOS == "linux" {
		if hw.CPU.LogicalCores == 0 || hw.MemoryBytes == 0 || sw.Kernel == "" || sw.KernelName != "Linux" {
			t.Errorf("linux facts missing: %+v %+v", hw, sw)
		}
	}
	if h := Detect(); h.Hardware.CPU.LogicalCores != hw.CPU.LogicalCores || h.Software.Kernel != sw.Kernel {
		t.Errorf("Detect = %+v, want the same facts as DetectHardware and DetectSoftware", h)
	}
}

func TestParseNvidiaSMI(t *testing.T) {
	// The first line is what nvidia-smi 580 printed on a real H200 machine.
	out := "NVIDIA H200, 143771 MiB, 580.159.04\nTesla V100-SXM2-32GB, 32768 MiB, 535.104.05\n\nNVIDIA A10, [N/A], [N/A]\ngarbage\n"
	got := parseNvidiaSMI(out)
	want := []Accelerator{
		{Vendor: "NVIDIA", Name: "NVIDIA H200", MemoryBytes: 143771 << 20, DriverVersion: "580.159.04", Source: "nvidia-smi"},
		{Vendor: "NVIDIA", Name: "Tesla V100-SXM2-32GB", MemoryBytes: 32 << 30, DriverVersion: "535.104.05", Source: "nvidia-smi"},
		{Vendor: "NVIDIA", Name: "NVIDIA A10", Source: "nvidia-smi"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestCountCPUList(t *testing.T) {
	for in, want := range map[string]int{"0-63": 64, "0-3,8-11\n": 8, "0": 1, "": 0, "5-2": 0} {
		if got := countCPUList(in); got != want {
			t.Errorf("countCPUList(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParseSMIMemory(t *testing.T) {
	tests := []struct {
		why  string
		in   string
		want uint64
	}{
		{"nvidia-smi's csv form", "81559 MiB", 81559 << 20},
		{"surrounding spaces are trimmed", "  32768 MiB ", 32 << 30},
		{"no space before the unit", "1024MiB", 1 << 30},
		{"GiB with a fraction", "1.5 GiB", 3 << 29},
		{"KiB", "4 KiB", 4096},
		{"not available", "[N/A]", 0},
		{"no unit: unknown rather than guessed", "81559", 0},
		{"a decimal unit nvidia-smi never writes", "80 GB", 0},
		{"two dots do not parse", "1.2.3 MiB", 0},
		{"a number too large for uint64", "99999999999999999999 GiB", 0},
		{"empty", "", 0},
	}
	for _, tc := range tests {
		if got := parseSMIMemory(tc.in); got != tc.want {
			t.Errorf("%s: parseSMIMemory(%q) = %d, want %d", tc.why, tc.in, got, tc.want)
		}
	}
}

// FuzzParseTools: the readers of command output and /proc text never panic,
// and every accelerator they find names its vendor and source.
func FuzzParseTools(f *testing.F) {
	for _, s := range []string{
		"NVIDIA H100 80GB HBM3, 81559 MiB, 550.54.15\n",
		"a,b, [N/A], [N/A]\n,,\n",
		"| npu-smi 24.1.rc1    Version: 24.1.rc1 |\n| 0  910B3 | OK | 93.4 45 0 / 0 |\n| 0 | 0000:C1:00.0 | 0 0 / 0 3383 / 65536 |\n",
		"MemTotal:       8145416 kB\n",
		"PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=x\n",
		"processor\t: 0\nmodel name\t: X @ 2.00GHz\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range append(parseNvidiaSMI(s), parseNPUSMI(s)...) {
			if a.Vendor == "" || a.Source == "" {
				t.Fatalf("accelerator without vendor or source: %+v", a)
			}
		}
		_ = parseMemTotal(s)
		_ = osReleaseName(s)
		_ = cpuinfoBlocks(s)
		_ = parseSMIMemory(s)
		_ = countCPUList(s)
	})
}

func TestDetectSystem(t *testing.T) {
	si := DetectSystem()
	if si.OS == "" || si.Arch == "" || si.GoVersion == "" || si.Cores < 1 || si.AimeterVersion == "" {
		t.Errorf("DetectSystem() = %+v", si)
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil && si.MemoryBytes == 0 {
		t.Error("no memory size read from /proc/meminfo")
	}
}
