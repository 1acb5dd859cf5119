package cli

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"aimeter/loadgen"
	"aimeter/sysinfo"
)

// memoryFlag is --max-memory: a byte count with an optional unit (kB, MB,
// GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024), "auto"
// for half of the smallest memory limit of the process (the machine's
// memory, its cgroup's, its RLIMIT_AS or RLIMIT_DATA; see autoBudget), or
// "none" for no limit.
type memoryFlag struct {
	set   bool
	bytes int64 // -1 = no limit
}

func (m *memoryFlag) String() string {
	switch {
	case !m.set:
		return "auto"
	case m.bytes < 0:
		return "none"
	}
	return strconv.FormatInt(m.bytes, 10)
}

func (m *memoryFlag) Type() string { return "size" }

var memoryUnits = []struct {
	suffix string
	factor float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

func (m *memoryFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "auto":
		*m = memoryFlag{}
		return nil
	case "none":
		*m = memoryFlag{set: true, bytes: -1}
		return nil
	}
	num, factor := s, 1.0
	for _, u := range memoryUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v*factor, 0) || v*factor >= math.MaxInt64 {
		return fmt.Errorf("want a size > 0 such as 4GiB or 500MB, auto or none; got %q", s)
	}
	*m = memoryFlag{set: true, bytes: int64(v * factor)}
	return nil
}

// memoryBudget is what --max-memory gives a run.
type memoryBudget struct {
	// bytes is Options.MaxMemory.
	bytes int64
	// source says where it comes from (bundle.Control.MaxMemorySource).
	source string
	// goLimit, when > 0, is the Go runtime's soft memory limit to set
	// (setGoMemoryLimit).
	goLimit int64
}

// limit returns Options.MaxMemory: the flag's value, or autoBudget's.
func (m *memoryFlag) limit() int64 { return m.budget().bytes }

// budget returns the flag's budget; for auto, autoBudget of the process's
// memory limits (sysinfo.MemoryLimit: a limit file that cannot be parsed is
// ignored, and the others still count).
func (m *memoryFlag) budget() memoryBudget {
	if m.set {
		return memoryBudget{bytes: m.bytes, source: "--max-memory"}
	}
	lim, _ := sysinfo.MemoryLimit()
	return autoBudget(lim)
}

// autoBudget is the budget of --max-memory auto: a share of the binding
// limit among the machine's memory, the cgroup v2 and v1 limits and the
// soft RLIMIT_AS and RLIMIT_DATA (loadgen.DefaultMaxMemory when none can be
// read): half of the machine's memory (as before), a quarter of a cgroup's
// limit, a sixth of an rlimit.
//
// The budget bounds loadgen's records of the pass only; the limit binds the
// whole process. After the pass the result's latency arrays, the printed
// figures and the bundle take memory per sample again, and Go's collector
// lets the heap grow to about twice the live heap between collections.
// Measured on linux/amd64 (a SingleStream self-test stopped by the budget,
// GOMEMLIMIT at 3/4 of the limit): the peak resident memory was 2.4 times
// the budget, so a quarter of a cgroup limit (which counts resident memory,
// and the page cache of the bundle's files) leaves room; the address space
// was larger still (Go keeps freed heap mapped, and reserves its own
// metadata), and under ulimit -v 4000000 a budget of 1 GB died while 700 MB
// stopped cleanly, hence a sixth of RLIMIT_AS (RLIMIT_DATA counts the same
// mappings on Linux since 4.7). The machine's memory keeps its half: the
// page cache and swap give way under it.
//
// When a cgroup or rlimit limit binds, goLimit is three quarters of it: the
// Go runtime then collects harder as the heap approaches it, before the
// kernel's OOM killer or a failed mmap ends the process, and it still
// leaves a quarter for what the runtime does not count.
func autoBudget(l sysinfo.MemoryLimits) memoryBudget {
	if l.Binding == "" || l.Bytes == 0 {
		return memoryBudget{bytes: loadgen.DefaultMaxMemory,
			source: "auto: loadgen's default; no memory limit of the machine or the process could be read"}
	}
	share, name := uint64(2), "half"
	switch l.Binding {
	case sysinfo.SourceCgroupV2, sysinfo.SourceCgroupV1:
		share, name = 4, "a quarter"
	case sysinfo.SourceRlimitAS, sysinfo.SourceRlimitData:
		share, name = 6, "a sixth"
	}
	b := memoryBudget{bytes: int64(min(l.Bytes/share, math.MaxInt64)),
		source: fmt.Sprintf("auto: %s of %s %s (%s)", name, l.Binding, loadgen.FormatBytes(float64(l.Bytes)), l.Source(l.Binding).From)}
	if l.Binding.Container() {
		b.goLimit = int64(min(l.Bytes/4*3, math.MaxInt64))
	}
	return b
}

// setGoMemoryLimit sets the Go runtime's soft memory limit to b.goLimit
// unless it is 0, GOMEMLIMIT is set, or the limit is already lower.
func setGoMemoryLimit(b memoryBudget) {
	if b.goLimit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if cur := debug.SetMemoryLimit(-1); cur > b.goLimit {
		debug.SetMemoryLimit(b.goLimit)
	}
}

// halfOfMemory is the default budget for a machine of total bytes.
func halfOfMemory(total uint64) int64 {
	if total == 0 {
		return loadgen.DefaultMaxMemory
	}
	return int64(min(total/2, math.MaxInt64))
}
