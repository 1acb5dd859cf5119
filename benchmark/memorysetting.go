package benchmark

import (
	"fmt"
	"strconv"
	"strings"
)

// MemorySetting is a memory limit as a user writes it (aimeter's
// --max-memory): a byte count with an optional unit (ParseMemorySize),
// "auto" for ProcessMemoryBudget of the process's memory limits, or
// "none" for no limit. Its zero value is auto. It is a flag.Value (and
// pflag's, with Type).
type MemorySetting struct {
	set   bool
	bytes int64 // -1 = no limit
}

// String is the setting as Set reads it: auto, none or a byte count.
func (m *MemorySetting) String() string {
	switch {
	case !m.set:
		return "auto"
	case m.bytes < 0:
		return "none"
	}
	return strconv.FormatInt(m.bytes, 10)
}

// Type names the value's kind in a flag's help.
func (m *MemorySetting) Type() string { return "size" }

// Set reads s: auto, none, or a size above 0 (ParseMemorySize).
func (m *MemorySetting) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		*m = MemorySetting{}
		return nil
	case "none":
		*m = MemorySetting{set: true, bytes: -1}
		return nil
	}
	n, err := ParseMemorySize(s)
	if err != nil {
		return fmt.Errorf("want a size > 0 such as 4GiB or 500MB, auto or none; got %q", strings.TrimSpace(s))
	}
	*m = MemorySetting{set: true, bytes: n}
	return nil
}

// Budget is the setting's budget: a size or none is FixedMemoryBudget
// from source (what the user set it with, recorded as
// Plan.MaxMemorySource); auto is ProcessMemoryBudget, or its error when an
// address-space limit leaves no room for a run.
func (m *MemorySetting) Budget(source string) (MemoryBudget, error) {
	if m.set {
		return FixedMemoryBudget(m.bytes, source), nil
	}
	return ProcessMemoryBudget()
}
