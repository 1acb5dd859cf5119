package gbt

import (
	"errors"
	"math"
	"strings"
	"testing"
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
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}
