package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatchInterruptsDebounce checks that interrupts within interruptGrace
// of the first count as the first one, and that a later one is a second
// Ctrl-C.
func TestWatchInterruptsDebounce(t *testing.T) {
	tests := []struct {
		name       string
		gaps       []time.Duration // wait before each signal after the first
		wantSecond bool
	}{
		{"one signal cancels and nothing more", nil, false},
		{"timeout -s INT: a second SIGINT microseconds later is the same interrupt", []time.Duration{time.Microsecond}, false},
		{"several signals inside the grace are one interrupt", []time.Duration{time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond}, false},
		{"a Ctrl-C a second later is a second interrupt", []time.Duration{interruptGrace}, true},
		{"a Ctrl-C after an echo still forces the exit", []time.Duration{time.Microsecond, 2 * time.Second}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ch := make(chan os.Signal, 4)
				var seconds atomic.Int32
				ctx, stop := watchInterrupts(context.Background(), ch, func() { seconds.Add(1) })
				defer stop()
				ch <- os.Interrupt
				synctest.Wait()
				if ctx.Err() == nil {
					t.Fatal("the first interrupt did not cancel the context")
				}
				var ie *interruptError
				if !errors.As(context.Cause(ctx), &ie) {
					t.Fatalf("cause %v, want an interruptError", context.Cause(ctx))
				}
				for _, gap := range tt.gaps {
					time.Sleep(gap)
					ch <- os.Interrupt
					synctest.Wait()
				}
				if got := seconds.Load() > 0; got != tt.wantSecond {
					t.Errorf("second interrupt called: %v, want %v", got, tt.wantSecond)
				}
			})
		})
	}
}

// TestWatchInterruptsStop checks that stop ends the watcher without calling
// onSecond.
func TestWatchInterruptsStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan os.Signal, 4)
		called := false
		_, stop := watchInterrupts(context.Background(), ch, func() { called = true })
		stop()
		stop() // twice is harmless
		synctest.Wait()
		if called {
			t.Error("onSecond called after stop")
		}
	})
}

// childEnv makes the test binary act as aimeter (see TestMain in
// maxmemory_test.go): it is mainEnv.
const childEnv = mainEnv

// aimeterCommand returns a command running aimeter (this test binary acting
// as it) with args, under the wrapper prefix when one is given.
func aimeterCommand(t *testing.T, prefix []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append(append([]string{}, prefix...), exe), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

// TestTimeoutSIGINT runs aimeter under GNU timeout -s INT repeatedly: timeout
// signals the process and its group, so two SIGINTs arrive microseconds
// apart. Every run must exit 4 (interrupted) with every log written, never
// 130 (a forced exit without logs).
func TestTimeoutSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs aimeter 10 times for about a second each")
	}
	timeoutBin, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("GNU timeout is not installed")
	}
	for i := range 10 {
		dir := filepath.Join(t.TempDir(), "out")
		cmd := aimeterCommand(t, []string{timeoutBin, "--preserve-status", "-s", "INT", "1s"},
			"run", "-q", "--output-dir", dir, "--set", "target_qps=1000", "--audit-config", "")
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("run %d: killed by %v\n%s", i, ws.Signal(), out)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if code != ExitInterrupted {
			t.Fatalf("run %d: exit %d, want %d (interrupted, logs written)\n%s", i, code, ExitInterrupted, out)
		}
		for _, name := range []string{"manifest.json", "mlperf_log_summary.txt", "mlperf_log_detail.txt", "records.parquet"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}
		if !strings.Contains(string(out), "Ctrl-C") && !strings.Contains(string(out), "SIGINT") {
			t.Errorf("run %d: output does not say it was interrupted:\n%s", i, out)
		}
	}
}
