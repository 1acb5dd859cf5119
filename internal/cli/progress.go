package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"aimeter/loadgen"
)

// progressLine draws a live status line with a bar on a terminal for
// passes longer than a second. It stays quiet when stderr is not a
// terminal. target is the pass's minimum duration (0 = no bar).
type progressLine struct {
	w        io.Writer
	terminal bool
	target   time.Duration
	mu       sync.Mutex
	shown    bool
}

func (p *progressLine) update(pr loadgen.Progress) {
	if !p.terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.Elapsed < time.Second && !p.shown {
		return
	}
	line := fmt.Sprintf("%-14s %s %6.1fs  issued %d  completed %d", pr.Pass, drawBar(float64(pr.Elapsed), float64(p.target)), pr.Elapsed.Seconds(), pr.Issued, pr.Completed)
	if pr.Elapsed > 0 {
		line += fmt.Sprintf("  %.0f/s", float64(pr.Completed)/pr.Elapsed.Seconds())
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.shown = true
	if pr.Done {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// drawBar renders done/total as a 20-character bar ("" when total is 0).
func drawBar(done, total float64) string {
	const width = 20
	if total <= 0 {
		return ""
	}
	n := int(width * min(done/total, 1))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// bar is a progress bar over a counted phase (training epochs).
type bar struct {
	w      io.Writer
	on     bool
	label  string
	total  int
	start  time.Time
	shown  bool
	latest string
}

func newBar(st *State, quiet bool, label string, total int) *bar {
	return &bar{w: st.Stderr, on: st.StderrIsTerminal && !quiet, label: label, total: total, start: time.Now()}
}

// set reports that n of total steps are done.
func (b *bar) set(n int, info string) {
	if !b.on {
		return
	}
	b.latest = fmt.Sprintf("%-14s %s %d/%d  %s", b.label, drawBar(float64(n), float64(b.total)), n, b.total, info)
	if !b.shown && time.Since(b.start) < time.Second && n < b.total {
		return
	}
	fmt.Fprintf(b.w, "\r\033[K%s", b.latest)
	b.shown = true
}

// done ends the bar's line.
func (b *bar) done() {
	if b.shown {
		fmt.Fprintln(b.w)
	}
}
