// Package cli holds aimeter's commands. It is the only package that touches
// the process: arguments, standard streams, signals and the exit code all
// come through a State, which tests replace with a twin.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// State is everything the commands take from the process.
type State struct {
	Args   []string // without the program name
	Stdout io.Writer
	Stderr io.Writer
	// StderrIsTerminal enables the live progress line.
	StderrIsTerminal bool
	// Getwd returns the working directory (audit.config is looked up there).
	Getwd func() (string, error)
	// NotifyInterrupt returns a context cancelled on the first interrupt
	// (Ctrl-C or SIGTERM) and calls onSecond on the next one.
	NotifyInterrupt func(parent context.Context, onSecond func()) (context.Context, context.CancelFunc)
	// Exit ends the process at once (used only on a second Ctrl-C).
	Exit func(code int)
}

// NewOSState returns the State of the running process.
func NewOSState() *State {
	return &State{
		Args:             os.Args[1:],
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Getwd:            os.Getwd,
		NotifyInterrupt:  notifyInterrupt,
		Exit:             os.Exit,
	}
}

func notifyInterrupt(parent context.Context, onSecond func()) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(&interruptError{sig: sig.String()})
		case <-done:
			return
		}
		select {
		case <-ch:
			onSecond()
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

type interruptError struct{ sig string }

func (e *interruptError) Error() string {
	switch e.sig {
	case os.Interrupt.String():
		return "interrupted by Ctrl-C (SIGINT)"
	case syscall.SIGTERM.String():
		return "interrupted by SIGTERM"
	}
	return "interrupted by " + e.sig
}

// interruptible returns a context cancelled by the first Ctrl-C or SIGTERM;
// a second one exits at once with ExitForced, without writing logs.
func interruptible(parent context.Context, st *State) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return st.NotifyInterrupt(parent, func() {
		fmt.Fprintln(st.Stderr, "\naimeter: second interrupt, exiting without writing logs")
		st.Exit(ExitForced)
	})
}
