//go:build !unix

package mllog

import (
	"context"
	"errors"
	"io"
	"time"

	"aimeter/train"
)

// RunOptions configure RunCommand; see the Unix version. RunCommand is
// not supported on this platform.
type RunOptions struct {
	// Parse configures the parser.
	Parse Options
	// Stdout and Stderr receive a copy of the output; nil discards it.
	Stdout, Stderr io.Writer
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the environment; nil means the caller's.
	Env []string
	// Grace is the time between SIGTERM and SIGKILL; zero means 10 s.
	Grace time.Duration
	// OnEvent, when set, is called with each event.
	OnEvent func(train.Event)
}

// Exit says how the child ended.
type Exit struct {
	// Code is the exit status.
	Code int `json:"code"`
	// Signal names the ending signal.
	Signal string `json:"signal,omitempty"`
	// Cancelled is true when ctx was cancelled.
	Cancelled bool `json:"cancelled,omitempty"`
	// Reason says how the run ended.
	Reason string `json:"reason"`
	// Duration is the run time.
	Duration time.Duration `json:"duration_ns"`
}

// RunResult is what RunCommand measured.
type RunResult struct {
	// Events are the parsed events.
	Events []train.Event
	// Stats are the parser's counts.
	Stats Stats
	// Exit says how the child ended.
	Exit Exit
	// CopyErr is the first copy error.
	CopyErr error
}

// RunCommand is not supported on this platform: it needs process groups.
func RunCommand(ctx context.Context, argv []string, opts RunOptions) (RunResult, error) {
	return RunResult{}, errors.New("mllog: RunCommand needs a Unix system")
}
