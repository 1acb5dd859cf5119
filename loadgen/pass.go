package loadgen

import (
	"sync"
	"sync/atomic"
)

// Per-sample states. A sample is pending until it moves, exactly once and
// by a CAS, to ok, error or lost. Whether it was issued is a property of its
// query (pass.issued), so issuing a query of a million samples costs one
// store, not a million.
const (
	statePending uint32 = iota
	stateOK
	stateError
	stateLost
)

// pass is the live state of one IssueQueries call: the generated queries and
// the per-sample and per-query records, in preallocated slices indexed by
// position, so that completing a sample allocates nothing and takes no lock.
type pass struct {
	kind    PassKind
	gen     *generatedQueries
	seqBase uint64 // sequence id of samples[0]; its ResponseID is seqBase+1
	origin  int64  // start of issuing, ns on the test clock

	// Per sample.
	state     []atomic.Uint32
	completed []int64 // ns from origin
	tokens    []int32
	firstTok  []int64   // token mode only
	accVal    []float64 // nil unless performance-mode accuracy sampling is on

	// Per query.
	issued    []int64 // ns from origin, NoTime until issued; atomic
	done      []int64 // all samples done, ns from origin
	remaining []atomic.Int32

	samplesIssued  atomic.Int64
	samplesClaimed atomic.Int64 // CAS from issued won by a completion or failure
	samplesDone    atomic.Int64 // finished writing their record
	samplesLost    atomic.Int64
	queriesDone    atomic.Int64
	queriesIssued  atomic.Int64

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

	// SUT-side stage times, allocated chunk by chunk as samples report
	// them, so that their memory scales with the samples issued, not with
	// every generated one (millions in GB/T arrival mode 0).
	stages stageStore

	// Columns that only some SUTs fill (see Response), each allocated on the
	// first sample that reports a non-zero value, so that a SUT that reports
	// none of them costs no memory.
	reqBytes  lazyColumn[int64]
	respBytes lazyColumn[int64]
	node      lazyColumn[uint32]
	errIdx    lazyColumn[uint16]  // 1-based index into the Responder's error table
	tokTimes  lazyColumn[[]int64] // token arrival times of streaming responses
}

// lazyColumn is a per-sample column allocated on first use. get may be
// called from any goroutine during the pass; v is read only after the pass.
type lazyColumn[T any] struct {
	once sync.Once
	v    []T
}

// get returns the column, allocating it with n zero values the first time.
func (c *lazyColumn[T]) get(n int) []T {
	c.once.Do(func() { c.v = make([]T, n) })
	return c.v
}

// at returns element i, or the zero value when the column was never used.
func (c *lazyColumn[T]) at(i int) T {
	var zero T
	if c.v == nil {
		return zero
	}
	return c.v[i]
}

// stageChunk is the number of samples whose stage times share one
// allocation.
const stageChunk = 512

// stageStore holds the stage times of a pass's samples in chunks of
// stageChunk, each allocated when the first of its samples reports stage
// times. set may be called from any goroutine during the pass; at and used
// are read after it (or, for used, at any time).
type stageStore struct {
	chunks []atomic.Pointer[[stageChunk]StageTimes]
	any    atomic.Bool
}

func newStageStore(n int) stageStore {
	return stageStore{chunks: make([]atomic.Pointer[[stageChunk]StageTimes], (n+stageChunk-1)/stageChunk)}
}

// set records the stage times of sample i.
func (s *stageStore) set(i int, st StageTimes) {
	slot := &s.chunks[i/stageChunk]
	c := slot.Load()
	if c == nil {
		nc := new([stageChunk]StageTimes)
		for k := range nc {
			nc[k] = NoStages
		}
		if slot.CompareAndSwap(nil, nc) {
			c = nc
		} else {
			c = slot.Load()
		}
	}
	c[i%stageChunk] = st
	if !s.any.Load() {
		s.any.Store(true)
	}
}

// at returns the stage times of sample i, NoStages when it reported none.
func (s *stageStore) at(i int) StageTimes {
	c := s.chunks[i/stageChunk].Load()
	if c == nil {
		return NoStages
	}
	return c[i%stageChunk]
}

// used reports whether any sample reported stage times.
func (s *stageStore) used() bool { return s.any.Load() }

func newPass(kind PassKind, gen *generatedQueries, seqBase uint64, tokenMode, offline bool) *pass {
	n := len(gen.samples)
	p := &pass{
		kind:      kind,
		gen:       gen,
		seqBase:   seqBase,
		state:     make([]atomic.Uint32, n),
		completed: make([]int64, n),
		tokens:    make([]int32, n),
		issued:    make([]int64, gen.queries),
		done:      make([]int64, gen.queries),
		remaining: make([]atomic.Int32, gen.queries),
		stages:    newStageStore(n),
		wake:      make(chan struct{}, 1),
		tokenMode: tokenMode,
		offline:   offline,
	}
	if tokenMode {
		p.firstTok = make([]int64, n)
		for i := range p.firstTok {
			p.firstTok[i] = NoTime
		}
	}
	for q := 0; q < gen.queries; q++ {
		p.issued[q] = NoTime
		s, e := gen.queryRange(q)
		p.remaining[q].Store(int32(e - s))
	}
	p.waitQuery.Store(-1)
	return p
}

// markLost gives up on sample i if it is still outstanding, and reports
// whether it did. A lost sample counts as done for the wait of the issuer.
func (p *pass) markLost(i int) bool {
	if !p.state[i].CompareAndSwap(statePending, stateLost) {
		return false
	}
	p.samplesClaimed.Add(1)
	p.samplesLost.Add(1)
	q := i / p.gen.spq
	if p.remaining[q].Add(-1) == 0 {
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
	return atomic.LoadInt64(&p.issued[i/p.gen.spq]) != NoTime
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
	if p.accVal == nil {
		return false
	}
	v := p.accVal[i] + p.accuracyOff
	if v >= 1 {
		v--
	}
	return v <= p.accuracyProb
}
