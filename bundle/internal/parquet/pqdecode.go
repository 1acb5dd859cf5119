package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"unsafe"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"aimeter/loadgen"
)

// The pages pqEncoder writes (DATA_PAGE_V2, DELTA_BINARY_PACKED, levels
// of optional columns RLE-encoded) are decoded here straight into the
// columns of a loadgen.RecordColumns, with the library's delta and RLE
// decoders and codecs but without its page readers. A row group with any
// other kind of page (another writer's file) is left to the library
// (errOtherPages).

// errOtherPages says a column chunk holds pages pqEncoder does not write.
var errOtherPages = errors.New("pages of another writer")

// pqDecoder decodes row groups of records.parquet; its buffers are reused
// from one to the next. It is not safe for concurrent use.
type pqDecoder struct {
	data   []byte // the whole file
	hdr    format.PageHeader
	proto  thrift.CompactProtocol
	raw    []byte // a page's values, decompressed
	levels []uint8
	vals   []int64
	st32   []int32
	zstd   *ownZstd
}

// codecOf returns the decoder's codec for a column chunk's, among those
// RecordWriter uses (checkChunks has refused the others); nil for none.
func (d *pqDecoder) codecOf(c format.CompressionCodec) compress.Codec {
	switch c {
	case format.Zstd:
		if d.zstd == nil {
			d.zstd = new(ownZstd)
		}
		return d.zstd
	case format.Snappy:
		return &parquet.Snappy
	}
	return nil
}

// decodeGroupSafe is decodeGroup with a panic of the library's decoders,
// which they may raise on damaged data, as an error.
func (d *pqDecoder) decodeGroupSafe(rg *format.RowGroup, cols *loadgen.RecordColumns) error {
	return catchPanic(func() error { return d.decodeGroup(rg, cols) })
}

// decodeGroup decodes row group rg into cols (reset first).
func (d *pqDecoder) decodeGroup(rg *format.RowGroup, cols *loadgen.RecordColumns) error {
	n := int(rg.NumRows)
	cols.Reset()
	if len(rg.Columns) != numRecordColumns {
		return fmt.Errorf("%d columns, want %d", len(rg.Columns), numRecordColumns)
	}
	cols.SeqID = resize(cols.SeqID, n)
	cols.QueryID = resize(cols.QueryID, n)
	cols.SampleIndex = resize(cols.SampleIndex, n)
	cols.ScheduledNs = resize(cols.ScheduledNs, n)
	cols.IssuedNs = resize(cols.IssuedNs, n)
	cols.FirstTokenNs = resize(cols.FirstTokenNs, n)
	cols.CompletedNs = resize(cols.CompletedNs, n)
	cols.Tokens = resize(cols.Tokens, n)
	cols.Status = resize(cols.Status, n)
	for c := range numRecordColumns {
		var out []int64
		var status []loadgen.Status
		switch c {
		case colSeqID:
			out = asInt64(cols.SeqID)
		case colQueryID:
			out = asInt64(cols.QueryID)
		case colSampleIndex:
			out = asInt64(cols.SampleIndex)
		case colScheduled:
			out = cols.ScheduledNs
		case colIssued:
			out = cols.IssuedNs
		case colFirstToken:
			out = cols.FirstTokenNs
		case colCompleted:
			out = cols.CompletedNs
		case colTokens:
			out = cols.Tokens
		case colStatus:
			status = cols.Status
		}
		if err := d.decodeChunk(&rg.Columns[c].MetaData, &recordsTable.cols[c], n, out, status); err != nil {
			if errors.Is(err, errOtherPages) {
				return err
			}
			return fmt.Errorf("column %s: %w", recordsSchema.Columns()[c][0], err)
		}
	}
	return nil
}

// resize returns s with length n, its contents undefined.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// asInt64 views unsigned ids as the INT64 column that stores their bits
// (the same size and alignment: Parquet's UINT_64 is stored so).
func asInt64(u []uint64) []int64 {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&u[0])), len(u))
}

// asUint64 is asInt64 the other way: an INT64 column's values as the
// unsigned ids they store.
func asUint64(v []int64) []uint64 {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&v[0])), len(v))
}

// decodeChunk decodes the n values of one column chunk of column spec
// into out (or, for records.parquet's status column, into status: out is
// then nil), which have room for exactly them.
func (d *pqDecoder) decodeChunk(md *format.ColumnMetaData, spec *pqColumn, n int, out []int64, status []loadgen.Status) error {
	if md.DictionaryPageOffset > 0 {
		return errOtherPages
	}
	codec := d.codecOf(md.Codec)
	at, end := md.DataPageOffset, md.DataPageOffset+md.TotalCompressedSize
	wantEncoding := format.DeltaBinaryPacked
	if spec.kind == pqEnum {
		wantEncoding = format.Plain
	}
	row := 0
	for at < end {
		hlen, _, _, err := pageHeader(d.data[at:end])
		if err != nil {
			return fmt.Errorf("page at byte %d: %w", at, err)
		}
		d.hdr = format.PageHeader{}
		if err := thrift.Unmarshal(&d.proto, d.data[at:at+int64(hlen)], &d.hdr); err != nil {
			return fmt.Errorf("page at byte %d: %w", at, err)
		}
		h := &d.hdr
		if h.Type != format.DataPageV2 || !h.DataPageHeaderV2.Valid {
			return errOtherPages
		}
		v2 := &h.DataPageHeaderV2.V
		if v2.Encoding != wantEncoding || v2.RepetitionLevelsByteLength != 0 {
			return errOtherPages
		}
		body := d.data[at+int64(hlen):]
		size := int64(h.CompressedPageSize)
		levLen := int64(v2.DefinitionLevelsByteLength)
		if size < 0 || size > int64(len(body)) || at+int64(hlen)+size > end || levLen < 0 || levLen > size {
			return fmt.Errorf("page at byte %d: %d bytes, %d of levels, in a chunk ending at %d", at, size, levLen, end)
		}
		// The page's CRC (of the levels and the values as stored), when
		// its writer gave one: a flipped byte is named, not decoded.
		if h.CRC != 0 && int32(crc32.ChecksumIEEE(body[:size])) != h.CRC {
			return fmt.Errorf("page at byte %d: checksum mismatch (the file is damaged)", at)
		}
		rows, nulls := int(v2.NumRows), int(v2.NumNulls)
		if rows < 0 || rows > n-row || int(v2.NumValues) != rows || nulls < 0 || nulls > rows {
			return fmt.Errorf("page at byte %d: %d rows (%d values, %d null) past the %d of the row group", at, rows, v2.NumValues, nulls, n)
		}
		if nulls > 0 && !spec.optional {
			return fmt.Errorf("page at byte %d: %d nulls in a required column", at, nulls)
		}
		values := body[levLen:size]
		if !v2.IsCompressed.Valid || v2.IsCompressed.V {
			if codec != nil {
				// The decompressed values are bounded: checkChunks
				// limited every page's uncompressed size.
				if int64(h.UncompressedPageSize)-levLen > int64(16*rows+1024) {
					return fmt.Errorf("page at byte %d: %d bytes uncompressed for %d rows", at, h.UncompressedPageSize, rows)
				}
				if d.raw, err = codec.Decode(d.raw[:0], values); err != nil {
					return fmt.Errorf("page at byte %d: %w", at, err)
				}
				values = d.raw
			}
		}
		if spec.kind != pqEnum {
			if err := checkDeltaHeader(values, rows-nulls); err != nil {
				return fmt.Errorf("page at byte %d: %w", at, err)
			}
		}
		switch {
		case spec.kind == pqEnum:
			if err := decodePlainEnum(values, spec.enum, out[row:row+rows]); err != nil {
				return fmt.Errorf("page at byte %d: %w", at, err)
			}
		case spec.kind == pqInt32 && status == nil:
			if d.st32, err = deltaEncoding.DecodeInt32(d.st32[:0], values); err != nil {
				return fmt.Errorf("page at byte %d: %w", at, err)
			}
			if len(d.st32) != rows {
				return fmt.Errorf("page at byte %d: %d values for %d rows", at, len(d.st32), rows)
			}
			dst := out[row : row+rows]
			for i, v := range d.st32 {
				if spec.unsigned {
					dst[i] = int64(uint32(v))
				} else {
					dst[i] = int64(v)
				}
			}
		case status != nil:
			if d.st32, err = deltaEncoding.DecodeInt32(d.st32[:0], values); err != nil {
				return fmt.Errorf("page at byte %d: %w", at, err)
			}
			if len(d.st32) != rows {
				return fmt.Errorf("page at byte %d: %d values for %d rows", at, len(d.st32), rows)
			}
			for i, s := range d.st32 {
				if s < int32(loadgen.StatusOK) || s > int32(loadgen.StatusLost) {
					return &statusError{row: row + i, status: s}
				}
				status[row+i] = loadgen.Status(s)
			}
		case nulls == 0:
			dst := out[row : row+rows : row+rows]
			got, err := deltaEncoding.DecodeInt64(dst[:0], values)
			if err != nil {
				return fmt.Errorf("page at byte %d: %w", at, err)
			}
			if len(got) != rows || (rows > 0 && &got[0] != &dst[0]) {
				return fmt.Errorf("page at byte %d: %d values for %d rows", at, len(got), rows)
			}
		default:
			lev := rle.Encoding{BitWidth: 1}
			if d.levels, err = lev.DecodeLevels(d.levels[:0], body[:levLen]); err != nil {
				return fmt.Errorf("page at byte %d: definition levels: %w", at, err)
			}
			if len(d.levels) < rows {
				return fmt.Errorf("page at byte %d: %d definition levels for %d rows", at, len(d.levels), rows)
			}
			if d.vals, err = deltaEncoding.DecodeInt64(d.vals[:0], values); err != nil {
				return fmt.Errorf("page at byte %d: %w", at, err)
			}
			k := 0
			dst := out[row : row+rows]
			for i, l := range d.levels[:rows] {
				if l == 0 {
					dst[i] = loadgen.NoTime
					continue
				}
				if k == len(d.vals) {
					return fmt.Errorf("page at byte %d: %d values for %d rows of which %d are null", at, len(d.vals), rows, nulls)
				}
				dst[i] = d.vals[k]
				k++
			}
			if k != len(d.vals) || rows-k != nulls {
				return fmt.Errorf("page at byte %d: %d values for %d non-null rows", at, len(d.vals), k)
			}
		}
		row += rows
		at += int64(hlen) + size
	}
	if row != n {
		return fmt.Errorf("%d values, want %d", row, n)
	}
	return nil
}

// decodePlainEnum decodes the PLAIN BYTE_ARRAY values in b, one a row of
// out, as the codes of their strings in enum; a string that is not one of
// them is an error naming the row.
func decodePlainEnum(b []byte, enum []string, out []int64) error {
	for i := range out {
		if len(b) < 4 {
			return fmt.Errorf("%d values for %d rows", i, len(out))
		}
		l := binary.LittleEndian.Uint32(b)
		if uint64(l) > uint64(len(b)-4) {
			return fmt.Errorf("row %d: a %d-byte string in %d bytes", i, l, len(b)-4)
		}
		v := b[4 : 4+l]
		b = b[4+l:]
		out[i] = -1
		for k, e := range enum {
			if string(v) == e {
				out[i] = int64(k)
				break
			}
		}
		if out[i] < 0 {
			return fmt.Errorf("row %d: %q is none of %q", i, v, enum)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%d bytes after the %d values", len(b), len(out))
	}
	return nil
}

// statusError is a status out of range at a row of the row group.
type statusError struct {
	row    int
	status int32
}

func (e *statusError) Error() string {
	return fmt.Sprintf("row %d: unknown status %d", e.row, e.status)
}

// checkDeltaHeader reads the header of DELTA_BINARY_PACKED data and
// refuses one that does not hold exactly want values or whose block
// layout the format forbids, before the decoder sizes anything by it.
func checkDeltaHeader(b []byte, want int) error {
	var v [3]uint64
	for i := range v {
		x, n := uvarint(b)
		if n <= 0 {
			return errors.New("delta header: truncated")
		}
		v[i], b = x, b[n:]
	}
	block, mini, total := v[0], v[1], v[2]
	if block == 0 || block%128 != 0 || block > 1<<16 || mini == 0 || block%mini != 0 || (block/mini)%32 != 0 {
		return fmt.Errorf("delta header: block of %d values in %d miniblocks", block, mini)
	}
	if total != uint64(want) {
		return fmt.Errorf("delta header: %d values, want %d", total, want)
	}
	return nil
}

// uvarint is binary.Uvarint, limited to 10 bytes.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		if c < 0x80 {
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

// describeCut says where a file of table t without its footer was cut,
// walking the pages pqEncoder writes from the start of the file (each
// row group is one page a column, in column order): the row group and
// column of the first incomplete or unreadable page, and how many whole
// row groups and records come before it. It returns "" when data does not
// start as such a file does.
func describeCut(t *pqTable, data []byte) string {
	if len(data) < 4 || string(data[:4]) != "PAR1" {
		return ""
	}
	at, group, col, records, groupRows := 4, 0, 0, 0, 0
	unit := "rows"
	if t == recordsTable {
		unit = "records"
	}
	var proto thrift.CompactProtocol
	for {
		where := fmt.Sprintf("row group %d (column %s)", group, t.cols[col].name)
		if at == len(data) {
			break
		}
		hlen, _, _, err := pageHeader(data[at:])
		var h format.PageHeader
		if err == nil {
			err = thrift.Unmarshal(&proto, data[at:at+hlen], &h)
		}
		if err != nil || h.CompressedPageSize < 0 || at+hlen+int(h.CompressedPageSize) > len(data) {
			return fmt.Sprintf("the file ends in %s at byte %d, without its footer: %d whole row groups (%d %s) precede the cut", where, at, group, records, unit)
		}
		if h.DataPageHeaderV2.Valid {
			groupRows = int(h.DataPageHeaderV2.V.NumRows)
		}
		at += hlen + int(h.CompressedPageSize)
		if col++; col == len(t.cols) {
			col, group, records = 0, group+1, records+groupRows
		}
	}
	return fmt.Sprintf("the file ends after row group %d at byte %d, without its footer: %d whole row groups (%d %s) precede the cut", group-1, at, group, records, unit)
}

// ownZstd is the zstd codec of one encoder or decoder, with its own
// klauspost/compress encoder and decoder (created on first use, one
// goroutine each, no pool). The Parquet library's codec shares pooled
// ones between goroutines, which testing/synctest refuses when they were
// made in another bubble (a bundle written in one synctest.Test and
// another in the next).
type ownZstd struct {
	enc *kzstd.Encoder
	dec *kzstd.Decoder
}

func (z *ownZstd) String() string                            { return "ZSTD" }
func (z *ownZstd) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src at the fastest level: on delta-packed columns it
// compresses nearly as well as the default level at half the time.
func (z *ownZstd) Encode(dst, src []byte) ([]byte, error) {
	if z.enc == nil {
		var err error
		z.enc, err = kzstd.NewWriter(nil, kzstd.WithEncoderLevel(kzstd.SpeedFastest), kzstd.WithEncoderConcurrency(1),
			kzstd.WithZeroFrames(true), kzstd.WithEncoderCRC(false))
		if err != nil {
			return dst, err
		}
	}
	return z.enc.EncodeAll(src, dst[:0]), nil
}

// Decode decompresses src; a frame that would take more than 256 MiB is
// an error (a page of records.parquet takes a few hundred KiB).
func (z *ownZstd) Decode(dst, src []byte) ([]byte, error) {
	if z.dec == nil {
		var err error
		z.dec, err = kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return dst, err
		}
	}
	return z.dec.DecodeAll(src, dst[:0])
}
