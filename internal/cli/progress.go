package cli

import (
	"io"
	"time"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/loadgen"
)

// progressLine reports a running pass on stderr (console.ProgressLine):
// target is the pass's expected length, the minimum duration (0 = unknown).
type progressLine struct {
	w        io.Writer
	terminal bool
	target   time.Duration
	// now gives the wall clock for the expected end (nil = time.Now).
	now  func() time.Time
	line console.ProgressLine
}

func (p *progressLine) update(pr loadgen.Progress) {
	p.line.W, p.line.Terminal, p.line.Now = p.w, p.terminal, p.now
	p.line.Update(benchmark.Progress{Progress: pr, Target: p.target})
}

// bar is a progress bar over a counted phase (training epochs), shown on a
// terminal unless quiet (console.StepBar).
type bar struct{ b *console.StepBar }

func newBar(st *State, quiet bool, label string, total int) *bar {
	if !st.StderrIsTerminal || quiet {
		return &bar{}
	}
	return &bar{console.NewStepBar(st.Stderr, label, total)}
}

// set reports that n of total steps are done.
func (b *bar) set(n int, info string) {
	if b.b != nil {
		b.b.Set(n, info)
	}
}

// done ends the bar's line.
func (b *bar) done() {
	if b.b != nil {
		b.b.Done()
	}
}
