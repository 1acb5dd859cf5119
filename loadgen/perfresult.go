package loadgen

import (
	"runtime"
	"sync"
)

// perfAcc gathers a pass's raw performance result (PerformanceResult) and
// its latest completion from its records, block by block in issue order:
// the whole pass, or one contiguous part of it read beside the others
// (scanPass), the parts then joined with join.
type perfAcc struct {
	e    *Effective
	info PassInfo
	// latencies: collect the per-sample slices (a performance pass; an
	// accuracy pass needs only the latest completion).
	latencies   bool
	tokenMode   bool
	needsTokens bool

	pr            PerformanceResult
	maxLatency    int64
	maxCompletion int64 // the latest completion of a completed or failed sample

	// The queries: how many began in these records, the first (as far as
	// these records go) and the current one.
	queries    uint64
	have       bool
	firstEnded bool
	first, cur queryState
}

// queryState is what a query's samples say of it so far.
type queryState struct {
	id                  uint64
	sched, issued, done int64
}

// newPerfAcc starts a perfAcc whose sample latencies are appended to
// latencies (its other per-sample slices to slices of the same capacity).
func newPerfAcc(e *Effective, info PassInfo, collect bool, latencies []int64) *perfAcc {
	a := &perfAcc{e: e, info: info, latencies: collect, tokenMode: e.UseTokenLatencies}
	a.needsTokens = a.tokenMode && e.Scenario != Offline
	if collect {
		a.pr.SampleLatencies = latencies
		if n := cap(latencies); n > 0 && a.tokenMode {
			a.pr.TokensPerSample = make([]int64, 0, n)
			if a.needsTokens {
				a.pr.FirstTokenLatencies, a.pr.TimePerOutputToken = make([]int64, 0, n), make([]int64, 0, n)
			}
		}
	}
	return a
}

// endQuery ends the current query: LoadGen counts it, MultiStream takes
// its latency, and it is the final query so far.
func (a *perfAcc) endQuery() {
	if !a.have {
		return
	}
	if a.latencies && a.e.Scenario == MultiStream {
		a.pr.QueryLatencies = append(a.pr.QueryLatencies, a.cur.done-a.cur.sched)
	}
	if !a.firstEnded {
		a.first, a.firstEnded = a.cur, true
	}
}

// add gathers a block of records.
func (a *perfAcc) add(c *RecordColumns) {
	n := c.Len()
	qids, sched, issued, first := c.QueryID[:n], c.ScheduledNs[:n], c.IssuedNs[:n], c.FirstTokenNs[:n]
	completed, tokens, status := c.CompletedNs[:n], c.Tokens[:n], c.Status[:n]
	endNs := a.info.EndNs
	for i, qid := range qids {
		if !a.have || qid != a.cur.id {
			a.endQuery()
			a.cur, a.have = queryState{id: qid, sched: sched[i], issued: issued[i]}, true
			a.queries++
		}
		done := completed[i]
		switch status[i] {
		case StatusLost:
			done = endNs
			a.pr.LostSamples++
		case StatusError:
			// A failure is counted beside the statistics, never as a
			// latency: its "completion" is the moment the SUT gave up (a
			// timeout, a reset), which says nothing of how fast it
			// serves. It still ends its query.
			a.pr.FailedSamples++
			a.cur.done = max(a.cur.done, done)
			a.maxCompletion = max(a.maxCompletion, done)
			continue
		default:
			a.maxCompletion = max(a.maxCompletion, done)
		}
		a.cur.done = max(a.cur.done, done)
		if !a.latencies {
			continue
		}
		lat := done - sched[i]
		a.maxLatency = max(a.maxLatency, lat)
		a.pr.SampleLatencies = append(a.pr.SampleLatencies, lat)
		if a.tokenMode {
			a.pr.TokensPerSample = append(a.pr.TokensPerSample, tokens[i])
		}
		if a.needsTokens {
			ttft := lat // a sample without a first token: the whole latency
			if first[i] != NoTime {
				ttft = first[i] - sched[i]
			}
			var tpot int64
			if tokens[i] > 1 {
				tpot = (lat - ttft) / (tokens[i] - 1)
			}
			a.pr.FirstTokenLatencies = append(a.pr.FirstTokenLatencies, ttft)
			a.pr.TimePerOutputToken = append(a.pr.TimePerOutputToken, tpot)
		}
	}
}

// result ends the records: the raw performance result.
func (a *perfAcc) result() PerformanceResult {
	a.endQuery()
	pr := a.pr
	pr.QueriesIssued = a.queries
	if a.have {
		pr.FinalQueryScheduledTime = float64(a.cur.sched) / 1e9
		pr.FinalQueryIssuedTime = float64(a.cur.issued) / 1e9
		pr.FinalQueryAllSamplesDoneTime = float64(a.cur.done) / 1e9
	}
	pr.MaxLatency = float64(a.maxLatency) / 1e9
	pr.ProtocolErrors = a.info.ProtocolErrors
	return pr
}

// join appends the gathering of the records that follow a's: their
// counters are added, and a query that began in a's records and goes on in
// b's is one query (its samples done at the later of the two).
func (a *perfAcc) join(b *perfAcc) {
	a.pr.LostSamples += b.pr.LostSamples
	a.pr.FailedSamples += b.pr.FailedSamples
	a.maxLatency = max(a.maxLatency, b.maxLatency)
	a.maxCompletion = max(a.maxCompletion, b.maxCompletion)
	if !b.have {
		return
	}
	bFirst := b.cur
	if b.firstEnded {
		bFirst = b.first
	}
	if a.have && bFirst.id == a.cur.id {
		a.cur.done = max(a.cur.done, bFirst.done)
		a.queries += b.queries - 1
		if b.firstEnded {
			a.cur = b.cur
		}
		return
	}
	a.queries += b.queries
	a.cur, a.have = b.cur, true
}

// scanPassMin is the least number of samples a pass must have for scanPass
// to read it in parts.
const scanPassMin = 1 << 18

// scan reads the records of the pass once, after it ended: its latest
// completion, and with latencies its raw performance result. A large pass
// is read in contiguous parts on several goroutines (each writing its
// latencies where its samples lie in one slice, then moved together), the
// result the same as one reading in order: a MultiStream pass, whose query
// latencies need whole queries, is read in order.
func (pr *passRecord) scan(e *Effective, latencies bool) (int64, PerformanceResult) {
	n := int(pr.p.extent.Load())
	parts := min(runtime.GOMAXPROCS(0), 8, n/scanPassMin)
	if parts < 2 || e.Scenario == MultiStream {
		a := newPerfAcc(e, pr.info, latencies, nil)
		if latencies {
			a.pr.SampleLatencies = make([]int64, 0, int(pr.p.samplesIssued.Load()))
		}
		for c := range pr.columns(0) {
			a.add(c)
		}
		return a.maxCompletion, a.result()
	}
	var all PerformanceResult
	if latencies {
		all.SampleLatencies = make([]int64, n)
		if e.UseTokenLatencies {
			all.TokensPerSample = make([]int64, n)
			if e.Scenario != Offline {
				all.FirstTokenLatencies, all.TimePerOutputToken = make([]int64, n), make([]int64, n)
			}
		}
	}
	accs := make([]*perfAcc, parts)
	bounds := make([]int, parts+1)
	for k := range bounds {
		bounds[k] = k * n / parts
	}
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := bounds[k], bounds[k+1]
		a := newPerfAcc(e, pr.info, latencies, nil)
		if latencies {
			a.pr = PerformanceResult{
				SampleLatencies:     window(all.SampleLatencies, lo, hi),
				TokensPerSample:     window(all.TokensPerSample, lo, hi),
				FirstTokenLatencies: window(all.FirstTokenLatencies, lo, hi),
				TimePerOutputToken:  window(all.TimePerOutputToken, lo, hi),
			}
		}
		accs[k] = a
		wg.Go(func() {
			var c RecordColumns
			for from := lo; from < hi; from += 4096 {
				c.Reset()
				pr.columnRange(&c, from, min(from+4096, hi))
				a.add(&c)
			}
		})
	}
	wg.Wait()
	// Each part's slices hold its values at the start of its samples'
	// place: move them together, in order.
	at := 0
	for k, a := range accs {
		if latencies {
			m := len(a.pr.SampleLatencies)
			lo := bounds[k]
			copy(all.SampleLatencies[at:], all.SampleLatencies[lo:lo+m])
			if all.TokensPerSample != nil {
				copy(all.TokensPerSample[at:], all.TokensPerSample[lo:lo+m])
			}
			if all.FirstTokenLatencies != nil {
				copy(all.FirstTokenLatencies[at:], all.FirstTokenLatencies[lo:lo+m])
				copy(all.TimePerOutputToken[at:], all.TimePerOutputToken[lo:lo+m])
			}
			at += m
		}
		if k > 0 {
			accs[0].join(a)
		}
	}
	first := accs[0]
	res := first.result()
	if latencies {
		res.SampleLatencies = all.SampleLatencies[:at]
		res.TokensPerSample = trim(all.TokensPerSample, at)
		res.FirstTokenLatencies = trim(all.FirstTokenLatencies, at)
		res.TimePerOutputToken = trim(all.TimePerOutputToken, at)
	}
	return first.maxCompletion, res
}

// window is s[lo:lo] with room up to hi, or nil for a nil s.
func window(s []int64, lo, hi int) []int64 {
	if s == nil {
		return nil
	}
	return s[lo:lo:hi]
}

// trim is s[:n], or nil for a nil s.
func trim(s []int64, n int) []int64 {
	if s == nil {
		return nil
	}
	return s[:n]
}
