package loadgen

import (
	"context"
	"math"
	"slices"

	"aimeter/stdrand"
)

// generationCheckEvery is how many generated samples pass between two
// checks for cancellation: about a millisecond of generation.
const generationCheckEvery = 1 << 14

// loadableSet is one set of QSL indices loaded together. MultiStream sets end
// with spq−1 padding copies of their first elements; distEnd excludes them.
type loadableSet struct {
	indices []uint64
	distEnd int
}

// generateLoadableSets shuffles [0, N) with qsl_rng and cuts it into sets of
// performance_sample_count (loadgen-reference §4). N is the performance sample
// count in performance and find-peak passes and the accuracy sample count in
// accuracy passes, capped at the QSL size.
func generateLoadableSets(e *Effective, accuracy bool, qslTotal uint64) []loadableSet {
	n := e.PerformanceSampleCount
	if accuracy {
		n = e.AccuracySampleCount
	}
	n = min(n, qslTotal)
	all := make([]uint64, n)
	for i := range all {
		all[i] = uint64(i)
	}
	rng := stdrand.New(e.QSLRNGSeed)
	stdrand.Shuffle(rng, all)

	setSize := int(e.PerformanceSampleCount)
	padding := 0
	if e.Scenario == MultiStream {
		padding = int(e.SamplesPerQuery) - 1
	}
	var sets []loadableSet
	for start := 0; start < len(all); start += setSize {
		end := min(start+setSize, len(all))
		set := make([]uint64, end-start, end-start+padding)
		copy(set, all[start:end])
		// Read from the growing slice, as LoadGen does, so that a set shorter
		// than the padding repeats cyclically instead of overflowing.
		for i := 0; i < padding; i++ {
			set = append(set, set[i])
		}
		sets = append(sets, loadableSet{indices: set, distEnd: end - start})
	}
	if !accuracy && len(sets) > 1 {
		// Performance passes load only the first set.
		sets = sets[:1]
	}
	return sets
}

// generatedQueries is the traffic of one pass: every sample in issue order
// and, for Server, each query's scheduled offset. Most passes are generated
// whole before issuing starts. A closed-loop performance pass (SingleStream,
// MultiStream) is generated on demand, a chunk of queries at a time, as the
// issuer reaches it: such a pass generates twice the queries its duration
// needs at the expected latency (millions for GB/T arrival mode 0, whose
// expected latency is tiny) and usually issues a small part of them. The
// queries are the same either way: the sample_rng draws come in the same
// order, so the traces match LoadGen's.
type generatedQueries struct {
	// chunks hold the samples, query-aligned: chunk c holds queries
	// [c<<chunkShift, (c+1)<<chunkShift) contiguously. A pass generated
	// whole has one chunk.
	chunks     chunkDir
	chunkShift uint
	n          int // samples
	spq        int // samples per query (the last Offline accuracy query may be shorter)
	queries    int
	sched      []int64 // Server only: scheduled offset of each query, ns from the start of issuing
	// duration is generated_query_duration: the timestamp after the last query.
	duration int64
	// loggedSPQ is generated_samples_per_query as LoadGen logs it.
	loggedSPQ int
	// logged is generated_query_count as LoadGen logs it: queries, but
	// for a pass extended past LoadGen's count (extendTo), whose queries
	// is the most it may generate.
	logged int

	// src generates the remaining chunks of an on-demand pass (nil for a
	// pass generated whole); made is the number of chunks generated. Only
	// the issuing goroutine calls generate.
	src  *queryGen
	made int
}

// lazyChunkShift sizes the chunks of an on-demand pass: 1024 queries.
const lazyChunkShift = 10

// queryRange returns the half-open sample range of query q.
func (g *generatedQueries) queryRange(q int) (int, int) {
	start := q * g.spq
	return start, min(start+g.spq, g.n)
}

// query returns the samples of query q, which must have been generated. The
// slice is capped at its end, so a SUT that appends to it gets a copy.
func (g *generatedQueries) query(q int) []QuerySample {
	s, e := g.queryRange(q)
	c := q >> g.chunkShift
	base := (c << g.chunkShift) * g.spq
	chunk := *g.chunks.load(c)
	return chunk[s-base : e-base : e-base]
}

// queries returns the samples of queries first..last (contiguous, in one
// chunk) when they can be returned without a copy, else nil.
func (g *generatedQueries) span(first, last int) []QuerySample {
	c := first >> g.chunkShift
	if last>>g.chunkShift != c {
		return nil
	}
	s, _ := g.queryRange(first)
	_, e := g.queryRange(last)
	base := (c << g.chunkShift) * g.spq
	chunk := *g.chunks.load(c)
	return chunk[s-base : e-base : e-base]
}

// sample returns sample i, which must have been generated.
func (g *generatedQueries) sample(i int) QuerySample {
	c := (i / g.spq) >> g.chunkShift
	base := (c << g.chunkShift) * g.spq
	return (*g.chunks.load(c))[i-base]
}

// generated reports whether query q exists yet.
func (g *generatedQueries) generated(q int) bool {
	return q>>g.chunkShift < g.made
}

// generate makes the chunks up to and including that of query q.
func (g *generatedQueries) generate(q int) {
	for g.src != nil && g.made <= q>>g.chunkShift {
		c := g.made
		first := c << g.chunkShift
		last := min(first+1<<g.chunkShift, g.queries)
		buf := make([]QuerySample, 0, (last-first)*g.spq)
		g.src.out = &buf
		for k := first; k < last; k++ {
			g.src.step()
		}
		g.src.out = nil
		g.chunks.store(c, &buf)
		g.made++
		if g.made == g.chunks.len() {
			g.src = nil
		}
	}
}

// extendMaxQueries bounds the queries of a pass extended past LoadGen's
// count (Options.ExtendToDuration): 2^28, about 270 s of a SUT answering
// in a microsecond, whose chunk directory is 2 MB.
const extendMaxQueries = 1 << 28

// extendTo lets an on-demand pass go on generating queries past LoadGen's
// count, up to capacity queries in all (Options.ExtendToDuration): the
// further queries continue the generation loop where LoadGen's count
// ends, the same sample_rng stream, so the first ones are LoadGen's. It
// reports whether the pass was extended; a pass generated whole, or one
// already of capacity queries, is not.
func (g *generatedQueries) extendTo(capacity int) bool {
	if g.chunkShift != lazyChunkShift || g.src == nil || capacity <= g.queries {
		return false
	}
	g.queries, g.n = capacity, capacity*g.spq
	chunks := newChunkDir((capacity + 1<<lazyChunkShift - 1) >> lazyChunkShift)
	for c := range g.made {
		chunks.store(c, g.chunks.load(c))
	}
	g.chunks = chunks
	return true
}

// extended reports whether the pass may generate past LoadGen's count.
func (g *generatedQueries) extended() bool { return g.queries != g.logged }

// materialize generates every remaining query (tests, traces).
func (g *generatedQueries) materialize() {
	if g.queries > 0 {
		g.generate(g.queries - 1)
	}
}

// generateQueries pre-generates every query of one pass from the loaded set,
// consuming sample_rng and schedule_rng exactly as LoadGen's GenerateQueries
// does for GCC builds (loadgen-reference §5). seqBase is the sequence id of
// the first generated sample; sample IDs are seqBase+i+1.
func generateQueries(e *Effective, accuracy bool, set loadableSet, seqBase uint64) *generatedQueries {
	g, _ := generateQueriesAt(context.Background(), e, accuracy, set, seqBase, nil, nil)
	return g
}

// queryGen is the state of LoadGen's GenerateQueries loop between two
// queries, so that the loop can run at once (generateQueriesAt) or a chunk
// at a time (generatedQueries.generate).
type queryGen struct {
	e          *Effective
	accuracy   bool
	loaded     []uint64
	nLoaded    int
	distEnd    int
	spq        int
	same       int
	equalIssue bool
	arrivals   []int64
	// arrivalSamples, when not nil, is the QSL index of each arrival's
	// sample (Options.ArrivalSamples); no draw chooses them.
	arrivalSamples []uint64
	genDuration    int64
	minQueries     uint64
	period         int64

	sampleRNG, scheduleRNG *stdrand.MT19937
	mainList, uniqueList   []int
	equalList              []int
	mainNext, uniqueNext   int
	equalNext              int
	perm                   []uint64 // Offline equal issue

	queries         int
	timestamp, prev int64
	seq             uint64
	out             *[]QuerySample
	tick            func(n int) bool
	arrivalsDone    bool
}

// generateQueriesAt is generateQueries with, for Server, explicit query
// arrival offsets in place of the Poisson schedule (Options.Arrivals) and,
// when samples is not nil, the QSL index of each arrival's sample in place
// of the drawn one (Options.ArrivalSamples). It checks ctx every generationCheckEvery samples and returns ctx's cause
// when it is cancelled, so that a long generation ends within about a
// millisecond of an interrupt.
func generateQueriesAt(ctx context.Context, e *Effective, accuracy bool, set loadableSet, seqBase uint64, arrivals []int64, samples []uint64) (*generatedQueries, error) {
	return generate(ctx, e, accuracy, set, seqBase, arrivals, samples, true)
}

// generate is generateQueriesAt; onDemand false generates a closed-loop
// pass whole as well (tests compare the two).
func generate(ctx context.Context, e *Effective, accuracy bool, set loadableSet, seqBase uint64, arrivals []int64, arrivalSamples []uint64, onDemand bool) (*generatedQueries, error) {
	sinceCheck := 0
	stopped := false
	// tick counts n generated items and reports whether generation must stop.
	tick := func(n int) bool {
		if sinceCheck += n; sinceCheck >= generationCheckEvery {
			sinceCheck = 0
			stopped = stopped || ctx.Err() != nil
		}
		return stopped
	}
	s := &queryGen{e: e, accuracy: accuracy, loaded: set.indices, nLoaded: len(set.indices), distEnd: set.distEnd, seq: seqBase, tick: tick}

	s.genDuration = int64(e.TargetDurationMs) * 1_000_000 // ns
	if e.Scenario != Server {
		// Non-Server scenarios generate twice the expected queries in case
		// the SUT is faster than expected.
		s.genDuration *= 2
	}
	s.minQueries = e.MinQueryCount
	s.spq = int(e.SamplesPerQuery)
	if accuracy && e.Scenario == Offline {
		s.spq = s.distEnd
	}
	if accuracy || e.PerformanceIssueUnique {
		s.genDuration = 0
		s.minQueries = uint64(s.nLoaded / s.spq)
	}
	if arrivals != nil && e.Scenario == Server && !accuracy {
		s.genDuration = 0
		s.minQueries = uint64(len(arrivals))
		s.arrivals = arrivals
		s.arrivalSamples = arrivalSamples
	}

	s.sampleRNG = stdrand.New(e.SampleIndexRNGSeed)
	s.scheduleRNG = stdrand.New(e.ScheduleRNGSeed)

	stride := 1
	if e.Scenario == MultiStream {
		stride = s.spq
	}
	// (a) The main distribution: a shuffled list in accuracy mode, uniform
	// draws in performance mode (built lazily: it consumes nothing now).
	if accuracy {
		s.mainList = stridedShuffle(s.distEnd, stride, s.sampleRNG)
	}
	// (b) The unique distribution is always built and always shuffled.
	s.uniqueList = stridedShuffle(s.distEnd, stride, s.sampleRNG)
	// (c) The equal-issue list: ceil(minQueries/|L|) successive shuffles of
	// one index vector, concatenated. LoadGen always builds it; it is kept
	// only where it is read (equal-issue SingleStream and Server), and
	// otherwise only its shuffles are drawn, so that sample_rng advances
	// exactly as in LoadGen without holding minQueries indices.
	if e.SampleConcatenatePermutation && (e.Scenario == SingleStream || e.Scenario == Server) {
		s.equalList = equalIssueList(s.minQueries, s.nLoaded, s.sampleRNG, tick)
	} else {
		skipEqualIssueList(s.minQueries, s.nLoaded, s.sampleRNG, tick)
	}
	if stopped {
		return nil, context.Cause(ctx)
	}

	s.equalIssue = e.SampleConcatenatePermutation
	if !accuracy && s.equalIssue {
		if e.Scenario == Offline {
			if s.spq%s.nLoaded != 0 {
				s.spq += s.nLoaded - s.spq%s.nLoaded
			}
		} else if s.minQueries%uint64(s.nLoaded) != 0 {
			s.minQueries += uint64(s.nLoaded) - s.minQueries%uint64(s.nLoaded)
		}
	}
	if e.Scenario == Offline && s.equalIssue && !e.PerformanceIssueSame {
		s.perm = make([]uint64, s.nLoaded)
	}
	s.same = int(e.PerformanceIssueSameIndex)
	s.period = e.period()

	// Closed-loop performance passes are generated on demand: their query
	// count and duration follow from the settings alone.
	if onDemand && !accuracy && (e.Scenario == SingleStream || e.Scenario == MultiStream) && !e.PerformanceIssueUnique && s.period > 0 {
		queries, ok := closedLoopQueries(s.genDuration, s.period, s.minQueries, s.nLoaded, s.equalIssue)
		if ok {
			g := &generatedQueries{spq: s.spq, loggedSPQ: s.spq, queries: queries, logged: queries, n: queries * s.spq,
				chunkShift: lazyChunkShift, src: s, duration: int64(queries) * s.period}
			g.chunks = newChunkDir((queries + 1<<lazyChunkShift - 1) >> lazyChunkShift)
			s.tick = func(int) bool { return false }
			if g.chunks.len() == 0 {
				g.src = nil
			}
			return g, nil
		}
	}

	g := &generatedQueries{spq: s.spq, loggedSPQ: s.spq, chunkShift: 62}
	// Reserve for the expected count to avoid regrowing large slices.
	expected := int(s.minQueries)
	if s.genDuration > 0 {
		var perQuery float64
		if e.Scenario == Server {
			perQuery = 1e9 / e.TargetQPS
		} else {
			perQuery = float64(s.period)
		}
		if perQuery > 0 {
			expected = max(expected, int(float64(s.genDuration)/perQuery)+1)
		}
	}
	expected = min(expected, 1<<26)
	samples := make([]QuerySample, 0, expected*s.spq)
	if e.Scenario == Offline && cap(samples) >= populateMin*pageLen {
		// The query's samples, exactly as many as allocated, faulted in
		// ahead of the generator that writes them (populate).
		go populate(samples[:cap(samples)])
	}
	s.out = &samples
	if e.Scenario == Server {
		g.sched = make([]int64, 0, expected)
	}
	for (s.prev < s.genDuration || uint64(s.queries) < s.minQueries) && !stopped && !s.arrivalsDone {
		s.step()
		if g.sched != nil {
			g.sched = append(g.sched, s.prev)
		}
	}
	if e.Scenario == Offline && accuracy {
		// The remainder query LoadGen would add when |L| is not a multiple
		// of spq; with spq = distEnd it never happens, kept for fidelity.
		if rem := s.nLoaded % s.spq; rem != 0 {
			for k := 0; k < rem; k++ {
				s.add(s.loaded[s.nextMain()])
			}
			s.queries++
		}
	}
	if stopped {
		return nil, context.Cause(ctx)
	}
	g.queries, g.logged = s.queries, s.queries
	g.n = len(samples)
	g.duration = s.timestamp
	g.chunks = newChunkDir(1)
	g.chunks.store(0, &samples)
	g.made = 1
	s.out = nil
	return g, nil
}

// closedLoopQueries returns the number of queries LoadGen's generation loop
// makes for a SingleStream or MultiStream performance pass: it runs while
// the timestamp of the last query is below genDuration or fewer than
// minQueries queries exist, each query advancing the timestamp by period;
// with equal issue, minQueries grows by nLoaded each time it is reached
// while the duration is not yet covered. ok is false when the count does
// not fit an int.
func closedLoopQueries(genDuration, period int64, minQueries uint64, nLoaded int, equalIssue bool) (int, bool) {
	// kDur: the first count k ≥ 1 whose last timestamp (k−1)·period
	// reaches genDuration; the loop does not run for the duration when
	// genDuration ≤ 0.
	var kDur uint64
	if genDuration > 0 {
		kDur = uint64((genDuration+period-1)/period) + 1
	}
	m := minQueries
	if equalIssue && nLoaded > 0 && kDur > 0 {
		// minQueries grows by nLoaded at each count k = max(m, 1) reached
		// while k < kDur: first at k = 1 when it is 0, then at k = m.
		l := uint64(nLoaded)
		if m == 0 && kDur > 1 {
			m = l
		}
		if m >= 1 && m < kDur {
			m += (kDur - m + l - 1) / l * l
		}
	}
	n := max(m, kDur)
	if n > uint64(math.MaxInt/2) {
		return 0, false
	}
	return int(n), true
}

func (s *queryGen) add(idx uint64) {
	s.seq++
	*s.out = append(*s.out, QuerySample{ID: ResponseID(s.seq), Index: idx})
	s.tick(1)
}

// addAll is add of each of idx in turn, ticked once (an Offline query adds
// millions).
func (s *queryGen) addAll(idx []uint64) {
	out := slices.Grow(*s.out, len(idx))
	for _, v := range idx {
		s.seq++
		out = append(out, QuerySample{ID: ResponseID(s.seq), Index: v})
	}
	*s.out = out
	s.tick(len(idx))
}

func (s *queryGen) nextMain() int {
	if s.accuracy {
		v := s.mainList[s.mainNext]
		s.mainNext++
		return v
	}
	return int(s.sampleRNG.UniformInt(0, uint64(s.distEnd-1)))
}

// step generates one query: one iteration of LoadGen's generation loop.
// Afterwards s.prev is the query's timestamp.
func (s *queryGen) step() {
	e := s.e
	switch e.Scenario {
	case MultiStream:
		var start int
		switch {
		case e.PerformanceIssueUnique:
			start = s.uniqueList[s.uniqueNext]
			s.uniqueNext++
		case e.PerformanceIssueSame:
			start = s.same
		default:
			start = s.nextMain()
		}
		for k := 0; k < s.spq; k++ {
			s.add(s.loaded[start+k])
		}
	case Offline:
		if e.PerformanceIssueSame {
			for k := 0; k < s.spq; k++ {
				s.add(s.loaded[s.same])
			}
			break
		}
		full, rem := s.spq/s.nLoaded, s.spq%s.nLoaded
		for r := 0; r < full; r++ {
			copyOf := s.loaded
			if s.perm != nil {
				// Shuffle the indices only: sequence ids (and so
				// ResponseIDs) follow the issue position.
				copy(s.perm, s.loaded)
				stdrand.Shuffle(s.sampleRNG, s.perm)
				copyOf = s.perm
			}
			s.addAll(copyOf)
			if s.tick(0) {
				break
			}
		}
		for _, idx := range s.loaded[:rem] {
			s.add(idx)
		}
	default: // SingleStream, Server
		if s.arrivalSamples != nil {
			s.add(s.arrivalSamples[s.queries])
			break
		}
		var k int
		switch {
		case e.PerformanceIssueUnique:
			k = s.uniqueList[s.uniqueNext]
			s.uniqueNext++
		case e.PerformanceIssueSame:
			k = s.same
		case s.equalList != nil:
			k = s.equalList[s.equalNext%len(s.equalList)]
			s.equalNext++
		default:
			k = s.nextMain()
		}
		s.add(s.loaded[k])
	}
	s.queries++
	if s.arrivals != nil {
		s.timestamp = s.arrivals[s.queries-1]
	}
	s.prev = s.timestamp
	if s.arrivals != nil {
		if s.queries == len(s.arrivals) {
			s.arrivalsDone = true
		}
		return
	}
	if e.Scenario == Server {
		s.timestamp += s.scheduleRNG.ExponentialNanos(e.TargetQPS)
	} else {
		s.timestamp += s.period
	}
	// Equal-issue: keep whole data-set multiples while the duration is
	// not yet covered.
	if s.equalIssue && uint64(s.queries) >= s.minQueries && s.prev < s.genDuration && e.Scenario != Offline {
		s.minQueries += uint64(s.nLoaded)
	}
}

// stridedShuffle returns {0, stride, 2·stride, …} < n shuffled with rng.
func stridedShuffle(n, stride int, rng *stdrand.MT19937) []int {
	list := make([]int, 0, (n+stride-1)/stride)
	for i := 0; i < n; i += stride {
		list = append(list, i)
	}
	stdrand.Shuffle(rng, list)
	return list
}

// equalIssueList concatenates ceil(count/setSize) successive shuffles of
// [0, setSize); each shuffle permutes the previous order, as in LoadGen.
// It stops early (with a partial list) once stop reports true; stop is told
// how many indices each shuffle added.
func equalIssueList(count uint64, setSize int, rng *stdrand.MT19937, stop func(n int) bool) []int {
	perm := make([]int, setSize)
	for i := range perm {
		perm[i] = i
	}
	var list []int
	for j := uint64(0); j < count; j += uint64(setSize) {
		stdrand.Shuffle(rng, perm)
		list = append(list, perm...)
		if stop(setSize) {
			break
		}
	}
	return list
}

// skipEqualIssueList draws from rng exactly what equalIssueList draws,
// keeping only one shuffled vector of setSize.
func skipEqualIssueList(count uint64, setSize int, rng *stdrand.MT19937, stop func(n int) bool) {
	perm := make([]int, setSize)
	for i := range perm {
		perm[i] = i
	}
	for j := uint64(0); j < count; j += uint64(setSize) {
		stdrand.Shuffle(rng, perm)
		if stop(setSize) {
			return
		}
	}
}
