package report

import (
	"os"
	"runtime"
	"runtime/debug"

	"aimeter/sysinfo"
)

// SystemInfo describes the machine a benchmark ran on. Empty fields are shown
// as unknown.
type SystemInfo struct {
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
	Accelerators []sysinfo.Accelerator `json:",omitempty"`
}

// DetectSystem describes the machine it runs on: the host name, OS and
// architecture, the CPU model and total memory (from /proc/cpuinfo and
// /proc/meminfo on Linux; left empty elsewhere), the number of logical CPUs,
// the Go version and aimeter's module version from the build information,
// and the accelerators that nvidia-smi and npu-smi list.
func DetectSystem() SystemInfo {
	si := SystemInfo{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
	si.Hostname, _ = os.Hostname()
	// The same host facts that fill the GB/T test information (GB-7.7.1-a).
	hw := sysinfo.DetectHardware()
	si.CPU, si.MemoryBytes, si.Accelerators = hw.CPU.Model, hw.MemoryBytes, hw.Accelerators
	if bi, ok := debug.ReadBuildInfo(); ok {
		si.AimeterVersion = buildVersion(bi)
	}
	return si
}

// buildVersion is the main module's version, with the VCS revision when the
// binary was built with VCS stamping.
func buildVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (" + rev + modified + ")"
	}
	return v
}
