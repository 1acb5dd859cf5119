package parquet

import (
	"fmt"
	"runtime"
)

// Names of the files of a bundle this codec writes and reads (package
// bundle gives them to its users).
const (
	RecordsFile    = "records.parquet" // one row per issued sample
	RecordsCSVFile = "records.csv"     // the record file of a version 1 bundle
	StagesFile     = "stages.parquet"  // the SUT-side stage times
	SamplesFile    = "samples.parquet" // the sample data
	TokensFile     = "tokens.parquet"  // the token times
	ErrorsFile     = "errors.json"     // the failed samples' errors, which samples.parquet refers to
)

// RecordsError is a bad record in a record file: the 1-based line of
// records.csv (the header is line 1) or row of records.parquet, the field
// when one is to blame, and what is wrong.
type RecordsError struct {
	// File is the record file: RecordsFile (records.parquet) or, when
	// empty, RecordsCSVFile (records.csv).
	File  string
	Line  int    // the line of records.csv or the row of records.parquet, from 1
	Field string // "" when the whole line is wrong
	Msg   string
}

func (e *RecordsError) Error() string {
	where := fmt.Sprintf("%s line %d", RecordsCSVFile, e.Line)
	if e.File == RecordsFile {
		where = fmt.Sprintf("%s row %d", RecordsFile, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", where, e.Msg)
	}
	return fmt.Sprintf("%s: field %s: %s", where, e.Field, e.Msg)
}

// defaultWorkers is the number of encoding or decoding goroutines.
func defaultWorkers() int { return runtime.GOMAXPROCS(0) }
