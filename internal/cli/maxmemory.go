package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"aimeter/loadgen"
	"aimeter/sysinfo"
)

// memoryFlag is --max-memory: a byte count with an optional unit (kB, MB,
// GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024), "auto"
// for half of the machine's memory, or "none" for no limit.
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

// limit returns Options.MaxMemory: the flag's value, or for auto half of
// the machine's memory (loadgen.DefaultMaxMemory when it cannot be read).
func (m *memoryFlag) limit() int64 {
	if m.set {
		return m.bytes
	}
	return halfOfMemory(sysinfo.Detector{}.MemoryTotal())
}

// halfOfMemory is the default budget for a machine of total bytes.
func halfOfMemory(total uint64) int64 {
	if total == 0 {
		return loadgen.DefaultMaxMemory
	}
	return int64(min(total/2, math.MaxInt64))
}
