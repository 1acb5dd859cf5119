package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// RecordsHeader is the first line of records.csv.
const RecordsHeader = "seq_id,query_id,sample_index,scheduled_ns,issued_ns,first_token_ns,completed_ns,tokens,status"

var recordFields = [...]string{"seq_id", "query_id", "sample_index", "scheduled_ns", "issued_ns", "first_token_ns", "completed_ns", "tokens", "status"}

// WriteRecords writes records.csv: RecordsHeader, then one line per record
// with the fields in header order. Times are nanoseconds from the start of
// the record's pass; a time equal to loadgen.NoTime is an empty field.
// status is Status.String() ("ok", "error" or "lost").
func WriteRecords(w io.Writer, recs []loadgen.Record) error {
	return WriteRecordSeq(w, slices.Values(recs))
}

// WriteRecordSeq is WriteRecords for an iterator, such as
// (*loadgen.Result).Records, so that no slice of every record is needed.
// The rows are formatted in blocks on GOMAXPROCS goroutines and written in
// order, one Write per block of about a megabyte; the iterator is called
// from the calling goroutine only.
func WriteRecordSeq(w io.Writer, recs iter.Seq[loadgen.Record]) error {
	return writeRecords(w, recs, defaultWorkers())
}

// WriteResultRecords writes records.csv for every record of r, like
// WriteRecordSeq(w, r.Records()) but pulling the records on every core
// (Result.RecordChunks): what a whole Offline run of millions of samples
// spends after the run is mostly this.
func WriteResultRecords(w io.Writer, r *loadgen.Result) error {
	workers := defaultWorkers()
	// Chunks of about 64 Ki records: enough chunks to keep every worker
	// busy to the end, few enough that each is worth a hand-over.
	n := max(4*workers, r.RecordCount()/(64<<10))
	return writeRecordChunks(w, r.RecordChunks(n), workers)
}

// RecordsError is a bad record in a record file: the 1-based line of
// records.csv or row of records.parquet, the field when one is to blame
// (package internal/parquet defines it, for the codec's errors).
type RecordsError = parquet.RecordsError

// maxRecordLine bounds a records.csv line; a valid one is under 200 bytes.
const maxRecordLine = 4096

// ReadRecords parses records.csv as WriteRecords writes it and nothing
// else: the exact header, nine comma-separated fields per line, decimal
// integers (an empty time field is loadgen.NoTime; ids, sample index and
// tokens must be present), a known status, "\n" line ends (the last may be
// missing) and no blank lines. Errors are *RecordsError values naming the
// line and field.
func ReadRecords(r io.Reader) ([]loadgen.Record, error) {
	return readRecords(r, defaultWorkers())
}

func truncateField(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

func parseRecord(line []byte, lineNo int) (loadgen.Record, error) {
	var f [len(recordFields)][]byte
	n := 0
	rest := line
	for {
		i := bytes.IndexByte(rest, ',')
		if n == len(f) {
			n = len(f) + 1 + bytes.Count(rest, []byte{','})
			break
		}
		if i < 0 {
			f[n] = rest
			n++
			break
		}
		f[n] = rest[:i]
		n++
		rest = rest[i+1:]
	}
	if n != len(f) {
		if len(line) == 0 {
			return loadgen.Record{}, &RecordsError{Line: lineNo, Msg: "blank line"}
		}
		return loadgen.Record{}, &RecordsError{Line: lineNo, Msg: fmt.Sprintf("%d fields, want %d", n, len(f))}
	}
	var rec loadgen.Record
	var err error
	fieldErr := func(i int, msg string) error {
		return &RecordsError{Line: lineNo, Field: recordFields[i], Msg: msg}
	}
	uintField := func(i int) uint64 {
		v, ok := parseUint(f[i])
		if !ok && err == nil {
			err = fieldErr(i, fmt.Sprintf("%q is not an unsigned decimal integer", truncateField(f[i])))
		}
		return v
	}
	intField := func(i int, empty bool) int64 {
		if empty && len(f[i]) == 0 {
			return loadgen.NoTime
		}
		v, ok := parseInt(f[i])
		if !ok && err == nil {
			err = fieldErr(i, fmt.Sprintf("%q is not a decimal integer", truncateField(f[i])))
		}
		return v
	}
	rec.SeqID = uintField(0)
	rec.QueryID = uintField(1)
	rec.SampleIndex = uintField(2)
	rec.ScheduledNs = intField(3, true)
	rec.IssuedNs = intField(4, true)
	rec.FirstTokenNs = intField(5, true)
	rec.CompletedNs = intField(6, true)
	rec.Tokens = intField(7, false)
	if err != nil {
		return loadgen.Record{}, err
	}
	st, ok := loadgen.ParseStatus(string(f[8]))
	if !ok {
		return loadgen.Record{}, fieldErr(8, fmt.Sprintf("unknown status %q (want ok, error or lost)", truncateField(f[8])))
	}
	rec.Status = st
	return rec, nil
}

// parseUint parses a non-empty run of ASCII digits without allocating.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false // overflow
		}
		v = v*10 + d
	}
	return v, true
}

// parseInt parses an optionally '-'-signed decimal integer.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parseUint(b)
	if !ok {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true // -(1<<63) wraps to MinInt64, as wanted
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// RunInfo is settings.json: what a run was asked to do, what it ran with,
// its passes and how it ended, for tools that reread a run directory
// (aimeter's own file; LoadGen has no equivalent). Scenario and Mode are
// written by name ("Server", "PerformanceOnly").
type RunInfo struct {
	Version             string             `json:"version"`
	SUTName             string             `json:"sut_name"`
	QSLName             string             `json:"qsl_name"`
	QSLTotalCount       uint64             `json:"qsl_total_count"`
	QSLPerformanceCount uint64             `json:"qsl_performance_count"`
	StartTime           time.Time          `json:"start_time"`
	Requested           loadgen.Settings   `json:"requested"`
	Effective           loadgen.Effective  `json:"effective"`
	Passes              []loadgen.PassInfo `json:"passes"`
	// Interrupted is why the test ended early ("" if it did not).
	Interrupted string `json:"interrupted"`
	// Counters of SUT misbehaviour (see loadgen.Result).
	UnknownCompletions   uint64 `json:"unknown_completions"`
	DuplicateCompletions uint64 `json:"duplicate_completions"`
	FailedSamples        uint64 `json:"failed_samples"`
	LostSamples          uint64 `json:"lost_samples"`
	// LateCompletions counts results that arrived after their sample's
	// timeout (GB-7.4.1-d): the samples are lost; absent in bundles written
	// before it was kept.
	LateCompletions uint64 `json:"late_completions,omitempty"`
}

// RunInfoFromResult collects the RunInfo of r; version is aimeter's.
func RunInfoFromResult(r *loadgen.Result, version string) RunInfo {
	passes := slices.Clone(r.Passes)
	if passes == nil {
		passes = []loadgen.PassInfo{}
	}
	return RunInfo{
		Version:              version,
		SUTName:              r.SUTName,
		QSLName:              r.QSLName,
		QSLTotalCount:        r.QSLTotalCount,
		QSLPerformanceCount:  r.QSLPerformanceCount,
		StartTime:            r.StartTime,
		Requested:            r.Requested,
		Effective:            r.Effective,
		Passes:               passes,
		Interrupted:          r.Interrupted,
		UnknownCompletions:   r.UnknownCompletions,
		DuplicateCompletions: r.DuplicateCompletions,
		FailedSamples:        r.FailedSamples,
		LostSamples:          r.LostSamples,
		LateCompletions:      r.LateCompletions,
	}
}

// WriteRunInfo writes ri as indented JSON followed by a newline.
func WriteRunInfo(w io.Writer, ri RunInfo) error {
	b, err := json.MarshalIndent(ri, "", "  ")
	if err != nil {
		return fmt.Errorf("settings.json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// maxRunInfoSize bounds what ReadRunInfo reads; a real settings.json is a
// few KiB.
const maxRunInfoSize = 64 << 20

// ReadRunInfo reads a settings.json written by WriteRunInfo. Unknown fields,
// a second JSON value and malformed JSON are errors that name the line and
// column.
func ReadRunInfo(r io.Reader) (RunInfo, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRunInfoSize+1))
	if err != nil {
		return RunInfo{}, fmt.Errorf("settings.json: %w", err)
	}
	if len(data) > maxRunInfoSize {
		return RunInfo{}, fmt.Errorf("settings.json: larger than %d bytes", maxRunInfoSize)
	}
	var ri RunInfo
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ri); err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		case errors.Is(err, io.EOF):
			return RunInfo{}, errors.New("settings.json: empty file")
		default:
			// The decoder has read the whole object by now; point at the
			// unknown key instead.
			if name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`); ok {
				if at := findKey(data, strings.TrimSuffix(name, `"`)); at >= 0 {
					off = int64(at)
				}
			}
		}
		line, col := jsonPosition(data, off)
		return RunInfo{}, fmt.Errorf("settings.json:%d:%d: %w", line, col, err)
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		line, col := jsonPosition(data, dec.InputOffset())
		return RunInfo{}, fmt.Errorf("settings.json:%d:%d: unexpected data after the JSON object", line, col)
	}
	return ri, nil
}

// findKey returns the offset of the first `"name"` followed by a colon.
func findKey(data []byte, name string) int {
	quoted := []byte(strconv.Quote(name))
	for from := 0; ; {
		i := bytes.Index(data[from:], quoted)
		if i < 0 {
			return -1
		}
		at := from + i
		rest := bytes.TrimLeft(data[at+len(quoted):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return at
		}
		from = at + 1
	}
}

// jsonPosition converts a byte offset into a 1-based line and column.
func jsonPosition(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
