package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"aimeter/loadgen"
)

// progressInterval is how often a plain progress line is written when
// stderr is not a terminal (CI, nohup, a pipe).
const progressInterval = 10 * time.Second

// progressLine reports a running pass on stderr. On a terminal it redraws a
// live status line with a bar for passes longer than a second. Elsewhere it
// writes one plain line every progressInterval of the pass (elapsed time,
// queries, rate and the expected end), so that a long run in CI or under
// nohup is never silent. target is the pass's expected length, the minimum
// duration (0 = unknown: no bar and no expected end).
type progressLine struct {
	w        io.Writer
	terminal bool
	target   time.Duration
	mu       sync.Mutex
	shown    bool
	// next is the elapsed time of the next plain line (0 = progressInterval).
	next time.Duration
	// now gives the wall clock for the expected end (nil = time.Now).
	now func() time.Time
}

func (p *progressLine) update(pr loadgen.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.terminal {
		p.plain(pr)
		return
	}
	if pr.Elapsed < time.Second && !p.shown {
		return
	}
	line := fmt.Sprintf("%-14s %s %6.1fs  issued %d  completed %d", pr.Pass, drawBar(float64(pr.Elapsed), float64(p.target)), pr.Elapsed.Seconds(), pr.Issued, pr.Completed)
	if pr.Failed > 0 {
		line += fmt.Sprintf("  failed %d", pr.Failed)
	}
	if pr.Lost > 0 {
		line += fmt.Sprintf("  lost %d", pr.Lost)
	}
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

// plain writes a line each time the pass passes a multiple of
// progressInterval. A pass that ends starts the count again for the next.
func (p *progressLine) plain(pr loadgen.Progress) {
	if p.next == 0 {
		p.next = progressInterval
	}
	if pr.Done {
		p.next = progressInterval
		return
	}
	if pr.Elapsed < p.next {
		return
	}
	for p.next <= pr.Elapsed {
		p.next += progressInterval
	}
	line := fmt.Sprintf("progress: %s pass, %s elapsed, %d queries issued, %d samples completed", pr.Pass, pr.Elapsed.Truncate(time.Second), pr.Queries, pr.Completed)
	switch {
	case pr.Failed > 0 && pr.Lost > 0:
		line += fmt.Sprintf(" (%d failed, %d lost)", pr.Failed, pr.Lost)
	case pr.Failed > 0:
		line += fmt.Sprintf(" (%d failed)", pr.Failed)
	case pr.Lost > 0:
		line += fmt.Sprintf(" (%d lost)", pr.Lost)
	}
	line += fmt.Sprintf(", %.0f samples/s", float64(pr.Completed)/pr.Elapsed.Seconds())
	if p.target > 0 {
		now := time.Now
		if p.now != nil {
			now = p.now
		}
		if left := p.target - pr.Elapsed; left > 0 {
			line += fmt.Sprintf(", expected end in %s (about %s, when min_duration %s is reached)",
				left.Round(time.Second), now().Add(left).Format("15:04:05"), p.target)
		} else {
			line += fmt.Sprintf(", past min_duration %s: finishing the generated queries", p.target)
		}
	}
	fmt.Fprintln(p.w, line)
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
