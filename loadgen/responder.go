package loadgen

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Responder receives completions from the SUT. All methods are safe for
// concurrent use from any goroutine (inside IssueQuery, from the SUT's own
// workers, from network callbacks) and never panic on bad input: a
// completion for an unknown, not yet issued or already completed sample is
// counted as an error and otherwise ignored. Each sample ends exactly once,
// by Respond, RespondBatch or one of their shorthands (Complete,
// CompleteBatch, CompleteWithStages, Fail); FirstToken may precede it. A
// Responder is only valid while Run is running: a completion after Run has
// returned is ignored.
type Responder struct {
	t   *testRun
	cur atomic.Pointer[pass]

	unknown   atomic.Uint64
	duplicate atomic.Uint64
	failed    atomic.Uint64
	late      atomic.Uint64 // results after their deadline, lost by the completion path
	badTimes  atomic.Uint64 // responses whose token times were impossible (dropped)

	mu           sync.Mutex
	accuracy     []AccuracyEntry
	firstTokData map[uint64][]byte // token data of samples sampled for the accuracy log
	errLog       []timedNote       // first messages of misbehaviour, for the detail log
	errNotes     uint64            // every message of misbehaviour, logged in full or not
	errs         errorTable        // distinct sample failures (Result.Errors)
}

// maxErrorMessages bounds the misbehaviour messages logged in full; every
// one beyond is still counted (Result.UnknownCompletions,
// DuplicateCompletions, FailedSamples) and the detail log says how many
// were left out.
const maxErrorMessages = 20

// protocolErrors returns the protocol errors counted so far.
func (r *Responder) protocolErrors() uint64 {
	return r.unknown.Load() + r.duplicate.Load() + r.badTimes.Load()
}

// timedNote is one message of misbehaviour and when it was noted (ns from
// the run's origin), so that the detail log places it where it happened.
type timedNote struct {
	at  int64
	msg string
}

func (r *Responder) note(format string, args ...any) {
	r.mu.Lock()
	r.errNotes++
	if len(r.errLog) < maxErrorMessages {
		r.errLog = append(r.errLog, timedNote{at: r.t.now(), msg: fmt.Sprintf(format, args...)})
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
	if uint64(id)-1 < p.seqBase || i >= uint64(p.gen.n) {
		return nil, 0, false
	}
	return p, int(i), true
}

// Complete reports that sample id finished with the given output and number
// of output tokens. It is QuerySamplesComplete for one sample.
func (r *Responder) Complete(id ResponseID, data []byte, tokens int64) {
	now := r.t.now()
	r.respond(now, &Response{ID: id, Data: data, Tokens: tokens}, false, nil)
}

// Respond reports that sample resp.ID ended, with everything the SUT
// measured (see Response): it completes the sample, or fails it when
// resp.Err is not nil. Every completion goes through it; Complete,
// CompleteBatch, CompleteWithStages and Fail are shorthands.
func (r *Responder) Respond(resp Response) {
	now := r.t.now()
	r.respond(now, &resp, resp.Err != nil, resp.Err)
}

// RespondBatch is Respond for several samples with one timestamp, like
// LoadGen's QuerySamplesComplete.
func (r *Responder) RespondBatch(responses []Response) {
	now := r.t.now()
	for i := range responses {
		r.respond(now, &responses[i], responses[i].Err != nil, responses[i].Err)
	}
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
	r.respond(now, &Response{ID: id, Data: data, Tokens: tokens, Stages: &st}, false, nil)
}

// CompleteBatch completes several samples with one timestamp, like LoadGen's
// QuerySamplesComplete. It is RespondBatch.
func (r *Responder) CompleteBatch(responses []Response) {
	r.RespondBatch(responses)
}

// Fail reports that the SUT could not process sample id. The sample counts
// as completed for scheduling, is recorded with status "error", and makes the
// result INVALID. It is Respond with Response.Err, except that a nil err
// fails the sample too (with the message "failure reported without an
// error").
func (r *Responder) Fail(id ResponseID, err error) {
	now := r.t.now()
	r.respond(now, &Response{ID: id}, true, err)
}

// FirstToken reports the first token of sample id (LLMs; time to first
// token), now. data is copied only when the sample goes to the accuracy
// log.
func (r *Responder) FirstToken(id ResponseID, data []byte) {
	r.firstToken(id, r.t.now(), false, data)
}

// FirstTokenAt is FirstToken at time at of the run's clock (see Now),
// taken by the SUT when the token arrived: a network SUT that times its
// tokens as their bytes come in (Response.TokenTimes) gives the first of
// those times, so that the sample's time to first token and its first
// token time are one figure, not two a decoding apart. A time before the
// sample's issue or in the future is the SUT's bug: counted as a protocol
// error, and the first token is not recorded.
func (r *Responder) FirstTokenAt(id ResponseID, at int64, data []byte) {
	r.firstToken(id, at, true, data)
}

// firstToken is FirstToken at t: the test clock (r.t.now()), or with
// runClock the run's clock of the current pass (Now).
func (r *Responder) firstToken(id ResponseID, t int64, runClock bool, data []byte) {
	p, i, ok := r.lookup(id)
	if !ok {
		r.unknown.Add(1)
		r.note("first token for unknown sample id %d", id)
		return
	}
	if !p.tokenMode {
		return // token latencies are off
	}
	if !p.isIssued(i) || p.state.at(i).Load() != statePending {
		r.duplicate.Add(1)
		r.note("first token for sample %d that is not outstanding", id-1)
		return
	}
	rel := t - p.origin
	if runClock {
		rel = t
		if issued, now := p.issuedAt(p.queryOf(i)), r.t.now()-p.origin; rel < issued || rel > now {
			r.badTimes.Add(1)
			r.note("sample %d reported its first token at %d, outside its issue-to-now window [%d, %d]; dropped", id-1, rel, issued, now)
			return
		}
	}
	// Only the issuing SUT path calls this before Complete; a racing second
	// call for the same sample keeps the first time.
	if atomic.CompareAndSwapInt64(p.firstTok.at(i), NoTime, rel) && p.logged(i) && data != nil {
		r.mu.Lock()
		if r.firstTokData == nil {
			r.firstTokData = make(map[uint64][]byte)
		}
		r.firstTokData[p.seqBase+uint64(i)] = append([]byte(nil), data...)
		r.mu.Unlock()
	}
}

// respond records the end of sample resp.ID at now (test clock): completed,
// or failed with err (which may be nil) when failed is set. It reports
// whether the response counted (the sample was outstanding). It keeps no
// reference to resp and ignores resp.Err: err comes apart so that the
// error, which escapes, does not make resp's buffers escape with it, and
// the shorthands stay free of allocations.
func (r *Responder) respond(now int64, resp *Response, failed bool, err error) bool {
	id, data, tokens, st := resp.ID, resp.Data, resp.Tokens, resp.Stages
	final := stateOK
	if failed {
		final = stateError
	}
	p, i, ok := r.lookup(id)
	if !ok {
		r.unknown.Add(1)
		r.note("completion for unknown sample id %d", id)
		return false
	}
	// The sample's query, found once: a 64-bit division costs as much as
	// the rest of a null SUT's completion.
	q := p.queryOf(i)
	issued := p.issuedAt(q)
	if issued == NoTime {
		r.duplicate.Add(1)
		r.note("completion for sample %d before it was issued", id-1)
		return false
	}
	// GB-7.4.1-d/e, IN-63: a result that arrives after issue + threshold
	// is lost, whoever notices first: this comparison or the timer of the
	// issuer or reaper. The timer alone would record a late result that
	// beats it as ok. A late result is counted against its sample, not as
	// a protocol error of the SUT.
	if timeout := int64(r.t.opts.SampleTimeout); timeout > 0 &&
		now-p.origin > issued+timeout &&
		(p.markLost(i) || p.state.at(i).Load() == stateLost) {
		r.late.Add(1)
		return false
	}
	state := p.state.at(i)
	if !state.CompareAndSwap(statePending, stateCompleting) {
		r.duplicate.Add(1)
		switch state.Load() {
		case stateLost:
			r.note("completion for sample %d after it was counted lost", id-1)
		default:
			r.note("duplicate completion for sample %d", id-1)
		}
		return false
	}
	rel := now - p.origin
	*p.completed.at(i) = rel
	if tokens > math.MaxInt32 || tokens < math.MinInt32 {
		r.note("sample %d reported %d tokens; recorded as 0", id-1, tokens)
		tokens = 0
	}
	*p.tokens.at(i) = int32(tokens)
	if st != nil {
		p.stages.put(i, *st)
	}
	if resp.RequestBytes != 0 {
		p.reqBytes.put(i, resp.RequestBytes)
	}
	if resp.ResponseBytes != 0 {
		p.respBytes.put(i, resp.ResponseBytes)
	}
	if resp.Node != 0 {
		p.node.put(i, resp.Node)
	}
	if tt := resp.TokenTimes; len(tt) > 0 {
		if !tokenTimesPossible(tt, issued, rel) {
			// Times before the sample was issued, after its completion or
			// out of order are a SUT's bug: kept, they would give a
			// first-token latency below zero or above the sample's own and a
			// bundle that Read refuses. The completion counts; its token
			// times do not.
			r.badTimes.Add(1)
			r.note("sample %d reported token times outside its issue-to-completion window [%d, %d] or out of order; dropped", id-1, issued, rel)
		} else {
			p.tokRef.put(i, p.toks.put(tt, issued))
			if p.tokenMode {
				atomic.CompareAndSwapInt64(p.firstTok.at(i), NoTime, tt[0])
			}
		}
	}
	if failed {
		r.failed.Add(1)
		p.samplesFailed.Add(1)
		r.mu.Lock()
		p.errIdx.put(i, r.errs.add(err, rel))
		r.mu.Unlock()
		if err != nil {
			r.note("sample %d failed: %v", id-1, err)
		}
	}
	// The record is written: publish it.
	state.Store(final)
	if final == stateOK && p.logged(i) {
		r.logAccuracy(p, i, data, tokens)
	}
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

func (r *Responder) logAccuracy(p *pass, i int, data []byte, tokens int64) {
	seq := p.seqBase + uint64(i)
	e := AccuracyEntry{SeqID: seq, QSLIndex: p.gen.sample(i).Index, Data: append([]byte(nil), data...)}
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

// tokenTimesPossible reports whether token times tt are in order and inside
// [issued, completed], the sample's window on the run's clock.
func tokenTimesPossible(tt []int64, issued, completed int64) bool {
	prev := issued
	for _, t := range tt {
		if t < prev {
			return false
		}
		prev = t
	}
	return prev <= completed
}
