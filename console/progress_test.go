package console

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// A run whose stderr is not a terminal writes one plain progress line every
// 10 s of each pass, on the run's own clock (a fake one here): a 25 s pass
// writes exactly two, at 10 s and 20 s.
func TestPlainProgressEveryTenSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		pl := &ProgressLine{W: &out}
		s := loadgen.DefaultSettings()
		s.Scenario = loadgen.Server
		s.ServerTargetQPS = 50
		s.ServerTargetLatencyNs = uint64(time.Second)
		s.MinDurationMs = 25_000
		s.MinQueryCount = 1
		res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 16}, s,
			&loadgen.Options{SpinWindow: -1, Progress: func(pr loadgen.Progress) {
				pl.Update(benchmark.Progress{Progress: pr, Target: 25 * time.Second})
			}})
		if err != nil || res.Summary == nil {
			t.Fatalf("run: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("want 2 progress lines in a 25 s pass, got %d:\n%s", len(lines), out.String())
		}
		for i, want := range []string{"10s elapsed", "20s elapsed"} {
			if !strings.HasPrefix(lines[i], "progress: performance pass, ") || !strings.Contains(lines[i], want) {
				t.Errorf("line %d: want a plain line with %q, got %q", i, want, lines[i])
			}
			if strings.Contains(lines[i], "\r") || strings.Contains(lines[i], "\033") {
				t.Errorf("line %d: terminal control codes in a plain line: %q", i, lines[i])
			}
		}
		if !strings.Contains(lines[0], "expected end in 15s") || !strings.Contains(lines[1], "expected end in 5s") {
			t.Errorf("want the expected end counted down from min_duration, got\n%s", out.String())
		}
	})
}

func TestPlainProgressLine(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	tests := []struct {
		name   string
		target time.Duration
		snaps  []loadgen.Progress
		want   []string // one substring per expected line; nil = no line
	}{
		{"nothing before the first 10 s", time.Minute,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 9 * time.Second, Completed: 9}}, nil},
		{"one line with queries, rate and the expected end", time.Minute,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 10 * time.Second, Queries: 500, Completed: 1000}},
			[]string{"10s elapsed, 500 queries issued, 1000 samples completed, 100 samples/s, expected end in 50s (about 03:04:55, when min_duration 1m0s is reached)"}},
		{"a stalled callback that jumps two intervals writes one line", time.Minute,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 25 * time.Second, Completed: 25}, {Pass: loadgen.PassPerformance, Elapsed: 29 * time.Second, Completed: 29}},
			[]string{"25s elapsed"}},
		{"past min_duration the line says the run is finishing", 5 * time.Second,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 10 * time.Second, Completed: 10}},
			[]string{"past min_duration 5s"}},
		{"lost samples are named", 0,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 10 * time.Second, Completed: 10, Lost: 3}},
			[]string{"10 samples completed (3 lost), 1 samples/s\n"}},
		{"failed samples are named", 0,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 10 * time.Second, Completed: 10, Failed: 4}},
			[]string{"10 samples completed (4 failed), 1 samples/s\n"}},
		{"failed and lost samples are named", 0,
			[]loadgen.Progress{{Pass: loadgen.PassPerformance, Elapsed: 10 * time.Second, Completed: 10, Failed: 4, Lost: 2}},
			[]string{"10 samples completed (4 failed, 2 lost), 1 samples/s\n"}},
		{"a new pass counts from 10 s again", time.Minute,
			[]loadgen.Progress{{Pass: loadgen.PassFindPeak, Elapsed: 12 * time.Second}, {Pass: loadgen.PassFindPeak, Done: true, Elapsed: 13 * time.Second}, {Pass: loadgen.PassFindPeak, Elapsed: 10 * time.Second}},
			[]string{"find-peak-probe pass, 12s", "find-peak-probe pass, 10s"}},
	}
	for _, tc := range tests {
		var out strings.Builder
		pl := &ProgressLine{W: &out, Now: clock}
		for _, s := range tc.snaps {
			pl.Update(benchmark.Progress{Progress: s, Target: tc.target})
		}
		got := out.String()
		lines := strings.SplitAfter(got, "\n")
		if got == "" {
			lines = nil
		} else {
			lines = lines[:len(lines)-1]
		}
		if len(lines) != len(tc.want) {
			t.Errorf("%s: want %d lines, got %q", tc.name, len(tc.want), got)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("%s: line %d: want %q in %q", tc.name, i, w, lines[i])
			}
		}
	}
}

// syncBuffer is a strings.Builder safe for the progress goroutine and the
// test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
