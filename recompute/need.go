package recompute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"aimeter/bundle"
)

// Need is what recomputing a bundle will take, estimated by EstimateNeed
// before Check reads anything but the manifest and the Parquet footers.
type Need struct {
	// Records are the rows of the record table (records.parquet, or the
	// lines records.csv can hold at most).
	Records int64
	// TokenTimes are the rows of tokens.parquet (one per token), or the
	// lines tokens.csv can hold at most.
	TokenTimes int64
	// TableRows are the rows of stages and samples (Parquet or CSV).
	TableRows int64
	// RecordsBytes is the size on disk of the record table's file.
	RecordsBytes int64
	// GBT is whether the bundle is of a GB/T test, whose evaluation
	// copies the records.
	GBT bool
	// FileBytes are the sizes on disk of the bundle's other files, which
	// Check reads whole (events, the accuracy log, the JSON files).
	FileBytes int64
	// Bytes is the memory Check needs for the bundle: NeedBaseBytes, plus
	// NeedBytesPerRecord per record (and NeedBytesPerGBTRecord more for a
	// GB/T test), NeedBytesPerRecordsFileByte per byte of the records
	// file, NeedBytesPerToken per token time,
	// NeedBytesPerTableRow per table row and NeedBytesPerFileByte per byte
	// of the other files.
	Bytes int64
}

// The constants of Need.Bytes. The record table is held column by
// column (loadgen.RecordTable), each column as a line, 32-bit offsets or
// full values, whichever keeps it exact: measured with
// TestNeedIsNotAnUnderestimate and derived's TestRecomputeAllocationPerRecord,
// recomputing needs 16 bytes per record for an Offline run (the table and
// the latencies the percentiles select from) and 24 for a Server run;
// NeedBytesPerRecord keeps a margin above both. Records whose columns
// compress badly take more (up to 13 full columns, 104 bytes a record),
// but then their Parquet file is at least as large, so
// NeedBytesPerRecordsFileByte per byte of the records file bounds them:
// the file read whole, once, plus the table it decodes into. A GB/T
// test's evaluation copies every record besides (gbt.RunOf, 96 bytes a
// record): NeedBytesPerGBTRecord more. The others are not measured as
// finely: a token time is one int64 in a trace and its share of the
// derived arrays, a table row (stage times, sample data) a handful of
// int64 columns joined to its record, and a file read whole is decoded
// into Go values a few times its size.
const (
	NeedBaseBytes               = 32 << 20
	NeedBytesPerRecord          = 32
	NeedBytesPerRecordsFileByte = 4
	NeedBytesPerGBTRecord       = 128
	NeedBytesPerToken           = 64
	NeedBytesPerTableRow        = 160
	NeedBytesPerFileByte        = 8
)

// csvMinRowBytes is the fewest bytes a line of a CSV record table takes:
// EstimateNeed counts a CSV table's rows as its size over this, an upper
// bound, rather than reading it.
const csvMinRowBytes = 8

// maxFooterBytes bounds the Parquet footer EstimateNeed reads.
const maxFooterBytes = 16 << 20

// EstimateNeed estimates what Check of the bundle in dir needs, from its
// manifest (bundle.ReadManifest, which bounds its size) and the footers of
// its Parquet tables. Sizes are those of the files on disk, never the
// manifest's claims, and a footer is read only when it is smaller than
// maxFooterBytes and its file, so a manifest or footer that lies cannot
// make the estimate allocate. A file the manifest names that is missing
// counts nothing (Check refuses the bundle); a Parquet file without a
// readable footer is an error.
func EstimateNeed(dir string) (Need, error) {
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return Need{}, err
	}
	var n Need
	for _, e := range m.Files {
		if e.Role != bundle.Raw {
			continue
		}
		clean := path.Clean(e.Name)
		if clean != e.Name || path.IsAbs(clean) || clean == ".." || len(clean) > 2 && clean[:3] == "../" {
			return Need{}, fmt.Errorf("recompute: manifest names %q, which is not a plain relative path", e.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		size := fi.Size()
		switch clean {
		case bundle.RecordsFile:
			rows, err := ParquetRows(p)
			if err != nil {
				return Need{}, err
			}
			n.Records += rows
			n.RecordsBytes += size
		case bundle.TokensFile:
			rows, err := ParquetRows(p)
			if err != nil {
				return Need{}, err
			}
			n.TokenTimes += rows
		case bundle.StagesFile, bundle.SamplesFile:
			rows, err := ParquetRows(p)
			if err != nil {
				return Need{}, err
			}
			n.TableRows += rows
		case bundle.RecordsCSVFile:
			n.Records += size / csvMinRowBytes
			n.RecordsBytes += size
		case bundle.GBTTestFile:
			n.GBT = true
			n.FileBytes += size
		case bundle.TokensCSVFile:
			n.TokenTimes += size / csvMinRowBytes
		case bundle.StagesCSVFile, bundle.SamplesCSVFile:
			n.TableRows += size / csvMinRowBytes
		default:
			n.FileBytes += size
		}
	}
	perRecord := int64(NeedBytesPerRecord)
	if n.GBT {
		perRecord += NeedBytesPerGBTRecord
	}
	n.Bytes = satAdd(NeedBaseBytes,
		satMul(n.Records, perRecord),
		satMul(n.RecordsBytes, NeedBytesPerRecordsFileByte),
		satMul(n.TokenTimes, NeedBytesPerToken),
		satMul(n.TableRows, NeedBytesPerTableRow),
		satMul(n.FileBytes, NeedBytesPerFileByte))
	return n, nil
}

const maxInt64 = 1<<63 - 1

func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxInt64/b {
		return maxInt64
	}
	return a * b
}

func satAdd(v ...int64) int64 {
	var s int64
	for _, x := range v {
		if x > maxInt64-s {
			return maxInt64
		}
		s += x
	}
	return s
}

// ParquetRows returns the row count (FileMetaData.num_rows) of the Parquet
// file at p, reading only its footer. A file without the PAR1 trailer, a
// footer length beyond the file or over 16 MiB, a footer that does not
// parse as Thrift, or a negative row count is an error naming the file.
func ParquetRows(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	bad := func(what string) error {
		return fmt.Errorf("recompute: %s: %s", filepath.Base(p), what)
	}
	if size < 12 {
		return 0, bad("too short for a Parquet file")
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, err
	}
	if string(tail[4:]) != "PAR1" {
		return 0, bad("no Parquet footer (the file does not end in PAR1)")
	}
	fl := int64(binary.LittleEndian.Uint32(tail[:4]))
	if fl > size-12 || fl > maxFooterBytes {
		return 0, bad(fmt.Sprintf("a footer of %d bytes in a file of %d", fl, size))
	}
	footer := make([]byte, fl)
	if _, err := f.ReadAt(footer, size-8-fl); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	rows, err := footerRows(footer)
	if err != nil {
		return 0, bad("footer: " + err.Error())
	}
	if rows < 0 {
		return 0, bad(fmt.Sprintf("a footer of %d rows", rows))
	}
	return rows, nil
}

// footerRows reads field 3 (num_rows, i64) of the Thrift compact
// FileMetaData in b, skipping every other field.
func footerRows(b []byte) (int64, error) {
	r := thriftReader{b: b}
	var last int16
	for {
		t, err := r.byte()
		if err != nil {
			return 0, err
		}
		if t == 0 {
			return 0, errors.New("no num_rows field")
		}
		id := last + int16(t>>4)
		if t>>4 == 0 {
			v, err := r.varint()
			if err != nil {
				return 0, err
			}
			id = int16(zigzag(v))
		}
		last = id
		typ := t & 0x0f
		if id == 3 && typ == 6 {
			v, err := r.varint()
			if err != nil {
				return 0, err
			}
			return zigzag(v), nil
		}
		if err := r.skip(typ, 0); err != nil {
			return 0, err
		}
	}
}

// thriftReader walks Thrift compact-protocol values without keeping them.
type thriftReader struct {
	b []byte
	i int
}

var errThriftShort = errors.New("cut short")

func (r *thriftReader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errThriftShort
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

func (r *thriftReader) varint() (uint64, error) {
	var v uint64
	for s := 0; s < 64; s += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint too long")
}

func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// skip skips a value of compact type t; depth bounds nesting.
func (r *thriftReader) skip(t byte, depth int) error {
	if depth > 32 {
		return errors.New("nested too deep")
	}
	switch t {
	case 1, 2: // bool in a field header
		return nil
	case 3: // byte
		_, err := r.byte()
		return err
	case 4, 5, 6: // i16, i32, i64
		_, err := r.varint()
		return err
	case 7: // double
		if len(r.b)-r.i < 8 {
			return errThriftShort
		}
		r.i += 8
		return nil
	case 8: // binary
		n, err := r.varint()
		if err != nil {
			return err
		}
		if n > uint64(len(r.b)-r.i) {
			return errThriftShort
		}
		r.i += int(n)
		return nil
	case 9, 10: // list, set
		h, err := r.byte()
		if err != nil {
			return err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = r.varint(); err != nil {
				return err
			}
		}
		if n > uint64(len(r.b)-r.i) && et != 1 && et != 2 {
			return errThriftShort // every element takes a byte at least
		}
		for range n {
			if et == 1 || et == 2 { // bools in a list take a byte each
				if _, err := r.byte(); err != nil {
					return err
				}
				continue
			}
			if err := r.skip(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := r.varint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := r.byte()
		if err != nil {
			return err
		}
		if n > uint64(len(r.b)-r.i) {
			return errThriftShort
		}
		for range n {
			for _, et := range []byte{kv >> 4, kv & 0x0f} {
				if et == 1 || et == 2 {
					if _, err := r.byte(); err != nil {
						return err
					}
					continue
				}
				if err := r.skip(et, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case 12: // struct
		var last int16
		for {
			h, err := r.byte()
			if err != nil {
				return err
			}
			if h == 0 {
				return nil
			}
			id := last + int16(h>>4)
			if h>>4 == 0 {
				v, err := r.varint()
				if err != nil {
					return err
				}
				id = int16(zigzag(v))
			}
			last = id
			if err := r.skip(h&0x0f, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown compact type %d", t)
}
