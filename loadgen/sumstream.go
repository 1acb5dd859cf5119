package loadgen

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"aimeter/stats"
)

// ColumnScan streams records in issue order, column by column: each call
// passes every record to fn in blocks (a block may be reused once fn
// returns) and returns fn's first error, or its own. It may be called
// several times and must yield the same records each time.
type ColumnScan func(fn func(*RecordColumns) error) error

// SummarizePassScan is SummarizePass of the records of pass info that scan
// streams (records of other passes are skipped), in memory that does not
// grow with their number: where SummarizePass holds every latency (8 bytes
// a sample, 32 in token mode), it reads the records several times
// instead. The first reading takes the counts, sums, moments, extremes and
// over-latency counts; each later one narrows every rank the summary reads
// (the percentiles, and the ranks LoadGen's SingleStream and MultiStream
// early stopping read, which depend on the counts alone) to a range of
// values, with a histogram of at most 65,536 buckets, until the values in
// each range are few enough to sort (at most 65,536 of them) or the range
// is one value. Latencies spread over nanoseconds to hours take three
// readings in all; no input takes more than six. Its memory does not
// depend on the number of records: at most 512 KiB for each rank looked
// for (a histogram, or the values it sorts) and a block of each
// per-sample value; its Summary is SummarizePass's, bit for bit (this
// package's and package merge's tests compare them).
func SummarizePassScan(sutName string, e Effective, info PassInfo, scan ColumnScan) (*Summary, error) {
	if info.Kind == PassAccuracy {
		return nil, fmt.Errorf("pass %d–%d is an accuracy pass: it has no performance summary", info.FirstSeq, info.EndSeq)
	}
	e.TargetQPS = info.TargetQPS
	z := &scanSummary{e: e, info: info, scan: scan}
	z.lat.bounds = []int64{e.TargetLatencyNs}
	z.ttft.bounds = []int64{e.TargetLatencyNs, e.TTFTLatencyNs}
	z.tpot.bounds = []int64{e.TPOTLatencyNs}
	pr, records, err := z.read(func(v *valueStat, x int64) { v.scalar(x) })
	if err != nil {
		return nil, err
	}
	if records == 0 && info.QueriesIssued > 0 {
		return nil, fmt.Errorf("no records with sequence ids in [%d, %d) for the reported pass", info.FirstSeq, info.EndSeq)
	}
	pr.StopReason = info.StopReason
	s := &Summary{SUTName: sutName, Effective: e, Result: pr}
	z.plan(s)
	for range maxScanReadings {
		if z.lat.sel.done() && z.ttft.sel.done() && z.tpot.sel.done() && z.qlat.sel.done() {
			break
		}
		for _, v := range z.streams() {
			v.sel.begin()
		}
		if _, _, err := z.read(func(v *valueStat, x int64) { v.sel.add(x) }); err != nil {
			return nil, err
		}
		for _, v := range z.streams() {
			v.sel.end()
		}
	}
	if !(z.lat.sel.done() && z.ttft.sel.done() && z.tpot.sel.done() && z.qlat.sel.done()) {
		return nil, errors.New("summarising a stream of records: the ranks were not found (the records changed between readings?)")
	}
	z.fill(s)
	return s, nil
}

// maxScanReadings bounds the readings after the first: a 64-bit range
// narrows by 2¹⁶ a reading, so four narrow any range to one value; one
// more sorts what is left.
const maxScanReadings = 6

// scanSummary is SummarizePassScan's state.
type scanSummary struct {
	e    Effective
	info PassInfo
	scan ColumnScan
	// The per-sample values Summarize reads: sample latencies, TTFT and
	// TPOT (token mode), per-query latencies (MultiStream); tokens are
	// only summed.
	lat, ttft, tpot, qlat valueStat
	tokens                int64
}

func (z *scanSummary) streams() []*valueStat { return []*valueStat{&z.lat, &z.ttft, &z.tpot, &z.qlat} }

// read reads the pass's records once, giving each per-sample value to f,
// and returns the raw performance result (its slices empty) and the
// number of records of the pass.
func (z *scanSummary) read(f func(v *valueStat, x int64)) (PerformanceResult, int, error) {
	z.tokens = 0
	a := newPerfAcc(&z.e, z.info, true, make([]int64, 0, 4096))
	feed := func() {
		p := &a.pr
		for _, x := range p.SampleLatencies {
			f(&z.lat, x)
		}
		for _, x := range p.FirstTokenLatencies {
			f(&z.ttft, x)
		}
		for _, x := range p.TimePerOutputToken {
			f(&z.tpot, x)
		}
		for _, x := range p.QueryLatencies {
			f(&z.qlat, x)
		}
		for _, x := range p.TokensPerSample {
			z.tokens += x
		}
		p.SampleLatencies, p.FirstTokenLatencies, p.TimePerOutputToken = p.SampleLatencies[:0], p.FirstTokenLatencies[:0], p.TimePerOutputToken[:0]
		p.QueryLatencies, p.TokensPerSample = p.QueryLatencies[:0], p.TokensPerSample[:0]
	}
	first, end := z.info.FirstSeq, z.info.EndSeq
	in := func(s uint64) bool { return s >= first && s < end }
	var sub RecordColumns
	records := 0
	err := z.scan(func(c *RecordColumns) error {
		n := c.Len()
		if n > 0 && in(c.SeqID[0]) && in(c.SeqID[n-1]) && c.SeqID[n-1]-c.SeqID[0] == uint64(n-1) {
			a.add(c) // the usual case: a block within the pass
			records += n
		} else {
			for i := 0; i < n; {
				if !in(c.SeqID[i]) {
					i++
					continue
				}
				j := i + 1
				for j < n && in(c.SeqID[j]) {
					j++
				}
				sub.Reset()
				sub.AppendRange(c, i, j)
				a.add(&sub)
				records += j - i
				i = j
			}
		}
		feed()
		return nil
	})
	if err != nil {
		return PerformanceResult{}, 0, err
	}
	pr := a.result()
	feed()
	pr.SampleLatencies, pr.FirstTokenLatencies, pr.TimePerOutputToken, pr.QueryLatencies, pr.TokensPerSample = nil, nil, nil, nil, nil
	return pr, records, nil
}

// plan names the ranks of each stream that fill reads, once the first
// reading counted the values.
func (z *scanSummary) plan(s *Summary) {
	e := &z.e
	pct := func(n int64) []int64 {
		if n == 0 {
			return nil
		}
		r := []int64{0, n - 1, percentileRank(n, e.TargetLatencyPercentile)}
		for _, p := range ReportedPercentiles {
			r = append(r, percentileRank(n, p))
		}
		return r
	}
	record := func(dst *[]int64) func(int64) int64 {
		return func(i int64) int64 { *dst = append(*dst, i); return 0 }
	}
	latRanks, ttftRanks, tpotRanks, qRanks := pct(z.lat.n), []int64(nil), []int64(nil), []int64(nil)
	if z.lat.n > 0 && e.UseTokenLatencies && z.ttft.n > 0 {
		ttftRanks, tpotRanks = pct(z.ttft.n), pct(z.tpot.n)
	}
	if z.lat.n > 0 && e.Scenario == MultiStream {
		qRanks = pct(z.qlat.n)
	}
	// The early-stopping reads, as earlyStopping makes them.
	queries := int64(s.Result.QueriesIssued)
	switch e.Scenario {
	case SingleStream:
		if !e.UseTokenLatencies {
			stats.NewEarlyStopping().SingleStreamAt(min(z.lat.n, queries), e.TargetLatencyPercentile, record(&latRanks))
		} else {
			r := stats.NewEarlyStopping().SingleStreamAt(min(z.tpot.n, queries), e.TargetLatencyPercentile, record(&tpotRanks))
			if r.Satisfied {
				stats.NewEarlyStopping().SingleStreamAt(min(z.ttft.n, queries), e.TargetLatencyPercentile, record(&ttftRanks))
			}
		}
	case MultiStream:
		if !e.UseTokenLatencies {
			stats.NewEarlyStopping().MultiStreamAt(min(z.qlat.n, queries), e.TargetLatencyPercentile, record(&qRanks))
		} else {
			r := stats.NewEarlyStopping().MultiStreamAt(min(z.qlat.n, queries), e.TargetLatencyPercentile, record(&qRanks))
			if r.Satisfied {
				stats.NewEarlyStopping().MultiStreamAt(min(z.qlat.n, queries), e.TargetLatencyPercentile, record(&qRanks))
			}
		}
	}
	z.lat.want(latRanks)
	z.ttft.want(ttftRanks)
	z.tpot.want(tpotRanks)
	if z.lat.n == 0 && e.Scenario == MultiStream {
		// Summarize sorts the query latencies only when some sample has
		// a latency: early stopping then reads them in issue order.
		z.qlat.wantAt(qRanks)
		return
	}
	z.qlat.want(qRanks)
}

// percentileRank is stats.Percentile's index, panicking as it does on a
// percentile outside [0, 1).
func percentileRank(n int64, p float64) int64 {
	if i := stats.PercentileRank(int(n), p); i >= 0 {
		return int64(i)
	}
	stats.Percentile([]int64{0}, p) // panics with Percentile's message
	panic(fmt.Sprintf("percentile %v of %d values", p, n))
}

// fill is Summarize with the values found: the same fields, in the same
// order, from the same numbers.
func (z *scanSummary) fill(s *Summary) {
	e := &s.Effective
	pr := &s.Result
	lat := &z.lat
	s.TargetPercentile.Percentile = e.TargetLatencyPercentile
	for i, p := range ReportedPercentiles {
		s.Percentiles[i].Percentile = p
	}
	if e.UseTokenLatencies {
		s.TokenTargetPercentile.Percentile = e.TargetLatencyPercentile
		s.TPOTTargetPercentile.Percentile = e.TargetLatencyPercentile
		for i, p := range ReportedPercentiles {
			s.TokenPercentiles[i].Percentile, s.TPOTPercentiles[i].Percentile = p, p
		}
	}
	if lat.n > 0 {
		n := lat.n
		s.SampleCount = uint64(n)
		s.SampleLatencyMean = int64(uint64(lat.sum) / uint64(n))
		s.SampleLatencyMoments = lat.moments()
		s.TargetPercentile = PercentileEntry{Percentile: e.TargetLatencyPercentile, SampleLatency: lat.pct(e.TargetLatencyPercentile)}
		s.SampleLatencyMin, s.SampleLatencyMax = lat.min, lat.max
		for i, p := range ReportedPercentiles {
			s.Percentiles[i] = PercentileEntry{Percentile: p, SampleLatency: lat.pct(p)}
		}
		s.QueryCount = pr.QueriesIssued
		if e.Scenario == Server {
			s.OverLatencyQueryCount = uint64(lat.above[0])
		}
		if e.UseTokenLatencies {
			z.fillTokens(s)
		}
		if q := &z.qlat; e.Scenario == MultiStream && q.n > 0 {
			s.QueryLatencyMean = int64(uint64(q.sum) / uint64(q.n))
			s.QueryLatencyMin, s.QueryLatencyMax = q.min, q.max
			s.TargetPercentile.QueryLatency = q.pct(e.TargetLatencyPercentile)
			for i, p := range ReportedPercentiles {
				s.Percentiles[i].QueryLatency = q.pct(p)
			}
		}
	}

	s.MinDurationMet = s.minDurationMet()
	s.MinQueriesMet = pr.QueriesIssued >= e.MinQueryCount && s.SampleCount+pr.FailedSamples >= e.MinSampleCount
	s.PerfConstraintsMet = s.perfConstraintsMet()
	if !e.UseTokenLatencies {
		s.EarlyStoppingMet, s.EarlyStoppingLines = z.earlyStopping(s, lat, 0)
	} else {
		var ok bool
		ok, s.EarlyStoppingTPOTLines = z.earlyStopping(s, &z.tpot, 0)
		if ok {
			ok, s.EarlyStoppingTTFTLines = z.earlyStopping(s, &z.ttft, 1)
		}
		s.EarlyStoppingMet = ok
	}
	s.judge() // Summarize's reasons, word for word
}

// fillTokens is processTokenLatencies.
func (z *scanSummary) fillTokens(s *Summary) {
	e := &s.Effective
	s.TokenCount = z.tokens
	ttft, tpot := &z.ttft, &z.tpot
	if ttft.n == 0 {
		return
	}
	n := int64(s.SampleCount)
	s.FirstTokenLatencyMean = ttft.sum / n
	s.FirstTokenLatencyMoments = ttft.moments()
	s.TimePerOutputTokenMean = tpot.sum / n
	p := e.TargetLatencyPercentile
	s.TokenTargetPercentile = PercentileEntry{Percentile: p, SampleLatency: ttft.pct(p)}
	s.FirstTokenLatencyMin, s.FirstTokenLatencyMax = ttft.min, ttft.max
	for i, rp := range ReportedPercentiles {
		s.TokenPercentiles[i] = PercentileEntry{Percentile: rp, SampleLatency: ttft.pct(rp)}
	}
	if tpot.n > 0 {
		s.TPOTTargetPercentile = PercentileEntry{Percentile: p, SampleLatency: tpot.pct(p)}
		s.TimePerOutputTokenMin, s.TimePerOutputTokenMax = tpot.min, tpot.max
		for i, rp := range ReportedPercentiles {
			s.TPOTPercentiles[i] = PercentileEntry{Percentile: rp, SampleLatency: tpot.pct(rp)}
		}
	}
	if e.Scenario == Server {
		s.OverLatencyFirstTokenCount = uint64(ttft.above[0])
	}
}

// earlyStopping is Summary.earlyStopping of the values of v, whose count
// above the check's bound is v.above[bound].
func (z *scanSummary) earlyStopping(s *Summary, v *valueStat, bound int) (bool, []string) {
	n := int64(s.Result.QueriesIssued)
	p := s.Effective.TargetLatencyPercentile
	es := stats.NewEarlyStopping()
	switch s.Effective.Scenario {
	case SingleStream:
		r := es.SingleStreamAt(min(v.n, n), p, v.sel.at)
		if r.Satisfied {
			s.EarlyStoppingLatencySS = r.Target.Estimate
			if r.P99 != nil && r.P99.Satisfied {
				s.EarlyStoppingLatencyMS = r.P99.Estimate
			}
		}
		return r.Satisfied, r.Lines
	case MultiStream:
		r := es.MultiStreamAt(min(z.qlat.n, n), p, z.qlat.sel.at)
		if r.Satisfied {
			s.EarlyStoppingLatencyMS = r.Estimate.Estimate
		}
		return r.Satisfied, r.Lines
	case Server:
		var over int64
		if v.n > 0 {
			over = v.above[bound]
		}
		r := es.Server(n, over, p)
		return r.Satisfied, r.Lines
	}
	return true, nil
}

// valueStat is one per-sample value's statistics, read as they come:
// count, wrapping sum, MomentsOf's shifted sums, extremes, counts above
// bounds, and the ranks asked for.
type valueStat struct {
	n        int64
	sum      int64
	k        int64
	s1, s2   float64
	min, max int64
	bounds   []int64
	above    []int64
	sel      rankSelect
}

func (v *valueStat) scalar(x int64) {
	if v.n == 0 {
		v.k, v.min, v.max = x, x, x
		v.above = make([]int64, len(v.bounds))
	}
	v.n++
	v.sum += x
	d := float64(x - v.k)
	v.s1 += d
	v.s2 += d * d
	v.min, v.max = min(v.min, x), max(v.max, x)
	for i, b := range v.bounds {
		if x > b {
			v.above[i]++
		}
	}
}

// moments is stats.MomentsOf of the values, from the same sums.
func (v *valueStat) moments() stats.Moments {
	if v.n == 0 {
		return stats.Moments{}
	}
	n := float64(v.n)
	m := stats.Moments{N: v.n, Mean: float64(v.k) + v.s1/n}
	if v.n > 1 {
		m.Stddev = math.Sqrt(max(v.s2-v.s1*v.s1/n, 0) / (n - 1))
	}
	return m
}

// pct is the p-th percentile of the values (stats.Percentile).
func (v *valueStat) pct(p float64) int64 { return v.sel.at(percentileRank(v.n, p)) }

// want asks for ranks of the values: the extremes are known already.
func (v *valueStat) want(ranks []int64) {
	v.sel = rankSelect{found: map[int64]int64{}}
	if v.n == 0 {
		return
	}
	v.sel.found[0], v.sel.found[v.n-1] = v.min, v.max
	var pending []int64
	for _, r := range ranks {
		if _, ok := v.sel.found[r]; !ok && r >= 0 && r < v.n {
			pending = append(pending, r)
		}
	}
	slices.Sort(pending)
	pending = slices.Compact(pending)
	if len(pending) > 0 {
		v.sel.groups = []*rankGroup{{lo: v.min, hi: v.max, count: v.n, ranks: pending}}
	}
}

// wantAt asks for the values at positions of the reading order, not
// ranks.
func (v *valueStat) wantAt(positions []int64) {
	v.sel = rankSelect{found: map[int64]int64{}}
	for _, i := range positions {
		if i >= 0 && i < v.n {
			v.sel.byPos = append(v.sel.byPos, i)
		}
	}
}

// Histogram and sorting bounds of rankSelect.
const (
	rankHistBits   = 16
	rankCollectMax = 1 << 16
)

// rankSelect finds the values at given ranks of a multiset it reads
// several times: each reading narrows every rank's range of values by a
// histogram, or, once a range holds few enough values, collects and sorts
// them.
type rankSelect struct {
	found  map[int64]int64
	groups []*rankGroup
	// byPos are positions in the reading order whose values are asked
	// for instead (found keys them by position); read counts the values
	// of the current reading.
	byPos []int64
	read  int64
}

// rankGroup is the ranks whose values lie in [lo, hi], a range holding
// count values, with below values under it.
type rankGroup struct {
	lo, hi       int64
	below, count int64
	ranks        []int64
	shift        uint
	hist         []int64
	vals         []int64
	collect      bool
}

func (s *rankSelect) done() bool { return len(s.groups) == 0 && len(s.byPos) == 0 }

// at is the value at rank i, which was asked for and found.
func (s *rankSelect) at(i int64) int64 {
	v, ok := s.found[i]
	if !ok {
		panic(fmt.Sprintf("loadgen: rank %d was not found", i))
	}
	return v
}

// begin readies each group for a reading.
func (s *rankSelect) begin() {
	s.read = 0
	for _, g := range s.groups {
		width := uint64(g.hi) - uint64(g.lo)
		g.collect = g.count <= rankCollectMax
		if g.collect {
			g.vals = make([]int64, 0, g.count)
			continue
		}
		g.shift = uint(max(0, bits.Len64(width)-rankHistBits))
		g.hist = make([]int64, width>>g.shift+1)
	}
}

// add reads one value.
func (s *rankSelect) add(x int64) {
	if s.byPos != nil {
		if slices.Contains(s.byPos, s.read) {
			s.found[s.read] = x
		}
		s.read++
	}
	for _, g := range s.groups {
		if x < g.lo || x > g.hi {
			continue
		}
		if g.collect {
			g.vals = append(g.vals, x)
		} else {
			g.hist[(uint64(x)-uint64(g.lo))>>g.shift]++
		}
	}
}

// end narrows or resolves each group after a reading.
func (s *rankSelect) end() {
	s.byPos = nil
	var next []*rankGroup
	for _, g := range s.groups {
		if g.collect {
			slices.Sort(g.vals)
			for _, r := range g.ranks {
				if i := r - g.below; i >= 0 && i < int64(len(g.vals)) {
					s.found[r] = g.vals[i]
				}
			}
			continue
		}
		width := uint64(g.hi) - uint64(g.lo)
		cum := g.below
		k := 0
		for b, c := range g.hist {
			if k == len(g.ranks) {
				break
			}
			if c == 0 || g.ranks[k] >= cum+c {
				cum += c
				continue
			}
			off := uint64(b) << g.shift
			end := min(off+(uint64(1)<<g.shift)-1, width)
			lo, hi := int64(uint64(g.lo)+off), int64(uint64(g.lo)+end)
			var ranks []int64
			for k < len(g.ranks) && g.ranks[k] < cum+c {
				ranks = append(ranks, g.ranks[k])
				k++
			}
			if lo == hi {
				for _, r := range ranks {
					s.found[r] = lo
				}
			} else {
				next = append(next, &rankGroup{lo: lo, hi: hi, below: cum, count: c, ranks: ranks})
			}
			cum += c
		}
	}
	s.groups = next
}
