package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"aimeter/loadgen"
)

// progressLine prints a live status line on a terminal for passes longer
// than a second; on a pipe or file it prints a plain line every 10 seconds.
type progressLine struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	shown    bool
	last     time.Duration
}

func (p *progressLine) update(pr loadgen.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.Elapsed < time.Second && !p.shown {
		return
	}
	line := fmt.Sprintf("%-16s %7.1fs  issued %d  completed %d", pr.Pass, pr.Elapsed.Seconds(), pr.Issued, pr.Completed)
	if pr.Elapsed > 0 {
		line += fmt.Sprintf("  (%.0f/s)", float64(pr.Completed)/pr.Elapsed.Seconds())
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
		if pr.Done {
			fmt.Fprintln(p.w)
			p.shown = false
		}
		return
	}
	switch {
	case pr.Done:
		if pr.Elapsed-p.last >= time.Second {
			fmt.Fprintln(p.w, line)
		}
		p.last, p.shown = 0, false
	case pr.Elapsed-p.last >= 10*time.Second:
		fmt.Fprintln(p.w, line)
		p.last, p.shown = pr.Elapsed, true
	}
}
