package bundle

import (
	"fmt"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// RecordFile is a records.parquet file as a loadgen.RecordSource
// (Result.AttachSource): each Scan reads the file anew, a row group
// (DefaultRowGroupRows records) at a time, and holds nothing of it after
// (on Linux the file is mapped and the pages read are let go after each
// row group; elsewhere a Scan reads the file whole, about 4 bytes a
// record, for as long as it runs). The records are not checked against a
// bundle's settings (Bundle.ScanRecords does that): it is for a file this
// process wrote, such as the union `aimeter merge` writes. Its records
// must be in sequence order, as RecordSource asks.
type RecordFile struct {
	path    string
	n       int
	samples string // the samples file joined (AttachSamples), if any
	hasData bool   // a row of it carries sample data
}

// OpenRecordFile opens the records.parquet at path: it checks the file's
// footer and reads its number of records. The file must not change while
// the RecordFile is used.
func OpenRecordFile(path string) (*RecordFile, error) {
	rf := &RecordFile{path: path}
	err := rf.mapped(func(data []byte, release *mapping) error {
		var err error
		rf.n, err = parquet.RecordRows(data, release.drop)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rf, nil
}

// Path is the file's path.
func (f *RecordFile) Path() string { return f.path }

// Len is the number of records in the file.
func (f *RecordFile) Len() int { return f.n }

// Scan calls fn with the file's records, a row group at a time, in a
// loadgen.RecordColumns reused for the next row group; an error from fn
// ends it and is returned, as is an error reading the file (naming it).
func (f *RecordFile) Scan(fn func(*loadgen.RecordColumns) error) error {
	var fnErr error
	err := f.mapped(func(data []byte, release *mapping) error {
		return parquet.DecodeRecordColumnsOpened(data, release.drop, func(c *loadgen.RecordColumns) error {
			release.drop()
			fnErr = fn(c)
			return fnErr
		})
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return err
}

// mapped calls fn with the file's bytes, mapped where mapFile maps; an
// error other than fn's names the file.
func (f *RecordFile) mapped(fn func(data []byte, release *mapping) error) error {
	return mapPath(f.path, fn)
}
