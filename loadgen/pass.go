package loadgen

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Per-sample states. A sample is pending until it moves, exactly once and
// by a CAS, to lost, or to completing and then ok or error: a completion
// claims the sample by the CAS, writes its record's columns, and only then
// stores its final state, so that a sample seen ok or error (with an atomic
// load) has its whole record written, which is what lets Options.Records
// read records while the run goes. Whether it was issued is a property of
// its query (pass.issued), so issuing a query of a million samples costs
// one store, not a million.
const (
	statePending uint32 = iota
	stateOK
	stateError
	stateLost
	stateCompleting
)

// pass is the live state of one IssueQueries call: the generated queries and
// the per-sample and per-query records, in paged arrays indexed by position,
// so that completing a sample allocates nothing and takes no lock.
//
// A pass generated whole has every page allocated before issuing starts. A
// pass generated on demand (see generatedQueries) allocates the pages of a
// chunk of queries when the issuer reaches it, so that its memory follows
// the samples issued: the issuer is then the only goroutine that allocates
// these pages, and a completion only ever touches issued samples, whose
// pages exist.
type pass struct {
	kind    PassKind
	gen     *generatedQueries
	seqBase uint64 // sequence id of samples[0]; its ResponseID is seqBase+1
	origin  int64  // start of issuing, ns on the test clock
	// shard, when sharded, says which queries of gen the pass issues
	// (Shard.OwnsQuery); the zero value issues them all.
	shard Shard

	// Per sample.
	state     paged[atomic.Uint32]
	completed paged[int64] // ns from origin
	tokens    paged[int32]
	firstTok  paged[int64]   // token mode only
	accVal    paged[float64] // accuracy sampling only (see accDraw)

	// Per query.
	issued    paged[int64] // ns from origin, NoTime until issued; atomic
	remaining paged[atomic.Int32]

	// prepared is the number of queries whose pages exist (issuer only
	// while the pass runs); extent the number of samples they hold.
	prepared int
	extent   atomic.Int64
	// budget is the most bytes the pages of an on-demand pass may take
	// (0: no limit); prepare refuses a chunk beyond it.
	budget uint64
	// accDraw fills a page of accVal with the next per-sample values of the
	// test's accuracy-log engine; accDrawn counts the samples drawn.
	accDraw  func(pg *[pageLen]float64, first int)
	accDrawn int

	samplesIssued atomic.Int64
	samplesDone   atomic.Int64 // finished writing their record
	samplesLost   atomic.Int64
	samplesFailed atomic.Int64 // completed with an error (Responder.Fail, Response.Err)
	queriesDone   atomic.Int64
	queriesIssued atomic.Int64

	// Wake-up of the issuer: a completer signals when the query the issuer
	// waits for is done, or when everything is done while draining.
	wake      chan struct{}
	waitQuery atomic.Int64 // query index the issuer waits for, waitAnyQuery, or -1
	draining  atomic.Bool

	accuracyAll  bool    // accuracy pass: every response is logged
	accuracyProb float64 // performance pass: log iff value ≤ prob
	accuracyOff  float64 // offset drawn from accuracy_log_rng_seed
	tokenMode    bool
	offline      bool

	// SUT-side stage times, allocated page by page as samples report them.
	stages column[StageTimes]

	// Columns that only some SUTs fill (see Response), each allocated page
	// by page on the first sample of the page that reports a non-zero value,
	// so that a SUT that reports none of them costs no memory.
	reqBytes  sizeColumn
	respBytes sizeColumn
	node      column[uint32]
	errIdx    column[uint16] // 1-based index into the Responder's error table
	// Token arrival times of streaming responses: each sample's reference
	// into toks (tokenStore.put; 0: none).
	tokRef column[uint64]
	toks   tokenStore
}

// column is a paged per-sample column written by completers from any
// goroutine: a page is allocated on its first write. It is read after the
// pass.
type column[T any] struct {
	paged[T]
	init func(pg *[pageLen]T, first int) // fills a new page; nil: zeros
	any  atomic.Bool
}

func newColumn[T any](n int, init func(pg *[pageLen]T, first int)) column[T] {
	return column[T]{paged: newPaged[T](n), init: init}
}

// put sets element i.
func (c *column[T]) put(i int, v T) {
	c.ensure(i>>pageShift, c.init)[i&pageMask] = v
	if !c.any.Load() {
		c.any.Store(true)
	}
}

// get returns element i, or the value of a new page when never set.
func (c *column[T]) get(i int, def T) T { return c.load(i, def) }

// used reports whether any element was set.
func (c *column[T]) used() bool { return c.any.Load() }

// Bytes the pages of a pass take per sample and per query (see budget.go
// for the estimate made before a run).
func (p *pass) bytesPerSample() uint64 {
	b := uint64(16 + 4 + 8 + 4) // the generated QuerySample, state, completed, tokens
	// The PerformanceResult built when the pass ends, while its records
	// are still held (budget.go): without it a run stopped at its budget
	// peaked at 1.46 times it.
	b += bytesPerResult
	if p.tokenMode {
		b += 8 + bytesPerTokenResult
	}
	if p.accDraw != nil {
		b += 8
	}
	return b
}

const passBytesPerQuery = 8 + 4 // issued, remaining

func newPass(kind PassKind, gen *generatedQueries, seqBase uint64, tokenMode, offline bool) *pass {
	n, nq := gen.n, gen.queries
	p := &pass{
		kind:      kind,
		gen:       gen,
		seqBase:   seqBase,
		state:     newPaged[atomic.Uint32](n),
		completed: newPaged[int64](n),
		tokens:    newPaged[int32](n),
		issued:    newPaged[int64](nq),
		remaining: newPaged[atomic.Int32](nq),
		stages:    newColumn(n, fillStages),
		reqBytes:  sizeColumn{column: newColumn[uint32](n, nil)},
		respBytes: sizeColumn{column: newColumn[uint32](n, nil)},
		node:      newColumn[uint32](n, nil),
		errIdx:    newColumn[uint16](n, nil),
		tokRef:    newColumn[uint64](n, nil),
		wake:      make(chan struct{}, 1),
		tokenMode: tokenMode,
		offline:   offline,
	}
	if tokenMode {
		p.firstTok = newPaged[int64](n)
	}
	p.waitQuery.Store(-1)
	return p
}

func fillStages(pg *[pageLen]StageTimes, _ int) {
	for k := range pg {
		pg[k] = NoStages
	}
}

func fillNoTime(pg *[pageLen]int64, _ int) {
	for k := range pg {
		pg[k] = NoTime
	}
}

// owns reports whether the pass issues query q (see Shard).
func (p *pass) owns(q int) bool { return p.shard.OwnsQuery(q) }

// onDemand reports whether the pass allocates its pages as it issues.
func (p *pass) onDemand() bool { return p.gen.chunkShift == lazyChunkShift }

// prepareAll allocates every page of a pass generated whole; it is called
// once, before issuing starts.
func (p *pass) prepareAll() {
	if p.gen.queries > 0 && !p.prepare(p.gen.queries-1) {
		panic("loadgen: a pass generated whole has no memory budget")
	}
}

// prepare makes query q and its samples ready to issue: generated, with
// their pages allocated, a chunk of queries at a time. It returns false,
// allocating nothing, when the chunk would take the pass beyond its memory
// budget. Only the issuing goroutine calls it.
func (p *pass) prepare(q int) bool {
	if q < p.prepared {
		return true
	}
	g := p.gen
	end := g.queries
	if p.onDemand() {
		end = min((q>>lazyChunkShift+1)<<lazyChunkShift, g.queries)
	}
	_, sEnd := g.queryRange(end - 1)
	if p.budget > 0 && uint64(sEnd)*p.bytesPerSample()+uint64(end)*passBytesPerQuery > p.budget {
		return false
	}
	g.generate(end - 1)
	sFrom := int(p.extent.Load())
	// Each array's new pages in one allocation.
	qFrom, qTo := p.prepared>>pageShift, (end-1)>>pageShift
	p.issued.ensureRange(qFrom, qTo, fillNoTime)
	p.remaining.ensureRange(qFrom, qTo, func(pg *[pageLen]atomic.Int32, first int) {
		for j := range pg {
			if qq := first + j; qq < g.queries {
				s, e := g.queryRange(qq)
				pg[j].Store(int32(e - s))
			}
		}
	})
	if sEnd > 0 {
		kFrom, kTo := sFrom>>pageShift, (sEnd-1)>>pageShift
		st := p.state.ensureRange(kFrom, kTo, nil)
		cd := p.completed.ensureRange(kFrom, kTo, nil)
		tk := p.tokens.ensureRange(kFrom, kTo, nil)
		populateAhead(cd, st, tk)
		if p.tokenMode {
			p.firstTok.ensureRange(kFrom, kTo, fillNoTime)
		}
		for k := kFrom; k <= kTo; k++ {
			if p.accDraw != nil && k<<pageShift >= p.accDrawn {
				p.accVal.ensure(k, p.accDraw)
				p.accDrawn = min((k+1)<<pageShift, g.n)
			}
		}
	}
	p.prepared = end
	p.extent.Store(int64(sEnd))
	return true
}

// issuedAt returns when query q was issued, NoTime if it was not.
func (p *pass) issuedAt(q int) int64 {
	pg := p.issued.page(q >> pageShift)
	if pg == nil {
		return NoTime
	}
	return atomic.LoadInt64(&pg[q&pageMask])
}

// markLost gives up on sample i if it is still outstanding, and reports
// whether it did. A lost sample counts as done for the wait of the issuer.
func (p *pass) markLost(i int) bool {
	if !p.state.at(i).CompareAndSwap(statePending, stateLost) {
		return false
	}
	p.samplesLost.Add(1)
	q := p.queryOf(i)
	if p.remaining.at(q).Add(-1) == 0 {
		p.queriesDone.Add(1)
		if w := p.waitQuery.Load(); w == int64(q) || w == waitAnyQuery {
			p.signal()
		}
	}
	if p.samplesDone.Add(1) == p.samplesIssued.Load() && p.draining.Load() {
		p.signal()
	}
	return true
}

// loseQuery counts the outstanding samples of query q lost (its timeout
// expired).
func (p *pass) loseQuery(q int) {
	s, e := p.gen.queryRange(q)
	for i := s; i < e; i++ {
		p.markLost(i)
	}
}

// isIssued reports whether sample i has been handed to the SUT.
func (p *pass) isIssued(i int) bool {
	return p.issuedAt(p.queryOf(i)) != NoTime
}

// queryOf returns the query of sample i, without a division in the common
// cases: one sample a query (SingleStream, Server) or one query for the
// whole pass (Offline).
func (p *pass) queryOf(i int) int {
	switch spq := p.gen.spq; {
	case spq == 1:
		return i
	case p.gen.n <= spq:
		return 0
	default:
		return i / spq
	}
}

func (p *pass) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// logged reports whether sample i's response goes to the accuracy log.
func (p *pass) logged(i int) bool {
	if p.accuracyAll {
		return true
	}
	if p.accDraw == nil {
		return false
	}
	v := *p.accVal.at(i) + p.accuracyOff
	if v >= 1 {
		v--
	}
	return v <= p.accuracyProb
}

// populateMin is the least number of fresh pages of each array for which
// populateAhead starts: a smaller pass is faulted in by its writer.
const populateMin = 64

// populateAhead faults in the fresh pages of a pass's per-sample arrays on
// another goroutine, in the order the issuer and the SUT will write them
// (sample by sample, so a round of each array at a time), so that their
// writes find the pages there instead of trapping on each (populate).
// The arrays are those one prepare allocated for the same samples.
func populateAhead(cd [][pageLen]int64, st [][pageLen]atomic.Uint32, tk [][pageLen]int32) {
	if len(cd) < populateMin || len(st) != len(cd) || len(tk) != len(cd) {
		return
	}
	go func() {
		const step = 64 // pages of each array a round
		for k := 0; k < len(cd); k += step {
			m := min(k+step, len(cd))
			populate(cd[k:m])
			populate(st[k:m])
			populate(tk[k:m])
		}
	}()
}

// populate faults in the memory of s on the calling goroutine (see
// populateRange), keeping s alive meanwhile.
func populate[T any](s []T) {
	if len(s) == 0 {
		return
	}
	populateRange(unsafe.Pointer(unsafe.SliceData(s)), uintptr(len(s))*unsafe.Sizeof(s[0]))
	runtime.KeepAlive(s)
}

// sizeColumn is a per-sample column of byte counts (Response.RequestBytes
// and ResponseBytes) stored in 4 bytes a sample: a count outside
// [0, sizeBig) is stored as sizeBig and kept in a map, which real
// requests and responses of under 4 GiB never reach.
type sizeColumn struct {
	column[uint32]
	mu  sync.Mutex
	big map[int]int64
}

// sizeBig marks a count kept in sizeColumn.big.
const sizeBig = math.MaxUint32

// put sets element i to v.
func (c *sizeColumn) put(i int, v int64) {
	if v >= 0 && v < sizeBig {
		c.column.put(i, uint32(v))
		return
	}
	c.mu.Lock()
	if c.big == nil {
		c.big = map[int]int64{}
	}
	c.big[i] = v
	c.mu.Unlock()
	c.column.put(i, sizeBig)
}

// value returns element i of page pg (page i>>pageShift, nil: 0).
func (c *sizeColumn) value(pg *[pageLen]uint32, i int) int64 {
	if pg == nil {
		return 0
	}
	v := pg[i&pageMask]
	if v != sizeBig {
		return int64(v)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.big[i]
}
