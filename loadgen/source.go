package loadgen

import (
	"errors"
	"iter"
	"math"
	"sort"
	"sync"
)

// RecordSource is records kept outside memory, typically a file (package
// bundle's RecordFile reads a records.parquet), that a Result reads anew
// each time its records are iterated, so that it holds none of them:
// Result.AttachSource. The records must be in strictly increasing
// sequence-id order, as a run writes them and as `aimeter merge` writes
// the union of its shards'. A source carries the columns RecordColumns
// carries: RequestBytes, ResponseBytes, Node and Error are zero in the
// records the Result yields from it, unless it is a SampleDataSource.
type RecordSource interface {
	// Len is the number of records.
	Len() int
	// Scan calls fn with every record, in order, by column, a block at a
	// time, in a RecordColumns fn must not keep (it may be reused for the
	// next block). An error from fn ends the reading and is returned; so
	// is an error reading the records.
	Scan(fn func(*RecordColumns) error) error
}

// AttachSource makes src the records of a Result rebuilt from stored
// files, in place of a table (AttachTable): Records, PassRecords,
// PassColumns, RecordCount, RecordChunks and the summaries read src each
// time they are called, holding a block of it at a time; PassTable and
// PassAccess, which visit records out of order, read the pass into a
// table. An error reading src ends the iteration that met it early (an
// iterator returns no error) and is kept: RecordSourceErr returns it.
func (r *Result) AttachSource(src RecordSource) {
	r.passes, r.stored = nil, nil
	r.source = &sourceState{src: src}
}

// RecordSourceErr returns the first error that reading the records
// attached with AttachSource, or the token times attached with
// AttachTokenSource, gave while they were iterated; nil when none
// did, or none are attached. A caller that iterated them (writing derived
// files from them, say) checks it afterwards.
func (r *Result) RecordSourceErr() error {
	if r.tokSource != nil {
		if err := r.tokSource.failed(); err != nil {
			return err
		}
	}
	if r.source == nil {
		return nil
	}
	r.source.mu.Lock()
	defer r.source.mu.Unlock()
	return r.source.err
}

// sourceState is an attached RecordSource and the first error reading it
// gave (the Result's iterators may run concurrently).
type sourceState struct {
	src RecordSource
	mu  sync.Mutex
	err error
}

// errSourceStop ends a Scan whose consumer stopped.
var errSourceStop = errors.New("loadgen: record source iteration stopped")

// fail keeps err, the first error reading the source gave.
func (s *sourceState) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// blocks yields the records with sequence ids in [first, end), by column,
// in order, in blocks of at most block records (block < 1 means 4096):
// views of the source's blocks (full slice expressions: appending to one
// copies).
func (s *sourceState) blocks(first, end uint64, block int) iter.Seq[*RecordColumns] {
	if block < 1 {
		block = 4096
	}
	return func(yield func(*RecordColumns) bool) {
		var view RecordColumns
		err := s.src.Scan(func(c *RecordColumns) error {
			n := c.Len()
			seq := c.SeqID[:n]
			lo := sort.Search(n, func(i int) bool { return seq[i] >= first })
			hi := n
			if end != math.MaxUint64 { // every record for all
				hi = sort.Search(n, func(i int) bool { return seq[i] >= end })
			}
			for at := lo; at < hi; at += block {
				to := min(at+block, hi)
				view = RecordColumns{
					SeqID: c.SeqID[at:to:to], QueryID: c.QueryID[at:to:to], SampleIndex: c.SampleIndex[at:to:to],
					ScheduledNs: c.ScheduledNs[at:to:to], IssuedNs: c.IssuedNs[at:to:to], FirstTokenNs: c.FirstTokenNs[at:to:to],
					CompletedNs: c.CompletedNs[at:to:to], Tokens: c.Tokens[at:to:to], Status: c.Status[at:to:to],
				}
				if !yield(&view) {
					return errSourceStop
				}
			}
			if hi < n {
				return errSourceStop // in sequence order: nothing of the range follows
			}
			return nil
		})
		if err != nil && err != errSourceStop {
			s.fail(err)
		}
	}
}

// all is blocks of every record.
func (s *sourceState) all(block int) iter.Seq[*RecordColumns] {
	return s.blocks(0, math.MaxUint64, block)
}

// records yields the records with sequence ids in [first, end), in order.
func (s *sourceState) records(first, end uint64) iter.Seq[Record] {
	return func(yield func(Record) bool) {
		for c := range s.blocks(first, end, tableBlock) {
			for i := range c.Len() {
				if !yield(c.Record(i)) {
					return
				}
			}
		}
	}
}

// scan is the source as a ColumnScan (for SummarizePassScan).
func (s *sourceState) scan(fn func(*RecordColumns) error) error {
	return s.src.Scan(fn)
}
