package bundle

import (
	"io"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// The records file, records.parquet, and the stage times, sample data and
// token times tables are Parquet files, written and read by the codec in
// bundle/internal/parquet (docs/records.md). These are its public face.

// DefaultRowGroupRows is the row group size of records.parquet unless
// RecordWriterOptions says otherwise.
const DefaultRowGroupRows = parquet.DefaultRowGroupRows

// RecordWriterOptions controls a RecordWriter: the row group size and the
// compression of the pages.
type RecordWriterOptions = parquet.RecordWriterOptions

// RecordWriter writes records.parquet as a stream (see NewRecordWriter).
type RecordWriter = parquet.RecordWriter

// NewRecordWriter returns a RecordWriter of records.parquet to w; Close
// ends the file.
func NewRecordWriter(w io.Writer, opts RecordWriterOptions) *RecordWriter {
	return parquet.NewRecordWriter(w, opts)
}

// WriteRecordsParquet writes records.parquet holding recs.
func WriteRecordsParquet(w io.Writer, recs []loadgen.Record, opts RecordWriterOptions) error {
	return parquet.WriteRecords(w, recs, opts)
}

// WriteResultRecordsParquet writes records.parquet for every record of r,
// its row groups encoded on several goroutines.
func WriteResultRecordsParquet(w io.Writer, r *loadgen.Result, opts RecordWriterOptions) error {
	return parquet.WriteResultRecords(w, r, opts)
}

// ReadRecordsParquet reads records.parquet as RecordWriter writes it; a
// bad record is a *RecordsError naming its row.
func ReadRecordsParquet(r io.Reader) ([]loadgen.Record, error) { return parquet.ReadRecords(r) }

// DecodeRecordColumns decodes records.parquet (its bytes, data) one row
// group at a time into columns, calling fn with each, without building the
// records.
func DecodeRecordColumns(data []byte, fn func(*loadgen.RecordColumns) error) error {
	return parquet.DecodeRecordColumns(data, fn)
}
