package cli

import (
	"fmt"
	"strconv"
	"strings"

	"aimeter/benchmark"
)

// memoryFlag is --max-memory: a byte count with an optional unit
// (benchmark.ParseMemorySize), "auto" for benchmark.AutoMemoryBudget of
// the process's memory limits, or "none" for no limit.
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

func (m *memoryFlag) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		*m = memoryFlag{}
		return nil
	case "none":
		*m = memoryFlag{set: true, bytes: -1}
		return nil
	}
	n, err := benchmark.ParseMemorySize(s)
	if err != nil {
		return fmt.Errorf("want a size > 0 such as 4GiB or 500MB, auto or none; got %q", strings.TrimSpace(s))
	}
	*m = memoryFlag{set: true, bytes: n}
	return nil
}

// limit returns Plan.MaxMemory: the flag's value, or the auto budget's.
func (m *memoryFlag) limit() int64 {
	b, _ := m.budget()
	return b.Bytes
}

// budget returns the flag's budget; for auto,
// benchmark.ProcessMemoryBudget, or an error when an address-space limit
// leaves no room for a run.
func (m *memoryFlag) budget() (benchmark.MemoryBudget, error) {
	if m.set {
		return benchmark.FixedMemoryBudget(m.bytes, "--max-memory"), nil
	}
	return benchmark.ProcessMemoryBudget()
}
