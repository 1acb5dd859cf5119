package cli

import "aimeter/console"

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
