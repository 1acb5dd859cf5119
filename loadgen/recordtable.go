package loadgen

import (
	"cmp"
	"iter"
	"math"
	"slices"
	"sort"
)

// RecordTable holds records read back from files (records.parquet), column
// by column, in the least memory that keeps every value exact: a column
// whose values lie on a line (a constant such as an Offline run's query id
// and scheduled time, or sequence ids counting up by one) takes no memory
// per record; one whose values lie within 2^32 of each other (sample
// indexes, the times of a run shorter than about four seconds) takes 4
// bytes a record; any other 8. An Offline run of the null SUT takes about
// 8 bytes a record instead of the 96 of a []Record.
//
// Fill a table with AppendColumns or Append, in issue order, then attach
// it to a Result (Result.AttachTable). The zero value is an empty table
// with no size hint.
type RecordTable struct {
	n    int // records held
	hint int // the number of records expected, for allocating a column once

	seq, query, index, sched, issued, first, done, tokens, status tableCol
	reqBytes, respBytes, node, errIdx                             tableCol

	unsorted bool // some sequence id is not above the one before it
}

// NewRecordTable returns an empty table that expects capacity records:
// a column that needs per-record storage allocates it once at that size.
func NewRecordTable(capacity int) *RecordTable {
	return &RecordTable{hint: max(capacity, 0)}
}

// Len is the number of records held.
func (t *RecordTable) Len() int { return t.n }

// Bytes is the memory the table holds for its records, in bytes.
func (t *RecordTable) Bytes() int {
	n := 0
	for _, c := range t.cols() {
		n += c.bytes()
	}
	return n
}

func (t *RecordTable) cols() []*tableCol {
	return []*tableCol{&t.seq, &t.query, &t.index, &t.sched, &t.issued, &t.first, &t.done, &t.tokens, &t.status,
		&t.reqBytes, &t.respBytes, &t.node, &t.errIdx}
}

// AppendColumns appends the records of c. The columns c does not carry
// (RequestBytes, ResponseBytes, Node, Error) are zero; SetSampleData sets
// them.
func (t *RecordTable) AppendColumns(c *RecordColumns) {
	n := c.Len()
	if n == 0 {
		return
	}
	seq := c.SeqID[:n]
	prev := uint64(0)
	if t.n > 0 {
		prev = uint64(t.seq.at(t.n - 1))
	}
	for i, s := range seq {
		if (t.n > 0 || i > 0) && s <= prev {
			t.unsorted = true
		}
		prev = s
	}
	t.seq.pushUint(t.n, seq, t.hint)
	t.query.pushUint(t.n, c.QueryID[:n], t.hint)
	t.index.pushUint(t.n, c.SampleIndex[:n], t.hint)
	t.sched.push(t.n, c.ScheduledNs[:n], t.hint)
	t.issued.push(t.n, c.IssuedNs[:n], t.hint)
	t.first.push(t.n, c.FirstTokenNs[:n], t.hint)
	t.done.push(t.n, c.CompletedNs[:n], t.hint)
	t.tokens.push(t.n, c.Tokens[:n], t.hint)
	for i, s := range c.Status[:n] {
		t.status.push1(t.n+i, int64(s), t.hint)
	}
	for _, col := range []*tableCol{&t.reqBytes, &t.respBytes, &t.node, &t.errIdx} {
		col.pushZeros(t.n, n, t.hint)
	}
	t.n += n
}

// Append appends records, every column of them.
func (t *RecordTable) Append(recs ...Record) {
	for i := range recs {
		r := &recs[i]
		if t.n > 0 && r.SeqID <= uint64(t.seq.at(t.n-1)) {
			t.unsorted = true
		}
		t.seq.push1(t.n, int64(r.SeqID), t.hint)
		t.query.push1(t.n, int64(r.QueryID), t.hint)
		t.index.push1(t.n, int64(r.SampleIndex), t.hint)
		t.sched.push1(t.n, r.ScheduledNs, t.hint)
		t.issued.push1(t.n, r.IssuedNs, t.hint)
		t.first.push1(t.n, r.FirstTokenNs, t.hint)
		t.done.push1(t.n, r.CompletedNs, t.hint)
		t.tokens.push1(t.n, r.Tokens, t.hint)
		t.status.push1(t.n, int64(r.Status), t.hint)
		t.reqBytes.push1(t.n, r.RequestBytes, t.hint)
		t.respBytes.push1(t.n, r.ResponseBytes, t.hint)
		t.node.push1(t.n, int64(r.Node), t.hint)
		t.errIdx.push1(t.n, int64(r.Error), t.hint)
		t.n++
	}
}

// SetSampleData sets the columns only some SUTs fill of record i.
func (t *RecordTable) SetSampleData(i int, requestBytes, responseBytes int64, node, errIdx uint32) {
	t.reqBytes.set(i, requestBytes, t.n)
	t.respBytes.set(i, responseBytes, t.n)
	t.node.set(i, int64(node), t.n)
	t.errIdx.set(i, int64(errIdx), t.n)
}

// Record returns record i.
func (t *RecordTable) Record(i int) Record {
	return Record{SeqID: uint64(t.seq.at(i)), QueryID: uint64(t.query.at(i)), SampleIndex: uint64(t.index.at(i)),
		ScheduledNs: t.sched.at(i), IssuedNs: t.issued.at(i), FirstTokenNs: t.first.at(i), CompletedNs: t.done.at(i),
		Tokens: t.tokens.at(i), Status: Status(t.status.at(i)),
		RequestBytes: t.reqBytes.at(i), ResponseBytes: t.respBytes.at(i), Node: uint32(t.node.at(i)), Error: uint32(t.errIdx.at(i))}
}

// All yields every record of t, in order.
func (t *RecordTable) All() iter.Seq[Record] { return t.records(0, t.n) }

// SeqID returns the sequence id of record i.
func (t *RecordTable) SeqID(i int) uint64 { return uint64(t.seq.at(i)) }

// ScheduledNs returns the scheduled time of record i: Record(i).ScheduledNs
// without the other fields (so do the accessors below, for analyses that
// visit the records out of order, such as a sort by issue time).
func (t *RecordTable) ScheduledNs(i int) int64 { return t.sched.at(i) }

// IssuedNs returns the issue time of record i.
func (t *RecordTable) IssuedNs(i int) int64 { return t.issued.at(i) }

// FirstTokenNs returns the first-token time of record i (NoTime for none).
func (t *RecordTable) FirstTokenNs(i int) int64 { return t.first.at(i) }

// CompletedNs returns the completion time of record i (NoTime for a lost
// sample).
func (t *RecordTable) CompletedNs(i int) int64 { return t.done.at(i) }

// Tokens returns the output tokens of record i.
func (t *RecordTable) Tokens(i int) int64 { return t.tokens.at(i) }

// Status returns the status of record i.
func (t *RecordTable) Status(i int) Status { return Status(t.status.at(i)) }

// timings returns records [lo, hi) of t as a table that shares t's
// storage (t must not change afterwards), without the columns only some
// SUTs fill (RequestBytes, ResponseBytes, Node and Error are zero in it).
func (t *RecordTable) timings(lo, hi int) *RecordTable {
	s := &RecordTable{n: hi - lo, hint: hi - lo, unsorted: t.unsorted}
	for k, c := range []*tableCol{&t.seq, &t.query, &t.index, &t.sched, &t.issued, &t.first, &t.done, &t.tokens, &t.status} {
		*s.cols()[k] = c.slice(lo, hi)
	}
	if !t.unsorted {
		return s
	}
	// The records out of order may lie outside [lo, hi).
	s.unsorted = false
	for i := 1; i < s.n; i++ {
		if s.SeqID(i) <= s.SeqID(i-1) {
			s.unsorted = true
			break
		}
	}
	return s
}

// Finder returns a function that finds the record of a sequence id. With
// the records in sequence order (as a run writes them) it searches them
// and allocates nothing; otherwise it sorts their indexes once (4 bytes a
// record). With a sequence id given twice it finds one of them.
func (t *RecordTable) Finder() func(seq uint64) (int, bool) {
	if !t.unsorted {
		next := 0 // rows usually come in the records' order
		return func(seq uint64) (int, bool) {
			if next < t.n && uint64(t.seq.at(next)) == seq {
				next++
				return next - 1, true
			}
			i := sort.Search(t.n, func(i int) bool { return uint64(t.seq.at(i)) >= seq })
			if i < t.n && uint64(t.seq.at(i)) == seq {
				next = i + 1
				return i, true
			}
			return i, false
		}
	}
	if t.n > math.MaxInt32 {
		pos := make(map[uint64]int, t.n)
		for i := range t.n {
			pos[uint64(t.seq.at(i))] = i
		}
		return func(seq uint64) (int, bool) {
			i, ok := pos[seq]
			return i, ok
		}
	}
	// Out of order: the records' indexes sorted by sequence id, 4 bytes a
	// record (a map would take ten times that).
	order := make([]int32, t.n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Compare(uint64(t.seq.at(int(a))), uint64(t.seq.at(int(b))))
	})
	return func(seq uint64) (int, bool) {
		k := sort.Search(len(order), func(k int) bool { return uint64(t.seq.at(int(order[k]))) >= seq })
		if k < len(order) && uint64(t.seq.at(int(order[k]))) == seq {
			return int(order[k]), true
		}
		return 0, false
	}
}

// HasSampleData reports whether any record carries request or response
// bytes, a node or an error.
func (t *RecordTable) HasSampleData() bool {
	for _, c := range []*tableCol{&t.reqBytes, &t.respBytes, &t.node, &t.errIdx} {
		if !c.allZero(t.n) {
			return true
		}
	}
	return false
}

// appendColumns appends records [from, to) of t to c (without the
// columns only some SUTs fill).
func (t *RecordTable) appendColumns(c *RecordColumns, from, to int) {
	at := c.grow(to - from)
	t.seq.fillUint(c.SeqID[at:], from)
	t.query.fillUint(c.QueryID[at:], from)
	t.index.fillUint(c.SampleIndex[at:], from)
	t.sched.fill(c.ScheduledNs[at:], from)
	t.issued.fill(c.IssuedNs[at:], from)
	t.first.fill(c.FirstTokenNs[at:], from)
	t.done.fill(c.CompletedNs[at:], from)
	t.tokens.fill(c.Tokens[at:], from)
	st := c.Status[at:]
	for i := range st {
		st[i] = Status(t.status.at(from + i))
	}
}

// tableBlock is how many records the iterators of a table assemble at a
// time.
const tableBlock = 1024

// records yields records [from, to) of t.
func (t *RecordTable) records(from, to int) iter.Seq[Record] {
	return func(yield func(Record) bool) {
		var c RecordColumns
		var extra [4][]int64
		for i := range extra {
			extra[i] = make([]int64, tableBlock)
		}
		buf := make([]Record, tableBlock)
		for lo := from; lo < to; lo += tableBlock {
			hi := min(lo+tableBlock, to)
			c.Reset()
			t.appendColumns(&c, lo, hi)
			m := hi - lo
			t.reqBytes.fill(extra[0][:m], lo)
			t.respBytes.fill(extra[1][:m], lo)
			t.node.fill(extra[2][:m], lo)
			t.errIdx.fill(extra[3][:m], lo)
			for i := range m {
				buf[i] = Record{SeqID: c.SeqID[i], QueryID: c.QueryID[i], SampleIndex: c.SampleIndex[i],
					ScheduledNs: c.ScheduledNs[i], IssuedNs: c.IssuedNs[i], FirstTokenNs: c.FirstTokenNs[i],
					CompletedNs: c.CompletedNs[i], Tokens: c.Tokens[i], Status: c.Status[i],
					RequestBytes: extra[0][i], ResponseBytes: extra[1][i], Node: uint32(extra[2][i]), Error: uint32(extra[3][i])}
			}
			for i := range m {
				if !yield(buf[i]) {
					return
				}
			}
		}
	}
}

// blocks yields records [from, to) of t by column, in blocks of at most
// block records, in a RecordColumns reused for the next block.
func (t *RecordTable) blocks(from, to, block int) iter.Seq[*RecordColumns] {
	return func(yield func(*RecordColumns) bool) {
		var c RecordColumns
		for lo := from; lo < to; lo += block {
			c.Reset()
			t.appendColumns(&c, lo, min(lo+block, to))
			if !yield(&c) {
				return
			}
		}
	}
}

// passRange returns the records [lo, hi) of t that hold every record with
// a sequence id in [first, end), the number n of those, and whether every
// record of the range is one of them.
func (t *RecordTable) passRange(first, end uint64) (lo, hi, n int, contiguous bool) {
	if !t.unsorted {
		lo = sort.Search(t.n, func(i int) bool { return uint64(t.seq.at(i)) >= first })
		hi = sort.Search(t.n, func(i int) bool { return uint64(t.seq.at(i)) >= end })
		return lo, hi, hi - lo, true
	}
	lo = t.n
	for i := range t.n {
		if s := uint64(t.seq.at(i)); s >= first && s < end {
			lo, hi, n = min(lo, i), i+1, n+1
		}
	}
	lo = min(lo, hi)
	return lo, hi, n, n == hi-lo
}

// passBlocks yields the records with sequence ids in [first, end) by
// column, in order, in blocks of at most block records.
func (t *RecordTable) passBlocks(first, end uint64, block int) iter.Seq[*RecordColumns] {
	lo, hi, _, contiguous := t.passRange(first, end)
	if contiguous {
		return t.blocks(lo, hi, block)
	}
	return func(yield func(*RecordColumns) bool) {
		var out RecordColumns
		for c := range t.blocks(lo, hi, block) {
			out.Reset()
			for i, s := range c.SeqID {
				if s >= first && s < end {
					out.AppendRange(c, i, i+1)
				}
			}
			if out.Len() > 0 && !yield(&out) {
				return
			}
		}
	}
}

// passHasNodes reports whether a record with a sequence id in [first,
// end) names a node.
func (t *RecordTable) passHasNodes(first, end uint64) bool {
	if t.node.allZero(t.n) {
		return false
	}
	lo, hi, _, contiguous := t.passRange(first, end)
	for i := lo; i < hi; i++ {
		if t.node.at(i) != 0 {
			if s := t.SeqID(i); contiguous || (s >= first && s < end) {
				return true
			}
		}
	}
	return false
}

// Blocks yields every record of t by column, in order, in blocks of at
// most block records (block < 1 means 4096), in a RecordColumns reused
// for the next block: the columns RecordColumns carries, without building
// a Record.
func (t *RecordTable) Blocks(block int) iter.Seq[*RecordColumns] {
	if block < 1 {
		block = 4096
	}
	return t.blocks(0, t.n, block)
}

// passRecords yields the records with sequence ids in [first, end), in
// order.
func (t *RecordTable) passRecords(first, end uint64) iter.Seq[Record] {
	lo, hi, _, contiguous := t.passRange(first, end)
	if contiguous {
		return t.records(lo, hi)
	}
	return func(yield func(Record) bool) {
		for r := range t.records(lo, hi) {
			if r.SeqID >= first && r.SeqID < end && !yield(r) {
				return
			}
		}
	}
}

// colMode is how a tableCol holds its values.
type colMode uint8

const (
	colLine   colMode = iota // value i is base + step×i
	colNarrow                // value i is base + narrow[i]
	colWide                  // value i is wide[i]
)

// tableCol is one column of a RecordTable, of int64 values (uint64 ones by
// their bits). It holds them as a line while every value so far lies on
// it, then as 32-bit offsets from a base while every value fits them, then
// as the values themselves. Arithmetic wraps, and a value is kept in a
// form only after checking that the form gives it back exactly.
type tableCol struct {
	mode       colMode
	stepSet    bool // two values were seen: step is known
	base, step int64
	narrow     []uint32
	wide       []int64
}

func (c *tableCol) at(i int) int64 {
	switch c.mode {
	case colLine:
		return c.base + c.step*int64(i)
	case colNarrow:
		return c.base + int64(c.narrow[i])
	}
	return c.wide[i]
}

func (c *tableCol) bytes() int { return 4*cap(c.narrow) + 8*cap(c.wide) }

// slice returns values [lo, hi) of c as a column that shares its storage
// (full slice expressions: appending to it copies).
func (c *tableCol) slice(lo, hi int) tableCol {
	s := *c
	switch c.mode {
	case colLine:
		s.base = c.base + c.step*int64(lo)
		s.stepSet = c.stepSet && hi-lo >= 2
		if !s.stepSet {
			s.step = 0
		}
	case colNarrow:
		s.narrow = c.narrow[lo:hi:hi]
	default:
		s.wide = c.wide[lo:hi:hi]
	}
	return s
}

// fill sets dst to values [from, from+len(dst)).
func (c *tableCol) fill(dst []int64, from int) {
	switch c.mode {
	case colLine:
		v := c.base + c.step*int64(from)
		for i := range dst {
			dst[i] = v
			v += c.step
		}
	case colNarrow:
		src := c.narrow[from : from+len(dst)]
		for i, u := range src {
			dst[i] = c.base + int64(u)
		}
	default:
		copy(dst, c.wide[from:])
	}
}

func (c *tableCol) fillUint(dst []uint64, from int) {
	switch c.mode {
	case colLine:
		v := uint64(c.base + c.step*int64(from))
		for i := range dst {
			dst[i] = v
			v += uint64(c.step)
		}
	case colNarrow:
		src := c.narrow[from : from+len(dst)]
		for i, u := range src {
			dst[i] = uint64(c.base + int64(u))
		}
	default:
		for i, v := range c.wide[from : from+len(dst)] {
			dst[i] = uint64(v)
		}
	}
}

// push appends vals, the first of which is value n.
func (c *tableCol) push(n int, vals []int64, hint int) { pushValues(c, n, vals, hint) }

// pushUint is push of uint64 values, by their bits.
func (c *tableCol) pushUint(n int, vals []uint64, hint int) { pushValues(c, n, vals, hint) }

// pushValues appends vals, the first of which is value n: a run of values
// that keep the column's form at a time, then the one that changes it.
func pushValues[T int64 | uint64](c *tableCol, n int, vals []T, hint int) {
	for len(vals) > 0 {
		k := 0
		switch c.mode {
		case colLine:
			if c.stepSet {
				v := c.base + c.step*int64(n)
				for k < len(vals) && int64(vals[k]) == v {
					k, v = k+1, v+c.step
				}
			}
		case colNarrow:
			for k < len(vals) && uint64(int64(vals[k])-c.base) < 1<<32 {
				k++
			}
			m := len(c.narrow)
			if m+k > cap(c.narrow) {
				c.narrow = slices.Grow(c.narrow, max(k, hint-m))
			}
			c.narrow = c.narrow[:m+k]
			dst := c.narrow[m:]
			for j, v := range vals[:k] {
				dst[j] = uint32(int64(v) - c.base)
			}
		case colWide:
			m := len(c.wide)
			if m+len(vals) > cap(c.wide) {
				c.wide = slices.Grow(c.wide, max(len(vals), hint-m))
			}
			c.wide = c.wide[:m+len(vals)]
			for j, v := range vals {
				c.wide[m+j] = int64(v)
			}
			return
		}
		n, vals = n+k, vals[k:]
		if len(vals) > 0 {
			c.push1(n, int64(vals[0]), hint)
			n, vals = n+1, vals[1:]
		}
	}
}

// pushZeros appends k zeros, the first being value n.
func (c *tableCol) pushZeros(n, k int, hint int) {
	if c.mode == colLine && c.base == 0 && c.step == 0 {
		c.stepSet = c.stepSet || n+k >= 2
		return
	}
	for i := range k {
		c.push1(n+i, 0, hint)
	}
}

// push1 appends v as value n.
func (c *tableCol) push1(n int, v int64, hint int) {
	switch c.mode {
	case colLine:
		switch {
		case n == 0:
			c.base = v
			return
		case !c.stepSet:
			c.step, c.stepSet = v-c.base, true
			return
		case v == c.base+c.step*int64(n):
			return
		}
		c.unline(n, v, hint)
		return
	case colNarrow:
		if off := uint64(v - c.base); off < 1<<32 {
			c.narrow = append(c.narrow, uint32(off))
			return
		}
		c.widen(hint)
	}
	c.wide = append(c.wide, v)
}

// unline moves a line of n values to narrow or wide storage, as v, the
// next value, needs, and appends v.
func (c *tableCol) unline(n int, v int64, hint int) {
	c.store(n, max(hint, n+1))
	c.push1(n, v, hint)
}

// store moves the n values of a line to narrow storage, centred on its
// middle, if every one of them fits it, otherwise to wide storage; the
// slice gets capacity capacity.
func (c *tableCol) store(n, capacity int) {
	base := c.base + c.step*int64((n-1)/2) - 1<<31
	if lo, hi := min(c.base, c.at(n-1)), max(c.base, c.at(n-1)); lo >= NoTime && hi < 1<<32+NoTime {
		// Times from the start of the run (or NoTime) and indexes: from
		// NoTime up, the widest reach they can have.
		base = NoTime
	}
	s := make([]uint32, n, capacity)
	for i := range s {
		off := uint64(c.at(i) - base)
		if off >= 1<<32 {
			w := make([]int64, n, capacity)
			c.fill(w, 0)
			c.mode, c.wide = colWide, w
			return
		}
		s[i] = uint32(off)
	}
	c.mode, c.base, c.narrow = colNarrow, base, s
}

// widen moves narrow storage to wide.
func (c *tableCol) widen(hint int) {
	s := make([]int64, len(c.narrow), max(hint, len(c.narrow)+1))
	c.fill(s, 0)
	c.mode, c.wide, c.narrow = colWide, s, nil
}

// set sets value i of a column of n values.
func (c *tableCol) set(i int, v int64, n int) {
	if c.at(i) == v {
		return
	}
	if c.mode == colLine {
		c.store(n, n)
	}
	if c.mode == colNarrow {
		if off := uint64(v - c.base); off < 1<<32 {
			c.narrow[i] = uint32(off)
			return
		}
		c.widen(n)
	}
	c.wide[i] = v
}

// allZero reports whether the first n values are all zero.
func (c *tableCol) allZero(n int) bool {
	if c.mode == colLine {
		return n == 0 || (c.base == 0 && (n == 1 || c.step == 0))
	}
	for i := range n {
		if c.at(i) != 0 {
			return false
		}
	}
	return true
}
