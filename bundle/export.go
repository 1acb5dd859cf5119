package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// A Table is one kind of per-sample data of a run bundle: what `aimeter
// export --table` writes.
type Table string

// The tables of a run bundle.
const (
	// TableRecords is one row per issued sample (records.parquet, or
	// records.csv in a version 1 bundle). Every run bundle has it.
	TableRecords Table = "records"
	// TableStages is the SUT's stage times, one row per record
	// (stages.parquet, or stages.csv before version 3).
	TableStages Table = "stages"
	// TableSamples is the bytes on the wire, node and error of every
	// record (samples.parquet, or samples.csv before version 3).
	TableSamples Table = "samples"
	// TableTokens is the arrival time of every output token
	// (tokens.parquet, or tokens.csv before version 3).
	TableTokens Table = "tokens"
)

// Tables are the tables of a run bundle, in the order aimeter export
// lists them.
var Tables = []Table{TableRecords, TableStages, TableSamples, TableTokens}

// ParseTable returns the table named s, or an error listing the names.
func ParseTable(s string) (Table, error) {
	if t := Table(s); slices.Contains(Tables, t) {
		return t, nil
	}
	return "", fmt.Errorf("unknown table %q (want records, stages, samples or tokens)", s)
}

// csvName is the name of the CSV file of t in a bundle of format version
// 1 (records.csv, stages.csv, samples.csv, tokens.csv).
func (t Table) csvName() string { return string(t) + ".csv" }

// HasTable reports whether b holds table t: a run bundle always holds its
// records, and the other tables when its SUT reported any of their data
// (as Write writes their files).
func (b *Bundle) HasTable(t Table) bool {
	if b == nil || b.Result == nil {
		return false
	}
	switch t {
	case TableRecords:
		return true
	case TableStages:
		return b.hasStages()
	case TableSamples:
		return b.Result.HasSampleData()
	case TableTokens:
		return b.Result.HasTokenTimes()
	}
	return false
}

// WriteTableCSV writes table t of b as CSV, byte for byte the file a
// bundle of format version 1 held for it (records.csv, stages.csv,
// samples.csv or tokens.csv), from a bundle of any version. A table the
// bundle does not hold is an error naming it.
func WriteTableCSV(w io.Writer, b *Bundle, t Table) error {
	if !b.HasTable(t) {
		return fmt.Errorf("the bundle has no %s (no %s)", t, t.csvName())
	}
	r := b.Result
	switch t {
	case TableRecords:
		return WriteRecords(w, slices.Collect(r.Records()))
	case TableStages:
		return WriteStages(w, r.Records(), b.stageSeq())
	case TableSamples:
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := writeSamples(bw, r.Records()); err != nil {
			return err
		}
		return bw.Flush()
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := writeTokens(bw, r.TokenTimes()); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteTableJSONL writes table t of b as JSON Lines: one object per row of
// its CSV (WriteTableCSV), with the CSV header's names as keys in their
// order, numbers as JSON numbers, an empty field (a time not measured) as
// null and a stage's clock as a string. The records are written as
// WriteRecordsJSONL writes them.
func WriteTableJSONL(w io.Writer, b *Bundle, t Table) error {
	if t == TableRecords && b.HasTable(t) {
		return WriteRecordsJSONL(w, slices.Collect(b.Result.Records()))
	}
	jw := &jsonlWriter{w: bufio.NewWriterSize(w, 1<<16)}
	if err := WriteTableCSV(jw, b, t); err != nil {
		return err
	}
	if len(jw.partial) > 0 {
		return errors.New("bundle: CSV without a final newline")
	}
	return jw.w.Flush()
}

// jsonlWriter turns the CSV lines written to it into JSON objects, one a
// line, keyed by the first line's fields.
type jsonlWriter struct {
	w       *bufio.Writer
	keys    [][]byte
	partial []byte
	out     []byte
}

func (j *jsonlWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			j.partial = append(j.partial, p...)
			break
		}
		line := p[:i]
		if len(j.partial) > 0 {
			j.partial = append(j.partial, line...)
			line = j.partial
		}
		if err := j.line(line); err != nil {
			return 0, err
		}
		j.partial = j.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (j *jsonlWriter) line(line []byte) error {
	fields := bytes.Split(line, []byte{','})
	if j.keys == nil {
		for _, f := range fields {
			j.keys = append(j.keys, strconv.AppendQuote(nil, string(f)))
		}
		return nil
	}
	if len(fields) != len(j.keys) {
		return fmt.Errorf("bundle: a CSV row of %d fields under %d names", len(fields), len(j.keys))
	}
	j.out = append(j.out[:0], '{')
	for k, f := range fields {
		if k > 0 {
			j.out = append(j.out, ',')
		}
		j.out = append(j.out, j.keys[k]...)
		j.out = append(j.out, ':')
		switch {
		case len(f) == 0:
			j.out = append(j.out, "null"...)
		case isInteger(f):
			j.out = append(j.out, f...)
		default:
			j.out = strconv.AppendQuote(j.out, string(f))
		}
	}
	j.out = append(j.out, '}', '\n')
	_, err := j.w.Write(j.out)
	return err
}

// isInteger reports whether f is a decimal integer as strconv writes one.
func isInteger(f []byte) bool {
	if len(f) > 0 && f[0] == '-' {
		f = f[1:]
	}
	if len(f) == 0 {
		return false
	}
	for _, c := range f {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
