package parquet

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/parquet-go/parquet-go"

	"aimeter/loadgen"
)

// From format version 3 the per-sample files that only some runs have are
// Apache Parquet files too, written by the page writer of records.parquet
// (pqEncoder) and read by its decoder (pqDecoder), with the columns of the
// CSV files they replace (docs/records.md describes them for other tools):
//
//	stages.parquet   seq_id UINT_64, clock STRING ("test" or "sut"),
//	                 node UINT_32, received_ns … result_sent_ns INT64
//	                 optional (null: not measured); one row per record
//	samples.parquet  seq_id UINT_64, request_bytes INT64, response_bytes
//	                 INT64, node UINT_32, error UINT_32; one row per record
//	tokens.parquet   seq_id UINT_64, token UINT_32, time_ns INT64; one row
//	                 per token
//
// Integer columns are DELTA_BINARY_PACKED, clock PLAIN; every page is
// zstd-compressed, with its CRC and statistics, in row groups of up to
// DefaultRowGroupRows rows.

// pqStage is the schema of stages.parquet.
type pqStage struct {
	SeqID              uint64 `parquet:"seq_id,delta"`
	Clock              string `parquet:"clock,plain"`
	Node               uint32 `parquet:"node,delta"`
	ReceivedNs         int64  `parquet:"received_ns,delta,optional"`
	PreprocessStartNs  int64  `parquet:"preprocess_start_ns,delta,optional"`
	PreprocessEndNs    int64  `parquet:"preprocess_end_ns,delta,optional"`
	InferenceStartNs   int64  `parquet:"inference_start_ns,delta,optional"`
	InferenceEndNs     int64  `parquet:"inference_end_ns,delta,optional"`
	PostprocessStartNs int64  `parquet:"postprocess_start_ns,delta,optional"`
	PostprocessEndNs   int64  `parquet:"postprocess_end_ns,delta,optional"`
	ResultSentNs       int64  `parquet:"result_sent_ns,delta,optional"`
}

// pqSample is the schema of samples.parquet.
type pqSample struct {
	SeqID         uint64 `parquet:"seq_id,delta"`
	RequestBytes  int64  `parquet:"request_bytes,delta"`
	ResponseBytes int64  `parquet:"response_bytes,delta"`
	Node          uint32 `parquet:"node,delta"`
	Error         uint32 `parquet:"error,delta"`
}

// pqToken is the schema of tokens.parquet.
type pqToken struct {
	SeqID  uint64 `parquet:"seq_id,delta"`
	Token  uint32 `parquet:"token,delta"`
	TimeNs int64  `parquet:"time_ns,delta"`
}

// clockNames are the values of stages.parquet's clock column, in the order
// of loadgen.ClockKind.
var clockNames = []string{"test", "sut"}

var (
	stagesTable  = newPQTable(StagesFile, pqStage{}, map[string][]string{"clock": clockNames})
	samplesTable = newPQTable(SamplesFile, pqSample{}, nil)
	tokensTable  = newPQTable(TokensFile, pqToken{}, nil)
)

// Columns of stagesTable.
const (
	stSeqID = iota
	stClock
	stNode
	stReceived // the first of the eight times, in StageTimes' order
)

// stageTimes are the eight times of st, in the order of the columns.
func stageTimes(st *loadgen.StageTimes) [8]*int64 {
	return [8]*int64{&st.Received, &st.PreprocessStart, &st.PreprocessEnd, &st.InferenceStart,
		&st.InferenceEnd, &st.PostprocessStart, &st.PostprocessEnd, &st.ResultSent}
}

// tableWriter writes the file of a pqTable as a stream: rows are appended
// to its columns (cols), and every rowsMax rows make a row group, encoded
// and written at once.
type tableWriter struct {
	pqFileWriter
	enc     *pqEncoder
	cols    [][]int64
	rowsMax int
	buf     []byte
}

func newTableWriter(w io.Writer, t *pqTable, rowsMax int) *tableWriter {
	tw := &tableWriter{pqFileWriter: pqFileWriter{w: w, table: t}, rowsMax: rowsMax, cols: make([][]int64, len(t.cols))}
	codec, id, err := RecordWriterOptions{}.codec()
	if err != nil {
		tw.err = err
		return tw
	}
	tw.codecID, tw.enc = id, newPQEncoder(codec())
	return tw
}

// endRow ends the row just appended to every column, writing the row
// group when it is full.
func (tw *tableWriter) endRow() error {
	if len(tw.cols[0]) >= tw.rowsMax {
		return tw.flush()
	}
	return tw.err
}

// flush writes the rows appended since the last row group as one.
func (tw *tableWriter) flush() error {
	n := len(tw.cols[0])
	if tw.err != nil || n == 0 {
		return tw.err
	}
	var g pqGroup
	tw.buf, g, tw.err = tw.enc.encodeGroup(tw.buf[:0], tw.table, n, func(c int) []int64 { return tw.cols[c] })
	for c := range tw.cols {
		tw.cols[c] = tw.cols[c][:0]
	}
	if tw.err != nil {
		return tw.err
	}
	return tw.writeGroup(tw.buf, g)
}

// close writes the last row group and the footer.
func (tw *tableWriter) close() error {
	if err := tw.flush(); err != nil {
		return err
	}
	return tw.pqFileWriter.close()
}

// WriteStages writes stages.parquet: one row per record, in the
// order of records, with the stage times at the same position (as
// WriteStages writes stages.csv).
func WriteStages(w io.Writer, records iter.Seq[loadgen.Record], stages iter.Seq[loadgen.StageTimes], rowsMax int) error {
	tw := newTableWriter(w, stagesTable, rowsMax)
	next, stop := iter.Pull(stages)
	defer stop()
	for rec := range records {
		st, ok := next()
		if !ok {
			return fmt.Errorf("stage times end before record seq_id %d", rec.SeqID)
		}
		c := tw.cols
		c[stSeqID] = append(c[stSeqID], int64(rec.SeqID))
		clock := int64(0)
		if st.Clock == loadgen.SUTClock {
			clock = 1
		}
		c[stClock] = append(c[stClock], clock)
		c[stNode] = append(c[stNode], int64(st.Node))
		for k, p := range stageTimes(&st) {
			c[stReceived+k] = append(c[stReceived+k], *p)
		}
		if err := tw.endRow(); err != nil {
			return err
		}
	}
	return tw.close()
}

// WriteSamples writes samples.parquet: one row per record, in
// record order (as writeSamples writes samples.csv).
func WriteSamples(w io.Writer, recs iter.Seq[loadgen.Record], rowsMax int) error {
	tw := newTableWriter(w, samplesTable, rowsMax)
	for r := range recs {
		c := tw.cols
		c[0] = append(c[0], int64(r.SeqID))
		c[1] = append(c[1], r.RequestBytes)
		c[2] = append(c[2], r.ResponseBytes)
		c[3] = append(c[3], int64(r.Node))
		c[4] = append(c[4], int64(r.Error))
		if err := tw.endRow(); err != nil {
			return err
		}
	}
	return tw.close()
}

// WriteTokens writes tokens.parquet: one row per token of every
// sample that reported token times, in sequence order (as writeTokens
// writes tokens.csv).
func WriteTokens(w io.Writer, traces iter.Seq2[uint64, []int64], rowsMax int) error {
	tw := newTableWriter(w, tokensTable, rowsMax)
	for seq, times := range traces {
		if uint64(len(times)) > 1<<32 {
			return fmt.Errorf("seq_id %d: %d tokens, more than a UINT_32 token number holds", seq, len(times))
		}
		for k, t := range times {
			c := tw.cols
			c[0] = append(c[0], int64(seq))
			c[1] = append(c[1], int64(k))
			c[2] = append(c[2], t)
			if err := tw.endRow(); err != nil {
				return err
			}
		}
	}
	return tw.close()
}

// maxTableGroupRows bounds the rows of one row group of stages, samples
// and tokens.parquet that a reader accepts (aimeter writes
// DefaultRowGroupRows), so that a damaged row count cannot make it
// allocate gigabytes before the pages say otherwise.
const maxTableGroupRows = 1 << 24

// decodeTable decodes the file of table t in data a row group at a time,
// in order: fn receives each row group's columns (n rows each; reused for
// the next row group) and the row of the file of its first row, from 0.
// Errors name the row group and column. A row group whose pages aimeter's
// writer does not write (another writer's file with the same schema) is
// read by the Parquet library instead. drop, when not nil, is called as
// openPQTableDropping calls it while the file is checked, and after each
// row group (a caller that maps the file lets go of the pages read).
func decodeTable(t *pqTable, data []byte, drop func(), fn func(cols [][]int64, n, first int) error) error {
	f, err := openPQTableDropping(t, data, drop)
	if err != nil {
		return err
	}
	md := f.Metadata()
	dec := &pqDecoder{data: data}
	cols := make([][]int64, len(t.cols))
	first := 0
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if rg.NumRows > maxTableGroupRows {
			return fmt.Errorf("row group %d: %d rows, more than the %d aimeter reads in one", g, rg.NumRows, maxTableGroupRows)
		}
		if len(rg.Columns) != len(t.cols) {
			return fmt.Errorf("row group %d: %d columns, want %d", g, len(rg.Columns), len(t.cols))
		}
		n := int(rg.NumRows)
		for c := range t.cols {
			cols[c] = resize(cols[c], n)
		}
		for c := range t.cols {
			err := catchPanic(func() error { return dec.decodeChunk(&rg.Columns[c].MetaData, &t.cols[c], n, cols[c], nil) })
			if errors.Is(err, errOtherPages) {
				// Another writer's pages: the library reads the rows.
				if err := catchPanic(func() error { return decodeRowsByLibrary(t, f.RowGroups()[g], cols, n) }); err != nil {
					return fmt.Errorf("row group %d: %w", g, err)
				}
				break
			}
			if err != nil {
				return fmt.Errorf("row group %d: column %s: %w", g, t.cols[c].name, err)
			}
		}
		if drop != nil {
			drop()
		}
		if err := fn(cols, n, first); err != nil {
			return fmt.Errorf("row group %d: %w", g, err)
		}
		first += n
	}
	return nil
}

// decodeRowsByLibrary decodes the n rows of row group rg of table t into
// cols with the Parquet library's row reader, which reads any page and
// encoding (a file of another writer with t's schema): slower than
// pqDecoder, and used only where it refuses the pages.
func decodeRowsByLibrary(t *pqTable, rg parquet.RowGroup, cols [][]int64, n int) error {
	rows := rg.Rows()
	defer rows.Close()
	buf := make([]parquet.Row, 256)
	i := 0
	for {
		k, err := rows.ReadRows(buf)
		for _, row := range buf[:k] {
			if i >= n {
				return fmt.Errorf("more than the %d rows of the row group", n)
			}
			if len(row) != len(t.cols) {
				return fmt.Errorf("row %d: %d values, want %d", i+1, len(row), len(t.cols))
			}
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(t.cols) {
					return fmt.Errorf("row %d: a value of column %d", i+1, c)
				}
				spec := &t.cols[c]
				switch {
				case v.IsNull():
					if !spec.optional {
						return fmt.Errorf("row %d: column %s: null in a required column", i+1, spec.name)
					}
					cols[c][i] = loadgen.NoTime
				case spec.kind == pqEnum:
					k := slices.Index(spec.enum, string(v.ByteArray()))
					if k < 0 {
						return fmt.Errorf("row %d: column %s: %q is none of %q", i+1, spec.name, v.ByteArray(), spec.enum)
					}
					cols[c][i] = int64(k)
				case spec.kind == pqInt32 && spec.unsigned:
					cols[c][i] = int64(v.Uint32())
				case spec.kind == pqInt32:
					cols[c][i] = int64(v.Int32())
				default:
					cols[c][i] = v.Int64()
				}
			}
			i++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if i != n {
		return fmt.Errorf("%d rows, want %d", i, n)
	}
	return nil
}

// readAllLimited reads r whole, refusing more than maxRecordsFileSize
// bytes.
func readAllLimited(r io.Reader) ([]byte, error) {
	// A reader that knows its size (bundle's files do) gets one buffer
	// of that size, not io.ReadAll's growing ones.
	var data []byte
	if sz, ok := r.(interface{ Size() int64 }); ok {
		if n := sz.Size(); n >= 0 && n <= maxRecordsFileSize {
			data = make([]byte, 0, n+1) // +1: the read that finds the end
		}
	}
	data, err := readAllInto(data, io.LimitReader(r, maxRecordsFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRecordsFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxRecordsFileSize)
	}
	return data, nil
}

// readAllInto is io.ReadAll appending to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// ReadStages reads stages.parquet back: the seq_id of each row and
// its stage times (as ReadStages reads stages.csv).
func ReadStages(r io.Reader) ([]uint64, []loadgen.StageTimes, error) {
	data, err := readAllLimited(r)
	if err != nil {
		return nil, nil, err
	}
	var seqs []uint64
	var out []loadgen.StageTimes
	err = decodeTable(stagesTable, data, nil, func(c [][]int64, n, _ int) error {
		for i := range n {
			st := loadgen.NoStages
			st.Clock = loadgen.ClockKind(c[stClock][i])
			st.Node = uint32(c[stNode][i])
			for k, p := range stageTimes(&st) {
				*p = c[stReceived+k][i]
			}
			seqs = append(seqs, uint64(c[stSeqID][i]))
			out = append(out, st)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return seqs, out, nil
}

// SampleRow is one row of samples.parquet: a record's sample data.
type SampleRow struct {
	SeqID                       uint64
	RequestBytes, ResponseBytes int64
	Node, Error                 uint32
}

// DecodeSamples decodes samples.parquet in data a row group at a time,
// in the file's order: fn receives each row group's rows (reused for the
// next row group) and the row of the file of the first, from 0. drop,
// when not nil, is called after each row group (the caller lets go of the
// pages read). An error from fn ends it and is returned, naming the row
// group.
func DecodeSamples(data []byte, drop func(), fn func(rows []SampleRow, first int) error) error {
	var rows []SampleRow
	return decodeTable(samplesTable, data, drop, func(c [][]int64, n, first int) error {
		rows = resize(rows, n)
		for i := range n {
			rows[i] = SampleRow{SeqID: uint64(c[0][i]), RequestBytes: c[1][i], ResponseBytes: c[2][i], Node: uint32(c[3][i]), Error: uint32(c[4][i])}
		}
		return fn(rows, first)
	})
}

// ReadSamples reads samples.parquet into the records of t, matching rows
// by sequence id (as readSamples reads samples.csv). An error index must
// name an entry of the error table (nErrors entries).
func ReadSamples(r io.Reader, t *loadgen.RecordTable, nErrors int) error {
	data, err := readAllLimited(r)
	if err != nil {
		return err
	}
	find := t.Finder()
	return DecodeSamples(data, nil, func(rows []SampleRow, first int) error {
		for i, row := range rows {
			k, ok := find(row.SeqID)
			if !ok {
				return fmt.Errorf("row %d: seq_id %d is not in the records", first+i+1, row.SeqID)
			}
			if row.Error > uint32(nErrors) {
				return fmt.Errorf("row %d: field error: %d, but %s has %d entries", first+i+1, row.Error, ErrorsFile, nErrors)
			}
			t.SetSampleData(k, row.RequestBytes, row.ResponseBytes, row.Node, row.Error)
		}
		return nil
	})
}

// DecodeTokens decodes tokens.parquet in data in the file's order and
// calls fn with each sample's sequence id and token times, checking them
// as ReadTokens does: rows of one sample are consecutive and numbered from
// 0, and samples come in increasing sequence order. The times are a slice
// fn must not keep (it is reused). drop, when not nil, is called after
// each row group. It holds one row group and one sample's times at a
// time.
func DecodeTokens(data []byte, drop func(), fn func(seq uint64, times []int64) error) error {
	var times []int64
	var seq uint64
	have := false
	err := decodeTable(tokensTable, data, drop, func(c [][]int64, n, first int) error {
		for i := range n {
			s, k, t := uint64(c[0][i]), c[1][i], c[2][i]
			if !have || s != seq {
				if have && s < seq {
					return fmt.Errorf("row %d: seq_id %d after %d: rows must be in sequence order", first+i+1, s, seq)
				}
				if have {
					if err := fn(seq, times); err != nil {
						return err
					}
				}
				seq, have, times = s, true, times[:0]
			}
			if k != int64(len(times)) {
				return fmt.Errorf("row %d: token %d of seq_id %d, want token %d", first+i+1, k, s, len(times))
			}
			times = append(times, t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if have {
		return fn(seq, times)
	}
	return nil
}

// ReadTokens reads tokens.parquet (as readTokens reads tokens.csv):
// rows of one sample are consecutive and numbered from 0, and samples come
// in increasing sequence order.
func ReadTokens(r io.Reader) ([]loadgen.TokenTrace, error) {
	data, err := readAllLimited(r)
	if err != nil {
		return nil, err
	}
	// Every token time in one slice (the traces' TimesNs are cut from it
	// once it is whole): no slice per sample growing a token at a time.
	var out []loadgen.TokenTrace
	var flat []int64
	var ends []int // where the times of out[i] end in flat
	err = DecodeTokens(data, nil, func(seq uint64, times []int64) error {
		out = append(out, loadgen.TokenTrace{SeqID: seq})
		flat = append(flat, times...)
		ends = append(ends, len(flat))
		return nil
	})
	if err != nil {
		return nil, err
	}
	start := 0
	for i := range out {
		out[i].TimesNs = flat[start:ends[i]:ends[i]]
		start = ends[i]
	}
	return out, nil
}
