package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"aimeter/loadgen"
)

// records.parquet is encoded a column at a time: a row group's records are
// cut into one []int64 per column (appendRecords), then each column is
// delta-packed, compressed and written as one DATA_PAGE_V2 with its CRC and
// min/max statistics (encodeRowGroup), and the footer lists the row groups
// (footer). The Parquet library provides the encodings, the codecs, the
// Thrift protocol and the schema; it does not see the records, which its
// row-at-a-time writer handled at about 150 ns each.

// pqTemplate is the footer of a records.parquet with no row group, as the
// Parquet library writes it for recordsSchema: its schema elements, column
// orders and created_by are those of every file aimeter writes.
var pqTemplate = sync.OnceValues(func() (*format.FileMetaData, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqRow](&buf, recordsSchema, parquet.CreatedBy("aimeter", "", ""))
	if err := w.Close(); err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	md := *f.Metadata()
	if len(md.Schema) != numRecordColumns+1 {
		return nil, fmt.Errorf("records schema has %d elements, want %d", len(md.Schema), numRecordColumns+1)
	}
	return &md, nil
})

// pqChunk is the metadata of one column chunk of an encoded row group;
// offset is from the start of the row group's bytes.
type pqChunk struct {
	offset       int64
	uncompressed int64 // page header and page, uncompressed
	compressed   int64 // page header and page as written
	nulls        int64
	min, max     int64 // values, or an enum column's codes
	hasStats     bool
}

// pqGroup is an encoded row group: its bytes are in the encoder's output.
type pqGroup struct {
	rows   int64
	size   int64 // bytes
	chunks []pqChunk
}

// pqEncoder encodes row groups of records.parquet. Its buffers are reused
// from one row group to the next; it is not safe for concurrent use.
type pqEncoder struct {
	codec  compress.Codec
	cols   loadgen.RecordColumns // the row group being filled
	i64    []int64               // an unsigned column as int64
	vals   []int64               // the non-null values of an optional column
	st32   []int32
	levels []uint8
	lev    []byte // the definition levels, encoded
	page   []byte // the values, encoded
	comp   []byte // the values, encoded and compressed
	hdr    bytes.Buffer
	thrift *thrift.Encoder
}

func newPQEncoder(codec compress.Codec) *pqEncoder {
	e := &pqEncoder{codec: codec}
	e.thrift = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&e.hdr))
	return e
}

// rows is the number of records appended since the last encodeRowGroup.
func (e *pqEncoder) rows() int { return e.cols.Len() }

// appendRecords adds recs to the current row group.
func (e *pqEncoder) appendRecords(recs []loadgen.Record) { e.cols.Append(recs...) }

// column returns column c of the current row group as int64 (unsigned
// ids as their bits, statuses as numbers).
func (e *pqEncoder) column(c int) []int64 {
	var u []uint64
	switch c {
	case colSeqID:
		u = e.cols.SeqID
	case colQueryID:
		u = e.cols.QueryID
	case colSampleIndex:
		u = e.cols.SampleIndex
	case colScheduled:
		return e.cols.ScheduledNs
	case colIssued:
		return e.cols.IssuedNs
	case colFirstToken:
		return e.cols.FirstTokenNs
	case colCompleted:
		return e.cols.CompletedNs
	case colTokens:
		return e.cols.Tokens
	case colStatus:
		e.i64 = e.i64[:0]
		for _, s := range e.cols.Status {
			e.i64 = append(e.i64, int64(s))
		}
		return e.i64
	}
	// The same bits as int64 (what int64(v) gives, value by value), read
	// in place: a copy of three columns cost a tenth of the encoding.
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(u))), len(u))
}

// encodeRowGroup appends the row group of the records appended so far to
// dst, and starts a new one.
func (e *pqEncoder) encodeRowGroup(dst []byte) ([]byte, pqGroup, error) {
	dst, g, err := e.encodeGroup(dst, recordsTable, e.rows(), e.column)
	e.cols.Reset()
	return dst, g, err
}

// encodeGroup appends a row group of table t to dst: n rows, whose column
// c is column(c).
func (e *pqEncoder) encodeGroup(dst []byte, t *pqTable, n int, column func(c int) []int64) ([]byte, pqGroup, error) {
	g := pqGroup{rows: int64(n), chunks: make([]pqChunk, len(t.cols))}
	start := len(dst)
	for c := range t.cols {
		col := column(c)
		if len(col) != n {
			return dst[:start], pqGroup{}, fmt.Errorf("column %s: %d values for %d rows", t.cols[c].name, len(col), n)
		}
		ch, out, err := e.encodeColumn(dst, &t.cols[c], col)
		if err != nil {
			return dst[:start], pqGroup{}, fmt.Errorf("column %s: %w", t.cols[c].name, err)
		}
		ch.offset = int64(len(dst) - start)
		g.chunks[c] = ch
		dst = out
	}
	g.size = int64(len(dst) - start)
	return dst, g, nil
}

var deltaEncoding delta.BinaryPackedEncoding

// encodeColumn appends the page of column spec, whose values are col,
// header first, to dst.
func (e *pqEncoder) encodeColumn(dst []byte, spec *pqColumn, col []int64) (pqChunk, []byte, error) {
	var ch pqChunk
	values := col
	e.lev = e.lev[:0]
	if spec.optional {
		for _, v := range col {
			if v == loadgen.NoTime {
				ch.nulls++
			}
		}
		e.levels = slices.Grow(e.levels[:0], len(col))[:len(col)]
		switch ch.nulls {
		case 0, int64(len(col)):
			// No nulls (a run's completions, mostly) or only nulls (first
			// tokens of a run without them): one level for every row,
			// and the values as they are, without a copy.
			if ch.nulls == 0 {
				fillOnes(e.levels)
			} else {
				clear(e.levels)
				values = col[:0]
			}
		default:
			e.vals = e.vals[:0]
			for i, v := range col {
				if v == loadgen.NoTime {
					e.levels[i] = 0
					continue
				}
				e.levels[i] = 1
				e.vals = append(e.vals, v)
			}
			values = e.vals
		}
		var err error
		lev := rle.Encoding{BitWidth: 1}
		// (The library's encoders write dst from its start.)
		if e.lev, err = lev.EncodeLevels(e.lev[:0], e.levels); err != nil {
			return ch, dst, err
		}
	}
	if len(values) > 0 {
		ch.hasStats = true
		switch {
		case spec.kind == pqEnum:
			ch.min, ch.max = enumRange(spec.enum, values)
		case spec.unsigned:
			// An unsigned INT32 column holds values below 2^32.
			ch.min, ch.max = minMaxUnsigned(values)
		default:
			ch.min, ch.max = minMax(values)
		}
	}
	var err error
	encoding := format.DeltaBinaryPacked
	switch spec.kind {
	case pqInt32:
		e.st32 = e.st32[:0]
		for _, v := range values {
			e.st32 = append(e.st32, int32(v))
		}
		e.page, err = deltaEncoding.EncodeInt32(e.page[:0], e.st32)
	case pqEnum:
		encoding = format.Plain
		e.page, err = appendPlainEnum(e.page[:0], spec.enum, values)
	default:
		e.page, err = deltaEncoding.EncodeInt64(e.page[:0], values)
	}
	if err != nil {
		return ch, dst, err
	}
	// In a V2 page the levels are never compressed: only the values.
	if e.comp, err = e.codec.Encode(e.comp[:0], e.page); err != nil {
		return ch, dst, err
	}
	levelsLen := len(e.lev)
	crc := crc32.Update(crc32.ChecksumIEEE(e.lev), crc32.IEEETable, e.comp)
	stats := format.Statistics{NullCount: ch.nulls}
	if ch.hasStats {
		stats.MinValue, stats.MaxValue = statBytes(spec, ch.min), statBytes(spec, ch.max)
	}
	h := format.PageHeader{
		Type:                 format.DataPageV2,
		UncompressedPageSize: int32(levelsLen + len(e.page)),
		CompressedPageSize:   int32(levelsLen + len(e.comp)),
		CRC:                  int32(crc),
		DataPageHeaderV2: thrift.New(format.DataPageHeaderV2{
			NumValues:                  int32(len(col)),
			NumNulls:                   int32(ch.nulls),
			NumRows:                    int32(len(col)),
			Encoding:                   encoding,
			DefinitionLevelsByteLength: int32(levelsLen),
			IsCompressed:               thrift.New(true),
			Statistics:                 stats,
		}),
	}
	e.hdr.Reset()
	if err := e.thrift.Encode(&h); err != nil {
		return ch, dst, err
	}
	ch.uncompressed = int64(e.hdr.Len() + levelsLen + len(e.page))
	ch.compressed = int64(e.hdr.Len() + levelsLen + len(e.comp))
	start := len(dst)
	dst = append(dst, e.hdr.Bytes()...)
	dst = append(dst, e.lev...)
	dst = append(dst, e.comp...)
	ch.offset = int64(start) // made relative by encodeRowGroup
	return ch, dst, nil
}

// minMax returns the least and greatest of values (not empty). Four
// independent running pairs let the comparisons of neighbouring values
// overlap: one pair makes every step wait for the last (a stats pass over
// an Offline run's 4.4 M records took 30 ms of CPU with one).
func minMax[T int64 | uint64](values []T) (lo, hi T) {
	lo0, hi0 := values[0], values[0]
	lo1, hi1, lo2, hi2, lo3, hi3 := lo0, hi0, lo0, hi0, lo0, hi0
	i := 0
	for ; i+4 <= len(values); i += 4 {
		v := values[i : i+4 : i+4]
		lo0, hi0 = min(lo0, v[0]), max(hi0, v[0])
		lo1, hi1 = min(lo1, v[1]), max(hi1, v[1])
		lo2, hi2 = min(lo2, v[2]), max(hi2, v[2])
		lo3, hi3 = min(lo3, v[3]), max(hi3, v[3])
	}
	for _, v := range values[i:] {
		lo0, hi0 = min(lo0, v), max(hi0, v)
	}
	return min(lo0, lo1, lo2, lo3), max(hi0, hi1, hi2, hi3)
}

// minMaxUnsigned is minMax with values compared as unsigned.
func minMaxUnsigned(values []int64) (lo, hi int64) {
	l, h := minMax(asUint64(values))
	return int64(l), int64(h)
}

// statBytes is v as Parquet's plain encoding of column spec's type (for
// an enum column, v is a code and the statistic its string's bytes).
func statBytes(spec *pqColumn, v int64) []byte {
	switch spec.kind {
	case pqInt32:
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(v)))
	case pqEnum:
		return []byte(spec.enum[v])
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(v))
}

// enumRange returns the codes of the least and greatest strings among
// codes (all valid: appendPlainEnum checked them), compared as bytes as
// Parquet orders BYTE_ARRAY statistics.
func enumRange(enum []string, codes []int64) (lo, hi int64) {
	var seen uint64
	for _, c := range codes {
		if c >= 0 && c < 64 {
			seen |= 1 << c
		}
	}
	lo, hi = -1, -1
	for c := range enum {
		if seen&(1<<c) == 0 {
			continue
		}
		if lo < 0 || enum[c] < enum[lo] {
			lo = int64(c)
		}
		if hi < 0 || enum[c] > enum[hi] {
			hi = int64(c)
		}
	}
	return lo, hi
}

// appendPlainEnum appends the strings of codes in Parquet's PLAIN
// encoding of BYTE_ARRAY (each a 4-byte little-endian length, then its
// bytes) to dst.
func appendPlainEnum(dst []byte, enum []string, codes []int64) ([]byte, error) {
	for i, c := range codes {
		if c < 0 || c >= int64(len(enum)) {
			return dst, fmt.Errorf("row %d: code %d is none of %q", i, c, enum)
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(enum[c])))
		dst = append(dst, enum[c]...)
	}
	return dst, nil
}

// rowGroupMeta is the footer's entry of g, a row group of table t written
// at offset in the file.
func rowGroupMeta(t *pqTable, g pqGroup, offset int64, ordinal int, codec format.CompressionCodec) format.RowGroup {
	rg := format.RowGroup{NumRows: g.rows, FileOffset: offset, TotalCompressedSize: g.size, Ordinal: int16(ordinal)}
	paths := t.schema.Columns()
	rg.Columns = make([]format.ColumnChunk, len(t.cols))
	for c, ch := range g.chunks {
		spec := &t.cols[c]
		typ, enc := format.Int64, format.DeltaBinaryPacked
		switch spec.kind {
		case pqInt32:
			typ = format.Int32
		case pqEnum:
			typ, enc = format.ByteArray, format.Plain
		}
		encodings := []format.Encoding{enc}
		if spec.optional {
			encodings = []format.Encoding{format.RLE, enc}
		}
		stats := format.Statistics{NullCount: ch.nulls}
		if ch.hasStats {
			stats.MinValue, stats.MaxValue = statBytes(spec, ch.min), statBytes(spec, ch.max)
		}
		at := offset + ch.offset
		rg.Columns[c] = format.ColumnChunk{
			FileOffset: at,
			MetaData: format.ColumnMetaData{
				Type:                  typ,
				Encoding:              encodings,
				PathInSchema:          paths[c],
				Codec:                 codec,
				NumValues:             g.rows,
				TotalUncompressedSize: ch.uncompressed,
				TotalCompressedSize:   ch.compressed,
				DataPageOffset:        at,
				Statistics:            stats,
				EncodingStats:         []format.PageEncodingStats{{PageType: format.DataPageV2, Encoding: enc, Count: 1}},
			},
		}
		rg.TotalByteSize += ch.uncompressed
	}
	return rg
}

// footer returns the file's footer after its last row group: the
// FileMetaData, its length and the magic.
func footer(t *pqTable, groups []format.RowGroup) ([]byte, error) {
	tmpl, err := t.template()
	if err != nil {
		return nil, err
	}
	md := *tmpl
	md.RowGroups = groups
	md.NumRows = 0
	for _, g := range groups {
		md.NumRows += g.NumRows
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return nil, err
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)))
	return append(b, "PAR1"...), nil
}

// fillOnes sets every byte of b to 1, by doubling copies (at memmove's
// speed, where a loop stores a byte at a time).
func fillOnes(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = 1
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}
