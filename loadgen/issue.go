package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// issueStats is what one issuing goroutine reports back.
type issueStats struct {
	queriesIssued uint64
	ranOut        bool   // a non-Server pass ended without a natural stop
	stop          string // why issuing ended early because of aimeter's limits
	stalled       bool   // no sample completed for the stall timeout
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
}

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
	if p.remaining[q].Load() == 0 {
		return true, ""
	}
	deadline := int64(-1)
	if timeout := int64(it.t.opts.SampleTimeout); timeout > 0 {
		deadline = atomic.LoadInt64(&p.issued[q]) + timeout
	}
	p.waitQuery.Store(int64(q))
	defer p.waitQuery.Store(-1)
	for p.remaining[q].Load() != 0 {
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

// waitUntil returns once the pass clock reaches target (ns from origin):
// sleeping while far away, spinning through the last stretch (the spin
// window, Options.SpinWindow).
func (it *issuer) waitUntil(target int64) (int64, bool) {
	p := it.p
	window := it.t.opts.spinWindow()
	for {
		now := it.t.now() - p.origin
		if now >= target {
			return now, true
		}
		if d := time.Duration(target - now); d > window {
			// Wake half a window early: the sleep itself may overshoot.
			if !it.sleep(d - window/2) {
				return now, false
			}
			continue
		}
		if it.ctx().Err() != nil {
			return now, false
		}
	}
}

// issueOne calls the SUT, turning a panic into an error.
func (it *issuer) issueOne(samples []QuerySample) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("SUT panicked in IssueQuery: %v", v)
		}
	}()
	it.t.sut.IssueQuery(it.t.resp, samples)
	return nil
}

func (it *issuer) errorEvent(key, msg string) Event {
	return Event{TimeNs: it.t.now(), Key: key, Value: msg, Error: true}
}

// run is LoadGen's IssueQueriesInternal for one issuing goroutine.
func (it *issuer) run() issueStats {
	t, p, e := it.t, it.p, it.e
	g := p.gen
	var st issueStats
	// Only Server cannot run out: its generated queries cover the duration.
	st.ranOut = e.Scenario != Server
	minQ := perThread(e.MinQueryCount, it.idx, it.stride)
	maxQ := perThread(e.MaxQueryCount, it.idx, it.stride)
	targetDuration := int64(e.TargetDurationMs) * 1e6
	maxDuration := int64(e.MaxDurationMs) * 1e6
	var issued uint64

	for q := it.idx; q < g.queries; q += it.stride {
		if t.ctx.Err() != nil {
			st.stop = t.cancelReason()
			st.ranOut = false
			break
		}
		var now int64
		switch e.Scenario {
		case SingleStream, MultiStream:
			if q-it.stride >= 0 {
				if ok, reason := it.waitQueryDone(q - it.stride); !ok {
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
		first, last := q, q
		if e.Scenario == Server && e.ServerCoalesceQueries {
			for last+it.stride < g.queries && now >= g.sched[last+it.stride] {
				last += it.stride
			}
		}
		var samples []QuerySample
		for k := first; k <= last; k += it.stride {
			atomic.StoreInt64(&p.issued[k], now)
			s, end := g.queryRange(k)
			p.samplesIssued.Add(int64(end - s))
			p.queriesIssued.Add(1)
		}
		if it.stride == 1 || first == last {
			s, _ := g.queryRange(first)
			_, end := g.queryRange(last)
			samples = g.samples[s:end:end]
		} else {
			// Strided queries are not contiguous: gather them into a slice
			// of their own, which the SUT may keep.
			for k := first; k <= last; k += it.stride {
				s, end := g.queryRange(k)
				samples = append(samples, g.samples[s:end]...)
			}
		}
		q = last
		if err := it.issueOne(samples); err != nil {
			// The samples of a panicking call will never complete.
			for _, smp := range samples {
				p.markLost(int(uint64(smp.ID) - 1 - p.seqBase))
			}
			st.errors = append(st.errors, it.errorEvent("error_runtime", err.Error()))
			st.stop, st.ranOut = err.Error(), false
			issued += uint64((last-first)/it.stride + 1)
			return it.finish(st, issued)
		}
		issued += uint64((last-first)/it.stride + 1)
		t.progressIssued.Store(p.samplesIssued.Load())

		if it.accuracy {
			continue
		}
		duration := now
		if e.Scenario == Server {
			if e.MaxAsyncQueries != 0 {
				total := issued
				if it.stride > 1 {
					total = uint64(t.serverIssuedTotal.Add(int64((last-first)/it.stride + 1)))
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
func (t *testRun) issuePass(p *pass, e *Effective, accuracy bool) issueStats {
	threads := 1
	if e.Scenario == Server && e.ServerNumIssueQueryThreads > 0 {
		threads = int(e.ServerNumIssueQueryThreads)
	}
	t.serverIssuedTotal.Store(0)
	if threads == 1 {
		it := &issuer{t: t, p: p, e: e, accuracy: accuracy, idx: 0, stride: 1}
		return it.run()
	}
	results := make([]issueStats, threads)
	var wg sync.WaitGroup
	for k := 0; k < threads; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			it := &issuer{t: t, p: p, e: e, accuracy: accuracy, idx: k, stride: threads}
			results[k] = it.run()
		}()
	}
	wg.Wait()
	var st issueStats
	for _, r := range results {
		st.queriesIssued += r.queriesIssued
		st.ranOut = st.ranOut || r.ranOut
		st.stalled = st.stalled || r.stalled
		st.errors = append(st.errors, r.errors...)
		if st.stop == "" {
			st.stop = r.stop
		}
	}
	return st
}
