package benchmark

import (
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/sysinfo"
)

func TestParseMemorySize(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   int64
		reason string
	}{
		{"4GiB", 4 << 30, "binary unit"},
		{" 500MB ", 500e6, "decimal unit, spaces"},
		{"1.5G", 3 << 29, "a bare letter is binary"},
		{"2 KiB", 2048, "a space before the unit"},
		{"123456", 123456, "plain bytes"},
		{"0", 0, "refused: zero"},
		{"-1GB", 0, "refused: negative"},
		{"lots", 0, "refused: not a size"},
		{"1e30TB", 0, "refused: out of range"},
	} {
		got, err := ParseMemorySize(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("%s: %q accepted as %d", tc.reason, tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q gives %d, %v; want %d", tc.reason, tc.in, got, err, tc.want)
		}
	}
	if b := FixedMemoryBudget(4<<30, "x"); b.GoLimit != 5<<30 || b.Source != "x" {
		t.Errorf("a fixed budget of 4 GiB: %+v, want Go's soft limit at 5/4 of it", b)
	}
	if b := FixedMemoryBudget(-1, "x"); b.GoLimit != 0 {
		t.Errorf("no limit sets Go's soft limit to %d", b.GoLimit)
	}
}

func TestHalfOfMemory(t *testing.T) {
	for _, tc := range []struct {
		total  uint64
		want   int64
		reason string
	}{
		{16 << 30, 8 << 30, "half of the machine"},
		{0, 8 << 30, "unknown memory: loadgen's default"},
	} {
		if got := halfOfMemory(tc.total); got != tc.want {
			t.Errorf("%s: halfOfMemory(%d) = %d, want %d", tc.reason, tc.total, got, tc.want)
		}
	}
}

func TestAutoMemoryBudget(t *testing.T) {
	const gib = 1 << 30
	mapped := uint64(1700 << 20) // what aimeter has mapped when it starts
	rlimit := func(limit uint64) sysinfo.MemoryLimits {
		return sysinfo.MemoryLimits{Binding: sysinfo.SourceRlimitAS, Bytes: limit, RlimitAS: sysinfo.Limit{Bytes: limit, From: "RLIMIT_AS"},
			RAM: sysinfo.Limit{Bytes: 64 * gib}, AddressSpace: mapped}
	}
	for _, tc := range []struct {
		lim     sysinfo.MemoryLimits
		want    int64
		goLimit int64
		source  string
		reason  string
	}{
		{sysinfo.MemoryLimits{Binding: sysinfo.SourceRAM, Bytes: 16 * gib, RAM: sysinfo.Limit{Bytes: 16 * gib}}, 8 * gib, 0, "half of ram", "the machine's memory: half, Go's limit untouched"},
		{sysinfo.MemoryLimits{Binding: sysinfo.SourceCgroupV2, Bytes: 4 * gib, CgroupV2: sysinfo.Limit{Bytes: 4 * gib, From: "/sys/fs/cgroup/a/memory.max"}, RAM: sysinfo.Limit{Bytes: 16 * gib}}, gib, 3 * gib, "a quarter of cgroup-v2", "a cgroup limit: a quarter, Go's limit at 3/4"},
		{sysinfo.MemoryLimits{Binding: sysinfo.SourceCgroupV1, Bytes: 4 * gib, CgroupV1: sysinfo.Limit{Bytes: 4 * gib}}, gib, 3 * gib, "a quarter of cgroup-v1", "a v1 cgroup limit: as v2"},
		{rlimit(6 * gib), int64(6*gib-mapped-rlimitReserve) / 2, 6 * gib / 4 * 3, "half of what rlimit-as", "an address-space limit: half of what the mapped space and the reserve leave"},
		{sysinfo.MemoryLimits{Binding: sysinfo.SourceRlimitAS, Bytes: 6 * gib, RlimitAS: sysinfo.Limit{Bytes: 6 * gib}, RAM: sysinfo.Limit{Bytes: 2 * gib}, AddressSpace: mapped}, gib, 0,
			"half of ram", "the smallest share wins, not the smallest limit: half of 2 GiB of RAM is below half of what 6 GiB of address space leaves"},
		{sysinfo.MemoryLimits{}, loadgen.DefaultMaxMemory, 0, "loadgen's default", "nothing readable: loadgen's default"},
	} {
		b, err := AutoMemoryBudget(tc.lim)
		if err != nil || b.Bytes != tc.want || b.GoLimit != tc.goLimit || !strings.Contains(b.Source, tc.source) {
			t.Errorf("%s: budget %d, Go limit %d, source %q, %v; want %d, %d, %q", tc.reason, b.Bytes, b.GoLimit, b.Source, err, tc.want, tc.goLimit, tc.source)
		}
	}
	// ulimit -v 1900000: the runtime's reservations and the reserve leave
	// less than the smallest budget; the run is refused with the limit
	// that would do.
	_, err := AutoMemoryBudget(rlimit(1900000 << 10))
	if err == nil || !strings.Contains(err.Error(), "ulimit -v") || !strings.Contains(err.Error(), "already mapped") {
		t.Errorf("a 1.9 GB address-space limit: %v, want a refusal naming ulimit -v and the mapped space", err)
	}
}
