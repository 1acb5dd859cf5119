package report

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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
}

// DetectSystem describes the machine it runs on: the host name, OS and
// architecture, the CPU model and total memory (from /proc/cpuinfo and
// /proc/meminfo on Linux; left empty elsewhere), the number of logical CPUs,
// the Go version and aimeter's module version from the build information.
func DetectSystem() SystemInfo {
	si := SystemInfo{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
	si.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		si.CPU = parseCPUInfo(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		si.MemoryBytes = parseMemInfo(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		si.AimeterVersion = buildVersion(bi)
	}
	return si
}

// parseCPUInfo returns the CPU model from /proc/cpuinfo: "model name" on x86,
// else the fields other architectures use.
func parseCPUInfo(text string) string {
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, seen := fields[k]; !seen && v != "" {
			fields[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "Hardware", "cpu model", "cpu", "Processor", "uarch"} {
		if v := fields[k]; v != "" {
			return v
		}
	}
	return ""
}

// parseMemInfo returns MemTotal from /proc/meminfo in bytes (0 if absent).
func parseMemInfo(text string) uint64 {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
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
