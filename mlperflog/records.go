package mlperflog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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

// RecordsError is a records.csv parse error: the 1-based line (the header
// is line 1), the field when one is to blame, and what is wrong.
type RecordsError struct {
	Line  int
	Field string // "" when the whole line is wrong
	Msg   string
}

func (e *RecordsError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("records.csv line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("records.csv line %d: field %s: %s", e.Line, e.Field, e.Msg)
}

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

// Names of the files WriteAll writes.
const (
	SummaryFile  = "mlperf_log_summary.txt"
	DetailFile   = "mlperf_log_detail.txt"
	AccuracyFile = "mlperf_log_accuracy.json"
	TraceFile    = "mlperf_log_trace.json"
	RecordsFile  = "records.csv"
	SettingsFile = "settings.json"
)

// WriteOptions controls WriteAll.
type WriteOptions struct {
	// Version is aimeter's version, written to settings.json and, unless
	// Detail.Version is set, as loadgen_version.
	Version string
	// Detail controls mlperf_log_detail.txt.
	Detail DetailOptions
	// Trace also writes mlperf_log_trace.json.
	Trace bool
}

// WriteAll writes every output file of r into dir, creating it if needed:
// mlperf_log_summary.txt, mlperf_log_detail.txt, mlperf_log_accuracy.json,
// records.csv, settings.json and, with opts.Trace, mlperf_log_trace.json.
// Each file is written to a temporary file in dir and renamed into place,
// so a reader never sees half a file. A failing file does not stop the
// others; the returned error joins one error per failed file, each naming
// its file, in the order listed above. The files are written concurrently;
// r must not change meanwhile.
func WriteAll(dir string, r *loadgen.Result, opts WriteOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	detailOpts := opts.Detail
	if detailOpts.Version == "" {
		detailOpts.Version = opts.Version
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{SummaryFile, func(w io.Writer) error { return WriteSummary(w, r) }},
		{DetailFile, func(w io.Writer) error { return WriteDetail(w, r, detailOpts) }},
		{AccuracyFile, func(w io.Writer) error { return WriteAccuracy(w, r.Accuracy) }},
		{RecordsFile, func(w io.Writer) error { return WriteRecordSeq(w, r.Records()) }},
		{SettingsFile, func(w io.Writer) error { return WriteRunInfo(w, RunInfoFromResult(r, opts.Version)) }},
	}
	if r.HasStages() {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{StagesFile, func(w io.Writer) error { return WriteStages(w, r.Records(), r.Stages()) }})
	}
	if opts.Trace {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{TraceFile, func(w io.Writer) error { return WriteTrace(w, r) }})
	}
	// The files are independent: write them at the same time, so that
	// the small ones and stages.csv are done while records.csv (most of
	// the bytes) is formatted. Errors keep the order of files.
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() {
			if err := writeFileAtomic(dir, f.name, f.write); err != nil {
				errs[i] = fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeFileAtomic writes name in dir through a temporary file renamed into
// place once complete.
func writeFileAtomic(dir, name string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
