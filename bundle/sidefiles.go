package bundle

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// This file streams the per-sample files beside the records
// (samples.parquet and tokens.parquet): written beside a RecordStream,
// read back as loadgen sources (RecordFile.AttachSamples, TokenFile), and
// scanned from a bundle ReadHead read (ScanWholeRecords, ScanTokens), each
// a row group at a time, so that `aimeter merge` holds none of them.

// WriteSamples writes samples.parquet into the stream's directory now,
// one row for each of recs (in sequence order, one per record of the
// stream, as Write writes it from the Result's records), holding a row
// group at a time. Write, finishing the stream, lists the file as it is
// instead of writing it again (and removes it when the Result has no
// sample data after all). Call it before Write.
func (s *RecordStream) WriteSamples(recs iter.Seq[loadgen.Record]) error {
	return s.writeBeside(SamplesFile, func(w io.Writer) error { return parquet.WriteSamples(w, recs, DefaultRowGroupRows) })
}

// WriteTokens writes tokens.parquet into the stream's directory now, from
// traces (in sequence order, as Result.TokenTimes yields them), holding a
// row group at a time; Write lists it as WriteSamples says.
func (s *RecordStream) WriteTokens(traces iter.Seq2[uint64, []int64]) error {
	return s.writeBeside(TokensFile, func(w io.Writer) error { return parquet.WriteTokens(w, traces, DefaultRowGroupRows) })
}

// writeBeside writes the raw file name into the stream's directory and
// keeps its manifest entry for Write.
func (s *RecordStream) writeBeside(name string, write func(io.Writer) error) error {
	wf, err := writeFile(s.dir, name, write)
	if err != nil {
		return err
	}
	if s.beside == nil {
		s.beside = map[string]ManifestEntry{}
	}
	s.beside[name] = ManifestEntry{Name: name, Role: Raw, Bytes: wf.Bytes, SHA256: wf.SHA256}
	return nil
}

// mapPath calls fn with the bytes of the file at path, mapped where
// mapFile maps, and the mapping (whose drop lets go of the pages read).
func mapPath(path string, fn func(data []byte, release *mapping) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	data, release, err := mapFile(file, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer release.close()
	return fn(data, release)
}

// scanTable calls decode with the bytes of the file at path (mapped:
// mapPath) and the drop of its mapping. decode passes each error of the
// caller's fn through keep, so that it comes back as it is; any other
// error names the file.
func scanTable(path string, decode func(data []byte, drop func(), keep func(error) error) error) error {
	var fnErr error
	keep := func(err error) error {
		fnErr = err
		return err
	}
	err := mapPath(path, func(data []byte, release *mapping) error { return decode(data, release.drop, keep) })
	if fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// scanSamples calls fn with the rows of the samples.parquet at path, a
// row group at a time (scanTable).
func scanSamples(path string, fn func(rows []parquet.SampleRow) error) error {
	return scanTable(path, func(data []byte, drop func(), keep func(error) error) error {
		return parquet.DecodeSamples(data, drop, func(rows []parquet.SampleRow, _ int) error { return keep(fn(rows)) })
	})
}

// scanTokens calls fn with the samples of the tokens.parquet at path, in
// order (scanTable).
func scanTokens(path string, fn func(seq uint64, times []int64) error) error {
	return scanTable(path, func(data []byte, drop func(), keep func(error) error) error {
		return parquet.DecodeTokens(data, drop, func(seq uint64, times []int64) error { return keep(fn(seq, times)) })
	})
}

// AttachSamples joins the samples.parquet at path to the records of f, by
// sequence id, so that f is a loadgen.SampleDataSource whose ScanRecords
// yields whole records: it reads the file once, checking that its rows
// follow the records' order, and notes whether any carries sample data.
// The file must not change while f is used.
func (f *RecordFile) AttachSamples(path string) error {
	f.samples, f.hasData = path, false
	has := false
	err := f.ScanRecords(func(recs []loadgen.Record) error {
		for i := range recs {
			if r := &recs[i]; r.RequestBytes != 0 || r.ResponseBytes != 0 || r.Node != 0 || r.Error != 0 {
				has = true
			}
		}
		return nil
	})
	if err != nil {
		f.samples = ""
		return err
	}
	f.hasData = has
	return nil
}

// HasSampleData reports whether a record of the samples file attached
// (AttachSamples) carries sample data.
func (f *RecordFile) HasSampleData() bool { return f.hasData }

// ScanRecords calls fn with the file's records, whole (their sample data
// joined from the samples file attached, if any: joinSamples), a few
// thousand at a time, in a slice reused for the next; an error from fn
// ends it and is returned, as is an error reading the files.
func (f *RecordFile) ScanRecords(fn func([]loadgen.Record) error) error {
	return joinSamples(f.samples, -1, f.Scan, fn)
}

// ScanWholeRecords is ScanRecords (opts applying to the records) with the
// records whole: their sample data joined from the bundle's
// samples.parquet, if it has one, read beside them (joinSamples),
// an error index that names no entry of the error table refused.
func (b *Bundle) ScanWholeRecords(opts ScanOptions, fn func([]loadgen.Record) error) error {
	path, _, err := b.headLeaf(SamplesFile)
	if err != nil {
		return err
	}
	scan := func(g func(*loadgen.RecordColumns) error) error { return b.ScanRecords(opts, g) }
	return joinSamples(path, len(b.Result.Errors), scan, fn)
}

// joinSamples calls fn with the records scan yields, whole: each with the
// sample data of the row of the samples.parquet at path (none when path is
// empty) with its sequence id, the file read beside them a row group at a
// time. A row must follow the records' order (as Write writes them, one a
// record) and, with nErrors ≥ 0, its error index name one of nErrors
// entries; a record without a row has no sample data. The records are
// passed at most wholeBlock at a time (never across two of scan's blocks)
// in a slice reused for the next; an error from fn ends it and is
// returned.
func joinSamples(path string, nErrors int, scan func(func(*loadgen.RecordColumns) error) error, fn func([]loadgen.Record) error) error {
	// The records are passed on in blocks of wholeBlock, not a row group
	// at a time: a row group's whole records take 6 MiB.
	recs := make([]loadgen.Record, 0, wholeBlock)
	pass := func(last bool) error {
		if len(recs) == cap(recs) || (last && len(recs) > 0) {
			err := fn(recs)
			recs = recs[:0]
			return err
		}
		return nil
	}
	if path == "" {
		return scan(func(c *loadgen.RecordColumns) error {
			for i := range c.Len() {
				recs = append(recs, c.Record(i))
				if err := pass(false); err != nil {
					return err
				}
			}
			return pass(true)
		})
	}
	next, stop := iter.Pull2(func(yield func([]parquet.SampleRow, error) bool) {
		err := scanSamples(path, func(rows []parquet.SampleRow) error {
			if !yield(rows, nil) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(nil, err)
		}
	})
	defer stop()
	var rows []parquet.SampleRow
	at, row := 0, 0                // the row in rows, and in the file (from 1)
	pull := func() (bool, error) { // a row at rows[at], false at the end
		for at >= len(rows) {
			var err error
			var ok bool
			if rows, err, ok = next(); !ok {
				rows, at = nil, 0
				return false, nil
			}
			if err != nil {
				return false, err
			}
			at = 0
		}
		return true, nil
	}
	stray := func() error {
		return fmt.Errorf("%s: row %d: seq_id %d is not in the records, or out of their order", path, row+1, rows[at].SeqID)
	}
	err := scan(func(c *loadgen.RecordColumns) error {
		for i := range c.Len() {
			r := c.Record(i)
			ok, err := pull()
			if err != nil {
				return err
			}
			if ok {
				switch s := &rows[at]; {
				case s.SeqID == r.SeqID:
					if nErrors >= 0 && s.Error > uint32(nErrors) {
						return fmt.Errorf("%s: row %d: field error: %d, but %s has %d entries", path, row+1, s.Error, ErrorsFile, nErrors)
					}
					r.RequestBytes, r.ResponseBytes, r.Node, r.Error = s.RequestBytes, s.ResponseBytes, s.Node, s.Error
					at, row = at+1, row+1
				case s.SeqID < r.SeqID:
					return stray()
				}
			}
			recs = append(recs, r)
			if err := pass(false); err != nil {
				return err
			}
		}
		return pass(true)
	})
	if err != nil {
		return err
	}
	if ok, err := pull(); err != nil || !ok {
		return err
	}
	return stray()
}

// wholeBlock is the most whole records joinSamples passes at a time.
const wholeBlock = 4096

// errStopped ends a scan whose reader left.
var errStopped = errors.New("bundle: scan stopped")

// TokenFile is a tokens.parquet file as a loadgen.TokenSource
// (Result.AttachTokenSource): each ScanTokens reads the file anew, a row
// group at a time (mapped where RecordFile's are, read whole elsewhere),
// and holds nothing of it after. Like RecordFile, it is for a file this
// process wrote.
type TokenFile struct{ path string }

// OpenTokenFile opens the tokens.parquet at path, reading it once to check
// it. The file must not change while the TokenFile is used.
func OpenTokenFile(path string) (*TokenFile, error) {
	f := &TokenFile{path: path}
	if err := f.ScanTokens(func(uint64, []int64) error { return nil }); err != nil {
		return nil, err
	}
	return f, nil
}

// ScanTokens calls fn with the sequence id and token times of each sample
// of the file, in order (the times in a slice reused for the next); an
// error from fn ends it and is returned, as is one reading the file.
func (f *TokenFile) ScanTokens(fn func(seq uint64, times []int64) error) error {
	return scanTokens(f.path, fn)
}

// ScanTokens streams the token times of the bundle ReadHead read, from its
// tokens.parquet, one sample at a time in sequence order (the times in a
// slice reused for the next); it does nothing for a bundle without the
// file. An error from fn ends the scan and is returned.
func (b *Bundle) ScanTokens(fn func(seq uint64, times []int64) error) error {
	path, ok, err := b.headLeaf(TokensFile)
	if !ok {
		return err
	}
	return scanTokens(path, fn)
}

// headLeaf is the path of the per-sample file name of the bundle ReadHead
// read, and whether it has one.
func (b *Bundle) headLeaf(name string) (string, bool, error) {
	if b.dir == "" || b.Manifest == nil {
		return "", false, fmt.Errorf("bundle: a scan of %s of a bundle not read from a directory", name)
	}
	if _, ok := b.Manifest.Entry(name); !ok {
		return "", false, nil
	}
	return filepath.Join(b.dir, name), true, nil
}
