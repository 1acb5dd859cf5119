package loadgen

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
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
	waitQuery atomic.Int64 // query index the issuer waits for, or -1
	draining  atomic.Bool

	accuracyAll  bool    // accuracy pass: every response is logged
	accuracyProb float64 // performance pass: log iff value ≤ prob
	accuracyOff  float64 // offset drawn from accuracy_log_rng_seed
	tokenMode    bool
	offline      bool

	// SUT-side stage times, allocated on the first CompleteWithStages.
	stagesOnce sync.Once
	stages     []StageTimes
}

func (p *pass) stageSlice() []StageTimes {
	p.stagesOnce.Do(func() {
		p.stages = make([]StageTimes, len(p.state))
		for i := range p.stages {
			p.stages[i] = NoStages
		}
	})
	return p.stages
}

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

// markLost gives up on sample i if it is still outstanding. A lost sample
// counts as done for the wait of the issuer.
func (p *pass) markLost(i int) {
	if !p.state[i].CompareAndSwap(statePending, stateLost) {
		return
	}
	p.samplesClaimed.Add(1)
	p.samplesLost.Add(1)
	q := i / p.gen.spq
	if p.remaining[q].Add(-1) == 0 {
		p.queriesDone.Add(1)
		if p.waitQuery.Load() == int64(q) {
			p.signal()
		}
	}
	if p.samplesDone.Add(1) == p.samplesIssued.Load() && p.draining.Load() {
		p.signal()
	}
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

// Responder receives completions from the SUT. All methods are safe for
// concurrent use from any goroutine and never panic on bad input: a
// completion for an unknown, not yet issued or already completed sample is
// counted as an error and otherwise ignored.
type Responder struct {
	t   *test
	cur atomic.Pointer[pass]

	unknown   atomic.Uint64
	duplicate atomic.Uint64
	failed    atomic.Uint64

	mu           sync.Mutex
	accuracy     []AccuracyEntry
	firstTokData map[uint64][]byte // token data of samples sampled for the accuracy log
	errLog       []string          // first messages of misbehaviour, for the detail log
}

const maxErrorMessages = 20

func (r *Responder) note(format string, args ...any) {
	r.mu.Lock()
	if len(r.errLog) < maxErrorMessages {
		r.errLog = append(r.errLog, fmt.Sprintf(format, args...))
	}
	r.mu.Unlock()
}

// lookup maps id to the current pass and sample position.
func (r *Responder) lookup(id ResponseID) (*pass, int, bool) {
	p := r.cur.Load()
	if p == nil || id == 0 {
		return nil, 0, false
	}
	i := uint64(id) - 1 - p.seqBase
	if uint64(id)-1 < p.seqBase || i >= uint64(len(p.state)) {
		return nil, 0, false
	}
	return p, int(i), true
}

// Complete reports that sample id finished with the given output and number
// of output tokens. It is QuerySamplesComplete for one sample.
func (r *Responder) Complete(id ResponseID, data []byte, tokens int64) {
	now := r.t.now()
	r.complete(now, id, data, tokens, stateOK, nil)
}

// Now returns the run's clock: nanoseconds from the start of issuing of the
// current pass. In-process SUTs take their StageTimes with it, so that they
// share the tester's clock.
func (r *Responder) Now() int64 {
	now := r.t.now()
	if p := r.cur.Load(); p != nil {
		return now - p.origin
	}
	return now
}

// At converts a time taken with time.Now to the run's clock (see Now), so
// that a SUT serving several runs at once can time a shared batch once.
func (r *Responder) At(t time.Time) int64 {
	at := int64(t.Sub(r.t.origin))
	if p := r.cur.Load(); p != nil {
		return at - p.origin
	}
	return at
}

// CompleteWithStages is Complete with the SUT-side timing points of the
// sample (GB/T 45087 Table 16). They are kept only if the completion counts.
func (r *Responder) CompleteWithStages(id ResponseID, data []byte, tokens int64, st StageTimes) {
	now := r.t.now()
	r.complete(now, id, data, tokens, stateOK, &st)
}

// CompleteBatch completes several samples with one timestamp, like LoadGen's
// QuerySamplesComplete.
func (r *Responder) CompleteBatch(responses []Response) {
	now := r.t.now()
	for i := range responses {
		r.complete(now, responses[i].ID, responses[i].Data, responses[i].Tokens, stateOK, responses[i].Stages)
	}
}

// Fail reports that the SUT could not process sample id. The sample counts
// as completed for scheduling, is recorded with status "error", and makes the
// result INVALID.
func (r *Responder) Fail(id ResponseID, err error) {
	now := r.t.now()
	if r.complete(now, id, nil, 0, stateError, nil) {
		r.failed.Add(1)
		if err != nil {
			r.note("sample %d failed: %v", id-1, err)
		}
	}
}

// FirstToken reports the first token of sample id (LLMs; time to first
// token). data is copied only when the sample goes to the accuracy log.
func (r *Responder) FirstToken(id ResponseID, data []byte) {
	now := r.t.now()
	p, i, ok := r.lookup(id)
	if !ok {
		r.unknown.Add(1)
		r.note("first token for unknown sample id %d", id)
		return
	}
	if p.firstTok == nil {
		return // token latencies are off
	}
	if !p.isIssued(i) || p.state[i].Load() != statePending {
		r.duplicate.Add(1)
		r.note("first token for sample %d that is not outstanding", id-1)
		return
	}
	// Only the issuing SUT path calls this before Complete; a racing second
	// call for the same sample keeps the first time.
	if atomic.CompareAndSwapInt64(&p.firstTok[i], NoTime, now-p.origin) && p.logged(i) && data != nil {
		r.mu.Lock()
		if r.firstTokData == nil {
			r.firstTokData = make(map[uint64][]byte)
		}
		r.firstTokData[p.seqBase+uint64(i)] = append([]byte(nil), data...)
		r.mu.Unlock()
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

func (r *Responder) complete(now int64, id ResponseID, data []byte, tokens int64, final uint32, st *StageTimes) bool {
	p, i, ok := r.lookup(id)
	if !ok {
		r.unknown.Add(1)
		r.note("completion for unknown sample id %d", id)
		return false
	}
	if !p.isIssued(i) {
		r.duplicate.Add(1)
		r.note("completion for sample %d before it was issued", id-1)
		return false
	}
	if !p.state[i].CompareAndSwap(statePending, final) {
		r.duplicate.Add(1)
		switch p.state[i].Load() {
		case stateLost:
			r.note("late completion for sample %d after it was counted lost", id-1)
		default:
			r.note("duplicate completion for sample %d", id-1)
		}
		return false
	}
	p.samplesClaimed.Add(1)
	rel := now - p.origin
	p.completed[i] = rel
	if tokens > math.MaxInt32 || tokens < math.MinInt32 {
		r.note("sample %d reported %d tokens; recorded as 0", id-1, tokens)
		tokens = 0
	}
	p.tokens[i] = int32(tokens)
	if st != nil {
		p.stageSlice()[i] = *st
	}
	if final == stateOK && p.logged(i) {
		r.logAccuracy(p, i, data, tokens)
	}
	q := i / p.gen.spq
	if p.remaining[q].Add(-1) == 0 {
		p.done[q] = rel
		p.queriesDone.Add(1)
		if p.waitQuery.Load() == int64(q) {
			p.signal()
		}
	}
	if p.samplesDone.Add(1) == p.samplesIssued.Load() && p.draining.Load() {
		p.signal()
	}
	return true
}

func (r *Responder) logAccuracy(p *pass, i int, data []byte, tokens int64) {
	seq := p.seqBase + uint64(i)
	e := AccuracyEntry{SeqID: seq, QSLIndex: p.gen.samples[i].Index, Data: append([]byte(nil), data...)}
	if p.tokenMode {
		e.HasTokens = true
		e.TokenCount = tokens
	}
	r.mu.Lock()
	if p.tokenMode && !p.offline {
		e.TokenData = r.firstTokData[seq]
		if e.TokenData == nil {
			e.TokenData = []byte{}
		}
		delete(r.firstTokData, seq)
	}
	r.accuracy = append(r.accuracy, e)
	r.mu.Unlock()
}
