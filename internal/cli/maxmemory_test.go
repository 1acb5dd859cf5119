package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"aimeter/internal/binarytest"
	"aimeter/store"
)

// mainEnv makes the test binary run aimeter's Main instead of the tests, so
// that process tests can measure a real aimeter process without building it.
const mainEnv = "AIMETER_TEST_RUN_MAIN"

// hwmEnv names a file where that process writes its peak resident memory.
const hwmEnv = "AIMETER_TEST_HWM_FILE"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		code := Main(NewOSState())
		if path := os.Getenv(hwmEnv); path != "" {
			// The peak of this process's own memory map: unlike ru_maxrss,
			// VmHWM starts afresh at exec and so does not include the
			// test process that started this one.
			status, _ := os.ReadFile("/proc/self/status")
			for line := range strings.Lines(string(status)) {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					_ = os.WriteFile(path, []byte(strings.TrimSpace(v)), 0o644)
				}
			}
		}
		os.Exit(code)
	}
	// Runs of this package's tests, in this process or a child, go into
	// a results store of their own, never the user's.
	storeDir, err := os.MkdirTemp("", "aimeter-cli-store")
	if err != nil {
		panic(err)
	}
	os.Setenv(store.EnvDSN, filepath.Join(storeDir, "results.db"))
	code := m.Run()
	os.RemoveAll(storeDir)
	aimeterBin.Remove()
	os.Exit(code)
}

// memoryBombs are the settings of issue 8 that exhausted memory. Each must be
// refused with exit 2, quickly, naming the setting and what fits.
var memoryBombs = []struct {
	name   string
	reason string
	args   []string
	want   string // in stderr
}{
	{"min_query_count", "1e9 queries", []string{"--set", "min_query_count=1000000000"}, "min_query_count ≤ "},
	{"qsl-size", "the loadable sets of 1e9 samples", []string{"--qsl-size", "1000000000"}, "QSL or sample count ≤ "},
	// A closed-loop pass allocates only what it issues (loadgen generates it
	// on demand), so a long SingleStream run at the self-test's 100 ns
	// latency runs; what is refused is a schedule whose page directories
	// alone exceed the limit: 2×20 000 s at 100 ns is 4e11 queries.
	{"SingleStream min_duration", "the self-test's 100 ns latency over 2×20 000 s: 4e11 queries", []string{"--scenario", "SingleStream", "--set", "min_duration=20000000"}, "min_duration ≤ "},
	{"MultiStream samples_per_query", "1e5 samples in each of the 2000 queries it must issue", []string{"--scenario", "MultiStream", "--set", "samples_per_query=100000", "--set", "min_query_count=2000"}, "samples_per_query ≤ "},
	{"target_qps", "1e12 queries a second", []string{"--set", "target_qps=1e12"}, "target_qps ≤ "},
	{"GB/T fixed period", "3.6e12 arrivals in gbt.NewRunPlan's schedule", []string{"--arrival-mode", "1", "--period", "1ns", "--duration", "1h"}, "at most 67108864"},
}

func TestRunRefusesMemoryBombsInProcess(t *testing.T) {
	for _, tc := range memoryBombs {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "-q", "--max-memory", "2GiB", "--output-dir", out}, tc.args...)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := runCLI(t, "", args...)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if r.code != ExitUsage {
				t.Fatalf("%s: want exit %d, got\n%s", tc.reason, ExitUsage, r)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%s: stderr does not say %q:\n%s", tc.reason, tc.want, r.stderr)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("%s: refusing allocated %d bytes", tc.reason, n)
			}
			if elapsed > 10*time.Second {
				t.Errorf("%s: refusing took %v", tc.reason, elapsed)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("%s: a refused run wrote %d files", tc.reason, len(entries))
			}
		})
	}
}

// TestRunRefusesMemoryBombsProcess runs each bomb as its own process and
// checks the exit code,
// the time to refuse and the peak resident memory of the process.
func TestRunRefusesMemoryBombsProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak resident memory is read from /proc/self/status")
	}
	if testing.Short() {
		t.Skip("starts a process per bomb")
	}
	self, err := os.Executable()
	if err != nil {
		t.Skipf("cannot re-run the test binary: %v", err)
	}
	for _, tc := range memoryBombs {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "-q", "--output-dir", t.TempDir()}, tc.args...)
			if tc.name != "target_qps" && tc.name != "GB/T fixed period" {
				// These need 24 GB to 640 GB: pin the limit so that a
				// machine with more memory than that cannot accept them
				// and run out of it. The other two use the default (half
				// of the machine): 760 TB and 3.6e12 arrivals fit nowhere.
				args = append(args, "--max-memory", "4GiB")
			}
			cmd := exec.Command(self, args...)
			hwm := filepath.Join(t.TempDir(), "hwm")
			cmd.Env = append(os.Environ(), mainEnv+"=1", hwmEnv+"="+hwm)
			cmd.Dir = t.TempDir()
			start := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(start)
			code := cmd.ProcessState.ExitCode()
			if code != ExitUsage {
				t.Fatalf("%s: want exit %d, got %d (%v):\n%s", tc.reason, ExitUsage, code, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%s: output does not say %q:\n%s", tc.reason, tc.want, out)
			}
			peak, err := os.ReadFile(hwm)
			if err != nil {
				t.Skipf("no VmHWM from the process (no /proc?): %v", err)
			}
			f := strings.Fields(string(peak))
			peakKB, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				t.Fatalf("VmHWM %q: want a count of kB", peak)
			}
			t.Logf("%s: exit %d in %v, peak RSS %d kB", tc.name, code, elapsed.Round(time.Millisecond), peakKB)
			if peakKB > 256<<10 {
				t.Errorf("%s: peak RSS %d kB while refusing", tc.reason, peakKB)
			}
			if elapsed > 20*time.Second {
				t.Errorf("%s: refusing took %v", tc.reason, elapsed)
			}
		})
	}
}

// TestRunUnderMemoryRlimit runs aimeter under ulimit -v: before
// --max-memory auto read RLIMIT_AS, this run's budget was half of the
// machine and it died with "fatal error: out of memory" (exit 2) in
// loadgen's paged records; now auto takes a sixth of RLIMIT_AS, the
// closed-loop pass stops when its records reach it ("memory budget
// reached", marked INVALID) and the run writes its bundle and exits
// ExitInvalid (3).
func TestRunUnderMemoryRlimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -v and the measured shares are Linux's")
	}
	if testing.Short() {
		t.Skip("builds aimeter and runs it for ~20 s")
	}
	if err := exec.Command("sh", "-c", "ulimit -v 4000000").Run(); err != nil {
		t.Skipf("ulimit -v is unavailable: %v", err)
	}
	dir := t.TempDir()
	bin := buildAimeter(t)
	out := filepath.Join(dir, "out")
	cmd := exec.Command("sh", "-c", "ulimit -v 4000000; exec \"$0\" run --scenario SingleStream --set min_duration=20000 --output-dir \"$1\" -q", bin, out)
	cmd.Env = slicesWithout(os.Environ(), "GOMEMLIMIT=")
	start := time.Now()
	combined, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	t.Logf("exit %d in %v", code, time.Since(start).Round(time.Millisecond))
	if strings.Contains(string(combined), "fatal error") {
		t.Fatalf("the run died instead of stopping at its budget:\n%.2000s", combined)
	}
	if code != ExitInvalid {
		t.Fatalf("exit %d, want %d (stopped at the memory budget, INVALID):\n%.2000s", code, ExitInvalid, combined)
	}
	inv, err := os.ReadFile(filepath.Join(out, "invocation.json"))
	if err != nil {
		t.Fatalf("no bundle: %v", err)
	}
	if !strings.Contains(string(inv), `"max_memory_source": "auto: half of what rlimit-as`) {
		t.Errorf("invocation.json does not say RLIMIT_AS bound the budget:\n%s", inv)
	}
	detail, _ := os.ReadFile(filepath.Join(out, "mlperf_log_detail.txt"))
	if !strings.Contains(string(detail), "memory budget reached") {
		t.Errorf("mlperf_log_detail.txt does not say the budget stopped the run")
	}

	// ulimit -v 1900000: the Go runtime has mapped most of it before main
	// runs (about 1.2 GB; aimeter about 1.7 GB by the time the flags are
	// read); such a run died in the runtime with "fatal error: out of
	// memory" (exit 2 as well). It is refused now, before anything runs,
	// with the limit that would do (about 2.1 GB). The limit leaves the
	// start-up 200 MB: at 1700000 a loaded CI machine's start (more
	// threads, each reserving its stack) once ran out of address space in
	// a package's initialisation, before aimeter could refuse anything.
	// (Below about 1.3 GB the Go runtime cannot start its threads at all.)
	out2 := filepath.Join(dir, "out2")
	cmd = exec.Command("sh", "-c", "ulimit -v 1900000; exec \"$0\" run --scenario SingleStream --set min_duration=20000 --output-dir \"$1\" -q", bin, out2)
	cmd.Env = slicesWithout(os.Environ(), "GOMEMLIMIT=")
	combined, _ = cmd.CombinedOutput()
	if strings.Contains(string(combined), "fatal error") || cmd.ProcessState.ExitCode() != ExitUsage ||
		!strings.Contains(string(combined), "ulimit -v") {
		t.Fatalf("under ulimit -v 1900000: exit %d, want %d with a refusal naming ulimit -v:\n%.2000s", cmd.ProcessState.ExitCode(), ExitUsage, combined)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Errorf("a refused run made its output directory")
	}
}

// aimeterBin is the aimeter binary the process-level tests run, built
// once for the package's tests.
var aimeterBin binarytest.Binary

// buildAimeter builds cmd/aimeter once and returns its path.
func buildAimeter(t *testing.T) string { return aimeterBin.Path(t) }

// TestRunUnderCgroupLimit runs aimeter in a memory cgroup of 1 GiB that it
// makes under its own (v2 memory.max, or v1 memory.limit_in_bytes), where
// the cgroup file system lets it: --max-memory auto takes a quarter of the
// limit, the closed-loop pass stops at it, INVALID, the bundle is written,
// and the kernel neither killed nor failed an allocation. The test is
// skipped where no cgroup can be made (no permission, no memory
// controller); CI's machines, like the development ones, allow v1.
func TestRunUnderCgroupLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("cgroups are Linux's")
	}
	if testing.Short() {
		t.Skip("builds aimeter and runs it for a few seconds")
	}
	cg, limitFile, version := makeMemoryCgroup(t, 1<<30)
	bin := buildAimeter(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command("sh", "-c", "echo $$ > \"$0\"/cgroup.procs && exec \"$1\" run --scenario SingleStream --set min_duration=20000 --output-dir \"$2\" -q", cg, bin, out)
	cmd.Env = slicesWithout(os.Environ(), "GOMEMLIMIT=")
	combined, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if strings.Contains(string(combined), "fatal error") || code != ExitInvalid {
		t.Fatalf("in a 1 GiB %s cgroup: exit %d, want %d (stopped at the memory budget):\n%.2000s", version, code, ExitInvalid, combined)
	}
	inv, err := os.ReadFile(filepath.Join(out, "invocation.json"))
	if err != nil {
		t.Fatalf("no bundle: %v", err)
	}
	if want := `"max_memory_source": "auto: a quarter of ` + version; !strings.Contains(string(inv), want) || !strings.Contains(string(inv), limitFile) {
		t.Errorf("invocation.json does not say the cgroup bound the budget (%s, %s):\n%s", want, limitFile, inv)
	}
	if version == "cgroup-v1" {
		if b, _ := os.ReadFile(filepath.Join(cg, "memory.failcnt")); strings.TrimSpace(string(b)) != "0" {
			t.Errorf("the cgroup's limit was hit %s times", strings.TrimSpace(string(b)))
		}
	}
	if b, _ := os.ReadFile(filepath.Join(cg, "memory.oom_control")); strings.Contains(string(b), "oom_kill 1") {
		t.Errorf("the OOM killer ran in the cgroup: %s", b)
	}
}

// makeMemoryCgroup makes a child of this process's memory cgroup with the
// given limit and returns its directory, the limit file and "cgroup-v2" or
// "cgroup-v1"; the cgroup is removed when the test ends. It skips the test
// when no cgroup can be made.
func makeMemoryCgroup(t *testing.T, limit int64) (dir, limitFile, version string) {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	var tries []string
	for line := range strings.Lines(string(own)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		var roots []string
		switch {
		case f[0] == "0" && f[1] == "":
			version, limitFile = "cgroup-v2", "memory.max"
			roots = []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}
		case strings.Contains(","+f[1]+",", ",memory,"):
			version, limitFile = "cgroup-v1", "memory.limit_in_bytes"
			roots = []string{"/sys/fs/cgroup/memory"}
		default:
			continue
		}
		for _, root := range roots {
			parent := filepath.Join(root, f[2])
			if _, err := os.Stat(filepath.Join(parent, limitFile)); err != nil && f[2] != "/" {
				tries = append(tries, fmt.Sprintf("%s: no %s", parent, limitFile))
				continue
			}
			dir = filepath.Join(parent, fmt.Sprintf("aimeter-test-%d", os.Getpid()))
			if err := os.Mkdir(dir, 0o755); err != nil {
				tries = append(tries, err.Error())
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
				os.Remove(dir)
				tries = append(tries, err.Error())
				continue
			}
			t.Cleanup(func() {
				// The cgroup can be removed once its processes are gone.
				for range 50 {
					if os.Remove(dir) == nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
			return dir, limitFile, version
		}
	}
	t.Skipf("no memory cgroup can be made here: %s", strings.Join(tries, "; "))
	return
}

// slicesWithout returns env without the entries that start with prefix.
func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}
