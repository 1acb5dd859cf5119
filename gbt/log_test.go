package gbt

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

var cst = time.FixedZone("CST", 8*3600)

func f64(v float64) *float64 { return &v }

// GB-7.3-f: [yyyy:MM:dd HH:mm:ss]-[accuracy]-[jobs]-[samples]-[lost].
func TestLogLine(t *testing.T) {
	at := time.Date(2024, 11, 28, 9, 30, 1, 999_999_999, cst)
	tests := []struct {
		name                string
		acc                 *float64
		jobs, samples, lost int64
		want                string
	}{
		{"GB-7.3-f, IN-43 example", f64(0.7612), 1200, 1200, 3, "[2024:11:28 09:30:01]-[0.7612]-[1200]-[1200]-[3]"},
		{"GB-7.3-f-2 accuracy unknown: -- (IN-43)", nil, 0, 0, 0, "[2024:11:28 09:30:01]-[--]-[0]-[0]-[0]"},
		{"IN-18 b) four decimals, rounded", f64(0.76125), 1, 8, 0, "[2024:11:28 09:30:01]-[0.7612]-[1]-[8]-[0]"},
		{"four decimals of 1", f64(1), 5, 5, 0, "[2024:11:28 09:30:01]-[1.0000]-[5]-[5]-[0]"},
		{"NaN is not a number to log", f64(math.NaN()), 1, 1, 1, "[2024:11:28 09:30:01]-[--]-[1]-[1]-[1]"},
		{"+Inf likewise", f64(math.Inf(1)), 1, 1, 1, "[2024:11:28 09:30:01]-[--]-[1]-[1]-[1]"},
		{"negative zero", f64(math.Copysign(0, -1)), 1, 1, 0, "[2024:11:28 09:30:01]-[0.0000]-[1]-[1]-[0]"},
		{"GB-7.3-f-3…5 counts never negative", f64(0.5), -1, -2, -3, "[2024:11:28 09:30:01]-[0.5000]-[0]-[0]-[0]"},
		{"jobs of several samples (IN-65)", f64(0.5), 10, 80, 7, "[2024:11:28 09:30:01]-[0.5000]-[10]-[80]-[7]"},
	}
	for _, tc := range tests {
		got := LogLine(at, tc.acc, tc.jobs, tc.samples, tc.lost)
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
		if !LogLineRE.MatchString(got) {
			t.Errorf("%s: %s does not match IN-43's expression", tc.name, got)
		}
	}
	// IN-04: the timestamp is in t's own location, to the second.
	if got := LogLine(at.UTC(), nil, 0, 0, 0); !strings.HasPrefix(got, "[2024:11:28 01:30:01]") {
		t.Errorf("UTC: %s", got)
	}
}

func TestParseLogLine(t *testing.T) {
	line := LogLine(time.Date(2024, 1, 2, 3, 4, 5, 0, cst), f64(0.25), 3, 24, 1)
	e, err := ParseLogLine(line+"\n", cst)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Time.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, cst)) || *e.Accuracy != 0.25 || e.Jobs != 3 || e.Samples != 24 || e.Lost != 1 {
		t.Errorf("parsed %+v", e)
	}
	e, err = ParseLogLine("[2024:01:02 03:04:05]-[--]-[0]-[0]-[0]", nil)
	if err != nil || e.Accuracy != nil || e.Time.Location() != time.Local {
		t.Errorf("parsed %+v, %v", e, err)
	}
	for _, bad := range []string{
		"2024:01:02 03:04:05-[--]-[0]-[0]-[0]",     // brackets are literal (IN-04)
		"[2024-01-02 03:04:05]-[--]-[0]-[0]-[0]",   // colons in the date
		"[2024:01:02 03:04:05]-[--]-[0]-[0]",       // five fields
		"[2024:01:02 03:04:05]-[n/a]-[0]-[0]-[0]",  // -- only
		"[2024:01:02 03:04:05]-[--]-[-1]-[0]-[0]",  // counts are non-negative
		"[2024:13:02 03:04:05]-[--]-[0]-[0]-[0]",   // month 13
		"[2024:01:02 03:04:05]-[0.5]-[0]-[0]-[0] ", // trailing space
	} {
		if _, err := ParseLogLine(bad, cst); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSuffix(s.b.String(), "\n"), "\n")
}

// The log is periodic, 1 s by default (IN-43), cumulative, and ends with a
// final line (IN-43).
func TestLoggerPeriodic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var samples, lost atomic.Int64
		var acc atomic.Pointer[float64]
		var buf syncBuffer
		l := &Logger{
			W: &buf,
			Snapshot: func() Snapshot {
				s := samples.Load()
				return Snapshot{Accuracy: acc.Load(), Jobs: s / 2, Samples: s, Lost: lost.Load()}
			},
			Now: func() time.Time { return time.Now().In(cst) },
		}
		start := time.Now().In(cst)
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		if err := l.Start(); !errors.Is(err, ErrLoggerStarted) {
			t.Errorf("second Start: %v", err)
		}
		// Ten samples at 0.3 s, 0.8 s, …, 3.3 s, away from the ticks.
		time.Sleep(300 * time.Millisecond)
		for i := range 7 {
			if i > 0 {
				time.Sleep(500 * time.Millisecond)
			}
			samples.Add(10)
		}
		acc.Store(f64(0.9))
		lost.Store(2)
		time.Sleep(400 * time.Millisecond) // 3.7 s
		if err := l.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := l.Stop(); err != nil {
			t.Fatal(err)
		}
		ts := func(d time.Duration) string { return start.Add(d).Format(TimestampLayout) }
		want := []string{
			"[" + ts(time.Second) + "]-[--]-[10]-[20]-[0]",
			"[" + ts(2*time.Second) + "]-[--]-[20]-[40]-[0]",
			"[" + ts(3*time.Second) + "]-[--]-[30]-[60]-[0]",
			"[" + ts(3700*time.Millisecond) + "]-[0.9000]-[35]-[70]-[2]",
		}
		got := buf.lines()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if l.Lines() != 4 {
			t.Errorf("Lines = %d", l.Lines())
		}
		// No more lines after Stop.
		time.Sleep(5 * time.Second)
		if len(buf.lines()) != 4 {
			t.Error("lines after Stop")
		}
	})
}

func TestLoggerIntervalAndMonotonic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		n := int64(100)
		l := &Logger{
			W:        &buf,
			Interval: 250 * time.Millisecond,
			// A snapshot going backwards is written as the earlier value
			// (IN-43 (4): counters never decrease).
			Snapshot: func() Snapshot { n -= 30; return Snapshot{Jobs: n, Samples: n, Lost: 1} },
			Now:      func() time.Time { return time.Now().In(cst) },
		}
		ctx, cancel := context.WithTimeout(context.Background(), 1100*time.Millisecond)
		defer cancel()
		if err := l.Run(ctx); err != nil {
			t.Fatal(err)
		}
		got := buf.lines()
		if len(got) != 5 { // 0.25, 0.5, 0.75, 1.0 (ticks) + final at 1.1
			t.Fatalf("%d lines:\n%s", len(got), strings.Join(got, "\n"))
		}
		for _, line := range got {
			e, err := ParseLogLine(line, cst)
			if err != nil {
				t.Fatal(err)
			}
			if e.Jobs != 70 || e.Samples != 70 || e.Lost != 1 {
				t.Errorf("line %s: counts went down", line)
			}
		}
	})
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestLoggerErrors(t *testing.T) {
	if err := (&Logger{}).Start(); err == nil {
		t.Error("Start without W and Snapshot succeeded")
	}
	// Stop without Start writes the final line only.
	var buf bytes.Buffer
	l := &Logger{W: &buf, Snapshot: func() Snapshot { return Snapshot{Samples: 1} }, Now: func() time.Time {
		return time.Date(2024, 11, 28, 9, 30, 0, 0, cst)
	}}
	if err := l.Stop(); err != nil || buf.String() != "[2024:11:28 09:30:00]-[--]-[0]-[1]-[0]\n" {
		t.Errorf("Stop without Start: %q, %v", buf.String(), err)
	}
	synctest.Test(t, func(t *testing.T) {
		w := &failWriter{}
		l := &Logger{W: w, Snapshot: func() Snapshot { return Snapshot{} }}
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		if err := l.Stop(); err == nil || err.Error() != "disk full" {
			t.Errorf("Stop = %v, want the first write error", err)
		}
		if w.n != 3 {
			t.Errorf("%d writes, want 3 (2 ticks + final)", w.n)
		}
	})
}
