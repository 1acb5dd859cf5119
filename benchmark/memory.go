package benchmark

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

// MemoryBudget is a run's memory budget: Plan.MaxMemory, where it comes
// from, and the Go runtime's soft memory limit that goes with it.
type MemoryBudget struct {
	// Bytes is Plan.MaxMemory: the budget of loadgen's records of a
	// pass; -1 for no limit.
	Bytes int64
	// Source is Plan.MaxMemorySource (bundle.Control.MaxMemorySource).
	Source string
	// GoLimit, when > 0, is the Go runtime's soft memory limit to set
	// (SetGoMemoryLimit).
	GoLimit int64
}

// FixedMemoryBudget is the budget of bytes given explicitly (-1 for no
// limit), from source. A positive budget sets Go's soft limit at 5/4 of
// it: the budget bounds the pass's records and its result, and the soft
// limit makes the collector and scavenger keep the rest close (a
// SingleStream run stopped at 1 GB peaked at 1.30 GB resident without it,
// 1.23 GB with it).
func FixedMemoryBudget(bytes int64, source string) MemoryBudget {
	b := MemoryBudget{Bytes: bytes, Source: source}
	if bytes > 0 {
		b.GoLimit = bytes / 4 * 5
	}
	return b
}

// memoryUnits are the units ParseMemorySize knows, longest suffix first.
var memoryUnits = []struct {
	suffix string
	factor float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// ParseMemorySize reads a byte count with an optional unit: kB, MB, GB,
// TB in powers of 1000; KiB, MiB, GiB, TiB and the bare letters K, M, G, T
// in powers of 1024; B for bytes. The size must be above 0 and below
// 2^63 bytes.
func ParseMemorySize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, factor := s, 1.0
	for _, u := range memoryUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v*factor, 0) || v*factor >= math.MaxInt64 {
		return 0, fmt.Errorf("not a size > 0: %q", s)
	}
	return int64(v * factor), nil
}

// AutoMemoryBudget is the budget of --max-memory auto: the smallest of
// the shares of every limit that can be read (loadgen.DefaultMaxMemory
// when none can): half of the machine's memory, a quarter of a cgroup v2
// or v1 limit, and half of what an RLIMIT_AS or RLIMIT_DATA leaves beside
// the address space already mapped and a reserve (rlimitReserve).
//
// The budget bounds loadgen's records of the pass only; the limit binds
// the whole process. After the pass the result's latency arrays, the
// printed figures and the bundle take memory per sample again, and Go's
// collector lets the heap grow to about twice the live heap between
// collections. Measured on linux/amd64 (a SingleStream self-test stopped
// by the budget, GOMEMLIMIT at 3/4 of the limit): the peak resident memory
// was 2.4 times the budget, so a quarter of a cgroup limit (which counts
// resident memory, and the page cache of the bundle's files) leaves room.
// An address-space limit counts mappings, not memory: the Go runtime has
// reserved about 1.2 GB of them before main runs (aimeter about 1.7 GB),
// and a run's peak VmSize was that plus about 0.26 GB plus 1.2–1.7 times
// the budget (budgets of 100, 300 and 600 MB), hence half of what is left
// after a 300 MB reserve. When that leaves less than minRlimitBudget the
// run is refused, with the ulimit that would do, rather than dying in the
// runtime's "fatal error: out of memory". The machine's memory keeps its
// half: the page cache and swap give way under it.
//
// When a cgroup or rlimit limit binds, GoLimit is three quarters of it:
// the Go runtime then collects harder as the heap approaches it, before
// the kernel's OOM killer or a failed mmap ends the process, and it still
// leaves a quarter for what the runtime does not count.
func AutoMemoryBudget(l sysinfo.MemoryLimits) (MemoryBudget, error) {
	best := MemoryBudget{Bytes: -1}
	var refused error
	for _, src := range sysinfo.Sources {
		lim := l.Source(src)
		if lim.Bytes == 0 {
			continue
		}
		var b MemoryBudget
		switch src {
		case sysinfo.SourceCgroupV2, sysinfo.SourceCgroupV1:
			b = MemoryBudget{Bytes: int64(min(lim.Bytes/4, math.MaxInt64)),
				Source: fmt.Sprintf("auto: a quarter of %s %s (%s)", src, loadgen.FormatBytes(float64(lim.Bytes)), lim.From)}
		case sysinfo.SourceRlimitAS, sysinfo.SourceRlimitData:
			used := l.AddressSpace + rlimitReserve
			left := int64(0)
			if lim.Bytes > used {
				left = int64(min((lim.Bytes-used)/2, math.MaxInt64))
			}
			if left < minRlimitBudget {
				need := l.AddressSpace + rlimitReserve + 2*minRlimitBudget
				refused = fmt.Errorf("--max-memory auto: %s (%s, ulimit -v) is %s, and this process has already mapped %s of address space (the Go runtime reserves most of it before it starts): "+
					"that leaves no room for a run; raise the limit to at least %s (ulimit -v %d) or give --max-memory explicitly",
					src, lim.From, loadgen.FormatBytes(float64(lim.Bytes)), loadgen.FormatBytes(float64(l.AddressSpace)), loadgen.FormatBytes(float64(need)), (need+1023)>>10)
				continue
			}
			b = MemoryBudget{Bytes: left,
				Source: fmt.Sprintf("auto: half of what %s %s (%s) leaves beside %s already mapped and a %s reserve", src, loadgen.FormatBytes(float64(lim.Bytes)), lim.From,
					loadgen.FormatBytes(float64(l.AddressSpace)), loadgen.FormatBytes(rlimitReserve))}
		default:
			b = MemoryBudget{Bytes: halfOfMemory(lim.Bytes), Source: fmt.Sprintf("auto: half of %s %s (%s)", src, loadgen.FormatBytes(float64(lim.Bytes)), lim.From)}
		}
		if src.Container() {
			b.GoLimit = int64(min(lim.Bytes/4*3, math.MaxInt64))
		}
		if best.Bytes < 0 || b.Bytes < best.Bytes {
			best = b
		}
	}
	if refused != nil {
		return MemoryBudget{}, refused
	}
	if best.Bytes < 0 {
		return MemoryBudget{Bytes: loadgen.DefaultMaxMemory,
			Source: "auto: loadgen's default; no memory limit of the machine or the process could be read"}, nil
	}
	return best, nil
}

// ProcessMemoryBudget is AutoMemoryBudget of this process's memory
// limits (sysinfo.MemoryLimit: a limit file that cannot be parsed is
// ignored, and the others still count).
func ProcessMemoryBudget() (MemoryBudget, error) {
	lim, _ := sysinfo.MemoryLimit()
	return AutoMemoryBudget(lim)
}

// rlimitReserve is the address space kept aside under an RLIMIT_AS or
// RLIMIT_DATA beside what is mapped when the budget is set (see
// AutoMemoryBudget), and minRlimitBudget the smallest budget such a limit
// may leave before the run is refused.
const (
	rlimitReserve   = 300 << 20
	minRlimitBudget = 32 << 20
)

// SetGoMemoryLimit sets the Go runtime's soft memory limit to b.GoLimit
// unless it is 0, GOMEMLIMIT is set, or the limit is already lower.
func (b MemoryBudget) SetGoMemoryLimit() {
	if b.GoLimit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if cur := debug.SetMemoryLimit(-1); cur > b.GoLimit {
		debug.SetMemoryLimit(b.GoLimit)
	}
}

// halfOfMemory is the default budget for a machine of total bytes.
func halfOfMemory(total uint64) int64 {
	if total == 0 {
		return loadgen.DefaultMaxMemory
	}
	return int64(min(total/2, math.MaxInt64))
}
