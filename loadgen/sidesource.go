package loadgen

import (
	"errors"
	"math"
	"slices"
	"sync"
)

// SampleDataSource is a RecordSource whose records also carry their
// sample data (RequestBytes, ResponseBytes, Node, Error), which
// RecordColumns has no columns for: package bundle's RecordFile joined to
// a samples.parquet. A Result with such a source attached (AttachSource)
// yields whole records from Records and PassRecords, reads HasSampleData
// from it, and PassHasNodes reads the pass's records.
type SampleDataSource interface {
	RecordSource
	// HasSampleData reports whether any record carries request or
	// response bytes, a node or an error.
	HasSampleData() bool
	// ScanRecords calls fn with every record, whole, in order, a block at
	// a time, in a slice fn must not keep (it may be reused for the next
	// block). An error from fn ends the reading and is returned; so is an
	// error reading the records.
	ScanRecords(fn func([]Record) error) error
}

// sampleData is the source's SampleDataSource, or nil when it is none or
// holds no sample data.
func (s *sourceState) sampleData() SampleDataSource {
	if sd, ok := s.src.(SampleDataSource); ok && sd.HasSampleData() {
		return sd
	}
	return nil
}

// wholeRecords yields the whole records with sequence ids in [first,
// end) of sd, in order.
func (s *sourceState) wholeRecords(sd SampleDataSource, first, end uint64) func(func(Record) bool) {
	return func(yield func(Record) bool) {
		err := sd.ScanRecords(func(recs []Record) error {
			for i := range recs {
				switch seq := recs[i].SeqID; {
				case seq < first:
					continue
				case end != math.MaxUint64 && seq >= end:
					return errSourceStop // in sequence order: nothing of the range follows
				}
				if !yield(recs[i]) {
					return errSourceStop
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, errSourceStop) {
			s.fail(err)
		}
	}
}

// TokenSource is token times kept outside memory, typically a file
// (package bundle's TokenFile reads a tokens.parquet), that a Result reads
// anew each time its token times are iterated: AttachTokenSource.
type TokenSource interface {
	// ScanTokens calls fn with the sequence id and token times of every
	// sample that has them, in increasing sequence order; fn must not
	// keep the times (the slice may be reused). An error from fn ends the
	// reading and is returned; so is an error reading the times.
	ScanTokens(fn func(seq uint64, times []int64) error) error
}

// AttachTokenSource makes src the token times of a Result rebuilt from
// stored files, in place of AttachTokenTimes: TokenTimes and
// HasTokenTimes read src each time they are called (TokenTimes yields a
// fresh slice for each sample), holding one sample's times of it at a
// time besides what src holds. An error reading src ends the iteration
// that met it early and is kept: RecordSourceErr returns it.
func (r *Result) AttachTokenSource(src TokenSource) {
	r.storedToks = nil
	r.tokSource = &tokenSourceState{src: src}
}

// tokenSourceState is an attached TokenSource and the first error
// reading it gave.
type tokenSourceState struct {
	src TokenSource
	mu  sync.Mutex
	err error
}

// times yields the source's token times, each in a new slice.
func (s *tokenSourceState) times(yield func(uint64, []int64) bool) {
	err := s.src.ScanTokens(func(seq uint64, times []int64) error {
		if !yield(seq, slices.Clone(times)) {
			return errSourceStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errSourceStop) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err == nil {
			s.err = err
		}
	}
}

// failed is the first error reading the source gave.
func (s *tokenSourceState) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
