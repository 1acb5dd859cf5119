package loadgen

import (
	"fmt"
	"iter"
	"math"
	"sync/atomic"
)

// AttachRecords gives a Result rebuilt from stored files (settings.json and
// records.csv) its records, so that Records, RecordCount and PassRecords
// work as for a live run. Records must be in issue order. Their Error
// fields index r.Errors, which the caller restores as well; token times are
// attached with AttachTokenTimes.
func (r *Result) AttachRecords(records []Record) {
	t := NewRecordTable(len(records))
	t.Append(records...)
	r.AttachTable(t)
}

// AttachTable is AttachRecords of the records of t, which the Result keeps
// (and which must not be changed afterwards).
func (r *Result) AttachTable(t *RecordTable) {
	r.passes, r.source = nil, nil
	r.stored = t
}

// storedLen is the number of records read back from files.
func (r *Result) storedLen() int {
	switch {
	case r.source != nil:
		return r.source.src.Len()
	case r.stored == nil:
		return 0
	}
	return r.stored.Len()
}

// TokenTrace is the token arrival times of one sample of a streaming
// response (Response.TokenTimes), on the run's clock.
type TokenTrace struct {
	SeqID   uint64
	TimesNs []int64
}

// AttachTokenTimes gives a Result rebuilt from stored files the token times
// of its samples, in sequence order, so that TokenTimes works as for a live
// run. Call it after AttachRecords.
func (r *Result) AttachTokenTimes(traces []TokenTrace) {
	r.storedToks, r.tokSource = traces, nil
}

// TokenTimes yields, in sequence order, the sequence id and token arrival
// times of every sample whose SUT reported them (Response.TokenTimes);
// samples without them are skipped. The slices must not be modified.
func (r *Result) TokenTimes() iter.Seq2[uint64, []int64] {
	if r.tokSource != nil {
		return r.tokSource.times
	}
	return func(yield func(uint64, []int64) bool) {
		for _, tt := range r.storedToks {
			if !yield(tt.SeqID, tt.TimesNs) {
				return
			}
		}
		for _, pr := range r.passes {
			p := pr.p
			if !p.tokRef.used() {
				continue
			}
			blocks := p.toks.view()
			for k := range p.tokRef.pages() {
				pg := p.tokRef.page(k)
				if pg == nil {
					continue
				}
				for j, ref := range pg {
					i := k<<pageShift + j
					if ref == 0 || p.state.at(i).Load() == stateLost {
						continue
					}
					if (ref-1)>>32 >= uint64(len(blocks)) {
						blocks = p.toks.view() // put after the view was taken
					}
					if !yield(p.seqBase+uint64(i), decodeTokens(blocks, ref, p.issuedAt(p.queryOf(i)))) {
						return
					}
				}
			}
		}
	}
}

// HasTokenTimes reports whether TokenTimes yields anything.
func (r *Result) HasTokenTimes() bool {
	for range r.TokenTimes() {
		return true
	}
	return false
}

// Records yields every issued sample of every pass in issue order (sequence
// order; with several Server issuing goroutines, scheduled order).
func (r *Result) Records() iter.Seq[Record] {
	if r.source != nil {
		if sd := r.source.sampleData(); sd != nil {
			return r.source.wholeRecords(sd, 0, math.MaxUint64)
		}
		return r.source.records(0, math.MaxUint64)
	}
	return func(yield func(Record) bool) {
		if r.stored != nil {
			for rec := range r.stored.records(0, r.stored.Len()) {
				if !yield(rec) {
					return
				}
			}
		}
		for _, pr := range r.passes {
			for rec := range pr.records() {
				if !yield(rec) {
					return
				}
			}
		}
	}
}

// Stages yields the SUT-side stage times of every record, in the order of
// Records (NoStages where the SUT reported none). HasStages says whether any
// pass has them.
func (r *Result) Stages() iter.Seq[StageTimes] {
	return func(yield func(StageTimes) bool) {
		for range r.storedLen() {
			if !yield(NoStages) {
				return
			}
		}
		for _, pr := range r.passes {
			p := pr.p
			for q := 0; q < p.prepared; q++ {
				if p.issuedAt(q) == NoTime {
					continue
				}
				s, e := p.gen.queryRange(q)
				for i := s; i < e; i++ {
					st := NoStages
					if p.state.at(i).Load() != stateLost {
						st = p.stages.get(i, NoStages)
					}
					if !yield(st) {
						return
					}
				}
			}
		}
	}
}

// HasStages reports whether the SUT reported stage times for any sample.
func (r *Result) HasStages() bool {
	for _, pr := range r.passes {
		if pr.p.stages.used() {
			return true
		}
	}
	return false
}

// ReportedPass returns the index in Passes of the pass whose summary the
// test reports (the last one marked Reported), or -1 when none is.
func (r *Result) ReportedPass() int {
	for i := len(r.Passes) - 1; i >= 0; i-- {
		if r.Passes[i].Reported {
			return i
		}
	}
	return -1
}

// RecordCount returns the number of records Records yields.
func (r *Result) RecordCount() int {
	n := r.storedLen()
	for _, pr := range r.passes {
		p := pr.p
		for q := 0; q < p.prepared; q++ {
			if p.issuedAt(q) != NoTime {
				s, e := p.gen.queryRange(q)
				n += e - s
			}
		}
	}
	return n
}

// PassRecords yields the records of pass i of r.Passes.
func (r *Result) PassRecords(i int) iter.Seq[Record] {
	if r.passes == nil {
		info := r.Passes[i]
		if r.source != nil {
			if sd := r.source.sampleData(); sd != nil {
				return r.source.wholeRecords(sd, info.FirstSeq, info.EndSeq)
			}
			return r.source.records(info.FirstSeq, info.EndSeq)
		}
		if r.stored == nil {
			return func(func(Record) bool) {}
		}
		return r.stored.passRecords(info.FirstSeq, info.EndSeq)
	}
	return r.passes[i].records()
}

// PassTable returns the records of pass i of r.Passes as a table, for
// analyses that visit them out of order (a sort by issue time) or more
// than once, in about a third of the memory of a []Record (a streamed
// network run: 36 bytes a record instead of 96), or none for a run read
// back from files whose pass lies in one stretch of its records (the table
// then shares their storage). It holds the columns RecordColumns carries:
// RequestBytes, ResponseBytes, Node and Error are zero in it (PassRecords
// has them). The table must not be changed. Records attached with
// AttachSource are read from it into a new table.
func (r *Result) PassTable(i int) *RecordTable {
	if r.passes == nil && r.source == nil {
		if r.stored == nil {
			return NewRecordTable(0)
		}
		info := r.Passes[i]
		if lo, hi, _, contiguous := r.stored.passRange(info.FirstSeq, info.EndSeq); contiguous {
			return r.stored.timings(lo, hi)
		}
	}
	// Counted first: each column of the table is then allocated once, at
	// its size, not grown by appending (which holds up to twice as much).
	n := 0
	for c := range r.PassColumns(i, 0) {
		n += c.Len()
	}
	t := NewRecordTable(n)
	for c := range r.PassColumns(i, 0) {
		t.AppendColumns(c)
	}
	return t
}

// RecordChunks splits Records into at most n contiguous parts, in order:
// yielding every part in turn yields exactly what Records yields. The parts
// are about equal in size and may be consumed concurrently, so that a
// writer of records.csv or an aggregator can use every core. n < 1 is
// read as 1. Records attached with AttachSource are one part (a part of a
// source would read it from its start).
func (r *Result) RecordChunks(n int) []iter.Seq[Record] {
	n = max(n, 1)
	total := r.storedLen()
	for _, pr := range r.passes {
		total += int(pr.p.extent.Load())
	}
	size := max((total+n-1)/n, 1)
	var out []iter.Seq[Record]
	if r.source != nil {
		// One part: a part of a source would read it from its start.
		return append(out, r.Records())
	}
	for lo := 0; lo < r.storedLen(); lo += size {
		out = append(out, r.stored.records(lo, min(lo+size, r.storedLen())))
	}
	for _, pr := range r.passes {
		n := int(pr.p.extent.Load())
		for lo := 0; lo < n; lo += size {
			out = append(out, pr.recordRange(lo, min(lo+size, n)))
		}
	}
	return out
}

// HasSampleData reports whether any record carries request or response
// bytes, a node or an error (the columns only some SUTs fill).
func (r *Result) HasSampleData() bool {
	if r.stored != nil && r.stored.HasSampleData() {
		return true
	}
	if r.source != nil && r.source.sampleData() != nil {
		return true
	}
	for _, pr := range r.passes {
		p := pr.p
		if p.reqBytes.used() || p.respBytes.used() || p.node.used() || p.errIdx.used() {
			return true
		}
	}
	return false
}

// PassHasNodes reports whether any record of pass i names the node that
// served it (Record.Node). For a run's own Result it reads no record.
func (r *Result) PassHasNodes(i int) bool {
	if r.passes == nil {
		if r.source != nil {
			if r.source.sampleData() == nil {
				return false // a source without sample data holds no nodes
			}
			for rec := range r.PassRecords(i) {
				if rec.Node != 0 {
					return true
				}
			}
			return false
		}
		if r.stored == nil {
			return false
		}
		return r.stored.passHasNodes(r.Passes[i].FirstSeq, r.Passes[i].EndSeq)
	}
	return r.passes[i].p.node.used()
}

func (pr *passRecord) records() iter.Seq[Record] {
	return pr.recordRange(0, int(pr.p.extent.Load()))
}

// recordRange yields the records of the issued samples among samples
// [from, to) of the pass, in order. It reads the pass after it ended.
func (pr *passRecord) recordRange(from, to int) iter.Seq[Record] {
	return pr.recordRangeQ(from, to, pr.p.prepared)
}

// recordRangeQ is recordRange over queries below qEnd only. While the pass
// runs (Options.Records) the issuer moves p.prepared: the caller then
// passes the queries it knows to be issued.
func (pr *passRecord) recordRangeQ(from, to, qEnd int) iter.Seq[Record] {
	p := pr.p
	g := p.gen
	return func(yield func(Record) bool) {
		if from >= to {
			return
		}
		pk := -1
		var (
			comp, first *[pageLen]int64
			req, resp   *[pageLen]uint32
			toks        *[pageLen]int32
			state       *[pageLen]atomic.Uint32
			node        *[pageLen]uint32
			errIdx      *[pageLen]uint16
		)
		for q := from / g.spq; q < qEnd; q++ {
			s, e := g.queryRange(q)
			s, e = max(s, from), min(e, to)
			if s >= e {
				break
			}
			sched, issued, ok := p.queryTimes(q)
			if !ok {
				continue
			}
			for i := s; i < e; i++ {
				if k := i >> pageShift; k != pk {
					// Each array's page once per page of records, not
					// once per field and record.
					pk = k
					comp, toks, state = p.completed.page(k), p.tokens.page(k), p.state.page(k)
					if p.tokenMode {
						first = p.firstTok.page(k)
					}
					req, resp, node, errIdx = p.reqBytes.page(k), p.respBytes.page(k), p.node.page(k), p.errIdx.page(k)
				}
				j := i & pageMask
				rec := Record{
					SeqID:        p.seqBase + uint64(i),
					QueryID:      pr.queryBase + uint64(q),
					SampleIndex:  g.sample(i).Index,
					ScheduledNs:  sched,
					IssuedNs:     issued,
					FirstTokenNs: NoTime,
					CompletedNs:  comp[j],
					Tokens:       int64(toks[j]),
					// Columns filled by some SUTs only: zero when unused.
					RequestBytes:  p.reqBytes.value(req, i),
					ResponseBytes: p.respBytes.value(resp, i),
					Node:          pageValue(node, j),
					Error:         uint32(pageValue(errIdx, j)),
				}
				if p.tokenMode {
					// Written by FirstToken with a CAS, from any goroutine.
					rec.FirstTokenNs = atomic.LoadInt64(&first[j])
				}
				switch state[j].Load() {
				case stateOK:
					rec.Status = StatusOK
				case stateError:
					rec.Status = StatusError
				default:
					rec.Status = StatusLost
					rec.CompletedNs = NoTime
				}
				if !yield(rec) {
					return
				}
			}
		}
	}
}

// BuildPerformanceResult rebuilds LoadGen's raw performance result of a pass
// from its records alone, so that a stored run can be summarised again
// (aimeter report). Records must be in issue order. Lost samples are
// censored at info.EndNs.
func BuildPerformanceResult(e *Effective, info PassInfo, records iter.Seq[Record]) PerformanceResult {
	return buildPerformanceResult(e, info, RecordBlocks(records), 0)
}

// buildPerformanceResult is BuildPerformanceResult with a capacity hint for
// the per-sample slices.
func buildPerformanceResult(e *Effective, info PassInfo, blocks iter.Seq[*RecordColumns], hint int) PerformanceResult {
	a := newPerfAcc(e, info, true, make([]int64, 0, hint))
	for c := range blocks {
		a.add(c)
	}
	return a.result()
}

// SummarizePass summarises a stored pass from its records (aimeter report).
// It checks that the records belong to the pass. It reads records in
// place: it keeps no copy of them, and its per-sample latency slices are
// allocated once, at the pass's size.
func SummarizePass(sutName string, e Effective, info PassInfo, records []Record) (*Summary, error) {
	if info.Kind == PassAccuracy {
		return nil, fmt.Errorf("pass %d–%d is an accuracy pass: it has no performance summary", info.FirstSeq, info.EndSeq)
	}
	in := func(r *Record) bool { return r.SeqID >= info.FirstSeq && r.SeqID < info.EndSeq }
	// The records of a pass usually are one contiguous range (passes
	// follow each other): find it, and count the pass's records to size
	// the latency slices.
	lo, hi, n := len(records), 0, 0
	for i := range records {
		if in(&records[i]) {
			lo, hi, n = min(lo, i), i+1, n+1
		}
	}
	if n == 0 && info.QueriesIssued > 0 {
		return nil, fmt.Errorf("no records with sequence ids in [%d, %d) for the reported pass", info.FirstSeq, info.EndSeq)
	}
	span := records[min(lo, hi):hi]
	contiguous := n == len(span)
	e.TargetQPS = info.TargetQPS
	pr := buildPerformanceResult(&e, info, RecordBlocks(func(yield func(Record) bool) {
		for i := range span {
			if (contiguous || in(&span[i])) && !yield(span[i]) {
				return
			}
		}
	}), n)
	pr.StopReason = info.StopReason
	return Summarize(sutName, e, pr), nil
}

// SummarizeStoredPass is SummarizePass of pass i of r.Passes from the
// records attached to r (AttachRecords, AttachTable), which it reads in
// place: its only per-sample memory is the latency slices.
func (r *Result) SummarizeStoredPass(i int) (*Summary, error) {
	info := r.Passes[i]
	if info.Kind == PassAccuracy {
		return nil, fmt.Errorf("pass %d–%d is an accuracy pass: it has no performance summary", info.FirstSeq, info.EndSeq)
	}
	if r.source != nil {
		return SummarizePassScan(r.SUTName, r.Effective, info, r.source.scan)
	}
	t := r.stored
	if t == nil {
		t = &RecordTable{}
	}
	_, _, n, _ := t.passRange(info.FirstSeq, info.EndSeq)
	if n == 0 && info.QueriesIssued > 0 {
		return nil, fmt.Errorf("no records with sequence ids in [%d, %d) for the reported pass", info.FirstSeq, info.EndSeq)
	}
	e := r.Effective
	e.TargetQPS = info.TargetQPS
	pr := buildPerformanceResult(&e, info, t.passBlocks(info.FirstSeq, info.EndSeq, 4096), n)
	pr.StopReason = info.StopReason
	return Summarize(r.SUTName, e, pr), nil
}

// pageValue is element j of page pg, or zero when the page was never
// allocated (a column no response filled there).
func pageValue[T any](pg *[pageLen]T, j int) T {
	if pg == nil {
		var zero T
		return zero
	}
	return pg[j]
}

// queryTimes returns when query q was scheduled and issued; ok is false
// when it was not issued. An Offline query is scheduled at 0; a query of
// a pass without a schedule at its issue.
func (p *pass) queryTimes(q int) (sched, issued int64, ok bool) {
	issued = p.issuedAt(q)
	if issued == NoTime {
		return 0, 0, false
	}
	switch {
	case p.gen.sched != nil:
		return p.gen.sched[q], issued, true
	case p.offline:
		return 0, issued, true
	}
	return issued, issued, true
}
