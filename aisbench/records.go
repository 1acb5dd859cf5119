package aisbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Record is one set_result as aimeter's ais_utils.py wrote it: a JSON
// object on one line of the results file.
type Record struct {
	Mode string `json:"mode"`
	Key  string `json:"key"`
	// Value is the value as set: a JSON string or number.
	Value json.RawMessage `json:"value"`
	// Extra are the command line's words after the value (an unquoted
	// date the shell split); nil when none.
	Extra []string `json:"extra,omitempty"`
	// Time is when it was set, in seconds since the Unix epoch.
	Time float64 `json:"time"`
	PID  int     `json:"pid,omitempty"`
	// Rank is the setter's RANK_ID; "" when it had none.
	Rank string `json:"rank,omitempty"`
}

// Modes are the set_result modes the stubs know.
const (
	ModeTraining  = "training"
	ModeInference = "inference"
)

// MaxLine bounds one line of the results file; a longer one is malformed.
const MaxLine = 64 << 10

// ParseLine parses one line of the results file. It refuses what
// ais_utils.py never writes: no key, a value that is neither a JSON string
// nor a finite number, a time that is not a finite number ≥ 0, invalid
// UTF-8, a line over MaxLine.
func ParseLine(line []byte) (Record, error) {
	var r Record
	switch {
	case len(line) > MaxLine:
		return r, fmt.Errorf("line of %d bytes, over %d", len(line), MaxLine)
	case !utf8.Valid(line):
		return r, errors.New("not valid UTF-8")
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("not a result record: %w", err)
	}
	switch {
	case strings.TrimSpace(r.Key) == "":
		return Record{}, errors.New("no key")
	case len(r.Value) == 0:
		return Record{}, fmt.Errorf("key %q: no value", r.Key)
	case math.IsNaN(r.Time) || math.IsInf(r.Time, 0) || r.Time < 0:
		return Record{}, fmt.Errorf("key %q: time %v", r.Key, r.Time)
	}
	switch r.Value[0] {
	case '"':
		var s string
		if err := json.Unmarshal(r.Value, &s); err != nil {
			return Record{}, fmt.Errorf("key %q: value: %w", r.Key, err)
		}
	default:
		if _, err := strconv.ParseFloat(string(r.Value), 64); err != nil {
			return Record{}, fmt.Errorf("key %q: value %.40s is neither a string nor a number", r.Key, r.Value)
		}
	}
	r.Value = json.RawMessage(bytes.Clone(r.Value))
	return r, nil
}

// Text is the value as a string: a JSON string's content, or the number
// as written.
func (r Record) Text() string {
	if len(r.Value) > 0 && r.Value[0] == '"' {
		var s string
		_ = json.Unmarshal(r.Value, &s)
		return s
	}
	return string(r.Value)
}

// Number is the value read as a number: a JSON number, or a string holding
// one (the shell form passes every value as a string). ok is false for
// anything else, and for NaN and infinities.
func (r Record) Number() (v float64, ok bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(r.Text()), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// When is the record's time as a time.Time.
func (r Record) When() time.Time {
	sec, frac := math.Modf(r.Time)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// Malformed is a line of the results file that did not parse.
type Malformed struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
	// Excerpt is the line's first 200 bytes.
	Excerpt string `json:"excerpt"`
}

// MaxRecords bounds the records ReadRecords keeps; later ones are counted
// as malformed.
const MaxRecords = 1 << 16

// ReadRecords reads a results file: every record in order (at most
// MaxRecords), the count of malformed lines and the first five of them.
// Blank lines are skipped; a line over MaxLine is malformed and skipped
// without being held in memory.
func ReadRecords(r io.Reader) (recs []Record, malformed int, first []Malformed, err error) {
	br := bufio.NewReaderSize(r, MaxLine+2)
	bad := func(n int, reason string, line []byte) {
		malformed++
		if len(first) < 5 {
			ex := line[:min(len(line), 200)]
			first = append(first, Malformed{Line: n, Reason: reason, Excerpt: strings.ToValidUTF8(string(ex), "\uFFFD")})
		}
	}
	for n := 1; ; n++ {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			bad(n, fmt.Sprintf("line over %d bytes", MaxLine), line)
			for rerr == bufio.ErrBufferFull {
				_, rerr = br.ReadSlice('\n')
			}
			if rerr == io.EOF {
				return recs, malformed, first, nil
			}
			if rerr != nil {
				return recs, malformed, first, rerr
			}
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) > 0 {
			rec, perr := ParseLine(line)
			switch {
			case perr != nil:
				bad(n, perr.Error(), line)
			case len(recs) >= MaxRecords:
				bad(n, fmt.Sprintf("over %d records", MaxRecords), line)
			default:
				recs = append(recs, rec)
			}
		}
		if rerr == io.EOF {
			return recs, malformed, first, nil
		}
		if rerr != nil {
			return recs, malformed, first, rerr
		}
	}
}

// timeLayouts are the forms a time stamp value takes.
var timeLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006/01/02 15:04:05"}

// ParseStamp reads a time stamp value: "%Y-%m-%d %H:%M:%S" (fractions
// allowed) in loc, or seconds since the Unix epoch. dayOnly is true for a
// bare date ("2022-07-13"), which is refused: the shell split an unquoted
// date and the time of day was lost.
func ParseStamp(s string, loc *time.Location) (t time.Time, dayOnly bool, err error) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, false, nil
		}
	}
	if _, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return time.Time{}, true, fmt.Errorf("%q has only the day", s)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 && !math.IsInf(v, 0) && v < 1e11 {
		sec, frac := math.Modf(v)
		return time.Unix(int64(sec), int64(frac*1e9)), false, nil
	}
	return time.Time{}, false, fmt.Errorf("%q is not a time stamp (want %%Y-%%m-%%d %%H:%%M:%%S)", s)
}
