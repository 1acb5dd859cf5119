package sysinfo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// ClockTicksPerSecond is the unit of the CPU times in /proc/stat and
// /proc/<pid>/stat: USER_HZ, which Linux fixes at 100 for user space on
// every architecture it supports.
const ClockTicksPerSecond = 100

// BusyCores is the CPU time, in cores, that other processes and the
// hypervisor (steal) may take during a run before Load.Busy reports that
// they may explain an INVALID result: a quarter of a core.
const BusyCores = 0.25

// CPUUsage is a snapshot of the machine's CPU time counters, in clock
// ticks since boot: the machine's, summed over all CPUs (the "cpu" line of
// /proc/stat), and this process's (utime and stime of /proc/self/stat, all
// threads). Two snapshots taken around a run give its Load.
type CPUUsage struct {
	// CPUs is the number of "cpuN" lines of /proc/stat.
	CPUs int
	// Busy is the time the CPUs spent neither idle nor waiting for I/O nor
	// stolen: user, nice, system, irq and softirq (guest time is already
	// part of user and nice).
	Busy uint64
	// Idle is idle plus iowait.
	Idle uint64
	// Steal is the time the hypervisor ran something else while this
	// machine's virtual CPUs were ready to run.
	Steal uint64
	// Self is this process's user plus system time.
	Self uint64
}

// Total is all the CPU time of the snapshot: busy, idle and stolen.
func (u CPUUsage) Total() uint64 { return u.Busy + u.Idle + u.Steal }

// Load is how busy the machine was during a run, from two CPUUsage
// snapshots: how much CPU time this process, other processes (with the
// kernel's interrupt handling) and the hypervisor took.
type Load struct {
	// CPUs is the number of CPUs of the machine.
	CPUs int `json:"cpus"`
	// WallSeconds is the time between the snapshots, from the CPU time
	// counters (all CPU time over the number of CPUs).
	WallSeconds float64 `json:"wall_s"`
	// SelfCPUSeconds is the CPU time this process used.
	SelfCPUSeconds float64 `json:"self_cpu_s"`
	// OtherCPUSeconds is the busy CPU time not used by this process: other
	// processes, and interrupts handled by the kernel.
	OtherCPUSeconds float64 `json:"other_cpu_s"`
	// StealSeconds is the CPU time the hypervisor gave to other machines
	// while this one's CPUs were ready to run.
	StealSeconds float64 `json:"steal_s"`
}

// LoadBetween returns the load of the machine from snapshot start to
// snapshot end. It fails if the snapshots do not fit together: a counter
// that went back, a different number of CPUs, or no time between them.
func LoadBetween(start, end CPUUsage) (Load, error) {
	switch {
	case start.CPUs != end.CPUs || end.CPUs <= 0:
		return Load{}, fmt.Errorf("sysinfo: CPU usage snapshots of %d and %d CPUs", start.CPUs, end.CPUs)
	case end.Busy < start.Busy || end.Idle < start.Idle || end.Steal < start.Steal || end.Self < start.Self:
		return Load{}, errors.New("sysinfo: a CPU time counter went back between the snapshots")
	case end.Total() == start.Total():
		return Load{}, errors.New("sysinfo: no CPU time passed between the snapshots")
	}
	sec := func(ticks uint64) float64 { return float64(ticks) / ClockTicksPerSecond }
	busy, self := end.Busy-start.Busy, end.Self-start.Self
	// The process's own counters and the machine's are sampled at slightly
	// different moments; never report negative time for the others.
	other := uint64(0)
	if busy > self {
		other = busy - self
	}
	return Load{
		CPUs:            end.CPUs,
		WallSeconds:     sec(end.Total()-start.Total()) / float64(end.CPUs),
		SelfCPUSeconds:  sec(self),
		OtherCPUSeconds: sec(other),
		StealSeconds:    sec(end.Steal - start.Steal),
	}, nil
}

// OtherCores is the mean number of cores that other processes used.
func (l Load) OtherCores() float64 { return perWall(l.OtherCPUSeconds, l.WallSeconds) }

// StealCores is the mean number of cores that the hypervisor took.
func (l Load) StealCores() float64 { return perWall(l.StealSeconds, l.WallSeconds) }

func perWall(v, wall float64) float64 {
	if wall <= 0 {
		return 0
	}
	return v / wall
}

// Busy reports whether other processes and steal together took at least
// BusyCores cores on average: enough to delay a SUT or the load generator,
// so that an INVALID result may be the machine's, not the SUT's.
func (l Load) Busy() bool { return l.OtherCores()+l.StealCores() >= BusyCores }

// String describes the load in one plain sentence, e.g. "other processes
// used 0.93 of the 2 cores and steal took 0.00 over 20.1 s".
func (l Load) String() string {
	return fmt.Sprintf("other processes used %.2f of the %d cores and steal took %.2f over %.1f s",
		l.OtherCores(), l.CPUs, l.StealCores(), l.WallSeconds)
}

// CPUUsage reads a snapshot of the CPU time counters from proc/stat and
// proc/self/stat of d's file system.
func (d Detector) CPUUsage() (CPUUsage, error) {
	stat, err := fs.ReadFile(d.fsys(), "proc/stat")
	if err != nil {
		return CPUUsage{}, fmt.Errorf("sysinfo: %w", err)
	}
	u, err := ParseProcStat(stat)
	if err != nil {
		return CPUUsage{}, fmt.Errorf("sysinfo: /proc/stat: %w", err)
	}
	self, err := fs.ReadFile(d.fsys(), "proc/self/stat")
	if err != nil {
		return CPUUsage{}, fmt.Errorf("sysinfo: %w", err)
	}
	if u.Self, err = ParseProcPIDStat(self); err != nil {
		return CPUUsage{}, fmt.Errorf("sysinfo: /proc/self/stat: %w", err)
	}
	return u, nil
}

// ReadCPUUsage reads a snapshot of this machine's CPU time counters.
func ReadCPUUsage() (CPUUsage, error) { return Detector{}.CPUUsage() }

// ParseProcStat reads the machine's CPU time counters from the text of
// /proc/stat: the "cpu" line (user nice system idle iowait irq softirq
// steal guest guest_nice, of which kernels before 2.6.11 give only the
// first seven) and the number of "cpuN" lines. Self is left zero.
func ParseProcStat(text []byte) (CPUUsage, error) {
	var u CPUUsage
	found := false
	for line := range strings.Lines(string(text)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if fields[0] != "cpu" {
			if _, err := strconv.ParseUint(fields[0][3:], 10, 32); err == nil {
				u.CPUs++
			}
			continue
		}
		if found {
			return CPUUsage{}, errors.New(`two "cpu" lines`)
		}
		found = true
		if len(fields) < 8 {
			return CPUUsage{}, fmt.Errorf(`"cpu" line has %d counters, want at least 7`, len(fields)-1)
		}
		var v [8]uint64
		for i := range min(len(v), len(fields)-1) {
			n, err := strconv.ParseUint(fields[i+1], 10, 64)
			if err != nil {
				return CPUUsage{}, fmt.Errorf(`"cpu" line, counter %d: %w`, i+1, err)
			}
			v[i] = n
		}
		const user, nice, system, idle, iowait, irq, softirq, steal = 0, 1, 2, 3, 4, 5, 6, 7
		var ok bool
		if u.Busy, ok = sum(v[user], v[nice], v[system], v[irq], v[softirq]); !ok {
			return CPUUsage{}, errors.New(`"cpu" line: counters overflow`)
		}
		if u.Idle, ok = sum(v[idle], v[iowait]); !ok {
			return CPUUsage{}, errors.New(`"cpu" line: counters overflow`)
		}
		u.Steal = v[steal]
		if _, ok = sum(u.Busy, u.Idle, u.Steal); !ok {
			return CPUUsage{}, errors.New(`"cpu" line: counters overflow`)
		}
	}
	switch {
	case !found:
		return CPUUsage{}, errors.New(`no "cpu" line`)
	case u.CPUs == 0:
		return CPUUsage{}, errors.New(`no "cpuN" line`)
	}
	return u, nil
}

// sum adds the values, reporting false if the sum overflows.
func sum(vs ...uint64) (uint64, bool) {
	var s uint64
	for _, v := range vs {
		if s+v < s {
			return 0, false
		}
		s += v
	}
	return s, true
}

// ParseProcPIDStat returns a process's user plus system time, in clock
// ticks, from the text of /proc/<pid>/stat: fields 14 (utime) and 15
// (stime), counted after the command name, which is in parentheses and may
// itself hold spaces and parentheses.
func ParseProcPIDStat(text []byte) (uint64, error) {
	end := bytes.LastIndexByte(text, ')')
	if end < 0 || bytes.IndexByte(text, '(') < 0 {
		return 0, errors.New("no command name in parentheses")
	}
	// Fields 3 onwards follow the name: state is fields[0], utime
	// fields[11], stime fields[12].
	fields := strings.Fields(string(text[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(fields))
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	t, ok := sum(utime, stime)
	if !ok {
		return 0, errors.New("utime + stime overflows")
	}
	return t, nil
}

// LoadMeter measures the load of the machine from its start to its Stop.
type LoadMeter struct {
	d     Detector
	start CPUUsage
	err   error
}

// StartLoad takes the first CPUUsage snapshot of a LoadMeter.
func (d Detector) StartLoad() *LoadMeter {
	m := &LoadMeter{d: d}
	m.start, m.err = d.CPUUsage()
	return m
}

// StartLoad starts measuring this machine's load.
func StartLoad() *LoadMeter { return Detector{}.StartLoad() }

// Stop takes the second snapshot and returns the load between the two. It
// returns nil and an error where the counters cannot be read (a system
// without /proc) or do not fit together.
func (m *LoadMeter) Stop() (*Load, error) {
	if m.err != nil {
		return nil, m.err
	}
	end, err := m.d.CPUUsage()
	if err != nil {
		return nil, err
	}
	l, err := LoadBetween(m.start, end)
	if err != nil {
		return nil, err
	}
	return &l, nil
}
