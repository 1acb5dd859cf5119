package loadgen

import (
	"container/heap"
	"fmt"
	"sync/atomic"
)

// Chains are queries that depend on each other, as the turns of chat
// sessions do: a turn goes out only once the previous turn's answer is
// complete and the user has thought for a while (Options.Chains). They
// replace the Server scenario's schedule; each query is one sample.
type Chains struct {
	// After[k] is the query that query k follows (an earlier one), or −1
	// for a query that follows none (a session's first turn).
	After []int32
	// Delay[k] is, for a query that follows another, the ns between that
	// query's completion and query k's scheduled time (the think time);
	// for one that follows none, its scheduled time in ns from the start
	// of issuing. Every delay is ≥ 0.
	Delay []int64
	// Samples[k] is the QSL index of query k's sample, as
	// Options.ArrivalSamples.
	Samples []uint64
}

// validate checks the chains against the settings and the loaded set.
func (c *Chains) validate(s Settings, loaded uint64) error {
	bad := func(v any, allowed string) error {
		return &FieldError{Field: "Options.Chains", Value: v, Allowed: allowed}
	}
	n := len(c.After)
	switch {
	case s.Scenario != Server:
		return bad(s.Scenario.String(), "chains replace the Server schedule: use the Server scenario")
	case s.Mode == FindPeakPerformance:
		return bad(s.Mode.String(), "a find-peak search changes the rate of each probe; chains have none: use the performance mode")
	case s.ServerNumIssueQueryThreads > 1:
		return bad(s.ServerNumIssueQueryThreads, "chains are issued by one goroutine: set server_num_issue_query_threads to 0 or 1")
	case n == 0:
		return bad(0, "must hold at least one query")
	case len(c.Delay) != n || len(c.Samples) != n:
		return bad(fmt.Sprintf("%d/%d/%d", n, len(c.Delay), len(c.Samples)), "After, Delay and Samples must have one entry per query")
	}
	for k := range n {
		switch {
		case c.After[k] < -1 || int(c.After[k]) >= k:
			return bad(c.After[k], fmt.Sprintf("entry %d: After must be −1 or an earlier query", k))
		case c.Delay[k] < 0:
			return bad(c.Delay[k], fmt.Sprintf("entry %d: delays are ≥ 0", k))
		case c.Samples[k] >= loaded:
			return bad(c.Samples[k], fmt.Sprintf("entry %d: sample indices must be below the %d samples a performance pass loads", k, loaded))
		}
	}
	return nil
}

// chainItem is a query ready to be scheduled at a time.
type chainItem struct {
	at int64
	q  int32
}

// chainHeap orders the ready queries by time, then by index.
type chainHeap []chainItem

func (h chainHeap) Len() int { return len(h) }
func (h chainHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].q < h[j].q)
}
func (h chainHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *chainHeap) Push(x any)   { *h = append(*h, x.(chainItem)) }
func (h *chainHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// runChains issues a pass of chained queries: each at its scheduled time,
// which for a following query is known only once the query it follows has
// completed (its completion time plus its delay). The scheduled time is
// stored in the pass's schedule as the query goes out, so that its latency
// counts from it. A query whose predecessor failed or was lost is never
// issued, nor are the queries that follow it.
func (it *issuer) runChains() issueStats {
	t, p := it.t, it.p
	g := p.gen
	ch := t.opts.Chains
	n := g.queries
	var st issueStats
	children := make([][]int32, n)
	h := &chainHeap{}
	for k := range n {
		if a := ch.After[k]; a >= 0 {
			children[a] = append(children[a], int32(k))
		} else {
			*h = append(*h, chainItem{at: ch.Delay[k], q: int32(k)})
		}
	}
	heap.Init(h)
	// cancel counts q and the queries that follow it, none of them issued.
	cancel := func(q int32) int {
		count, stack := 0, []int32{q}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			count++
			stack = append(stack, children[x]...)
		}
		return count
	}
	p.waitQuery.Store(waitAnyQuery)
	defer p.waitQuery.Store(-1)
	var watch []int32 // issued queries whose followers are not yet scheduled
	left := n         // queries neither issued nor cancelled
	var issued uint64
	for left > 0 {
		if t.ctx.Err() != nil {
			st.stop = t.cancelReason()
			break
		}
		// Schedule the followers of the queries that have completed.
		keep := watch[:0]
		for _, q := range watch {
			i, _ := g.queryRange(int(q))
			switch p.state.at(i).Load() {
			case stateOK:
				done := *p.completed.at(i) // written before the state
				for _, c := range children[q] {
					heap.Push(h, chainItem{at: done + ch.Delay[c], q: c})
				}
			case stateError, stateLost:
				for _, c := range children[q] {
					left -= cancel(c)
				}
			default:
				keep = append(keep, q)
			}
		}
		watch = keep
		if left == 0 {
			break
		}
		now := t.now() - p.origin
		if h.Len() == 0 || (*h)[0].at > now {
			var ok bool
			var reason string
			switch {
			case len(watch) == 0 && h.Len() > 0:
				_, ok = it.waitUntil((*h)[0].at)
				reason = t.cancelReason()
			case len(watch) == 0:
				// Nothing outstanding and nothing ready: cannot happen
				// while queries are left; end rather than spin.
				ok, reason = false, fmt.Sprintf("chains: %d queries left with none to wait for", left)
			default:
				deadline := int64(-1)
				if h.Len() > 0 {
					deadline = (*h)[0].at
				}
				var timedOut bool
				ok, reason, timedOut = it.block(deadline)
				ok = ok || timedOut
			}
			if !ok {
				st.stop = reason
				break
			}
			continue
		}
		item := heap.Pop(h).(chainItem)
		q := int(item.q)
		g.sched[q] = item.at
		atomic.StoreInt64(p.issued.at(q), now)
		s, end := g.queryRange(q)
		p.samplesIssued.Add(int64(end - s))
		p.queriesIssued.Add(1)
		left--
		if len(children[q]) > 0 {
			watch = append(watch, item.q)
		}
		samples := g.span(q, q)
		abandoned, err := it.issueOne(now, samples)
		if abandoned {
			return issueStats{}
		}
		issued++
		if err != nil {
			for _, smp := range samples {
				p.markLost(int(uint64(smp.ID) - 1 - p.seqBase))
			}
			st.errors = append(st.errors, it.errorEvent("error_runtime", err.Error()))
			st.stop = err.Error()
			break
		}
		t.progressIssued.Store(p.samplesIssued.Load())
	}
	return it.finish(st, issued)
}
