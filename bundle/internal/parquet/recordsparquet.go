package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"aimeter/bundle/internal/ordered"
	"aimeter/loadgen"
)

// The record file of a format version 2 bundle, records.parquet, is an
// Apache Parquet file with one row per issued sample, in the order of
// records.csv, and these columns (docs/records.md describes them for other
// tools):
//
//	seq_id          INT64 (UINT_64)  required
//	query_id        INT64 (UINT_64)  required
//	sample_index    INT64 (UINT_64)  required
//	scheduled_ns    INT64            optional: null is loadgen.NoTime
//	issued_ns       INT64            optional
//	first_token_ns  INT64            optional
//	completed_ns    INT64            optional
//	tokens          INT64            required
//	status          INT32 (INT_8)    required: 1 ok, 2 error, 3 lost
//
// Every column is DELTA_BINARY_PACKED and its pages zstd-compressed. One
// file holds every pass (a pass is a range of seq_id, in settings.json);
// a row group holds up to RowGroupRows records.

// pqRecord is the schema of records.parquet: the field order is the
// column order, the tags its names and encodings.
type pqRecord struct {
	SeqID        uint64 `parquet:"seq_id,delta"`
	QueryID      uint64 `parquet:"query_id,delta"`
	SampleIndex  uint64 `parquet:"sample_index,delta"`
	ScheduledNs  int64  `parquet:"scheduled_ns,delta,optional"`
	IssuedNs     int64  `parquet:"issued_ns,delta,optional"`
	FirstTokenNs int64  `parquet:"first_token_ns,delta,optional"`
	CompletedNs  int64  `parquet:"completed_ns,delta,optional"`
	Tokens       int64  `parquet:"tokens,delta"`
	Status       int8   `parquet:"status,delta"`
}

// pqRow is what is handed to the Parquet writer: pqRecord with the times
// as pointers, nil for loadgen.NoTime (a null), pointing into the records
// being written. Its schema equals pqRecord's but for the encodings, so the
// writer takes its column-at-a-time path.
type pqRow struct {
	SeqID        uint64 `parquet:"seq_id"`
	QueryID      uint64 `parquet:"query_id"`
	SampleIndex  uint64 `parquet:"sample_index"`
	ScheduledNs  *int64 `parquet:"scheduled_ns"`
	IssuedNs     *int64 `parquet:"issued_ns"`
	FirstTokenNs *int64 `parquet:"first_token_ns"`
	CompletedNs  *int64 `parquet:"completed_ns"`
	Tokens       int64  `parquet:"tokens"`
	Status       int8   `parquet:"status"`
}

// recordsSchema is the schema of records.parquet.
var recordsSchema = parquet.SchemaOf(pqRecord{})

// recordsTable is records.parquet for the page writer and decoder; its
// footer template is pqTemplate's, as the first writer made it.
var recordsTable = func() *pqTable {
	t := newPQTable(RecordsFile, pqRecord{}, nil)
	t.template = pqTemplate
	return t
}()

// Column numbers in recordsSchema.
const (
	colSeqID = iota
	colQueryID
	colSampleIndex
	colScheduled
	colIssued
	colFirstToken
	colCompleted
	colTokens
	colStatus
	numRecordColumns
)

// DefaultRowGroupRows is the number of records in a row group of
// records.parquet unless RecordWriterOptions says otherwise.
const DefaultRowGroupRows = 1 << 16

// RecordWriterOptions configures a RecordWriter.
type RecordWriterOptions struct {
	// RowGroupRows is the most records a row group holds; 0 means
	// DefaultRowGroupRows.
	RowGroupRows int
	// Compression is the codec of the pages: "zstd" (the default, ""),
	// "snappy" or "none".
	Compression string
}

func (o RecordWriterOptions) rowGroupRows() int {
	if o.RowGroupRows <= 0 {
		return DefaultRowGroupRows
	}
	return o.RowGroupRows
}

// codec returns a function that makes a codec of the pages for one
// encoder (a zstd codec holds its own encoder: see ownZstd), and the
// codec's id in the file's metadata.
func (o RecordWriterOptions) codec() (func() compress.Codec, format.CompressionCodec, error) {
	switch o.Compression {
	case "", "zstd":
		return func() compress.Codec { return new(ownZstd) }, format.Zstd, nil
	case "snappy":
		return func() compress.Codec { return &parquet.Snappy }, format.Snappy, nil
	case "none":
		return func() compress.Codec { return &parquet.Uncompressed }, format.Uncompressed, nil
	}
	return nil, 0, fmt.Errorf("unknown compression %q (want zstd, snappy or none)", o.Compression)
}

// RecordWriter writes records.parquet as a stream: each Write adds records
// to the current row group, which is encoded and written out once it holds
// RowGroupRows records, so that memory holds one row group's columns at
// most and never a copy of every record. Close ends the file. A
// RecordWriter is not safe for concurrent use; one goroutine may write
// while others produce the records.
type RecordWriter struct {
	pqFileWriter
	codec   func() compress.Codec
	enc     *pqEncoder
	rowsMax int
	buf     []byte
}

// pqFileWriter writes the row groups of a pqTable's file, as a pqEncoder
// with its codec encoded them, and then its footer.
type pqFileWriter struct {
	w       io.Writer
	table   *pqTable
	codecID format.CompressionCodec
	offset  int64 // bytes written
	groups  []format.RowGroup
	err     error
	closed  bool
}

// NewRecordWriter returns a writer of records.parquet to w. Invalid
// options give an error on the first Write or Close.
func NewRecordWriter(w io.Writer, opts RecordWriterOptions) *RecordWriter {
	rw := &RecordWriter{pqFileWriter: pqFileWriter{w: w, table: recordsTable}, rowsMax: opts.rowGroupRows()}
	codec, id, err := opts.codec()
	if err != nil {
		rw.err = fmt.Errorf("%s: %w", RecordsFile, err)
		return rw
	}
	rw.codec, rw.codecID = codec, id
	return rw
}

// Write appends chunk to the file, in order. It returns the first error
// the writer met, and keeps returning it.
func (rw *RecordWriter) Write(chunk []loadgen.Record) error {
	if rw.err != nil {
		return rw.err
	}
	if rw.closed {
		return errors.New("bundle: Write on a closed RecordWriter")
	}
	if rw.enc == nil {
		rw.enc = newPQEncoder(rw.codec())
	}
	for len(chunk) > 0 {
		n := min(len(chunk), rw.rowsMax-rw.enc.rows())
		rw.enc.appendRecords(chunk[:n])
		chunk = chunk[n:]
		if rw.enc.rows() == rw.rowsMax {
			if err := rw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush ends the current row group, if it holds any record, and writes it.
func (rw *RecordWriter) Flush() error {
	if rw.err != nil {
		return rw.err
	}
	if rw.enc == nil || rw.enc.rows() == 0 {
		return nil
	}
	var g pqGroup
	rw.buf, g, rw.err = rw.enc.encodeRowGroup(rw.buf[:0])
	if rw.err != nil {
		return rw.err
	}
	return rw.writeGroup(rw.buf, g)
}

// writeGroup appends a row group that a pqEncoder with the writer's codec
// encoded.
func (rw *pqFileWriter) writeGroup(data []byte, g pqGroup) error {
	if rw.err != nil {
		return rw.err
	}
	if rw.offset == 0 {
		rw.write([]byte("PAR1"))
	}
	at := rw.offset
	rw.write(data)
	if rw.err == nil {
		rw.groups = append(rw.groups, rowGroupMeta(rw.table, g, at, len(rw.groups), rw.codecID))
	}
	return rw.err
}

func (rw *pqFileWriter) write(b []byte) {
	if rw.err != nil {
		return
	}
	n, err := rw.w.Write(b)
	rw.offset += int64(n)
	rw.err = err
}

// Close writes the last row group and the file's footer. It does not
// close the underlying io.Writer.
func (rw *RecordWriter) Close() error {
	if rw.closed {
		return rw.err
	}
	if err := rw.Flush(); err != nil {
		rw.closed = true
		return err
	}
	return rw.pqFileWriter.close()
}

// close writes the file's footer (and its leading magic, when no row group
// was written).
func (rw *pqFileWriter) close() error {
	rw.closed = true
	if rw.err != nil {
		return rw.err
	}
	if rw.offset == 0 {
		rw.write([]byte("PAR1"))
	}
	f, err := footer(rw.table, rw.groups)
	if err != nil {
		rw.err = err
		return err
	}
	rw.write(f)
	return rw.err
}

// WriteRecords writes records.parquet holding recs.
func WriteRecords(w io.Writer, recs []loadgen.Record, opts RecordWriterOptions) error {
	rw := NewRecordWriter(w, opts)
	if err := rw.Write(recs); err != nil {
		return err
	}
	return rw.Close()
}

// WriteResultRecords writes records.parquet for every record of r
// with the row groups encoded on every core: the records are cut into
// chunks of about RowGroupRows (Result.ColumnChunks), workers each encode
// the next chunk as a row group, and the calling goroutine writes the row
// groups to w in order. At most workers+2 encoded row groups are held at
// once.
func WriteResultRecords(w io.Writer, r *loadgen.Result, opts RecordWriterOptions) error {
	n := max(1, (r.RecordCount()+opts.rowGroupRows()-1)/opts.rowGroupRows())
	return writeParquetChunks(w, r.ColumnChunks(n), opts, defaultWorkers())
}

// encodeChunk encodes the records that fill appends as one row group,
// appended to dst.
func (e *pqEncoder) encodeChunk(dst []byte, fill func(*loadgen.RecordColumns)) ([]byte, pqGroup, error) {
	fill(&e.cols)
	return e.encodeRowGroup(dst)
}

func writeParquetChunks(w io.Writer, chunks []func(*loadgen.RecordColumns), opts RecordWriterOptions, workers int) error {
	rw := NewRecordWriter(w, opts)
	if rw.err != nil {
		return rw.err
	}
	err := ordered.Encode(len(chunks), workers,
		func() func(int, []byte) ([]byte, pqGroup, error) {
			enc := newPQEncoder(rw.codec())
			return func(k int, buf []byte) ([]byte, pqGroup, error) { return enc.encodeChunk(buf, chunks[k]) }
		},
		func(data []byte, g pqGroup) error {
			if g.rows == 0 {
				return nil
			}
			return rw.writeGroup(data, g)
		})
	if err != nil {
		return err
	}
	return rw.Close()
}

// maxRecordsFileSize bounds what ReadRecords reads into memory: a
// billion records at 8 bytes each.
const maxRecordsFileSize = 8 << 30

// ReadRecords reads records.parquet as RecordWriter writes it. The
// file's schema must be recordsSchema (the same columns, types and
// optionality, in the same order), and every status a known one. A
// damaged file gives an error naming the row group and column, never a
// panic; a status out of range a *RecordsError naming the row.
func ReadRecords(r io.Reader) ([]loadgen.Record, error) {
	data, err := readAllLimited(r)
	if err != nil {
		return nil, err
	}
	return decodeRecordsParquet(data, defaultWorkers())
}

// openRecordsParquet opens the records.parquet in data and checks its
// footer, schema and column chunks before anything is decoded.
func openRecordsParquet(data []byte) (*parquet.File, error) {
	return openPQTableDropping(recordsTable, data, nil)
}

// openPQTableDropping opens the file of table t in data and checks its
// footer, schema and column chunks before anything is decoded, calling
// drop, when not nil, after
// the checks of each row group's column chunks: they read every page
// header, and a caller that maps the file lets those pages go as they go,
// so that the checks never hold the whole file.
func openPQTableDropping(t *pqTable, data []byte, drop func()) (f *parquet.File, err error) {
	// The library may panic on a damaged file anywhere on this goroutine
	// (schema comparison included): an error, never a crash.
	defer func() {
		if v := recover(); v != nil {
			f, err = nil, fmt.Errorf("damaged Parquet file: %v", v)
		}
	}()
	if err := checkFooter(data); err != nil {
		if cut := describeCut(t, data); cut != "" {
			return nil, fmt.Errorf("not a whole Parquet file: %s (%w)", cut, err)
		}
		return nil, fmt.Errorf("not a Parquet file (%w)", err)
	}
	err = catchPanic(func() error {
		var err error
		f, err = parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("not a Parquet file (%w)", err)
	}
	if !parquet.EqualNodes(f.Schema(), t.schema) || len(f.Schema().Columns()) != len(t.cols) {
		return nil, fmt.Errorf("schema is %s, want %s", f.Schema(), t.schema)
	}
	if err := checkChunks(t, f.Metadata(), data, drop); err != nil {
		return nil, err
	}
	return f, nil
}

// DecodeRecordColumns decodes the records.parquet in data (as
// RecordWriter writes it) a row group at a time, in order, on the calling
// goroutine: fn receives each row group's records by column, in a
// RecordColumns that is reused for the next row group, and an error from
// fn ends the decoding and is returned. It is the fast way to read a
// record file: no loadgen.Record is built. A damaged file gives an error
// naming the row group and column, never a panic.
func DecodeRecordColumns(data []byte, fn func(*loadgen.RecordColumns) error) error {
	return DecodeRecordColumnsOpened(data, nil, fn)
}

// DecodeRecordColumnsOpened is DecodeRecordColumns calling opened, when
// not nil, after the checks of each row group's column chunks and once
// they are done, before the first row group is decoded: the checks read
// every page header, and a caller that maps the file lets those pages go
// there (the checks then never hold the whole file).
func DecodeRecordColumnsOpened(data []byte, opened func(), fn func(*loadgen.RecordColumns) error) error {
	f, err := openPQTableDropping(recordsTable, data, opened)
	if err != nil {
		return err
	}
	if opened != nil {
		opened()
	}
	md := f.Metadata()
	dec := &pqDecoder{data: data}
	var rc loadgen.RecordColumns
	var cols rowGroupColumns
	var recs []loadgen.Record
	at := 0
	for g, rg := range f.RowGroups() {
		err := dec.decodeGroupSafe(&md.RowGroups[g], &rc)
		if errors.Is(err, errOtherPages) {
			recs = slices.Grow(recs[:0], int(rg.NumRows()))[:rg.NumRows()]
			if err = decodeRowGroup(rg, recs, &cols); err == nil {
				err = checkStatuses(recs)
			}
			rc.Reset()
			rc.Append(recs...)
		}
		if err != nil {
			return groupError(err, g, at)
		}
		if err := fn(&rc); err != nil {
			return err
		}
		at += rc.Len()
	}
	return nil
}

// ReadRecordTable is ReadRecords into a loadgen.RecordTable: the row
// groups are decoded one at a time into the table's compact columns, so
// that no []loadgen.Record of the whole file is ever held. The checks and
// errors are those of ReadRecords.
func ReadRecordTable(r io.Reader) (*loadgen.RecordTable, error) {
	data, err := readAllLimited(r)
	if err != nil {
		return nil, err
	}
	f, err := openRecordsParquet(data)
	if err != nil {
		return nil, err
	}
	total := 0
	for i, rg := range f.RowGroups() {
		n := rg.NumRows()
		if n < 0 || n > int64(len(data))*64 {
			// A delta-packed value takes a bit at least, a null a bit.
			return nil, fmt.Errorf("row group %d: %d rows in %d bytes of file", i, n, len(data))
		}
		total += int(n)
	}
	t := loadgen.NewRecordTable(total)
	if err := DecodeRecordColumns(data, func(c *loadgen.RecordColumns) error {
		t.AppendColumns(c)
		return nil
	}); err != nil {
		return nil, err
	}
	return t, nil
}

// groupError is err of row group g, whose first record is record at of
// the file.
func groupError(err error, g, at int) error {
	if se, ok := err.(*statusError); ok {
		return &RecordsError{File: RecordsFile, Line: at + se.row + 1, Field: "status",
			Msg: fmt.Sprintf("unknown status %d (row group %d; want 1 ok, 2 error or 3 lost)", int8(se.status), g)}
	}
	return fmt.Errorf("row group %d: %w", g, err)
}

// decodeRecordsParquet decodes the records.parquet in data, the row
// groups spread over workers goroutines.
func decodeRecordsParquet(data []byte, workers int) (recs []loadgen.Record, err error) {
	f, err := openRecordsParquet(data)
	if err != nil {
		return nil, err
	}
	groups := f.RowGroups()
	starts := make([]int, len(groups)+1)
	for i, rg := range groups {
		n := rg.NumRows()
		if n < 0 || n > int64(len(data))*64 {
			// A delta-packed value takes a bit at least, a null a bit.
			return nil, fmt.Errorf("row group %d: %d rows in %d bytes of file", i, n, len(data))
		}
		starts[i+1] = starts[i] + int(n)
	}
	total := starts[len(groups)]
	if total == 0 {
		return nil, nil
	}
	// Every element is written by decodeRowGroup: no need to clear them.
	recs = slices.Grow([]loadgen.Record(nil), total)[:total]
	errs := make([]error, len(groups))
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	md := f.Metadata()
	for range max(1, min(workers, len(groups))) {
		wg.Go(func() {
			var cols rowGroupColumns
			var rc loadgen.RecordColumns
			dec := &pqDecoder{data: data}
			for !failed.Load() {
				g := int(next.Add(1) - 1)
				if g >= len(groups) {
					return
				}
				out := recs[starts[g]:starts[g+1]]
				err := dec.decodeGroupSafe(&md.RowGroups[g], &rc)
				switch {
				case err == nil:
					assembleRecords(out, &rc)
				case errors.Is(err, errOtherPages):
					// Another writer's pages: the library reads them.
					err = decodeRowGroup(groups[g], out, &cols)
					if err == nil {
						err = checkStatuses(out)
					}
				}
				if err != nil {
					errs[g] = groupError(err, g, starts[g])
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// assembleRecords writes the records of c into out, which has room for
// exactly them.
func assembleRecords(out []loadgen.Record, c *loadgen.RecordColumns) {
	n := len(out)
	seq, query, index := c.SeqID[:n], c.QueryID[:n], c.SampleIndex[:n]
	sched, issued, first, done := c.ScheduledNs[:n], c.IssuedNs[:n], c.FirstTokenNs[:n], c.CompletedNs[:n]
	tokens, status := c.Tokens[:n], c.Status[:n]
	for i := range out {
		out[i] = loadgen.Record{SeqID: seq[i], QueryID: query[i], SampleIndex: index[i],
			ScheduledNs: sched[i], IssuedNs: issued[i], FirstTokenNs: first[i], CompletedNs: done[i],
			Tokens: tokens[i], Status: status[i]}
	}
}

// checkStatuses returns a *statusError for the first record of recs whose
// status is unknown.
func checkStatuses(recs []loadgen.Record) error {
	for i := range recs {
		if s := recs[i].Status; s < loadgen.StatusOK || s > loadgen.StatusLost {
			return &statusError{row: i, status: int32(int8(s))}
		}
	}
	return nil
}

// checkChunks refuses, before anything is decoded, column chunks that no
// RecordWriter writes and that would make the Parquet library allocate
// without bound on a damaged file: a codec other than those RecordWriter
// uses (a corrupted codec field once sent the lz4 decoder growing its
// buffer to gigabytes), or more uncompressed bytes than the rows can need
// (an int64 a row in plain encoding, and a page header per 4 KiB).
func checkChunks(t *pqTable, md *format.FileMetaData, data []byte, drop func()) error {
	fileSize := len(data)
	total := int64(0)
	for g, rg := range md.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > int64(fileSize)*64 {
			return fmt.Errorf("row group %d: %d rows in %d bytes of file", g, rg.NumRows, fileSize)
		}
		total += rg.NumRows
		if total > int64(fileSize)*64 {
			// A delta-packed value takes a bit at least, a null a bit.
			return fmt.Errorf("row group %d: %d rows so far in %d bytes of file", g, total, fileSize)
		}
		for c, cc := range rg.Columns {
			name := t.columnName(c)
			switch cc.MetaData.Codec {
			case format.Uncompressed, format.Snappy, format.Zstd:
			default:
				return fmt.Errorf("row group %d: column %s: compression %v, which aimeter does not write", g, name, cc.MetaData.Codec)
			}
			limit := 1024 + 16*rg.NumRows
			if cc.MetaData.TotalUncompressedSize < 0 || cc.MetaData.TotalUncompressedSize > limit {
				return fmt.Errorf("row group %d: column %s: %d bytes uncompressed for %d rows", g, name, cc.MetaData.TotalUncompressedSize, rg.NumRows)
			}
			start := cc.MetaData.DataPageOffset
			if d := cc.MetaData.DictionaryPageOffset; d > 0 && d < start {
				start = d
			}
			if err := checkPages(data, start, start+cc.MetaData.TotalCompressedSize, limit); err != nil {
				return fmt.Errorf("row group %d: column %s: %w", g, name, err)
			}
		}
		if drop != nil {
			drop()
		}
	}
	// The footer's row count is what a reader sizes its memory by before
	// it decodes (the tester's service admits an upload by it): it must be
	// the rows the groups hold.
	if md.NumRows != total {
		return fmt.Errorf("the footer says %d rows, but its row groups hold %d", md.NumRows, total)
	}
	return nil
}

// catchPanic runs f and turns a panic of the Parquet library, which it may
// raise on a corrupted file, into an error.
func catchPanic(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("corrupted data: %v", v)
		}
	}()
	return f()
}

// rowGroupColumns is a worker's scratch space: one row group's columns,
// each as int64 (unsigned ids as their bits, nulls as loadgen.NoTime).
type rowGroupColumns [numRecordColumns][]int64

// decodeRowGroup decodes the columns of rg into cols, then the records
// into recs, which has room for exactly its rows: each column is decoded
// into a short slice that stays in the cache, and the records are written
// once, in order.
func decodeRowGroup(rg parquet.RowGroup, recs []loadgen.Record, cols *rowGroupColumns) error {
	n := len(recs)
	for c, cc := range rg.ColumnChunks() {
		if c >= numRecordColumns {
			return fmt.Errorf("%d columns, want %d", c+1, numRecordColumns)
		}
		if cap(cols[c]) < n {
			cols[c] = make([]int64, n)
		}
		col := cols[c][:n]
		if err := catchPanic(func() error { return decodeColumn(cc, c, col) }); err != nil {
			return fmt.Errorf("column %s: %w", recordsSchema.Columns()[c][0], err)
		}
	}
	seq, query, index := cols[colSeqID][:n], cols[colQueryID][:n], cols[colSampleIndex][:n]
	sched, issued, first, done := cols[colScheduled][:n], cols[colIssued][:n], cols[colFirstToken][:n], cols[colCompleted][:n]
	tokens, status := cols[colTokens][:n], cols[colStatus][:n]
	for i := range recs {
		recs[i] = loadgen.Record{SeqID: uint64(seq[i]), QueryID: uint64(query[i]), SampleIndex: uint64(index[i]),
			ScheduledNs: sched[i], IssuedNs: issued[i], FirstTokenNs: first[i], CompletedNs: done[i],
			Tokens: tokens[i], Status: loadgen.Status(status[i])}
	}
	return nil
}

// decodeColumn decodes one column chunk into out, which has room for
// exactly its values.
func decodeColumn(cc parquet.ColumnChunk, col int, out []int64) error {
	pages := cc.Pages()
	defer pages.Close()
	at := 0
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		err = decodePage(p, col, out[at:])
		at += int(p.NumRows())
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
	if at != len(out) {
		return fmt.Errorf("%d values, want %d", at, len(out))
	}
	return nil
}

// decodePage decodes page p of column col into the first p.NumRows()
// values of out.
func decodePage(p parquet.Page, col int, out []int64) error {
	n := int(p.NumRows())
	if n > len(out) || n < 0 {
		return fmt.Errorf("a page of %d values overruns the row group", n)
	}
	out = out[:n]
	vals := p.Data()
	if col == colStatus {
		if vals.Kind() != encoding.Int32 {
			return fmt.Errorf("page of %s values", vals.Kind())
		}
		v := vals.Int32()
		if len(v) != n {
			return fmt.Errorf("%d values for %d rows", len(v), n)
		}
		for i, s := range v {
			if s < -128 || s > 127 {
				s = 0 // out of the INT_8 range: an unknown status
			}
			out[i] = int64(s)
		}
		return nil
	}
	if vals.Kind() != encoding.Int64 {
		return fmt.Errorf("page of %s values", vals.Kind())
	}
	v := vals.Int64()
	defs := p.DefinitionLevels()
	if len(v) == n && (len(defs) == 0 || p.NumNulls() == 0) {
		copy(out, v)
		return nil
	}
	if col < colScheduled || col > colCompleted {
		return fmt.Errorf("%d values for %d rows of a required column", len(v), n)
	}
	if len(defs) != n {
		return fmt.Errorf("%d definition levels for %d rows", len(defs), n)
	}
	k := 0
	for i := range out {
		out[i] = loadgen.NoTime
		if defs[i] != 0 {
			if k == len(v) {
				return fmt.Errorf("%d values for %d rows of which %d are null", len(v), n, p.NumNulls())
			}
			out[i] = v[k]
			k++
		}
	}
	if k != len(v) {
		return fmt.Errorf("%d values for %d non-null rows", len(v), k)
	}
	return nil
}

// RecordRows is the number of records of the records.parquet in data, read
// from its footer (its row groups' counts) after the checks
// DecodeRecordColumns makes before decoding; drop, when not nil, is called
// as DecodeRecordColumnsOpened calls opened.
func RecordRows(data []byte, drop func()) (int, error) {
	f, err := openPQTableDropping(recordsTable, data, drop)
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for _, rg := range f.Metadata().RowGroups {
		n += rg.NumRows
	}
	return int(n), nil
}
