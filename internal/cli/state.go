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
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"
)

// State is everything the commands take from the process.
type State struct {
	Args []string // without the program name
	// Stdin is read by commands given "-" as an input file; nil reads
	// nothing (an empty input).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StderrIsTerminal enables the live progress line.
	StderrIsTerminal bool
	// Getwd returns the working directory (audit.config is looked up there).
	Getwd func() (string, error)
	// NotifyInterrupt returns a context cancelled on the first interrupt
	// (Ctrl-C or SIGTERM) and calls onSecond on the next one that comes a
	// second or more after it (interrupts closer together count as one).
	NotifyInterrupt func(parent context.Context, onSecond func()) (context.Context, context.CancelFunc)
	// Exit ends the process at once (used only on a second Ctrl-C).
	Exit func(code int)
	// Store is the results store (an SQLite file or a postgres:// DSN)
	// that runs are recorded into and 'aimeter results' reads when no
	// --store is given; "" means store.DefaultDSN() ($AIMETER_STORE, else
	// the user's data directory). Tests set a temporary file.
	Store string
	// Backends adds node protocols for --sut dispatch --backend NAME to
	// the built-in ones (tests add a protocol of their own); nil adds none.
	Backends map[string]BackendFunc
}

// NewOSState returns the State of the running process.
func NewOSState() *State {
	return &State{
		Args:             os.Args[1:],
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Getwd:            os.Getwd,
		NotifyInterrupt:  notifyInterrupt,
		Exit:             os.Exit,
	}
}

// interruptGrace is how long after the first interrupt a further one still
// counts as the same interrupt. GNU timeout -s INT signals both the process
// and its process group, so one request to stop arrives as two SIGINTs
// microseconds apart; only an interrupt later than this is a second Ctrl-C.
const interruptGrace = time.Second

func notifyInterrupt(parent context.Context, onSecond func()) (context.Context, context.CancelFunc) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := watchInterrupts(parent, ch, onSecond)
	return ctx, func() {
		signal.Stop(ch)
		cancel()
	}
}

// watchInterrupts returns a context cancelled by the first signal on ch and
// calls onSecond on the first signal that arrives interruptGrace or more
// after it; signals in between count as the first one again.
func watchInterrupts(parent context.Context, ch <-chan os.Signal, onSecond func()) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		var first time.Time
		select {
		case sig := <-ch:
			first = time.Now()
			cancel(&interruptError{sig: sig.String()})
		case <-done:
			return
		}
		for {
			select {
			case <-ch:
				if time.Since(first) < interruptGrace {
					continue
				}
				onSecond()
				return
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(done) })
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
