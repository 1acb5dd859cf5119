//go:build unix

package mllog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"aimeter/train"
)

// RunOptions configure RunCommand.
type RunOptions struct {
	// Parse configures the parser shared by stdout and stderr.
	Parse Options
	// Stdout and Stderr receive a copy of the child's output as it comes
	// (the console, log files in the run directory). Nil discards it. A
	// writer that fails stops being written to; the first error is
	// reported in Result.CopyErr, and the child is not held up.
	Stdout, Stderr io.Writer
	// Dir is the child's working directory; empty means the caller's.
	Dir string
	// Env is the child's environment; nil means the caller's.
	Env []string
	// Grace is how long a child has to exit after SIGTERM when ctx is
	// cancelled before it and its process group get SIGKILL. Zero means
	// 10 s.
	Grace time.Duration
	// OnEvent, when set, is called with each event as it is parsed (from
	// the goroutine reading the child's output; one call at a time).
	OnEvent func(train.Event)
}

// Exit says how the child ended.
type Exit struct {
	// Code is the exit status; -1 when the child was ended by a signal.
	Code int `json:"code"`
	// Signal names the signal that ended the child; empty if none.
	Signal string `json:"signal,omitempty"`
	// Cancelled is true when ctx was cancelled before the child ended.
	Cancelled bool `json:"cancelled,omitempty"`
	// Reason says in words how the run ended: "exited with status 0",
	// "exited with status 3", "killed by signal killed", "cancelled: …".
	Reason string `json:"reason"`
	// Duration is the child's wall-clock run time.
	Duration time.Duration `json:"duration_ns"`
}

// OK is true when the child exited with status 0 and was not cancelled.
func (e Exit) OK() bool { return e.Code == 0 && e.Signal == "" && !e.Cancelled }

// RunResult is what RunCommand measured.
type RunResult struct {
	// Events are the events of stdout and stderr, in the order parsed.
	Events []train.Event
	// Stats are the parser's counts over both streams.
	Stats Stats
	// Exit says how the child ended.
	Exit Exit
	// CopyErr is the first error of the Stdout or Stderr writer, if any.
	CopyErr error
}

// RunCommand runs argv[0] with arguments argv[1:] as a child process in
// its own process group, parses its stdout and stderr through one Parser
// as they come, and copies them to opts.Stdout and opts.Stderr. Memory is
// bounded by the events and one partial line per stream, whatever the
// volume of output.
//
// A child that exits non-zero or is killed by a signal is not an error:
// the result holds the events parsed until then and Exit says how it
// ended. When ctx is cancelled the process group gets SIGTERM, then
// SIGKILL after opts.Grace; RunCommand returns once the child has ended
// and its output is drained (a grandchild that keeps the pipes open is
// given at most opts.Grace more). The error is non-nil only when the
// child could not be started; the result is then empty.
func RunCommand(ctx context.Context, argv []string, opts RunOptions) (RunResult, error) {
	if len(argv) == 0 || argv[0] == "" {
		return RunResult{}, errors.New("mllog: RunCommand: empty command")
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	var (
		mu  sync.Mutex
		res RunResult
	)
	p := NewParser(opts.Parse, func(e train.Event) {
		res.Events = append(res.Events, e)
		if opts.OnEvent != nil {
			opts.OnEvent(e)
		}
	})
	cp := &copyErr{}
	out := &lockedWriter{mu: &mu, w: NewWriter(p), copy: opts.Stdout, err: cp}
	errw := &lockedWriter{mu: &mu, w: NewWriter(p), copy: opts.Stderr, err: cp}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	cmd.Stdout, cmd.Stderr = out, errw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Bound the wait for the copying goroutines once the child is gone:
	// a grandchild may hold the pipes open.
	cmd.WaitDelay = grace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return RunResult{}, fmt.Errorf("mllog: start %q: %w", argv[0], err)
	}
	done := make(chan struct{})
	cancelled := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		close(cancelled)
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()
	werr := cmd.Wait()
	close(done)
	dur := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	out.w.flush()
	errw.w.flush()
	p.Close()
	res.Stats = p.Stats()
	res.CopyErr = cp.err
	res.Exit = exitOf(cmd, werr, dur)
	select {
	case <-cancelled:
		res.Exit.Cancelled = true
		res.Exit.Reason = "cancelled (" + context.Cause(ctx).Error() + "): " + res.Exit.Reason
	default:
	}
	return res, nil
}

// exitOf reads the child's end from its process state.
func exitOf(cmd *exec.Cmd, werr error, dur time.Duration) Exit {
	e := Exit{Code: -1, Duration: dur}
	ps := cmd.ProcessState
	if ps == nil {
		e.Reason = fmt.Sprintf("wait failed: %v", werr)
		return e
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal().String()
		e.Reason = "killed by signal " + e.Signal
		if ws.CoreDump() {
			e.Reason += " (core dumped)"
		}
		return e
	}
	e.Code = ps.ExitCode()
	e.Reason = fmt.Sprintf("exited with status %d", e.Code)
	if errors.Is(werr, exec.ErrWaitDelay) {
		e.Reason += "; output still open after the grace period (a leftover process holds it), stopped reading"
	}
	return e
}

// copyErr keeps the first error of the copy writers.
type copyErr struct{ err error }

// lockedWriter feeds one stream to the shared parser under mu and copies
// it to the caller's writer.
type lockedWriter struct {
	mu   *sync.Mutex
	w    *Writer
	copy io.Writer
	err  *copyErr
}

// Write never fails, so that the child is never held up by a bad copy
// writer.
func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.copy != nil {
		if _, err := l.copy.Write(b); err != nil {
			if l.err.err == nil {
				l.err.err = fmt.Errorf("mllog: copy of output: %w", err)
			}
			l.copy = nil
		}
	}
	return l.w.Write(b)
}
