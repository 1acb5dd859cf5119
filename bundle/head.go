package bundle

import (
	"errors"
	"fmt"
	"path/filepath"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// ReadHead reads the bundle of a run in dir as Read does, but without its
// per-sample files: the records, the sample data, the stage times and the
// token times are left on disk, so that it holds what the run's size does
// not change (settings, passes, counters, events, the error table, the
// accuracy log, the parts of packages above). Every file is checked
// against the manifest first, as by Read. The Result has no records and no
// summary; ScanRecords streams the records, ScanWholeRecords them with
// their sample data, ScanTokens the token times. A training bundle, or a run of
// format version 1 or 2 (whose records or tables are CSV), is an error:
// read it whole with Read. opts.Parts are decoded as by ReadWith. The
// run's foreign jobs (a GB/T mixed test's foreign/), if any, are read
// whole.
func ReadHead(dir string, opts ReadOptions) (*Bundle, error) {
	m, err := readVerified(dir, opts)
	if err != nil {
		return nil, err
	}
	if _, ok := m.Entry(TrainingRunFile); ok {
		return nil, fmt.Errorf("%s: a training run's bundle: it has no records", dir)
	}
	if m.FormatVersion < 3 {
		return nil, fmt.Errorf("%s: a bundle of format version %d (CSV tables): read it whole", dir, m.FormatVersion)
	}
	b, _, err := readHead(dir, m, "", RecordsFile)
	if err != nil {
		return nil, err
	}
	b.Manifest, b.dir = m, dir
	if _, ok := m.Entry(ForeignDir + "/" + SettingsFile); ok {
		if b.Foreign, err = readRun(dir, m, ForeignDir+"/"); err != nil {
			return nil, err
		}
	}
	if err := checkParts(dir, "", b, opts.Parts); err != nil {
		return nil, err
	}
	return b, nil
}

// HeadLeaves names the per-sample files beside the records (sample data,
// stage times, token times) of the bundle ReadHead read, which ScanRecords
// does not read (ScanWholeRecords reads the sample data, ScanTokens the
// token times; nothing streams the stage times); nil when it has none.
func (b *Bundle) HeadLeaves() []string {
	var names []string
	if b.Manifest == nil {
		return nil
	}
	for _, name := range []string{SamplesFile, StagesFile, TokensFile} {
		if _, ok := b.Manifest.Entry(name); ok {
			names = append(names, name)
		}
	}
	return names
}

// ScanOptions controls ScanRecords.
type ScanOptions struct {
	// Unchecked skips Read's checks of the records, for a file that an
	// earlier ScanRecords of the same Bundle checked whole. The zero value
	// checks every row group.
	Unchecked bool
}

// ScanRecords streams the records of the bundle ReadHead read, from its
// records.parquet, a row group at a time in the file's order, to fn (the
// RecordColumns is reused for the next row group): unless opts.Unchecked,
// each row group is checked as Read checks the records (a bad record is a
// *RecordsError naming its row), and an error from fn ends the scan and
// is returned. It
// holds one row group of records, decoded, at a time: on Linux the file
// is mapped into memory and the pages read are let go after each row group
// (they stay in the page cache, not in the process); elsewhere it is read
// whole. The Result's sample data columns (RequestBytes, ResponseBytes,
// Node, Error) are not in the RecordColumns.
func (b *Bundle) ScanRecords(opts ScanOptions, fn func(*loadgen.RecordColumns) error) error {
	if b.dir == "" || b.Result == nil {
		return errors.New("bundle: ScanRecords of a bundle not read from a directory")
	}
	path := filepath.Join(b.dir, RecordsFile)
	return mapPath(path, func(data []byte, release *mapping) error { return b.scanMapped(path, data, release, opts, fn) })
}

// scanMapped is ScanRecords of the records file at path, mapped in data.
func (b *Bundle) scanMapped(path string, data []byte, release *mapping, opts ScanOptions, fn func(*loadgen.RecordColumns) error) error {
	info := RunInfoFromResult(b.Result, b.Version)
	at := 0
	var fnErr error
	err := parquet.DecodeRecordColumnsOpened(data, release.drop, func(c *loadgen.RecordColumns) error {
		release.drop()
		if !opts.Unchecked {
			check := loadgen.NewRecordTable(c.Len())
			check.AppendColumns(c)
			if err := checkRecords(check, &info, RecordsFile); err != nil {
				var re *RecordsError
				if errors.As(err, &re) {
					re.Line += at
				}
				return err
			}
		}
		at += c.Len()
		fnErr = fn(c)
		return fnErr
	})
	if err != nil && err == fnErr {
		return err
	}
	if err != nil {
		var re *RecordsError
		if errors.As(err, &re) {
			return err
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
