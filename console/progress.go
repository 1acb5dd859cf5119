package console

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"aimeter/benchmark"
)

// ProgressInterval is how often ProgressLine writes a plain line when its
// writer is not a terminal (CI, nohup, a pipe).
const ProgressInterval = 10 * time.Second

// ProgressLine reports a running pass. On a terminal it redraws a live
// status line with a bar for passes longer than a second. Elsewhere it
// writes one plain line every ProgressInterval of the pass (elapsed time,
// queries, rate and the expected end), so that a long run in CI or under
// nohup is never silent. Set W and Terminal; it is safe for concurrent use.
type ProgressLine struct {
	// W receives the lines.
	W io.Writer
	// Terminal redraws one live line instead of writing plain ones.
	Terminal bool
	// Now gives the wall clock of the expected end; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	shown  bool
	ticker benchmark.ProgressTicker
}

// Update reports a snapshot of the pass; its Target (the expected length,
// the minimum duration; 0 = unknown) draws the bar and the expected end.
func (p *ProgressLine) Update(pr benchmark.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.Terminal {
		p.plain(pr)
		return
	}
	if pr.Elapsed < time.Second && !p.shown {
		return
	}
	line := fmt.Sprintf("%-14s %s %6.1fs  issued %d  completed %d", pr.Pass, Bar(float64(pr.Elapsed), float64(pr.Target)), pr.Elapsed.Seconds(), pr.Issued, pr.Completed)
	if pr.Failed > 0 {
		line += fmt.Sprintf("  failed %d", pr.Failed)
	}
	if pr.Lost > 0 {
		line += fmt.Sprintf("  lost %d", pr.Lost)
	}
	if pr.Elapsed > 0 {
		line += fmt.Sprintf("  %.0f/s", pr.Rate())
	}
	fmt.Fprintf(p.W, "\r\033[K%s", line)
	p.shown = true
	if pr.Done {
		fmt.Fprintln(p.W)
		p.shown = false
	}
}

// plain writes a line each time the pass passes a multiple of
// ProgressInterval.
func (p *ProgressLine) plain(pr benchmark.Progress) {
	p.ticker.Interval = ProgressInterval
	if !p.ticker.Due(pr.Progress) {
		return
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
	line += fmt.Sprintf(", %.0f samples/s", pr.Rate())
	if pr.Target > 0 {
		now := time.Now
		if p.Now != nil {
			now = p.Now
		}
		if left := pr.Left(); left > 0 {
			line += fmt.Sprintf(", expected end in %s (about %s, when min_duration %s is reached)",
				left.Round(time.Second), now().Add(left).Format("15:04:05"), pr.Target)
		} else {
			line += fmt.Sprintf(", past min_duration %s: finishing the generated queries", pr.Target)
		}
	}
	fmt.Fprintln(p.W, line)
}

// Bar renders done/total as a 20-character bar ("" when total is 0).
func Bar(done, total float64) string {
	const width = 20
	if total <= 0 {
		return ""
	}
	n := int(width * min(done/total, 1))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// StepBar is a progress bar over a counted phase (training epochs) on a
// terminal: it shows once the phase has run a second.
type StepBar struct {
	w      io.Writer
	label  string
	total  int
	start  time.Time
	shown  bool
	latest string
}

// NewStepBar returns a bar of label over total steps that writes to w.
func NewStepBar(w io.Writer, label string, total int) *StepBar {
	return &StepBar{w: w, label: label, total: total, start: time.Now()}
}

// Set reports that n of total steps are done, with info after the count.
func (b *StepBar) Set(n int, info string) {
	b.latest = fmt.Sprintf("%-14s %s %d/%d  %s", b.label, Bar(float64(n), float64(b.total)), n, b.total, info)
	if !b.shown && time.Since(b.start) < time.Second && n < b.total {
		return
	}
	fmt.Fprintf(b.w, "\r\033[K%s", b.latest)
	b.shown = true
}

// Done ends the bar's line.
func (b *StepBar) Done() {
	if b.shown {
		fmt.Fprintln(b.w)
	}
}
