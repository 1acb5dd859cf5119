package parquet

import "aimeter/loadgen"

// EncodedGroup is a row group of records.parquet, encoded by a
// GroupEncoder, for a RecordWriter to append.
type EncodedGroup struct {
	data []byte
	g    pqGroup
}

// Rows is the number of records in the group.
func (e EncodedGroup) Rows() int64 { return e.g.rows }

// GroupEncoder encodes row groups of records.parquet with the default
// options, one at a time, reusing its scratch space; several encode at
// once for a RecordWriter fed in order (bundle.RecordStream).
type GroupEncoder struct{ enc *pqEncoder }

// NewGroupEncoder returns an encoder of row groups with the default
// options (zstd).
func NewGroupEncoder() *GroupEncoder {
	codec, _, _ := RecordWriterOptions{}.codec()
	return &GroupEncoder{enc: newPQEncoder(codec())}
}

// Encode encodes the records in cols as one row group. It takes cols's
// columns, and leaves cols with empty ones to reuse.
func (e *GroupEncoder) Encode(cols *loadgen.RecordColumns) (EncodedGroup, error) {
	e.enc.cols, *cols = *cols, e.enc.cols
	data, g, err := e.enc.encodeRowGroup(nil)
	return EncodedGroup{data, g}, err
}

// WriteGroup appends g, encoded with the default options, to the file.
func (rw *RecordWriter) WriteGroup(g EncodedGroup) error { return rw.writeGroup(g.data, g.g) }
