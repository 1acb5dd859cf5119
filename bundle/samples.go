package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// Files of the per-sample data that only some runs have; each is written
// only when the run has any of it, so a run without it pays nothing.
const (
	// SamplesFile holds, for every record, what a SUT reported beyond its
	// completion: bytes on the wire, the node that served it and the error
	// it failed with (an index into errors.json). Format version 3.
	SamplesFile = parquet.SamplesFile
	// SamplesCSVFile is SamplesFile in bundles of format versions 1 and 2.
	SamplesCSVFile = "samples.csv"
	// ErrorsFile is the table of distinct (category, message) failures.
	ErrorsFile = parquet.ErrorsFile
	// TokensFile holds the arrival time of every output token of the
	// samples whose SUT reported them (streaming responses), one row a
	// token. Format version 3.
	TokensFile = parquet.TokensFile
	// TokensCSVFile is TokensFile in bundles of format versions 1 and 2.
	TokensCSVFile = "tokens.csv"
)

// SamplesHeader and TokensHeader are the header lines of samples.csv and
// tokens.csv, and the columns of samples.parquet and tokens.parquet. Times
// are nanoseconds on the run's clock, like records.csv.
const (
	SamplesHeader = "seq_id,request_bytes,response_bytes,node,error"
	TokensHeader  = "seq_id,token,time_ns"
)

// writeSamples writes samples.csv: one row per record, in record order.
func writeSamples(w io.Writer, recs iter.Seq[loadgen.Record]) error {
	if _, err := io.WriteString(w, SamplesHeader+"\n"); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	for r := range recs {
		buf = strconv.AppendUint(buf, r.SeqID, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.RequestBytes, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.ResponseBytes, 10)
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, uint64(r.Node), 10)
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, uint64(r.Error), 10)
		buf = append(buf, '\n')
		if len(buf) > 60<<10 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}

// csvRows reads a CSV file of unsigned and signed integers with the given
// header, calling row for each line's fields. Errors name the line.
func csvRows(r io.Reader, header string, row func(line int, fields [][]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return err
		}
		return fmt.Errorf("line 1: empty file, want the header %q", header)
	}
	if got := sc.Text(); got != header {
		return fmt.Errorf("line 1: header is %q, want %q", got, header)
	}
	want := bytes.Count([]byte(header), []byte{','}) + 1
	for n := 2; sc.Scan(); n++ {
		fields := bytes.Split(sc.Bytes(), []byte{','})
		if len(fields) != want {
			return fmt.Errorf("line %d: %d fields, want %d", n, len(fields), want)
		}
		if err := row(n, fields); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

// parseU and parseI read one field with the records.csv parsers
// (parseUint, parseInt), naming the field when it is not a number.
func parseU(b []byte, name string, bits int) (uint64, error) {
	v, ok := parseUint(b)
	if !ok || (bits < 64 && v >= 1<<bits) {
		return 0, fmt.Errorf("field %s: %q is not an unsigned %d-bit integer", name, b, bits)
	}
	return v, nil
}

func parseI(b []byte, name string) (int64, error) {
	v, ok := parseInt(b)
	if !ok {
		return 0, fmt.Errorf("field %s: %q is not an integer", name, b)
	}
	return v, nil
}

// readSamples reads samples.csv into recs, matching rows by sequence id.
// An error index must name an entry of the error table (nErrors entries).
func readSamples(r io.Reader, t *loadgen.RecordTable, nErrors int) error {
	find := t.Finder()
	return csvRows(r, SamplesHeader, func(_ int, f [][]byte) error {
		seq, err := parseU(f[0], "seq_id", 64)
		if err != nil {
			return err
		}
		i, ok := find(seq)
		if !ok {
			return fmt.Errorf("seq_id %d is not in the records", seq)
		}
		req, err := parseI(f[1], "request_bytes")
		if err != nil {
			return err
		}
		resp, err := parseI(f[2], "response_bytes")
		if err != nil {
			return err
		}
		node, err := parseU(f[3], "node", 32)
		if err != nil {
			return err
		}
		e, err := parseU(f[4], "error", 32)
		if err != nil {
			return err
		}
		if e > uint64(nErrors) {
			return fmt.Errorf("field error: %d, but %s has %d entries", e, ErrorsFile, nErrors)
		}
		t.SetSampleData(i, req, resp, uint32(node), uint32(e))
		return nil
	})
}

// writeErrors writes errors.json: the error table (loadgen.ErrorInfo: one
// group of failures per category and code, with count, examples and the
// first and last time), indexed from 1 as the records' error field.
func writeErrors(w io.Writer, table []loadgen.ErrorInfo) error {
	b, err := json.MarshalIndent(table, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// readErrors reads errors.json. A table written before failures were
// grouped (one entry per category and message, without code, examples or
// times) reads as it is: ErrorInfo.Messages gives its message.
func readErrors(r io.Reader) ([]loadgen.ErrorInfo, error) {
	var table []loadgen.ErrorInfo
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&table); err != nil {
		return nil, err
	}
	return table, nil
}

// writeTokens writes tokens.csv: one row per token of every sample that
// reported token times, in sequence order.
func writeTokens(w io.Writer, traces iter.Seq2[uint64, []int64]) error {
	if _, err := io.WriteString(w, TokensHeader+"\n"); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	for seq, times := range traces {
		for k, t := range times {
			buf = strconv.AppendUint(buf, seq, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(k), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, t, 10)
			buf = append(buf, '\n')
			if len(buf) > 60<<10 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// readTokens reads tokens.csv. Rows of one sample are consecutive and
// numbered from 0, and samples come in increasing sequence order.
func readTokens(r io.Reader) ([]loadgen.TokenTrace, error) {
	var out []loadgen.TokenTrace
	err := csvRows(r, TokensHeader, func(_ int, f [][]byte) error {
		seq, err := parseU(f[0], "seq_id", 64)
		if err != nil {
			return err
		}
		k, err := parseU(f[1], "token", 32)
		if err != nil {
			return err
		}
		t, err := parseI(f[2], "time_ns")
		if err != nil {
			return err
		}
		if n := len(out); n == 0 || out[n-1].SeqID != seq {
			if n > 0 && seq < out[n-1].SeqID {
				return fmt.Errorf("seq_id %d after %d: rows must be in sequence order", seq, out[n-1].SeqID)
			}
			out = append(out, loadgen.TokenTrace{SeqID: seq})
		}
		tr := &out[len(out)-1]
		if int(k) != len(tr.TimesNs) {
			return fmt.Errorf("token %d of seq_id %d, want token %d", k, seq, len(tr.TimesNs))
		}
		tr.TimesNs = append(tr.TimesNs, t)
		return nil
	})
	return out, err
}
