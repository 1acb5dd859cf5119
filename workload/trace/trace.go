// Package trace replays request traces: a schedule taken from a file
// instead of a generator. It reads Mooncake's JSONL traces (timestamp in
// ms, input and output lengths, and the hash ids of the 512-token blocks of
// each prompt) and a plain CSV (t_ms,input_tokens,output_tokens[,session]),
// scales and truncates the schedule (Schedule), builds one prompt per
// request whose blocks of equal hash ids share equal text, so that a
// server's prefix cache behaves as it did when the trace was recorded
// (Prompts), and summarises how closely a run kept the trace's send times
// (Lateness).
//
// A replay runs on LoadGen's Server scenario with explicit arrivals
// (loadgen.Options.Arrivals and ArrivalSamples): request k is sample k,
// scheduled at its trace time, and its latency counts from that time, not
// from the moment it was sent.
package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Format is the kind of a trace file.
type Format string

// The formats Read knows.
const (
	// Mooncake is the JSONL trace of Mooncake (FAST'25): one object per
	// line with timestamp (ms), input_length, output_length and hash_ids.
	Mooncake Format = "mooncake"
	// CSV is t_ms,input_tokens,output_tokens[,session], one request per
	// line, with an optional header line naming those columns.
	CSV Format = "csv"
)

// BlockTokens is the length of one hash-id block of a Mooncake trace: the
// hash id of block j stands for prompt tokens [512·j, 512·(j+1)).
const BlockTokens = 512

// Bounds on what a trace may hold: lengths beyond them are taken for
// corrupt input rather than sent to a server.
const (
	// MaxInputTokens bounds a request's input length (about 1 M tokens,
	// beyond any served context window).
	MaxInputTokens = 1 << 20
	// MaxOutputTokens bounds a request's output length.
	MaxOutputTokens = 1 << 20
	// MaxRequests bounds the number of requests in one trace.
	MaxRequests = 1 << 24
	// MaxTimestampMs bounds a timestamp: 100 days, well inside int64
	// nanoseconds.
	MaxTimestampMs = 100 * 24 * 3600 * 1000
	// maxLine bounds one line of a file.
	maxLine = 16 << 20
)

// Request is one request of a trace.
type Request struct {
	// AtNs is the request's time in the trace, ns from the trace's origin.
	AtNs int64
	// InputTokens and OutputTokens are its prompt and output lengths.
	InputTokens, OutputTokens int
	// HashIDs are the hash ids of its prompt's blocks (Mooncake; nil in a
	// CSV trace): block j covers tokens [BlockTokens·j, BlockTokens·(j+1)).
	HashIDs []int64
	// Session groups the requests of one conversation (CSV; "" for none).
	Session string
	// Line is the request's line in its file, from 1.
	Line int
}

// Trace is a parsed trace: its requests in time order.
type Trace struct {
	// Name is the file's base name (or the name given to Parse).
	Name string
	// Format is the file's format.
	Format Format
	// Requests are in non-decreasing AtNs order.
	Requests []Request
}

// Read reads the trace file at path. Its format comes from the name
// (.jsonl, .json: Mooncake; .csv: CSV) or, for any other name, from its
// first non-blank character ('{' is Mooncake).
func Read(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	format, err := formatOf(path, br)
	if err != nil {
		return nil, err
	}
	return Parse(br, filepath.Base(path), format)
}

func formatOf(path string, br *bufio.Reader) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".json", ".ndjson":
		return Mooncake, nil
	case ".csv":
		return CSV, nil
	}
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			if err == nil || errors.Is(err, io.EOF) {
				return "", fmt.Errorf("trace %s: empty", filepath.Base(path))
			}
			return "", err
		}
		switch c := b[n-1]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case c == '{':
			return Mooncake, nil
		default:
			return CSV, nil
		}
	}
}

// Parse reads a trace of the given format from r; name labels it in
// errors and in the prompt set.
func Parse(r io.Reader, name string, format Format) (*Trace, error) {
	t := &Trace{Name: name, Format: format}
	var err error
	switch format {
	case Mooncake:
		err = t.parseMooncake(r)
	case CSV:
		err = t.parseCSV(r)
	default:
		return nil, fmt.Errorf("trace %s: unknown format %q (want %q or %q)", name, format, Mooncake, CSV)
	}
	if err != nil {
		return nil, err
	}
	if len(t.Requests) == 0 {
		return nil, fmt.Errorf("trace %s: no requests", name)
	}
	return t, nil
}

// lineError names the line and field of a bad entry.
type lineError struct {
	name  string
	line  int
	field string
	msg   string
}

func (e *lineError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("trace %s line %d: %s", e.name, e.line, e.msg)
	}
	return fmt.Sprintf("trace %s line %d: field %q: %s", e.name, e.line, e.field, e.msg)
}

// add checks the request against the bounds and the previous request and
// appends it.
func (t *Trace) add(q Request, field func(string) string) error {
	bad := func(f, format string, args ...any) error {
		return &lineError{name: t.Name, line: q.Line, field: field(f), msg: fmt.Sprintf(format, args...)}
	}
	if len(t.Requests) >= MaxRequests {
		return &lineError{name: t.Name, line: q.Line, msg: fmt.Sprintf("more than %d requests", MaxRequests)}
	}
	if q.InputTokens < 1 || q.InputTokens > MaxInputTokens {
		return bad("input", "%d tokens: want 1 to %d", q.InputTokens, MaxInputTokens)
	}
	if q.OutputTokens < 1 || q.OutputTokens > MaxOutputTokens {
		return bad("output", "%d tokens: want 1 to %d", q.OutputTokens, MaxOutputTokens)
	}
	if n := len(t.Requests); n > 0 && q.AtNs < t.Requests[n-1].AtNs {
		prev := t.Requests[n-1]
		return bad("time", "%s ms is before the %s ms of line %d: a trace must be in time order", fmtMs(q.AtNs), fmtMs(prev.AtNs), prev.Line)
	}
	t.Requests = append(t.Requests, q)
	return nil
}

// fmtMs prints ns as ms without trailing zeros.
func fmtMs(ns int64) string {
	s := fmt.Sprintf("%d.%06d", ns/1_000_000, ns%1_000_000)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// msToNs converts a timestamp in ms (a decimal number) to ns, refusing
// negative, non-finite and too large values and more than ns precision.
func msToNs(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty")
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("%s: negative", s)
	}
	s = strings.TrimPrefix(s, "+")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if intPart == "" && (!hasFrac || frac == "") {
		return 0, fmt.Errorf("%q: not a number of ms", s)
	}
	var ms int64
	for _, c := range []byte(intPart) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: not a number of ms (a plain decimal, such as 1500 or 12.25)", s)
		}
		ms = ms*10 + int64(c-'0')
		if ms > MaxTimestampMs {
			return 0, fmt.Errorf("%s ms: beyond the %d ms (100 days) a trace may span", s, MaxTimestampMs)
		}
	}
	var ns int64
	scale := int64(100_000)
	for i, c := range []byte(frac) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: not a number of ms (a plain decimal, such as 1500 or 12.25)", s)
		}
		if i >= 6 {
			if c != '0' {
				return 0, fmt.Errorf("%s ms: finer than a nanosecond", s)
			}
			continue
		}
		ns += int64(c-'0') * scale
		scale /= 10
	}
	return ms*1_000_000 + ns, nil
}

// trimBOM drops a UTF-8 byte-order mark.
func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }
