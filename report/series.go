package report

import (
	"iter"
	"math"
	"math/bits"
	"slices"
	"sync"

	"aimeter/loadgen"
)

// Limits that keep the report's memory and size bounded whatever the number
// of records: every series is built from fixed-size buckets filled in one
// streaming pass over the records.
const (
	// maxTimeBuckets is the most time buckets of the over-time series; the
	// bucket width doubles (merging neighbours) when a time falls past them.
	maxTimeBuckets = 1000
	// minTimeBuckets and minPerBucket coarsen the over-time series of short
	// runs: buckets are merged in pairs while there are more than
	// minTimeBuckets of them and they average fewer than minPerBucket
	// latencies each.
	minTimeBuckets = 60
	minPerBucket   = 10
	// histPerDecade is the number of log-spaced latency histogram buckets per
	// power of ten (a bucket is 2.3% wide); histDecades of them cover 1 ns to
	// 10^14 ns (more than a day).
	histPerDecade = 100
	histDecades   = 14
	// exactCDFLimit is the most latencies kept for an exact CDF; past it the
	// CDF is read from the histogram.
	exactCDFLimit = 1 << 20
	// maxCDFPoints bounds the points of an exact CDF (half spread evenly in
	// rank, half towards the tail).
	maxCDFPoints = 2000
)

// logHist is a log-spaced latency histogram with exact count, min, max and sum.
type logHist struct {
	counts   [histPerDecade * histDecades]uint64
	n        uint64
	min, max int64
	tab      *histTables // histTab, fetched at the first add
}

// histIndex is the bucket of latency v: floor(log10(v) × histPerDecade),
// clamped to the buckets. It is read from histStart, indexed by v's bit
// length and the six bits after its leading one (a class of values at most
// 1.6 % wide, narrower than a 2.3 % bucket, so it holds at most one edge),
// and corrected by comparing with histEdges, which histIndexExact built: a
// report reads every record of a run, and this costs a table read and a
// comparison instead of a logarithm or a binary search.
func histIndex(v int64) int { return histTab().index(v) }

// histTables are what histIndex reads, built once.
type histTables struct {
	edges []int64                         // histEdges
	start *[65][1 << histClassBits]uint16 // histStart
}

var histTab = sync.OnceValue(func() *histTables { return &histTables{edges: histEdges(), start: histStart()} })

// index is histIndex.
func (t *histTables) index(v int64) int {
	if v <= 1 {
		return 0
	}
	l, m := histClass(v)
	i := int(t.start[l][m])
	for i+1 < len(t.edges) && v >= t.edges[i+1] {
		i++
	}
	return i
}

// histClassBits is the number of bits after the leading one that, with the
// bit length, name a value's class in histStart.
const histClassBits = 6

// histClass returns v's bit length and the histClassBits bits after its
// leading one (v > 1).
func histClass(v int64) (l, m int) {
	l = bits.Len64(uint64(v))
	if shift := l - 1 - histClassBits; shift >= 0 {
		m = int(v>>shift) & (1<<histClassBits - 1)
	} else {
		m = int(v<<-shift) & (1<<histClassBits - 1)
	}
	return l, m
}

// histStart[l][m] is the bucket of the least value of class (l, m) (see
// histClass): at most histIndex of every value of the class.
var histStart = sync.OnceValue(func() *[65][1 << histClassBits]uint16 {
	var t [65][1 << histClassBits]uint16
	edges := histEdges()
	for l := 2; l <= 63; l++ {
		for m := range 1 << histClassBits {
			var least int64
			if shift := l - 1 - histClassBits; shift >= 0 {
				least = int64(1)<<(l-1) | int64(m)<<shift
			} else {
				// Classes of short values: the least value whose top
				// bits are m, if any (none past the last one of length l).
				least = int64(1)<<(l-1) | int64(m)>>-shift
			}
			i, _ := slices.BinarySearch(edges, least+1)
			t[l][m] = uint16(max(i-1, 0))
		}
	}
	return &t
})

// histIndexExact is histIndex by its definition.
func histIndexExact(v int64) int {
	if v <= 1 {
		return 0
	}
	i := int(math.Floor(math.Log10(float64(v)) * histPerDecade))
	return min(max(i, 0), histPerDecade*histDecades-1)
}

// histEdges[i] is the least v > 1 whose histIndexExact is i (bucket 0 starts
// at 0; edges past int64's range are MaxInt64).
var histEdges = sync.OnceValue(func() []int64 {
	e := make([]int64, histPerDecade*histDecades)
	for i := 1; i < len(e); i++ {
		// The least v with histIndexExact(v) >= i, by bisection (the
		// index is non-decreasing in v).
		lo, hi := int64(1), int64(math.MaxInt64)
		if histIndexExact(hi) < i {
			e[i] = math.MaxInt64
			continue
		}
		for lo+1 < hi {
			mid := lo + (hi-lo)/2
			if histIndexExact(mid) >= i {
				hi = mid
			} else {
				lo = mid
			}
		}
		e[i] = hi
	}
	return e
})

// histEdge is the lower edge of bucket i, in ns.
func histEdge(i int) float64 {
	return math.Pow(10, float64(i)/histPerDecade)
}

func (h *logHist) add(v int64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
	if h.tab == nil {
		h.tab = histTab()
	}
	h.counts[h.tab.index(v)]++
}

// timeline accumulates per-time-bucket counts and latency statistics. The
// bucket width doubles whenever a time falls past the last bucket, so it
// needs no prior knowledge of the run's length.
type timeline struct {
	width int64 // ns per bucket
	used  int   // buckets in use (1 + highest index seen)
	last  int64 // the latest time seen
	// The last bucket found, and its span [hitLo, hitHi) (empty: none).
	hit                       int
	hitLo, hitHi              int64
	issued, completed, failed [maxTimeBuckets]uint64
	latN                      [maxTimeBuckets]uint64
	latMin, latMax            [maxTimeBuckets]int64
	latSum                    [maxTimeBuckets]float64
}

func newTimeline(hintEndNs int64) *timeline {
	w := int64(1000) // 1 µs
	if hintEndNs > 0 {
		w = max(w, (hintEndNs+maxTimeBuckets-1)/maxTimeBuckets)
	}
	return &timeline{width: w}
}

// bucket returns the index of time t, widening the buckets as needed.
// Consecutive times mostly fall in one bucket (a report reads every
// record, in issue order): the last bucket's span is kept, so that they
// cost a comparison instead of a 64-bit division.
func (tl *timeline) bucket(t int64) int {
	t = max(t, 0)
	tl.last = max(tl.last, t)
	if t >= tl.hitLo && t < tl.hitHi {
		return tl.hit
	}
	i := t / tl.width
	for i >= maxTimeBuckets {
		tl.merge()
		i = t / tl.width
	}
	tl.used = max(tl.used, int(i)+1)
	tl.hit, tl.hitLo, tl.hitHi = int(i), i*tl.width, (i+1)*tl.width
	return int(i)
}

// merge halves the number of buckets by joining neighbours.
func (tl *timeline) merge() {
	for i := 0; i < maxTimeBuckets/2; i++ {
		a, b := 2*i, 2*i+1
		tl.issued[i] = tl.issued[a] + tl.issued[b]
		tl.completed[i] = tl.completed[a] + tl.completed[b]
		tl.failed[i] = tl.failed[a] + tl.failed[b]
		na, nb := tl.latN[a], tl.latN[b]
		switch {
		case na == 0:
			tl.latMin[i], tl.latMax[i] = tl.latMin[b], tl.latMax[b]
		case nb != 0:
			tl.latMin[i], tl.latMax[i] = min(tl.latMin[a], tl.latMin[b]), max(tl.latMax[a], tl.latMax[b])
		default:
			tl.latMin[i], tl.latMax[i] = tl.latMin[a], tl.latMax[a]
		}
		tl.latN[i] = na + nb
		tl.latSum[i] = tl.latSum[a] + tl.latSum[b]
	}
	for i := maxTimeBuckets / 2; i < maxTimeBuckets; i++ {
		tl.issued[i], tl.completed[i], tl.failed[i] = 0, 0, 0
		tl.latN[i], tl.latMin[i], tl.latMax[i], tl.latSum[i] = 0, 0, 0, 0
	}
	tl.width *= 2
	tl.used = (tl.used + 1) / 2
	tl.hitLo, tl.hitHi = 0, 0 // the kept span is no bucket's any more
}

func (tl *timeline) addLatency(t, lat int64) { tl.addLatencyIn(tl.bucket(t), lat) }

// addLatencyIn is addLatency in bucket i, found with bucket.
func (tl *timeline) addLatencyIn(i int, lat int64) {
	if tl.latN[i] == 0 || lat < tl.latMin[i] {
		tl.latMin[i] = lat
	}
	if tl.latN[i] == 0 || lat > tl.latMax[i] {
		tl.latMax[i] = lat
	}
	tl.latN[i]++
	tl.latSum[i] += float64(lat)
}

// coarsen merges buckets of a short or sparse run so that each holds, on
// average, enough latencies to be meaningful.
func (tl *timeline) coarsen() {
	var total uint64
	for i := range tl.used {
		total += tl.latN[i]
	}
	for tl.used > minTimeBuckets && total < uint64(tl.used)*minPerBucket {
		tl.merge()
	}
}

// passStats is everything the charts of one pass need, gathered in a single
// streaming pass over its records.
type passStats struct {
	hist     logHist
	tl       *timeline
	exact    []int64 // every latency while at most exactCDFLimit; nil past it
	overflow bool
	lost     uint64
	failed   uint64
	samples  uint64
	endNs    int64 // the end of the pass, from its PassInfo
}

// addLatency adds one latency completed at doneNs. Censored latencies (of
// lost samples) go into the distribution, as in the Summary, but not into the
// over-time series, where they would all pile up at the end of the pass.
func (ps *passStats) addLatency(doneNs, lat int64, censored bool) {
	if censored {
		ps.addDistribution(lat)
		return
	}
	ps.addLatencyIn(ps.tl.bucket(doneNs), lat)
}

// addLatencyIn is addLatency of an uncensored latency completed in time
// bucket b.
func (ps *passStats) addLatencyIn(b int, lat int64) {
	ps.tl.addLatencyIn(b, lat)
	ps.addDistribution(lat)
}

// addDistribution adds lat to the histogram and the exact CDF.
func (ps *passStats) addDistribution(lat int64) {
	ps.hist.add(lat)
	if ps.overflow {
		return
	}
	if len(ps.exact) >= exactCDFLimit {
		ps.exact, ps.overflow = nil, true
		return
	}
	ps.exact = append(ps.exact, lat)
}

// collectPass streams the records of a pass into fixed-size buckets. Latency
// is completed − scheduled, of successful samples only, with lost samples
// censored at the end of the pass as in the Summary (failed samples are
// counted, never taken as latencies); for MultiStream it is the query latency (the last
// sample's completion − the query's scheduled time). A latency is placed in
// time at its completion.
func collectPass(records iter.Seq[loadgen.Record], info loadgen.PassInfo, multiStream bool) *passStats {
	return collectPassColumns(loadgen.RecordBlocks(records), info, multiStream)
}

// collectPassColumns is collectPass over blocks of records by column
// (loadgen.Result.PassColumns).
func collectPassColumns(blocks iter.Seq[*loadgen.RecordColumns], info loadgen.PassInfo, multiStream bool) *passStats {
	ps := &passStats{tl: newTimeline(info.EndNs), endNs: info.EndNs}
	if n := info.EndSeq - info.FirstSeq; n > 0 {
		ps.exact = make([]int64, 0, min(n, exactCDFLimit))
	}
	var (
		lastIssued       int64 = -1 // no time: the first sample looks its bucket up
		lastIssuedBucket int
		lastWidth        int64
		haveQuery        bool
		qid              uint64
		qSched           int64
		qDone            int64
		qLost            bool
		qFailed          bool
	)
	flushQuery := func() {
		if haveQuery && !qFailed {
			ps.addLatency(qDone, qDone-qSched, qLost)
		}
	}
	for c := range blocks {
		n := c.Len()
		qids, sched, issued := c.QueryID[:n], c.ScheduledNs[:n], c.IssuedNs[:n]
		completed, status := c.CompletedNs[:n], c.Status[:n]
		for i := range n {
			ps.samples++
			// Each sample counts at its issue time: samples issued per
			// second. Consecutive samples share their issue time in
			// Offline and MultiStream, and then their bucket, unless the
			// buckets were widened since.
			if t := issued[i]; t != lastIssued || ps.tl.width != lastWidth {
				lastIssued, lastIssuedBucket = t, ps.tl.bucket(t)
				lastWidth = ps.tl.width
			}
			ps.tl.issued[lastIssuedBucket]++
			done := completed[i]
			lost := false
			switch status[i] {
			case loadgen.StatusOK:
				b := ps.tl.bucket(done)
				ps.tl.completed[b]++
				if !multiStream {
					// The latency is placed at the same time: its bucket.
					ps.addLatencyIn(b, done-sched[i])
					continue
				}
			case loadgen.StatusError:
				// A failure is no latency: it is counted and charted as a
				// failure, never in the latency histogram, CDF or over time
				// (nor, in MultiStream, is its query's latency).
				ps.failed++
				ps.tl.failed[ps.tl.bucket(done)]++
				if !multiStream {
					continue
				}
			default:
				ps.lost++
				done, lost = info.EndNs, true
			}
			if !multiStream {
				ps.addLatency(done, done-sched[i], lost)
				continue
			}
			if !haveQuery || qids[i] != qid {
				flushQuery()
				haveQuery, qid, qSched, qDone, qLost, qFailed = true, qids[i], sched[i], 0, false, false
			}
			if status[i] == loadgen.StatusError {
				qFailed = true
				continue
			}
			qDone = max(qDone, done)
			qLost = qLost || lost
		}
	}
	if multiStream {
		flushQuery()
	}
	ps.tl.coarsen()
	if ps.exact != nil {
		slices.Sort(ps.exact)
	}
	return ps
}

// cdfFromSorted picks at most maxCDFPoints points of the empirical CDF of
// sorted: every point when there are few, else ranks spread evenly plus ranks
// spread evenly in log(1−p) so that the tail stays visible.
func cdfFromSorted(sorted []int64) (xs []int64, ps []float64) {
	n := len(sorted)
	if n == 0 {
		return nil, nil
	}
	var idx []int
	if n <= maxCDFPoints {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
	} else {
		half := maxCDFPoints / 2
		for k := range half {
			idx = append(idx, k*n/half)
		}
		l := math.Log10(float64(n))
		for k := 1; k <= half; k++ {
			p := 1 - math.Pow(10, -l*float64(k)/float64(half))
			idx = append(idx, min(n-1, int(math.Ceil(p*float64(n)))-1))
		}
		idx = append(idx, n-1)
		slices.Sort(idx)
		idx = slices.Compact(idx)
	}
	for _, i := range idx {
		// Keep only the last index of a run of equal latencies: the CDF
		// steps once per distinct value.
		if i+1 < n && sorted[i+1] == sorted[i] && n <= maxCDFPoints {
			continue
		}
		xs = append(xs, sorted[i])
		ps = append(ps, float64(i+1)/float64(n))
	}
	return xs, ps
}

// cdfFromHist reads an approximate CDF from the histogram: the cumulative
// fraction at the upper edge of every non-empty bucket.
func cdfFromHist(h *logHist) (xs []float64, ps []float64) {
	if h.n == 0 {
		return nil, nil
	}
	var cum uint64
	first := true
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		if first {
			xs = append(xs, max(float64(h.min), histEdge(i)))
			ps = append(ps, 0)
			first = false
		}
		cum += c
		xs = append(xs, min(float64(h.max), histEdge(i+1)))
		ps = append(ps, float64(cum)/float64(h.n))
	}
	return xs, ps
}
