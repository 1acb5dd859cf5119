package sysinfo

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"testing/fstest"
)

// procStat2 is /proc/stat of a 2-CPU virtual machine, shortened.
const procStat2 = `cpu  206081 7 45596 106754 844 3 201 209 11 0
cpu0 101803 0 22549 55149 162 0 37 106 0 0
cpu1 104278 7 23046 51605 682 3 163 102 11 0
intr 5541226 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0
ctxt 10418462
btime 1764036000
processes 25521
procs_running 3
`

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, text string
		want       CPUUsage
		err        string
	}{
		{"a 2-CPU VM: busy sums user nice system irq softirq; guest stays inside user", procStat2,
			CPUUsage{CPUs: 2, Busy: 206081 + 7 + 45596 + 3 + 201, Idle: 106754 + 844, Steal: 209}, ""},
		{"a kernel before 2.6.11 gives seven counters and no steal",
			"cpu 10 0 5 100 1 0 0\ncpu0 10 0 5 100 1 0 0\n", CPUUsage{CPUs: 1, Busy: 15, Idle: 101}, ""},
		{"cpuN lines are counted, other lines starting with cpu are not",
			"cpu 1 0 0 1 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\ncpufreq 3\n",
			CPUUsage{CPUs: 2, Busy: 1, Idle: 1}, ""},
		{"no cpu line", "cpu0 1 2 3 4 5 6 7 8\n", CPUUsage{}, `no "cpu" line`},
		{"no cpuN line", "cpu 1 2 3 4 5 6 7 8\n", CPUUsage{}, `no "cpuN" line`},
		{"too few counters", "cpu 1 2 3\ncpu0 1 2 3\n", CPUUsage{}, "3 counters"},
		{"a counter that is not a number", "cpu 1 2 x 4 5 6 7 8\ncpu0 1\n", CPUUsage{}, "counter 3"},
		{"a negative counter", "cpu 1 2 -3 4 5 6 7 8\ncpu0 1\n", CPUUsage{}, "counter 3"},
		{"two cpu lines", "cpu 1 2 3 4 5 6 7 8\ncpu 1 2 3 4 5 6 7 8\ncpu0 1\n", CPUUsage{}, `two "cpu" lines`},
		{"counters that overflow when summed", "cpu 18446744073709551615 1 0 0 0 0 0 0\ncpu0 1\n", CPUUsage{}, "overflow"},
		{"empty text", "", CPUUsage{}, `no "cpu" line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tt.text))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseProcPIDStat(t *testing.T) {
	tests := []struct {
		name, text string
		want       uint64
		err        string
	}{
		{"a plain command: utime 1200 + stime 345",
			"25521 (aimeter) R 25516 25516 20749 0 -1 4194304 100 0 0 0 1200 345 0 0 20 0 9 0 180618 3133440 410\n", 1545, ""},
		{"a command name with spaces and parentheses",
			"7 (a) b (c)) S 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1\n", 7, ""},
		{"no parentheses", "7 cat R 1 2 3 4 5 6 7 8 9 10 11 12 13\n", 0, "no command name"},
		{"too few fields", "7 (cat) R 1 2 3\n", 0, "4 fields"},
		{"utime not a number", "7 (cat) R 1 2 3 4 5 6 7 8 9 10 x 12 13\n", 0, "utime"},
		{"stime not a number", "7 (cat) R 1 2 3 4 5 6 7 8 9 10 11 y 13\n", 0, "stime"},
		{"utime + stime overflows", "7 (cat) R 1 2 3 4 5 6 7 8 9 10 18446744073709551615 1 13\n", 0, "overflows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcPIDStat([]byte(tt.text))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoadBetween(t *testing.T) {
	start := CPUUsage{CPUs: 2, Busy: 1000, Idle: 3000, Steal: 50, Self: 400}
	tests := []struct {
		name string
		end  CPUUsage
		want Load
		busy bool
		err  string
	}{
		{"a neighbour spinning on one of two cores for 10 s, this process on the other",
			CPUUsage{CPUs: 2, Busy: 1000 + 2000, Idle: 3000, Steal: 50, Self: 400 + 1000},
			Load{CPUs: 2, WallSeconds: 10, SelfCPUSeconds: 10, OtherCPUSeconds: 10}, true, ""},
		{"a quiet machine: only this process",
			CPUUsage{CPUs: 2, Busy: 1000 + 500, Idle: 3000 + 1500, Steal: 50, Self: 400 + 490},
			Load{CPUs: 2, WallSeconds: 10, SelfCPUSeconds: 4.9, OtherCPUSeconds: 0.1}, false, ""},
		{"steal alone makes a machine busy",
			CPUUsage{CPUs: 2, Busy: 1000 + 500, Idle: 3000 + 1000, Steal: 50 + 500, Self: 400 + 500},
			Load{CPUs: 2, WallSeconds: 10, SelfCPUSeconds: 5, StealSeconds: 5}, true, ""},
		{"the process's counter ahead of the machine's never gives negative time",
			CPUUsage{CPUs: 2, Busy: 1000 + 100, Idle: 3000 + 100, Steal: 50, Self: 400 + 101},
			Load{CPUs: 2, WallSeconds: 1, SelfCPUSeconds: 1.01}, false, ""},
		{"a different number of CPUs", CPUUsage{CPUs: 4, Busy: 2000, Idle: 4000}, Load{}, false, "2 and 4 CPUs"},
		{"a counter that went back", CPUUsage{CPUs: 2, Busy: 999, Idle: 4000, Steal: 50, Self: 400}, Load{}, false, "went back"},
		{"no time passed", start, Load{}, false, "no CPU time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadBetween(start, tt.end)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if got.CPUs != tt.want.CPUs || !near(got.WallSeconds, tt.want.WallSeconds) || !near(got.SelfCPUSeconds, tt.want.SelfCPUSeconds) ||
				!near(got.OtherCPUSeconds, tt.want.OtherCPUSeconds) || !near(got.StealSeconds, tt.want.StealSeconds) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if got.Busy() != tt.busy {
				t.Errorf("Busy() = %v, want %v (%v)", got.Busy(), tt.busy, got)
			}
		})
	}
}

func TestLoadString(t *testing.T) {
	l := Load{CPUs: 2, WallSeconds: 20, OtherCPUSeconds: 18.6, StealSeconds: 0.2}
	want := "other processes used 0.93 of the 2 cores and steal took 0.01 over 20.0 s"
	if got := l.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if (Load{}).OtherCores() != 0 {
		t.Error("OtherCores of a zero Load is not 0")
	}
}

func TestLoadMeterOnFixtures(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/stat":      {Data: []byte(procStat2)},
		"proc/self/stat": {Data: []byte("1 (aimeter) R 0 1 1 0 -1 0 0 0 0 0 100 20 0 0 20 0 1 0 1 1 1\n")},
	}
	d := Detector{FS: fsys}
	m := d.StartLoad()
	// Two seconds later: the process used 1.5 s, something else 0.5 s.
	fsys["proc/stat"] = &fstest.MapFile{Data: []byte(strings.Replace(procStat2, "cpu  206081 7 45596 106754",
		"cpu  206281 7 45596 106954", 1))}
	fsys["proc/self/stat"] = &fstest.MapFile{Data: []byte("1 (aimeter) R 0 1 1 0 -1 0 0 0 0 0 220 50 0 0 20 0 1 0 1 1 1\n")}
	l, err := m.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if l.WallSeconds != 2 || l.SelfCPUSeconds != 1.5 || l.OtherCPUSeconds != 0.5 || l.StealSeconds != 0 {
		t.Errorf("got %+v, want 2 s wall, 1.5 s self, 0.5 s other", *l)
	}

	if _, err := (Detector{FS: fstest.MapFS{}}).StartLoad().Stop(); err == nil {
		t.Error("a file system without /proc gave no error")
	}
}

func TestReadCPUUsageHere(t *testing.T) {
	u, err := ReadCPUUsage()
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if u.CPUs < 1 || u.Total() == 0 {
		t.Errorf("implausible snapshot %+v", u)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte(procStat2))
	f.Add([]byte("cpu 1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		u, err := ParseProcStat(text)
		if err != nil {
			return
		}
		if u.CPUs < 1 {
			t.Errorf("accepted %q with %d CPUs", text, u.CPUs)
		}
		if u.Total() < u.Busy || u.Total() < u.Idle || u.Total() < u.Steal {
			t.Errorf("total %d overflowed for %+v", u.Total(), u)
		}
	})
}

func FuzzParseProcPIDStat(f *testing.F) {
	f.Add([]byte("25521 (aimeter) R 25516 25516 20749 0 -1 4194304 100 0 0 0 1200 345 0 0 20 0 9 0 180618\n"))
	f.Add([]byte("7 (a) b (c)) S 1 7 7 0 -1 0 0 0 0 0 3 4 0 0\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		ticks, err := ParseProcPIDStat(text)
		if err != nil {
			return
		}
		// The command name does not matter: the same fields after a plain
		// name give the same time.
		rest := text[bytes.LastIndexByte(text, ')')+1:]
		again, err := ParseProcPIDStat(append([]byte("1 (y)"), rest...))
		if err != nil || again != ticks {
			t.Errorf("%q gave %d, the same fields after a plain name %d, %v", text, ticks, again, err)
		}
	})
}
