package sysinfo

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// Mount tables of the two layouts: a pure cgroup v2 host and a hybrid one
// (v1 controllers, v2 at /sys/fs/cgroup/unified), as in this repository's
// CI container.
const (
	mountinfoV2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
	mountinfoV1 = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	// A container without a cgroup namespace: the mount's root is the
	// container's cgroup, which /proc/self/cgroup names in full.
	mountinfoDocker = "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"
	meminfo16G      = "MemTotal:       16777216 kB\n"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestMemoryLimit(t *testing.T) {
	unlimited := func(string) (uint64, error) { return RlimInfinity, nil }
	tests := []struct {
		reason  string
		files   map[string]string
		rlimit  func(string) (uint64, error)
		binding MemorySource
		bytes   uint64
		from    string // Source(binding).From
		errWant string // "" for no error
		note    map[MemorySource]string
	}{
		{
			reason: "no cgroup limit nor rlimit: the machine's memory binds",
			files: map[string]string{"proc/meminfo": meminfo16G, "proc/self/cgroup": "0::/user.slice\n",
				"proc/self/mountinfo": mountinfoV2, "sys/fs/cgroup/user.slice/memory.max": "max\n"},
			binding: SourceRAM, bytes: 16 << 30,
			note: map[MemorySource]string{SourceCgroupV2: `"max"`, SourceRlimitAS: "unlimited"},
		},
		{
			reason: "a cgroup v2 limit below the RAM binds",
			files: map[string]string{"proc/meminfo": meminfo16G, "proc/self/cgroup": "0::/app\n",
				"proc/self/mountinfo": mountinfoV2, "sys/fs/cgroup/app/memory.max": "2147483648\n"},
			binding: SourceCgroupV2, bytes: 2 << 30, from: "/sys/fs/cgroup/app/memory.max",
		},
		{
			reason: "a v2 limit above the RAM does not bind",
			files: map[string]string{"proc/meminfo": meminfo16G, "proc/self/cgroup": "0::/app\n",
				"proc/self/mountinfo": mountinfoV2, "sys/fs/cgroup/app/memory.max": "34359738368\n"},
			binding: SourceRAM, bytes: 16 << 30,
		},
		{
			reason: "a parent's tighter v2 limit binds the child's",
			files: map[string]string{"proc/meminfo": meminfo16G, "proc/self/cgroup": "0::/kubepods/pod1/ctr\n",
				"proc/self/mountinfo":                        mountinfoV2,
				"sys/fs/cgroup/kubepods/pod1/ctr/memory.max": "max\n",
				"sys/fs/cgroup/kubepods/pod1/memory.max":     "1073741824\n",
				"sys/fs/cgroup/kubepods/memory.max":          "4294967296\n"},
			binding: SourceCgroupV2, bytes: 1 << 30, from: "/sys/fs/cgroup/kubepods/pod1/memory.max",
		},
		{
			reason: "no mountinfo: cgroup v2 is looked for at /sys/fs/cgroup",
			files: map[string]string{"proc/meminfo": meminfo16G, "proc/self/cgroup": "0::/\n",
				"sys/fs/cgroup/memory.max": "1000000000\n"},
			binding: SourceCgroupV2, bytes: 1e9, from: "/sys/fs/cgroup/memory.max",
		},
		{
			reason: "a cgroup v1 limit (hybrid layout) binds",
			files: map[string]string{"proc/meminfo": meminfo16G,
				"proc/self/cgroup":    "4:memory:/process_api/x\n1:cpu:/\n0::/\n",
				"proc/self/mountinfo": mountinfoV1,
				"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "536870912\n",
				"sys/fs/cgroup/memory/process_api/memory.limit_in_bytes":   "9223372036854771712\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes":               "9223372036854771712\n"},
			binding: SourceCgroupV1, bytes: 512 << 20, from: "/sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes",
			note: map[MemorySource]string{SourceCgroupV2: "no memory.max in /sys/fs/cgroup/unified"},
		},
		{
			reason: "v1's unlimited sentinel (PAGE_COUNTER_MAX pages) is no limit",
			files: map[string]string{"proc/meminfo": meminfo16G,
				"proc/self/cgroup":    "4:memory:/process_api/x\n0::/\n",
				"proc/self/mountinfo": mountinfoV1,
				"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes":               "9223372036854775807\n"},
			binding: SourceRAM, bytes: 16 << 30,
			note: map[MemorySource]string{SourceCgroupV1: "the unlimited sentinel"},
		},
		{
			reason: "a v1 container without a cgroup namespace: the mount root is stripped from the path",
			files: map[string]string{"proc/meminfo": meminfo16G,
				"proc/self/cgroup":                           "9:memory:/docker/abc\n",
				"proc/self/mountinfo":                        mountinfoDocker,
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n"},
			binding: SourceCgroupV1, bytes: 256 << 20, from: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		},
		{
			reason: "v1 in /proc/self/cgroup but the memory controller is not mounted",
			files: map[string]string{"proc/meminfo": meminfo16G,
				"proc/self/cgroup": "4:memory:/x\n", "proc/self/mountinfo": mountinfoV2},
			binding: SourceRAM, bytes: 16 << 30,
			note: map[MemorySource]string{SourceCgroupV1: "not mounted", SourceCgroupV2: "no cgroup v2"},
		},
		{
			reason: "missing files (no /proc at all): no limit but the rlimit, each source says why",
			files:  map[string]string{},
			rlimit: func(r string) (uint64, error) {
				if r == "RLIMIT_AS" {
					return 4e9, nil
				}
				return RlimInfinity, nil
			},
			binding: SourceRlimitAS, bytes: 4e9, from: "RLIMIT_AS",
			note: map[MemorySource]string{SourceRAM: "cannot read MemTotal", SourceCgroupV2: "no /proc/self/cgroup", SourceRlimitData: "unlimited"},
		},
		{
			reason: "RLIMIT_DATA below RLIMIT_AS binds",
			files:  map[string]string{"proc/meminfo": meminfo16G},
			rlimit: func(r string) (uint64, error) {
				if r == "RLIMIT_AS" {
					return 4e9, nil
				}
				return 3e9, nil
			},
			binding: SourceRlimitData, bytes: 3e9, from: "RLIMIT_DATA",
		},
		{
			reason:  "an rlimit that cannot be read is no limit, with the error as the note",
			files:   map[string]string{"proc/meminfo": meminfo16G},
			rlimit:  func(string) (uint64, error) { return 0, errors.New("rlimits are not supported on plan9") },
			binding: SourceRAM, bytes: 16 << 30,
			note: map[MemorySource]string{SourceRlimitAS: "not supported"},
		},
		{
			reason: "garbage in memory.max: ignored with a note, reported in the error, the other sources still count",
			files: map[string]string{"proc/meminfo": meminfo16G, "proc/self/cgroup": "0::/app\n",
				"proc/self/mountinfo":          mountinfoV2,
				"sys/fs/cgroup/app/memory.max": "lots\n",
				"sys/fs/cgroup/memory.max":     "8589934592\n"},
			binding: SourceCgroupV2, bytes: 8 << 30, from: "/sys/fs/cgroup/memory.max",
			errWant: `/sys/fs/cgroup/app/memory.max: cannot parse "lots" as a byte count, ignored`,
			note:    map[MemorySource]string{SourceCgroupV2: "cannot parse"},
		},
		{
			reason: "garbage in v1 memory.limit_in_bytes alone: the RAM binds, and the error says which file",
			files: map[string]string{"proc/meminfo": meminfo16G,
				"proc/self/cgroup": "4:memory:/\n", "proc/self/mountinfo": mountinfoV1,
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "12ab\n"},
			binding: SourceRAM, bytes: 16 << 30,
			errWant: "/sys/fs/cgroup/memory/memory.limit_in_bytes: cannot parse",
		},
		{
			reason: "v1's -1 of old kernels is no limit",
			files: map[string]string{"proc/meminfo": meminfo16G,
				"proc/self/cgroup": "4:memory:/\n", "proc/self/mountinfo": mountinfoV1,
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "-1\n"},
			binding: SourceRAM, bytes: 16 << 30,
			note: map[MemorySource]string{SourceCgroupV1: "no limit"},
		},
	}
	for _, tc := range tests {
		fsys := fstest.MapFS{}
		for name, s := range tc.files {
			fsys[name] = file(s)
		}
		rl := tc.rlimit
		if rl == nil {
			rl = unlimited
		}
		m, err := Detector{FS: fsys, Rlimit: rl}.MemoryLimit()
		if (err != nil) != (tc.errWant != "") || err != nil && !strings.Contains(err.Error(), tc.errWant) {
			t.Errorf("%s: error %v, want %q", tc.reason, err, tc.errWant)
		}
		if m.Binding != tc.binding || m.Bytes != tc.bytes {
			t.Errorf("%s: %s binds with %d bytes, want %s with %d\n%+v", tc.reason, m.Binding, m.Bytes, tc.binding, tc.bytes, m)
		}
		if tc.from != "" && m.Source(m.Binding).From != tc.from {
			t.Errorf("%s: binding limit read from %q, want %q", tc.reason, m.Source(m.Binding).From, tc.from)
		}
		if m.Binding != "" && !strings.Contains(m.Reason, string(m.Binding)) {
			t.Errorf("%s: reason %q does not name %s", tc.reason, m.Reason, m.Binding)
		}
		for s, want := range tc.note {
			if l := m.Source(s); !strings.Contains(l.Note, want) {
				t.Errorf("%s: %s note %q, want it to say %q", tc.reason, s, l.Note, want)
			}
		}
	}
}

func TestMemoryLimitRealMachine(t *testing.T) {
	m, err := MemoryLimit()
	if err != nil {
		t.Logf("unparsable limit files: %v", err)
	}
	t.Logf("%+v", m)
	if m.Binding != "" && m.Bytes == 0 {
		t.Errorf("%s binds with 0 bytes", m.Binding)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/a\040b\`); got != `/mnt/a b\` {
		t.Errorf("got %q", got)
	}
}
