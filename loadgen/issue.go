package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// issueStats is what one issuing goroutine reports back.
type issueStats struct {
	queriesIssued uint64
	ranOut        bool   // a non-Server pass ended without a natural stop
	stop          string // why issuing ended early because of aimeter's limits
	stalled       bool   // no sample completed for the stall timeout
	blocked       bool   // the watchdog gave up on a SUT call (see watchdog)
	errors        []Event
}

// issuer issues the queries k, k+stride, … of one pass.
type issuer struct {
	t        *testRun
	p        *pass
	e        *Effective
	accuracy bool
	idx      int
	stride   int
	timer    *time.Timer
	stalled  bool
	// call is the watchdog's view of the SUT call in progress: 0 when the
	// issuer is not inside IssueQuery, the call's start (ns from the pass
	// origin, plus one) while it is, and callAbandoned once the watchdog
	// has given up on it. Only the issuer stores a start; the end and the
	// abandonment race by CAS, so exactly one of them wins.
	call atomic.Int64
}

// callAbandoned marks an issuer whose SUT call the watchdog gave up on.
const callAbandoned = -1

func (it *issuer) ctx() context.Context { return it.t.ctx }

// sleep waits d or until the run is cancelled.
func (it *issuer) sleep(d time.Duration) bool {
	if it.timer == nil {
		it.timer = time.NewTimer(d)
	} else {
		it.timer.Reset(d)
	}
	select {
	case <-it.timer.C:
		return true
	case <-it.ctx().Done():
		it.timer.Stop()
		return false
	}
}

// block waits for a wake-up from a completion. It returns false when the run
// is cancelled, when no sample completed for the stall timeout, or when the
// pass clock reaches deadline (ns from origin; < 0 for none), in which case
// reason is "" and timedOut is true.
func (it *issuer) block(deadline int64) (ok bool, reason string, timedOut bool) {
	p := it.p
	before := p.samplesDone.Load()
	stall := it.t.opts.stallTimeout()
	for {
		wait := stall
		if deadline >= 0 {
			left := time.Duration(deadline - (it.t.now() - p.origin))
			if left <= 0 {
				return false, "", true
			}
			wait = min(wait, left)
		}
		if it.timer == nil {
			it.timer = time.NewTimer(wait)
		} else {
			it.timer.Reset(wait)
		}
		select {
		case <-p.wake:
			it.timer.Stop()
			return true, "", false
		case <-it.ctx().Done():
			it.timer.Stop()
			return false, it.t.cancelReason(), false
		case <-it.timer.C:
			if deadline >= 0 && it.t.now()-p.origin >= deadline {
				return false, "", true
			}
			if after := p.samplesDone.Load(); after != before {
				before = after
				continue
			}
			if wait < stall {
				continue // woke for the deadline check only
			}
			it.stalled = true
			return false, fmt.Sprintf("no sample completed for %v (stall timeout)", stall), false
		}
	}
}

// waitQueryDone blocks until query q has all its samples completed. With a
// sample timeout (GB/T 45087 arrival mode 0, GB-7.4.2-T10-mode0 and IN-48)
// it also returns once q's timeout expires, counting its outstanding
// samples lost, so that the next query goes out.
func (it *issuer) waitQueryDone(q int) (bool, string) {
	p := it.p
	if p.remaining.at(q).Load() == 0 {
		return true, ""
	}
	deadline := int64(-1)
	if timeout := int64(it.t.opts.SampleTimeout); timeout > 0 {
		deadline = p.issuedAt(q) + timeout
	}
	p.waitQuery.Store(int64(q))
	defer p.waitQuery.Store(-1)
	for p.remaining.at(q).Load() != 0 {
		ok, reason, timedOut := it.block(deadline)
		if timedOut {
			p.loseQuery(q)
			return true, ""
		}
		if !ok {
			return false, reason
		}
	}
	return true, ""
}

// waitAnyQuery in pass.waitQuery asks every completed query to wake the
// issuer (fixed concurrency), not one query in particular.
const waitAnyQuery = -2

// waitSlot blocks, in fixed-concurrency mode, until fewer than n of the
// queries issued are outstanding, so that the next can go out with n in
// flight. Queries are single samples issued in order by one issuer, so the
// queries in flight are queriesIssued − queriesDone (q − queriesDone when
// the pass issues every query).
func (it *issuer) waitSlot(n int64) (bool, string) {
	p := it.p
	if p.queriesIssued.Load()-p.queriesDone.Load() < n {
		return true, ""
	}
	p.waitQuery.Store(waitAnyQuery)
	defer p.waitQuery.Store(-1)
	for p.queriesIssued.Load()-p.queriesDone.Load() >= n {
		if ok, reason, _ := it.block(-1); !ok {
			return false, reason
		}
	}
	return true, ""
}

// waitUntil returns once the pass clock reaches target (ns from origin):
// sleeping while far away, spinning through the last stretch (the spin
// window, Options.SpinWindow). Once per wait, when more than
// spinYieldSlack is left, the spin yields its processor (runtime.Gosched),
// so that the goroutines the SUT woke when it was handed the last query
// run now, while there is time, instead of queuing behind an issuer that
// never lets go of its processor (see spinYieldSlack). Once, not at every
// turn: each yield may wake an idle thread to look for work, which costs
// a core the SUT shares.
func (it *issuer) waitUntil(target int64) (int64, bool) {
	p := it.p
	window := it.t.opts.spinWindow()
	yielded := false
	for {
		now := it.t.now() - p.origin
		if now >= target {
			return now, true
		}
		d := time.Duration(target - now)
		if d > window {
			// Wake half a window early: the sleep itself may overshoot.
			if !it.sleep(d - window/2) {
				return now, false
			}
			continue
		}
		if it.ctx().Err() != nil {
			return now, false
		}
		if !yielded && d > spinYieldSlack {
			yielded = true
			runtime.Gosched()
		}
	}
}

// spinYieldSlack is how close to its next query the spinning issuer stops
// yielding its processor. A SUT that hands each query to a goroutine (a
// network SUT's worker) wakes it onto the issuer's own processor, where it
// waits while the issuer spins; without the yield the scheduler preempts
// the issuer only after 10 ms of spinning and then runs every goroutine
// queued meanwhile before the issuer comes back: against a network SUT at
// 20,000 queries/s on 2 cores, p99 issue lateness of 20 ms (issue 27). A
// goroutine that runs after a yield has this long before the query is
// due; past it the issuer spins without yielding.
const spinYieldSlack = 30 * time.Microsecond

// issueOne calls the SUT at now (ns from the pass origin), turning a panic
// into an error. It reports abandoned when the watchdog gave up on the call
// while it ran: the issuer must then touch nothing of the run and return.
func (it *issuer) issueOne(now int64, samples []QuerySample) (abandoned bool, err error) {
	start := max(now, 0) + 1
	it.call.Store(start)
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("SUT panicked in IssueQuery: %v", v)
		}
		abandoned = !it.call.CompareAndSwap(start, 0)
	}()
	it.t.sut.IssueQuery(it.t.resp, samples)
	return false, nil
}

func (it *issuer) errorEvent(key, msg string) Event {
	return Event{TimeNs: it.t.now(), Key: key, Value: msg, Error: true}
}

// run is LoadGen's IssueQueriesInternal for one issuing goroutine.
func (it *issuer) run() issueStats {
	t, p, e := it.t, it.p, it.e
	g := p.gen
	var st issueStats
	if t.opts.Chains != nil && e.Scenario == Server && !it.accuracy {
		return it.runChains()
	}
	// Only Server cannot run out: its generated queries cover the duration.
	st.ranOut = e.Scenario != Server
	// A shard's part of the counts (Shard.ShardSplit), split again over
	// the issuing goroutines.
	sh := p.shard
	minQ := perThread(sh.ShardSplit(e.MinQueryCount), it.idx, it.stride)
	maxQ := perThread(sh.ShardSplit(e.MaxQueryCount), it.idx, it.stride)
	concurrency := int64(sh.ShardSplit(e.Concurrency))
	prev := -1 // the last query this issuer issued
	targetDuration := int64(e.TargetDurationMs) * 1e6
	maxDuration := int64(e.MaxDurationMs) * 1e6
	var issued uint64

	for q := it.idx; q < g.queries; q += it.stride {
		if !p.owns(q) {
			continue // another shard's (see Shard)
		}
		if t.ctx.Err() != nil {
			st.stop = t.cancelReason()
			st.ranOut = false
			break
		}
		if !p.prepare(q) {
			// Only a pass generated on demand can get here (see
			// pass.prepare): its next chunk of queries would take it
			// beyond the memory budget.
			st.stop, st.ranOut = fmt.Sprintf("memory budget reached: the records of %d more queries would exceed %s (Options.MaxMemory)",
				min(1<<lazyChunkShift, g.queries-q), FormatBytes(float64(p.budget))), false
			st.errors = append(st.errors, it.errorEvent("error_runtime", st.stop))
			break
		}
		var now int64
		switch e.Scenario {
		case SingleStream, MultiStream:
			if e.Concurrency > 0 {
				if ok, reason := it.waitSlot(concurrency); !ok {
					st.stop, st.ranOut = reason, false
					return it.finish(st, issued)
				}
			} else if prev >= 0 {
				if ok, reason := it.waitQueryDone(prev); !ok {
					st.stop, st.ranOut = reason, false
					return it.finish(st, issued)
				}
			}
			now = t.now() - p.origin
		case Server:
			var ok bool
			if now, ok = it.waitUntil(g.sched[q]); !ok {
				st.stop, st.ranOut = t.cancelReason(), false
				return it.finish(st, issued)
			}
		default:
			now = t.now() - p.origin
		}

		// Coalesce every following query already due into one IssueQuery.
		first, last, count := q, q, 1
		if e.Scenario == Server && e.ServerCoalesceQueries {
			for k := it.next(last); k < g.queries && now >= g.sched[k]; k = it.next(k) {
				last = k
				count++
			}
		}
		var samples []QuerySample
		for k := first; k <= last; k = it.next(k) {
			atomic.StoreInt64(p.issued.at(k), now)
			s, end := g.queryRange(k)
			p.samplesIssued.Add(int64(end - s))
			p.queriesIssued.Add(1)
		}
		if count == last-first+1 || first == last {
			samples = g.span(first, last)
		}
		if samples == nil {
			// Strided queries (or queries across two chunks) are not
			// contiguous: gather them into a slice of their own, which
			// the SUT may keep.
			for k := first; k <= last; k = it.next(k) {
				samples = append(samples, g.query(k)...)
			}
		}
		q, prev = last, last
		abandoned, err := it.issueOne(now, samples)
		if abandoned {
			// The watchdog has reported this issuer and the run has moved
			// on: return without touching its state.
			return issueStats{}
		}
		if err != nil {
			// The samples of a panicking call will never complete.
			for _, smp := range samples {
				p.markLost(int(uint64(smp.ID) - 1 - p.seqBase))
			}
			st.errors = append(st.errors, it.errorEvent("error_runtime", err.Error()))
			st.stop, st.ranOut = err.Error(), false
			issued += uint64(count)
			return it.finish(st, issued)
		}
		issued += uint64(count)
		t.progressIssued.Store(p.samplesIssued.Load())

		if it.accuracy {
			continue
		}
		duration := now
		if e.Scenario == Server {
			if e.MaxAsyncQueries != 0 {
				total := issued
				if it.stride > 1 {
					total = uint64(t.serverIssuedTotal.Add(int64(count)))
				}
				outstanding := total - uint64(p.queriesDone.Load())
				if outstanding > e.MaxAsyncQueries {
					st.errors = append(st.errors, it.errorEvent("error_runtime", fmt.Sprintf(
						"IssueQueryThread %d Ending early: Too many outstanding queries. issued %d outstanding %d",
						it.idx, total, outstanding)))
					break
				}
			}
		} else if issued >= minQ && duration >= targetDuration {
			t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: "Ending naturally: Minimum query count and test duration met."})
			st.ranOut = false
			break
		}
		if e.MaxQueryCount != 0 && issued >= maxQ {
			st.errors = append(st.errors, it.errorEvent("error_runtime", fmt.Sprintf(
				"IssueQueryThread %d Ending early: Max query count reached. query_count %d", it.idx, issued)))
			st.ranOut = false
			break
		}
		if maxDuration != 0 && duration > maxDuration {
			st.errors = append(st.errors, it.errorEvent("error_runtime", fmt.Sprintf(
				"IssueQueryThread %d Ending early: Max test duration reached. duration_ns %d", it.idx, duration)))
			st.ranOut = false
			break
		}
	}
	return it.finish(st, issued)
}

// next returns the next query after q that this issuer issues: q + stride,
// skipping another shard's queries; g.queries or more when there is none.
func (it *issuer) next(q int) int {
	for q += it.stride; q < it.p.gen.queries && !it.p.owns(q); q += it.stride {
	}
	return q
}

func (it *issuer) finish(st issueStats, issued uint64) issueStats {
	st.queriesIssued = issued
	st.stalled = it.stalled
	if it.timer != nil {
		it.timer.Stop()
	}
	return st
}

// perThread splits a query count over stride issuing goroutines as LoadGen does.
func perThread(count uint64, idx, stride int) uint64 {
	n := count / uint64(stride)
	if uint64(idx) < count%uint64(stride) {
		n++
	}
	return n
}

// issuePass runs the issuing goroutines of a pass and combines their stats.
// The issuers run on goroutines of their own while the calling goroutine
// watches them (watch), so that a SUT blocked inside IssueQuery cannot keep
// the timeout, the stall timeout or cancellation from ending the pass.
func (t *testRun) issuePass(p *pass, e *Effective, accuracy bool) issueStats {
	threads := 1
	if e.Scenario == Server && e.ServerNumIssueQueryThreads > 0 {
		threads = int(e.ServerNumIssueQueryThreads)
	}
	t.serverIssuedTotal.Store(0)
	issuers := make([]*issuer, threads)
	type report struct {
		idx int
		st  issueStats
	}
	// Buffered for every issuer, so that one the watchdog gave up on can
	// still report and end when the SUT lets it go.
	reports := make(chan report, threads)
	for k := range issuers {
		issuers[k] = &issuer{t: t, p: p, e: e, accuracy: accuracy, idx: k, stride: threads}
	}
	for _, it := range issuers {
		go func() {
			if threads > 1 {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			reports <- report{it.idx, it.run()}
		}()
	}
	results := make([]issueStats, threads)
	pending := threads
	w := &watchdog{t: t, p: p, issuers: issuers, reported: make([]bool, threads), timer: time.NewTimer(t.opts.stallTimeout() / watchdogLooks)}
	defer w.timer.Stop()
	cancelled := t.ctx.Done()
	for pending > 0 {
		select {
		case r := <-reports:
			if !w.reported[r.idx] {
				w.reported[r.idx] = true
				results[r.idx] = r.st
				pending--
			}
		case <-cancelled:
			cancelled = nil
			w.graceEnd = time.Now().Add(t.opts.interruptGrace())
			w.timer.Reset(t.opts.interruptGrace())
		case <-w.timer.C:
			pending -= w.check(results)
		}
	}
	var st issueStats
	for _, r := range results {
		st.queriesIssued += r.queriesIssued
		st.ranOut = st.ranOut || r.ranOut
		st.stalled = st.stalled || r.stalled
		st.blocked = st.blocked || r.blocked
		st.errors = append(st.errors, r.errors...)
		if st.stop == "" {
			st.stop = r.stop
		}
	}
	if st.blocked {
		// An abandoned issuer could not report its count; the pass's
		// counter holds every query handed to the SUT.
		st.queriesIssued = uint64(p.queriesIssued.Load())
		st.ranOut = false
	}
	return st
}

// watchdog watches the SUT calls of the issuers of one pass. It gives up on
// a call that has run for the stall timeout while no sample completed, or
// that is still running the interrupt grace after the run was cancelled or
// timed out: the call's samples are then lost and its goroutine is left
// behind (see Options.StallTimeout). A SUT that completes samples inside a
// long IssueQuery is making progress and is left alone.
type watchdog struct {
	t        *testRun
	p        *pass
	issuers  []*issuer
	timer    *time.Timer
	graceEnd time.Time // zero until the run is cancelled
	reported []bool
	// lastDone is p.samplesDone at the previous look, lastProgress (pass
	// clock) the look at which it was last seen to change.
	lastDone     int64
	lastProgress int64
}

// watchdogLooks is how many times per stall timeout the watchdog looks at
// a call in progress: a blocked call is given up on within 1/watchdogLooks
// of the stall timeout after the last completion.
const watchdogLooks = 8

// check gives up on the overrunning calls, fills their results and returns
// how many issuers it gave up on; it re-arms the timer.
func (w *watchdog) check(results []issueStats) int {
	t, p := w.t, w.p
	stall := t.opts.stallTimeout()
	now := t.now() - p.origin
	if done := p.samplesDone.Load(); done != w.lastDone {
		w.lastDone, w.lastProgress = done, now
	}
	cancelled := !w.graceEnd.IsZero() && !time.Now().Before(w.graceEnd)
	next := stall / watchdogLooks
	n := 0
	for k, it := range w.issuers {
		start := it.call.Load()
		if w.reported[k] || start <= 0 {
			continue
		}
		inCall := time.Duration(now - (start - 1))
		idle := time.Duration(now - max(start-1, w.lastProgress))
		if !cancelled && idle < stall {
			continue
		}
		if !it.call.CompareAndSwap(start, callAbandoned) {
			continue // the call just returned: the issuer reports itself
		}
		w.reported[k] = true
		n++
		reason := fmt.Sprintf("SUT blocked in IssueQuery for %v", inCall.Round(time.Millisecond))
		results[k] = issueStats{stop: reason, blocked: true}
		if cancelled {
			results[k].stop = t.cancelReason() + "; " + reason
		}
		t.blockedSUT(reason)
	}
	if cancelled {
		// Issuers not in a call end on their own once cancelled; look
		// again soon for one that entered a call after all.
		next = time.Millisecond
	}
	if !w.graceEnd.IsZero() && !cancelled {
		next = time.Until(w.graceEnd)
	}
	w.timer.Reset(max(next, time.Millisecond))
	return n
}
