package gbt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultLogInterval is the period of the inference log: the standard only
// says "periodically" (GB-7.3-f); IN-43 suggests 1 s, the resolution of the
// log's timestamps.
const DefaultLogInterval = time.Second

// LogAccuracyDecimals is the number of decimals of the accuracy field: a
// fraction with 4 decimals (IN-18 b), IN-43's example "[0.7612]").
const LogAccuracyDecimals = 4

// LogLine formats one line of the inference log of 7.3 f) (GB-7.3-f,
// GB-7.7.1-i), without a line break:
//
//	[yyyy:MM:dd HH:mm:ss]-[accuracy]-[jobs]-[samples]-[lost]
//
// t is the time the line is output, written in t's own location to the
// second (GB-7.3-f-1, IN-04: the SUT's local time; the results record the
// UTC offset). accuracy is the current cumulative accuracy as a fraction
// (GB-7.3-f-2, IN-87), written with 4 decimals; nil, NaN or ±Inf is written
// "--" (IN-43: not yet known, or a performance-only run). jobs and samples
// are the jobs and samples whose results have returned so far (GB-7.3-f-3,
// GB-7.3-f-4) and lost the samples lost so far (GB-7.3-f-5); all three are
// cumulative (IN-43), and a negative count is written as 0 so that every
// line matches the grammar of IN-43.
//
// Example: [2024:11:28 09:30:01]-[0.7612]-[1200]-[1200]-[3]
func LogLine(t time.Time, accuracy *float64, jobs, samples, lost int64) string {
	var b strings.Builder
	b.Grow(64)
	b.WriteByte('[')
	b.WriteString(t.Format(TimestampLayout))
	b.WriteString("]-[")
	b.WriteString(formatAccuracy(accuracy))
	for _, n := range [...]int64{jobs, samples, lost} {
		b.WriteString("]-[")
		b.WriteString(strconv.FormatInt(max(n, 0), 10))
	}
	b.WriteByte(']')
	return b.String()
}

func formatAccuracy(a *float64) string {
	if a == nil || math.IsNaN(*a) || math.IsInf(*a, 0) {
		return "--"
	}
	s := strconv.FormatFloat(*a, 'f', LogAccuracyDecimals, 64)
	if s == "-0.0000" {
		s = "0.0000"
	}
	return s
}

// LogLineRE matches a line of the inference log (IN-43's validation
// expression). The submatches are the timestamp, accuracy, jobs, samples and
// lost samples.
var LogLineRE = regexp.MustCompile(`^\[(\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2})\]-\[(--|[-+]?\d+(?:\.\d+)?)\]-\[(\d+)\]-\[(\d+)\]-\[(\d+)\]$`)

// LogEntry is one parsed line of the inference log.
type LogEntry struct {
	// Time is the line's timestamp, read in the local time zone.
	Time time.Time
	// Accuracy is nil for "--".
	Accuracy *float64
	// Jobs, Samples and Lost are the three counters.
	Jobs, Samples, Lost int64
}

// ParseLogLine reads a line written by LogLine (a trailing line break is
// ignored). The timestamp is read in loc, or the local time zone if loc is
// nil.
func ParseLogLine(line string, loc *time.Location) (LogEntry, error) {
	line = strings.TrimRight(line, "\r\n")
	m := LogLineRE.FindStringSubmatch(line)
	if m == nil {
		return LogEntry{}, fmt.Errorf("not an inference log line (GB-7.3-f): %q", line)
	}
	if loc == nil {
		loc = time.Local
	}
	var e LogEntry
	var err error
	if e.Time, err = time.ParseInLocation(TimestampLayout, m[1], loc); err != nil {
		return LogEntry{}, fmt.Errorf("inference log line %q: %v", line, err)
	}
	if m[2] != "--" {
		a, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return LogEntry{}, fmt.Errorf("inference log line %q: %v", line, err)
		}
		e.Accuracy = &a
	}
	for i, p := range []*int64{&e.Jobs, &e.Samples, &e.Lost} {
		if *p, err = strconv.ParseInt(m[3+i], 10, 64); err != nil {
			return LogEntry{}, fmt.Errorf("inference log line %q: %v", line, err)
		}
	}
	return e, nil
}

// Snapshot is the state a Logger writes: the cumulative accuracy (nil until
// known) and the cumulative job, sample and lost-sample counts.
type Snapshot struct {
	// Accuracy is the cumulative accuracy as a fraction, nil until known.
	Accuracy *float64
	// Jobs and Samples count the jobs and samples whose results returned.
	Jobs, Samples int64
	// Lost counts the samples lost (not returned within t*_OUT).
	Lost int64
}

// Logger writes the inference log of 7.3 f) (GB-7.3-f, GB-7.7.1-i): one
// LogLine every Interval from a Snapshot, and a final line when stopped
// (IN-43). Counters are written cumulative and never decreasing: a snapshot
// count below one already written is written as the earlier value.
//
// Set the exported fields, then call Start and, at the end of the test,
// Stop; or call Run. A Logger must not be copied after Start.
type Logger struct {
	// W receives the lines, each ending in "\n".
	W io.Writer
	// Snapshot returns the current state; it is called from the Logger's
	// goroutine and must be safe for that.
	Snapshot func() Snapshot
	// Interval is the period; 0 means DefaultLogInterval.
	Interval time.Duration
	// Now is the clock for the timestamps; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	started bool
	stopped bool
	stop    chan struct{}
	done    chan struct{}
	last    Snapshot
	lines   int
	err     error
}

// ErrLoggerStarted is returned by Start on a Logger started before.
var ErrLoggerStarted = errors.New("gbt: inference logger already started")

// Start writes a line every Interval from a new goroutine until Stop.
func (l *Logger) Start() error {
	if l.W == nil || l.Snapshot == nil {
		return errors.New("gbt: inference logger needs W and Snapshot")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return ErrLoggerStarted
	}
	l.started = true
	l.stop = make(chan struct{})
	l.done = make(chan struct{})
	interval := l.Interval
	if interval <= 0 {
		interval = DefaultLogInterval
	}
	go l.loop(interval)
	return nil
}

func (l *Logger) loop(interval time.Duration) {
	defer close(l.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
			l.writeLine()
		}
	}
}

// Stop ends the periodic lines, writes the final line and returns the first
// write error, if any. Stop without Start writes just the final line.
// Calls after the first do nothing and return the same error.
func (l *Logger) Stop() error {
	l.mu.Lock()
	if l.stopped {
		err := l.err
		l.mu.Unlock()
		return err
	}
	l.stopped = true
	started := l.started
	l.mu.Unlock()
	if started {
		close(l.stop)
		<-l.done
	}
	if l.W != nil && l.Snapshot != nil {
		l.writeLine()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Lines returns the number of lines written so far.
func (l *Logger) Lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

func (l *Logger) writeLine() {
	s := l.Snapshot()
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	t := now()
	l.mu.Lock()
	defer l.mu.Unlock()
	s.Jobs = max(s.Jobs, l.last.Jobs)
	s.Samples = max(s.Samples, l.last.Samples)
	s.Lost = max(s.Lost, l.last.Lost)
	l.last = s
	_, err := io.WriteString(l.W, LogLine(t, s.Accuracy, s.Jobs, s.Samples, s.Lost)+"\n")
	if err != nil && l.err == nil {
		l.err = err
	}
	l.lines++
}

// Run is Start, then Stop when ctx is done: it blocks until then and
// returns Stop's error (not the context's).
func (l *Logger) Run(ctx context.Context) error {
	if err := l.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return l.Stop()
}
