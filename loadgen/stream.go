package loadgen

import (
	"iter"
	"time"
)

// DefaultRecordsInterval is how often Options.Records is offered the
// records that have ended, when Options.RecordsInterval is 0.
const DefaultRecordsInterval = 20 * time.Millisecond

// recordsBatch is the most records one call of Options.Records gets.
const recordsBatch = 4096

// recordStream sends a pass's records to Options.Records while the pass
// runs (see Options.Records).
type recordStream struct {
	sink    func([]Record)
	colSink func(*RecordColumns) // Options.RecordColumns, instead of sink
	pr      *passRecord
	next    int // the first sample not sent yet
	buf     []Record
	cols    RecordColumns
}

// streamRecords starts sending pr's records to Options.Records, if set. The
// returned function, called once the pass is closed (every completion
// written), stops the sender and sends the rest from the calling goroutine.
func (t *testRun) streamRecords(pr *passRecord) (finish func()) {
	if t.opts.Records == nil && t.opts.RecordColumns == nil {
		return func() {}
	}
	s := &recordStream{sink: t.opts.Records, colSink: t.opts.RecordColumns, pr: pr}
	if s.sink != nil {
		s.buf = make([]Record, 0, recordsBatch)
	}
	every := t.opts.RecordsInterval
	if every == 0 {
		every = DefaultRecordsInterval
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.advance()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		s.sendRange(s.next, int(pr.p.extent.Load()), pr.p.prepared)
	}
}

// advance sends the records of the samples from s.next on that have ended,
// up to the first that has not (or whose query was not issued yet).
func (s *recordStream) advance() {
	p := s.pr.p
	end := int(p.extent.Load()) // pages exist below it
	spq := p.gen.spq
	i := s.next
	for i < end {
		if q := i / spq; !p.owns(q) {
			i = min((q+1)*spq, end) // another shard's: never issued here
			continue
		} else if p.issuedAt(q) == NoTime {
			break
		}
		// An ok or error state is stored after the sample's record is
		// written (see statePending); a lost one has nothing more to write.
		if st := p.state.at(i).Load(); st != stateOK && st != stateError && st != stateLost {
			break
		}
		i++
	}
	if i == s.next {
		return
	}
	s.sendRange(s.next, i, (i-1)/spq+1)
	s.next = i
}

// sendRange sends the records of samples [from, to) of queries below qEnd
// (see recordRangeQ), to whichever sink is set.
func (s *recordStream) sendRange(from, to, qEnd int) {
	if s.colSink == nil {
		s.send(s.pr.recordRangeQ(from, to, qEnd))
		return
	}
	for lo := from; lo < to; lo += recordsBatch {
		s.cols.Reset()
		s.pr.columnRangeQ(&s.cols, lo, min(lo+recordsBatch, to), qEnd)
		if s.cols.Len() > 0 {
			s.colSink(&s.cols)
		}
	}
}

// send passes records to the sink in batches.
func (s *recordStream) send(recs iter.Seq[Record]) {
	for rec := range recs {
		s.buf = append(s.buf, rec)
		if len(s.buf) == recordsBatch {
			s.sink(s.buf)
			s.buf = s.buf[:0]
		}
	}
	if len(s.buf) > 0 {
		s.sink(s.buf)
		s.buf = s.buf[:0]
	}
}
