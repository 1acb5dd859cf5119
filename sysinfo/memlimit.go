package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime"
	"strconv"
	"strings"
)

// MemorySource names where a memory limit comes from.
type MemorySource string

// The sources MemoryLimit consults.
const (
	// SourceRAM is the machine's memory, MemTotal of /proc/meminfo.
	SourceRAM MemorySource = "ram"
	// SourceCgroupV2 is memory.max of the process's cgroup v2 or one of
	// its ancestors (the tightest).
	SourceCgroupV2 MemorySource = "cgroup-v2"
	// SourceCgroupV1 is memory.limit_in_bytes of the process's cgroup
	// under the v1 memory controller or one of its ancestors.
	SourceCgroupV1 MemorySource = "cgroup-v1"
	// SourceRlimitAS and SourceRlimitData are the soft RLIMIT_AS (address
	// space) and RLIMIT_DATA (data segment) limits of the process.
	SourceRlimitAS   MemorySource = "rlimit-as"
	SourceRlimitData MemorySource = "rlimit-data"
)

// Container reports whether the source is a cgroup (container) or rlimit
// limit set on the process, as opposed to the machine's memory.
func (s MemorySource) Container() bool { return s != "" && s != SourceRAM }

// Limit is one source's memory limit.
type Limit struct {
	// Bytes is the limit; 0 means this source sets none.
	Bytes uint64 `json:"bytes,omitempty"`
	// From is what was read: a file of the root file system ("/sys/fs/
	// cgroup/a/memory.max") or the resource ("RLIMIT_AS").
	From string `json:"from,omitempty"`
	// Note says why there is no limit ("max", absent file, unsupported
	// OS) or why the figure read was ignored.
	Note string `json:"note,omitempty"`
}

// MemoryLimits is every source's memory limit and the one that binds.
type MemoryLimits struct {
	RAM        Limit `json:"ram"`
	CgroupV2   Limit `json:"cgroup_v2"`
	CgroupV1   Limit `json:"cgroup_v1"`
	RlimitAS   Limit `json:"rlimit_as"`
	RlimitData Limit `json:"rlimit_data"`
	// Binding is the source with the smallest limit; "" when no source
	// gives one. Bytes is its limit, and Reason says why it binds.
	Binding MemorySource `json:"binding,omitempty"`
	Bytes   uint64       `json:"bytes,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	// AddressSpace is the virtual memory the process has mapped when the
	// limits were read (VmSize of /proc/self/status; 0 when unknown). An
	// address-space limit counts it: the Go runtime alone reserves over a
	// gigabyte of it before the first allocation.
	AddressSpace uint64 `json:"address_space,omitempty"`
}

// Source returns the limit of source s.
func (m *MemoryLimits) Source(s MemorySource) Limit {
	switch s {
	case SourceRAM:
		return m.RAM
	case SourceCgroupV2:
		return m.CgroupV2
	case SourceCgroupV1:
		return m.CgroupV1
	case SourceRlimitAS:
		return m.RlimitAS
	case SourceRlimitData:
		return m.RlimitData
	}
	return Limit{}
}

// Sources lists the sources in the order MemoryLimit prefers them on a tie.
var Sources = []MemorySource{SourceCgroupV2, SourceCgroupV1, SourceRlimitAS, SourceRlimitData, SourceRAM}

// MemoryLimit returns the memory limits of this process on this machine:
// the machine's memory, the cgroup v2 and v1 memory limits of the process's
// cgroup and its ancestors (Linux only), and the soft RLIMIT_AS and
// RLIMIT_DATA (Unix only), and which of them binds. See
// Detector.MemoryLimit.
func MemoryLimit() (MemoryLimits, error) { return Detector{}.MemoryLimit() }

// cgroupV1Unlimited is the smallest v1 memory.limit_in_bytes taken as "no
// limit": the kernel writes PAGE_COUNTER_MAX pages rounded to the page size
// (9223372036854771712 with 4 KiB pages), which differs between page sizes.
const cgroupV1Unlimited = 1 << 62

// MemoryLimit reads the memory limits of the process from the Detector's
// file system (proc/meminfo, proc/self/cgroup, proc/self/mountinfo, the
// cgroup files under sys/fs/cgroup or wherever mountinfo says the cgroup
// file systems are mounted) and its Rlimit function. A source that sets no
// limit ("max", RLIM_INFINITY, an absent file) has Bytes 0 and a Note. A
// file whose content cannot be parsed is ignored, with a Note, and reported
// in the error, which joins every such problem; the MemoryLimits returned
// with it still holds the other sources and the binding one among them.
//
// Cgroups are read only on Linux, or when FS is set (fixture trees);
// rlimits only where the OS has them (Rlimit nil).
func (d Detector) MemoryLimit() (MemoryLimits, error) {
	var m MemoryLimits
	var errs []error
	m.RAM = Limit{Bytes: d.MemoryTotal(), From: "/proc/meminfo MemTotal"}
	if m.RAM.Bytes == 0 {
		m.RAM.Note = "cannot read MemTotal of /proc/meminfo"
	}
	if runtime.GOOS == "linux" || d.FS != nil {
		var err error
		m.CgroupV2, m.CgroupV1, err = d.cgroupLimits()
		if err != nil {
			errs = append(errs, err)
		}
	} else {
		m.CgroupV2.Note = "cgroups exist on Linux only"
		m.CgroupV1.Note = m.CgroupV2.Note
	}
	rl := d.Rlimit
	if rl == nil {
		rl = getrlimit
	}
	for _, r := range []struct {
		l    *Limit
		name string
	}{{&m.RlimitAS, "RLIMIT_AS"}, {&m.RlimitData, "RLIMIT_DATA"}} {
		r.l.From = r.name
		soft, err := rl(r.name)
		switch {
		case err != nil:
			r.l.Note = err.Error()
		case soft == RlimInfinity:
			r.l.Note = "unlimited"
		case soft == 0:
			r.l.Note = "a soft limit of 0, ignored"
		default:
			r.l.Bytes = soft
		}
	}
	for _, s := range Sources {
		if l := m.Source(s); l.Bytes > 0 && (m.Binding == "" || l.Bytes < m.Bytes) {
			m.Binding, m.Bytes = s, l.Bytes
		}
	}
	if m.Binding != "" {
		m.Reason = fmt.Sprintf("%s (%d bytes, %s) is the smallest memory limit", m.Binding, m.Bytes, m.Source(m.Binding).From)
	}
	m.AddressSpace = parseVmSize(d.read("proc/self/status"))
	return m, errors.Join(errs...)
}

// parseVmSize returns the VmSize line of /proc/self/status in bytes, 0
// when it is absent or malformed.
func parseVmSize(status string) uint64 {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmSize:")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !ok {
			return 0
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
		if err != nil || kb > math.MaxUint64>>10 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// RlimInfinity is what a Detector's Rlimit returns for an unlimited
// resource.
const RlimInfinity = math.MaxUint64

// cgroupLimits reads the cgroup v2 and v1 memory limits.
func (d Detector) cgroupLimits() (v2, v1 Limit, err error) {
	cg := d.read("proc/self/cgroup")
	if cg == "" {
		v2.Note = "no /proc/self/cgroup"
		v1.Note = v2.Note
		return v2, v1, nil
	}
	mounts := parseCgroupMounts(d.read("proc/self/mountinfo"))
	var v2Path, v1Path string
	var haveV2, haveV1 bool
	for line := range strings.Lines(cg) {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2Path, haveV2 = f[2], true
		case slicesContains(strings.Split(f[1], ","), "memory"):
			v1Path, haveV1 = f[2], true
		}
	}
	var errs []error
	if haveV2 {
		mnt, ok := mounts.v2, mounts.haveV2
		if !ok {
			mnt = cgroupMount{point: "/sys/fs/cgroup", root: "/"}
		}
		v2, err = d.walkCgroup(mnt, v2Path, "memory.max", func(s string) (uint64, string, error) {
			if s == "max" {
				return 0, `"max"`, nil
			}
			n, err := strconv.ParseUint(s, 10, 64)
			return n, "", err
		})
		errs = append(errs, err)
	} else {
		v2.Note = "the process is in no cgroup v2 hierarchy"
	}
	switch {
	case !haveV1:
		v1.Note = "the process is in no cgroup v1 memory hierarchy"
	case !mounts.haveV1:
		v1.Note = "the cgroup v1 memory controller is not mounted"
	default:
		v1, err = d.walkCgroup(mounts.v1, v1Path, "memory.limit_in_bytes", func(s string) (uint64, string, error) {
			n, err := strconv.ParseUint(s, 10, 64)
			if err == nil && n >= cgroupV1Unlimited {
				return 0, fmt.Sprintf("%d, the unlimited sentinel", n), nil
			}
			if err != nil && strings.HasPrefix(s, "-") {
				// Old kernels write -1 for no limit.
				if _, e := strconv.ParseInt(s, 10, 64); e == nil {
					return 0, s + ", no limit", nil
				}
			}
			return n, "", err
		})
		errs = append(errs, err)
	}
	return v2, v1, errors.Join(errs...)
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// walkCgroup reads file in the cgroup directory of cgPath under mnt and in
// each of its ancestors up to the mount point, and returns the smallest
// limit: a parent's limit binds its children. parse returns 0 and a note
// for "no limit".
func (d Detector) walkCgroup(mnt cgroupMount, cgPath, file string, parse func(string) (uint64, string, error)) (Limit, error) {
	rel := cgPath
	if r := strings.TrimSuffix(mnt.root, "/"); r != "" && (rel == r || strings.HasPrefix(rel, r+"/")) {
		rel = strings.TrimPrefix(rel, r)
	}
	dir := path.Join(mnt.point, rel)
	top := path.Clean(mnt.point)
	if !strings.HasPrefix(dir, top) {
		// "/.." paths of a cgroup namespace: the process's cgroup is
		// outside the mount; read what the mount shows.
		dir = top
	}
	var best Limit
	var notes []string
	var errs []error
	for {
		name := path.Join(dir, file)
		b, err := fs.ReadFile(d.fsys(), strings.TrimPrefix(name, "/"))
		if err == nil {
			s := strings.TrimSpace(string(b))
			n, note, perr := parse(s)
			switch {
			case perr != nil:
				msg := fmt.Sprintf("%s: cannot parse %q as a byte count, ignored", name, truncate(s, 40))
				notes = append(notes, msg)
				errs = append(errs, errors.New(msg))
			case n == 0:
				notes = append(notes, name+": "+note)
			case best.Bytes == 0 || n < best.Bytes:
				best.Bytes, best.From = n, name
			}
		}
		if dir == top || dir == "/" || dir == "." {
			break
		}
		dir = path.Dir(dir)
	}
	if best.Bytes == 0 {
		if len(notes) == 0 {
			best.Note = fmt.Sprintf("no %s in %s or its ancestors", file, path.Join(mnt.point, rel))
		} else {
			best.Note = strings.Join(notes, "; ")
		}
	} else if len(errs) > 0 {
		best.Note = strings.Join(notes, "; ")
	}
	return best, errors.Join(errs...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// cgroupMount is a cgroup file system's mount: its mount point and the
// cgroup path of the directory mounted there.
type cgroupMount struct{ point, root string }

type cgroupMounts struct {
	v2, v1         cgroupMount
	haveV2, haveV1 bool
}

// parseCgroupMounts finds the cgroup2 mount and the cgroup v1 mount of the
// memory controller in /proc/self/mountinfo.
func parseCgroupMounts(text string) cgroupMounts {
	var m cgroupMounts
	for line := range strings.Lines(text) {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(strings.TrimSpace(line), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		mnt := cgroupMount{point: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch g[0] {
		case "cgroup2":
			if !m.haveV2 {
				m.v2, m.haveV2 = mnt, true
			}
		case "cgroup":
			if len(g) >= 3 && slicesContains(strings.Split(g[2], ","), "memory") && !m.haveV1 {
				m.v1, m.haveV1 = mnt, true
			}
		}
	}
	return m
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
