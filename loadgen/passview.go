package loadgen

import (
	"iter"
	"sync/atomic"
)

// RecordAccess is read access to the records of a pass by position
// (record i, for i in [0, Len()), is the i-th record PassRecords yields)
// and by column, without the columns only some SUTs fill: for analyses
// that visit the records out of order (a sort by issue time) or more than
// once, such as the steady-state analysis. RecordTable is one; so is the
// view of a pass run here that Result.PassAccess gives.
type RecordAccess interface {
	// Len is the number of records.
	Len() int
	// SeqID, ScheduledNs, IssuedNs, FirstTokenNs, CompletedNs, Tokens and
	// Status are the fields of record i.
	SeqID(i int) uint64
	ScheduledNs(i int) int64
	IssuedNs(i int) int64
	FirstTokenNs(i int) int64
	CompletedNs(i int) int64
	Tokens(i int) int64
	Status(i int) Status
	// Blocks yields every record by column, in order, in blocks of at
	// most block records (block < 1 means 4096), in a RecordColumns
	// reused for the next block.
	Blocks(block int) iter.Seq[*RecordColumns]
}

// PassAccess returns the records of pass i of r.Passes by position,
// holding no copy of them where it can: for a pass run here whose issued
// queries are its first ones (every pass but a shard's), a view of the
// pass's own storage; for a run read back from files whose pass lies in
// one stretch of its records, a view of them (PassTable); otherwise a
// table of them (PassTable, about 36 bytes a record of a streamed network
// run). Read it after the run: the view reads the pass as it is then.
func (r *Result) PassAccess(i int) RecordAccess {
	if r.passes != nil {
		if v, ok := r.passes[i].view(); ok {
			return v
		}
	}
	return r.PassTable(i)
}

// passView is a RecordAccess of a pass run here whose issued queries are
// its first ones: record i is sample i.
type passView struct {
	pr *passRecord
	n  int // records: the samples of the issued queries
}

// view returns the pass as a RecordAccess; false when its issued queries
// are not its first ones (a shard's pass skips the others' queries) or
// its records were dropped.
func (pr *passRecord) view() (*passView, bool) {
	p := pr.p
	if pr.dropped {
		return nil, false
	}
	q := 0
	for q < p.prepared && p.issuedAt(q) != NoTime {
		q++
	}
	for k := q; k < p.prepared; k++ {
		if p.issuedAt(k) != NoTime {
			return nil, false
		}
	}
	n := 0
	if q > 0 {
		_, n = p.gen.queryRange(q - 1)
	}
	return &passView{pr: pr, n: n}, true
}

func (v *passView) Len() int             { return v.n }
func (v *passView) SeqID(i int) uint64   { return v.pr.p.seqBase + uint64(i) }
func (v *passView) IssuedNs(i int) int64 { return v.pr.p.issuedAt(v.pr.p.queryOf(i)) }

func (v *passView) ScheduledNs(i int) int64 {
	sched, _, _ := v.pr.p.queryTimes(v.pr.p.queryOf(i))
	return sched
}

func (v *passView) FirstTokenNs(i int) int64 {
	if !v.pr.p.tokenMode {
		return NoTime
	}
	// Written by FirstToken with a CAS, from any goroutine.
	return atomic.LoadInt64(v.pr.p.firstTok.at(i))
}

func (v *passView) CompletedNs(i int) int64 {
	switch v.pr.p.state.at(i).Load() {
	case stateOK, stateError:
		return *v.pr.p.completed.at(i)
	}
	return NoTime
}

func (v *passView) Tokens(i int) int64 { return int64(*v.pr.p.tokens.at(i)) }

func (v *passView) Status(i int) Status {
	switch v.pr.p.state.at(i).Load() {
	case stateOK:
		return StatusOK
	case stateError:
		return StatusError
	}
	return StatusLost
}

func (v *passView) Blocks(block int) iter.Seq[*RecordColumns] {
	if block < 1 {
		block = 4096
	}
	return func(yield func(*RecordColumns) bool) {
		var c RecordColumns
		for lo := 0; lo < v.n; lo += block {
			c.Reset()
			v.pr.columnRange(&c, lo, min(lo+block, v.n))
			if c.Len() > 0 && !yield(&c) {
				return
			}
		}
	}
}
