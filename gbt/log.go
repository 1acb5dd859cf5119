package gbt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"aimeter/gbt/testinfo"
)

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
	b.WriteString(t.Format(testinfo.TimestampLayout))
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
	if e.Time, err = time.ParseInLocation(testinfo.TimestampLayout, m[1], loc); err != nil {
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
