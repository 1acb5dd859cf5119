package sysinfo

import (
	"os"
	"runtime"
	"slices"

	"aimeter/version"
)

// System describes the machine a benchmark ran on, as a run bundle stores
// it (run.json's "system") and the report shows it. Empty fields are
// unknown.
type System struct {
	Hostname       string
	OS             string // runtime.GOOS
	Arch           string // runtime.GOARCH
	CPU            string // CPU model name
	Cores          int    // logical CPUs usable by the process
	MemoryBytes    uint64 // total physical memory
	GoVersion      string
	AimeterVersion string
	// Accelerators are the GPUs and NPUs that nvidia-smi and npu-smi
	// reported; nil when there are none or neither command exists (a
	// bundle written before aimeter recorded them reads back as nil).
	Accelerators []Accelerator `json:",omitempty"`
	// NICs are the machine's network interfaces (Hardware.NICs); nil when
	// none were read (not Linux, or a bundle written before aimeter
	// recorded them).
	NICs []NIC `json:",omitempty"`
	// Routes are the interfaces a network run's traffic left by, one per
	// server it reached (Detector.Routes), set by the run; nil for a run
	// of an in-process SUT.
	Routes []Route `json:",omitempty"`
}

// TrafficInterfaces are the names of the interfaces the run's traffic
// left by (Routes), each once, in the order of Routes.
func (s System) TrafficInterfaces() []string {
	var out []string
	for _, r := range s.Routes {
		if r.Interface != "" && !slices.Contains(out, r.Interface) {
			out = append(out, r.Interface)
		}
	}
	return out
}

// DetectSystem describes the machine it runs on: the host name, OS and
// architecture, the CPU model and total memory (from /proc/cpuinfo and
// /proc/meminfo on Linux; left empty elsewhere), the number of logical
// CPUs, the Go version, aimeter's version (version.String), the
// accelerators that nvidia-smi and npu-smi list and the network
// interfaces (/sys/class/net). It runs those commands
// once per call: call it once per run.
func DetectSystem() System { return Detector{}.System() }

// System is DetectSystem on d's file system and commands.
func (d Detector) System() System { return SystemOf(d.Hardware()) }

// SystemOf is DetectSystem from hardware facts already detected (a Host's
// Hardware), so that a run that needs both detects the machine once.
func SystemOf(hw Hardware) System {
	si := System{
		OS:             runtime.GOOS,
		Arch:           runtime.GOARCH,
		Cores:          runtime.NumCPU(),
		GoVersion:      runtime.Version(),
		AimeterVersion: version.String(),
	}
	si.Hostname, _ = os.Hostname()
	si.CPU, si.MemoryBytes, si.Accelerators, si.NICs = hw.CPU.Model, hw.MemoryBytes, hw.Accelerators, hw.NICs
	return si
}
