package loadgen

import (
	"iter"
	"slices"
	"sync/atomic"
)

// RecordColumns holds records column by column: element i of every slice
// belongs to the same record. It carries the fields every SUT fills; the
// columns that only some SUTs fill (RequestBytes, ResponseBytes, Node,
// Error) are in Records. Writers of columnar files and aggregators read it
// without building a Record per sample.
type RecordColumns struct {
	SeqID        []uint64
	QueryID      []uint64
	SampleIndex  []uint64
	ScheduledNs  []int64
	IssuedNs     []int64
	FirstTokenNs []int64
	CompletedNs  []int64
	Tokens       []int64
	Status       []Status
}

// Len is the number of records held.
func (c *RecordColumns) Len() int { return len(c.SeqID) }

// Reset empties c, keeping its storage.
func (c *RecordColumns) Reset() {
	c.SeqID, c.QueryID, c.SampleIndex = c.SeqID[:0], c.QueryID[:0], c.SampleIndex[:0]
	c.ScheduledNs, c.IssuedNs, c.FirstTokenNs, c.CompletedNs = c.ScheduledNs[:0], c.IssuedNs[:0], c.FirstTokenNs[:0], c.CompletedNs[:0]
	c.Tokens, c.Status = c.Tokens[:0], c.Status[:0]
}

// Append appends the records recs.
func (c *RecordColumns) Append(recs ...Record) {
	for i := range recs {
		r := &recs[i]
		c.SeqID = append(c.SeqID, r.SeqID)
		c.QueryID = append(c.QueryID, r.QueryID)
		c.SampleIndex = append(c.SampleIndex, r.SampleIndex)
		c.ScheduledNs = append(c.ScheduledNs, r.ScheduledNs)
		c.IssuedNs = append(c.IssuedNs, r.IssuedNs)
		c.FirstTokenNs = append(c.FirstTokenNs, r.FirstTokenNs)
		c.CompletedNs = append(c.CompletedNs, r.CompletedNs)
		c.Tokens = append(c.Tokens, r.Tokens)
		c.Status = append(c.Status, r.Status)
	}
}

// Grow makes room for n more records, so that appending them allocates
// nothing.
func (c *RecordColumns) Grow(n int) {
	c.SeqID = slices.Grow(c.SeqID, n)
	c.QueryID = slices.Grow(c.QueryID, n)
	c.SampleIndex = slices.Grow(c.SampleIndex, n)
	c.ScheduledNs = slices.Grow(c.ScheduledNs, n)
	c.IssuedNs = slices.Grow(c.IssuedNs, n)
	c.FirstTokenNs = slices.Grow(c.FirstTokenNs, n)
	c.CompletedNs = slices.Grow(c.CompletedNs, n)
	c.Tokens = slices.Grow(c.Tokens, n)
	c.Status = slices.Grow(c.Status, n)
}

// AppendRange appends records [from, to) of src.
func (c *RecordColumns) AppendRange(src *RecordColumns, from, to int) {
	c.SeqID = append(c.SeqID, src.SeqID[from:to]...)
	c.QueryID = append(c.QueryID, src.QueryID[from:to]...)
	c.SampleIndex = append(c.SampleIndex, src.SampleIndex[from:to]...)
	c.ScheduledNs = append(c.ScheduledNs, src.ScheduledNs[from:to]...)
	c.IssuedNs = append(c.IssuedNs, src.IssuedNs[from:to]...)
	c.FirstTokenNs = append(c.FirstTokenNs, src.FirstTokenNs[from:to]...)
	c.CompletedNs = append(c.CompletedNs, src.CompletedNs[from:to]...)
	c.Tokens = append(c.Tokens, src.Tokens[from:to]...)
	c.Status = append(c.Status, src.Status[from:to]...)
}

// Record returns record i.
func (c *RecordColumns) Record(i int) Record {
	return Record{SeqID: c.SeqID[i], QueryID: c.QueryID[i], SampleIndex: c.SampleIndex[i],
		ScheduledNs: c.ScheduledNs[i], IssuedNs: c.IssuedNs[i], FirstTokenNs: c.FirstTokenNs[i],
		CompletedNs: c.CompletedNs[i], Tokens: c.Tokens[i], Status: c.Status[i]}
}

// grow extends every column of c by n elements and returns the index of
// the first new one.
func (c *RecordColumns) grow(n int) int {
	at := c.Len()
	c.SeqID = extend(c.SeqID, n)
	c.QueryID = extend(c.QueryID, n)
	c.SampleIndex = extend(c.SampleIndex, n)
	c.ScheduledNs = extend(c.ScheduledNs, n)
	c.IssuedNs = extend(c.IssuedNs, n)
	c.FirstTokenNs = extend(c.FirstTokenNs, n)
	c.CompletedNs = extend(c.CompletedNs, n)
	c.Tokens = extend(c.Tokens, n)
	c.Status = extend(c.Status, n)
	return at
}

func extend[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s[:len(s)+n]
	}
	t := make([]T, len(s)+n, max(len(s)+n, 2*cap(s)))
	copy(t, s)
	return t
}

// ColumnChunks is RecordChunks by column: it splits the records into at
// most n contiguous parts, in order, and part k appends its records to
// the RecordColumns it is given. The parts may be filled concurrently
// (into different RecordColumns). n < 1 is read as 1. Records attached
// with AttachSource are one part, which appends them all: it holds them.
func (r *Result) ColumnChunks(n int) []func(*RecordColumns) {
	n = max(n, 1)
	total := r.storedLen()
	for _, pr := range r.passes {
		total += int(pr.p.extent.Load())
	}
	size := max((total+n-1)/n, 1)
	var out []func(*RecordColumns)
	if r.source != nil {
		// One part, which holds every record of the source: a part of a
		// source would read it from its start.
		return append(out, func(c *RecordColumns) {
			for b := range r.source.all(total) {
				c.AppendRange(b, 0, b.Len())
			}
		})
	}
	for lo := 0; lo < r.storedLen(); lo += size {
		from, to := lo, min(lo+size, r.storedLen())
		out = append(out, func(c *RecordColumns) { r.stored.appendColumns(c, from, to) })
	}
	for _, pr := range r.passes {
		n := int(pr.p.extent.Load())
		for lo := 0; lo < n; lo += size {
			from, to := lo, min(lo+size, n)
			out = append(out, func(c *RecordColumns) { pr.columnRange(c, from, to) })
		}
	}
	return out
}

// columnRange appends the records of the issued samples among samples
// [from, to) of the pass to c: recordRange by column.
func (pr *passRecord) columnRange(c *RecordColumns, from, to int) {
	pr.columnRangeQ(c, from, to, pr.p.prepared)
}

// columnRangeQ is columnRange over queries below qEnd only (see
// recordRangeQ).
func (pr *passRecord) columnRangeQ(c *RecordColumns, from, to, qEnd int) {
	p := pr.p
	g := p.gen
	for q := from / g.spq; q < qEnd; q++ {
		qs, qe := g.queryRange(q)
		s, e := max(qs, from), min(qe, to)
		if s >= e {
			break
		}
		sched, issued, ok := p.queryTimes(q)
		if !ok {
			continue
		}
		samples := g.query(q)[s-qs : e-qs]
		at := c.grow(e - s)
		// Every column cut to the samples' length, so that the loop's
		// indexing needs no bounds checks.
		n := len(samples)
		seq, qid, idx := c.SeqID[at:][:n], c.QueryID[at:][:n], c.SampleIndex[at:][:n]
		sc, is, ft := c.ScheduledNs[at:][:n], c.IssuedNs[at:][:n], c.FirstTokenNs[at:][:n]
		qidv := pr.queryBase + uint64(q)
		for k := range samples {
			seq[k] = p.seqBase + uint64(s+k)
			qid[k] = qidv
			idx[k] = samples[k].Index
			sc[k], is[k], ft[k] = sched, issued, NoTime
		}
		// The per-sample arrays, a page at a time.
		for i := s; i < e; {
			pk := i >> pageShift
			j0 := i & pageMask
			j1 := min(pageLen, j0+e-i)
			comp, toks, state := p.completed.page(pk), p.tokens.page(pk), p.state.page(pk)
			var first *[pageLen]int64
			if p.tokenMode {
				first = p.firstTok.page(pk)
			}
			base := at + i - s
			cd := c.CompletedNs[base : base+j1-j0]
			m := len(cd)
			tk, st := c.Tokens[base:][:m], c.Status[base:][:m]
			cp, tp, sp := comp[j0:][:m], toks[j0:][:m], state[j0:][:m]
			for k := range cd {
				tk[k] = int64(tp[k])
				switch sp[k].Load() {
				case stateOK:
					st[k], cd[k] = StatusOK, cp[k]
				case stateError:
					st[k], cd[k] = StatusError, cp[k]
				default:
					st[k], cd[k] = StatusLost, NoTime
				}
			}
			if first != nil {
				fd, fp := c.FirstTokenNs[base:][:m], first[j0:][:m]
				for k := range fd {
					// Written by FirstToken with a CAS, from any goroutine.
					fd[k] = atomic.LoadInt64(&fp[k])
				}
			}
			i += j1 - j0
		}
	}
}

// PassColumns yields the records of pass i of r.Passes in blocks of at
// most block records (block < 1 means 4096), column by column: the
// records of PassRecords, without the columns only some SUTs fill. The
// RecordColumns yielded is reused for the next block.
func (r *Result) PassColumns(i, block int) iter.Seq[*RecordColumns] {
	if block < 1 {
		block = 4096
	}
	return func(yield func(*RecordColumns) bool) {
		if r.passes == nil {
			if r.source != nil {
				info := r.Passes[i]
				r.source.blocks(info.FirstSeq, info.EndSeq, block)(yield)
				return
			}
			if r.stored != nil {
				info := r.Passes[i]
				r.stored.passBlocks(info.FirstSeq, info.EndSeq, block)(yield)
			}
			return
		}
		r.passes[i].columns(block)(yield)
	}
}

// columns is PassColumns of a pass run here.
func (pr *passRecord) columns(block int) iter.Seq[*RecordColumns] {
	if block < 1 {
		block = 4096
	}
	return func(yield func(*RecordColumns) bool) {
		var c RecordColumns
		n := int(pr.p.extent.Load())
		for lo := 0; lo < n; lo += block {
			c.Reset()
			pr.columnRange(&c, lo, min(lo+block, n))
			if c.Len() > 0 && !yield(&c) {
				return
			}
		}
	}
}

// RecordBlocks yields the records of seq in blocks of 4096, by column, in
// a RecordColumns reused for the next block.
func RecordBlocks(seq iter.Seq[Record]) iter.Seq[*RecordColumns] {
	return func(yield func(*RecordColumns) bool) {
		var c RecordColumns
		for rec := range seq {
			c.Append(rec)
			if c.Len() == 4096 {
				if !yield(&c) {
					return
				}
				c.Reset()
			}
		}
		if c.Len() > 0 {
			yield(&c)
		}
	}
}
