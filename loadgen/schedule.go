package loadgen

import (
	"context"

	"aimeter/internal/stdrand"
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

// generatedQueries is the pre-generated traffic of one pass: every sample in
// issue order and, for Server, each query's scheduled offset.
type generatedQueries struct {
	samples []QuerySample // flat; query q is samples[q*spq : min((q+1)*spq, len)]
	spq     int           // samples per query (the last Offline accuracy query may be shorter)
	queries int
	sched   []int64 // Server only: scheduled offset of each query, ns from the start of issuing
	// duration is generated_query_duration: the timestamp after the last query.
	duration int64
	// loggedSPQ is generated_samples_per_query as LoadGen logs it.
	loggedSPQ int
}

// queryRange returns the half-open sample range of query q.
func (g *generatedQueries) queryRange(q int) (int, int) {
	start := q * g.spq
	return start, min(start+g.spq, len(g.samples))
}

// generateQueries pre-generates every query of one pass from the loaded set,
// consuming sample_rng and schedule_rng exactly as LoadGen's GenerateQueries
// does for GCC builds (loadgen-reference §5). seqBase is the sequence id of
// the first generated sample; sample IDs are seqBase+i+1.
func generateQueries(e *Effective, accuracy bool, set loadableSet, seqBase uint64) *generatedQueries {
	g, _ := generateQueriesAt(context.Background(), e, accuracy, set, seqBase, nil)
	return g
}

// generateQueriesAt is generateQueries with, for Server, explicit query
// arrival offsets in place of the Poisson schedule (Options.Arrivals). It
// checks ctx every generationCheckEvery samples and returns ctx's cause
// when it is cancelled, so that a long generation ends within about a
// millisecond of an interrupt.
func generateQueriesAt(ctx context.Context, e *Effective, accuracy bool, set loadableSet, seqBase uint64, arrivals []int64) (*generatedQueries, error) {
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
	loaded := set.indices
	nLoaded := len(loaded)
	distEnd := set.distEnd

	genDuration := int64(e.TargetDurationMs) * 1_000_000 // ns
	if e.Scenario != Server {
		// Non-Server scenarios generate twice the expected queries in case
		// the SUT is faster than expected.
		genDuration *= 2
	}
	minQueries := e.MinQueryCount
	spq := int(e.SamplesPerQuery)
	if accuracy && e.Scenario == Offline {
		spq = distEnd
	}
	if accuracy || e.PerformanceIssueUnique {
		genDuration = 0
		minQueries = uint64(nLoaded / spq)
	}
	if arrivals != nil && e.Scenario == Server && !accuracy {
		genDuration = 0
		minQueries = uint64(len(arrivals))
	} else {
		arrivals = nil
	}

	sampleRNG := stdrand.New(e.SampleIndexRNGSeed)
	scheduleRNG := stdrand.New(e.ScheduleRNGSeed)

	stride := 1
	if e.Scenario == MultiStream {
		stride = spq
	}
	// (a) The main distribution: a shuffled list in accuracy mode, uniform
	// draws in performance mode (built lazily: it consumes nothing now).
	var mainList []int
	if accuracy {
		mainList = stridedShuffle(distEnd, stride, sampleRNG)
	}
	mainNext := 0
	nextMain := func() int {
		if accuracy {
			v := mainList[mainNext]
			mainNext++
			return v
		}
		return int(sampleRNG.UniformInt(0, uint64(distEnd-1)))
	}
	// (b) The unique distribution is always built and always shuffled.
	uniqueList := stridedShuffle(distEnd, stride, sampleRNG)
	uniqueNext := 0
	// (c) The equal-issue list: ceil(minQueries/|L|) successive shuffles of
	// one index vector, concatenated. LoadGen always builds it; it is kept
	// only where it is read (equal-issue SingleStream and Server), and
	// otherwise only its shuffles are drawn, so that sample_rng advances
	// exactly as in LoadGen without holding minQueries indices.
	var equalList []int
	if e.SampleConcatenatePermutation && (e.Scenario == SingleStream || e.Scenario == Server) {
		equalList = equalIssueList(minQueries, nLoaded, sampleRNG, tick)
	} else {
		skipEqualIssueList(minQueries, nLoaded, sampleRNG, tick)
	}
	if stopped {
		return nil, context.Cause(ctx)
	}
	equalNext := 0

	equalIssue := e.SampleConcatenatePermutation
	if !accuracy && equalIssue {
		if e.Scenario == Offline {
			if spq%nLoaded != 0 {
				spq += nLoaded - spq%nLoaded
			}
		} else if minQueries%uint64(nLoaded) != 0 {
			minQueries += uint64(nLoaded) - minQueries%uint64(nLoaded)
		}
	}

	same := int(e.PerformanceIssueSameIndex)
	g := &generatedQueries{spq: spq, loggedSPQ: spq}
	// Reserve for the expected count to avoid regrowing large slices.
	expected := int(minQueries)
	if genDuration > 0 {
		var perQuery float64
		if e.Scenario == Server {
			perQuery = 1e9 / e.TargetQPS
		} else {
			perQuery = float64(e.period())
		}
		if perQuery > 0 {
			expected = max(expected, int(float64(genDuration)/perQuery)+1)
		}
	}
	expected = min(expected, 1<<26)
	g.samples = make([]QuerySample, 0, expected*spq)
	if e.Scenario == Server {
		g.sched = make([]int64, 0, expected)
	}

	period := e.period()
	var timestamp, prev int64
	seq := seqBase
	add := func(idx uint64) {
		seq++
		g.samples = append(g.samples, QuerySample{ID: ResponseID(seq), Index: idx})
		tick(1)
	}
	for (prev < genDuration || uint64(g.queries) < minQueries) && !stopped {
		switch e.Scenario {
		case MultiStream:
			var start int
			switch {
			case e.PerformanceIssueUnique:
				start = uniqueList[uniqueNext]
				uniqueNext++
			case e.PerformanceIssueSame:
				start = same
			default:
				start = nextMain()
			}
			for k := 0; k < spq; k++ {
				add(loaded[start+k])
			}
		case Offline:
			if e.PerformanceIssueSame {
				for k := 0; k < spq; k++ {
					add(loaded[same])
				}
				break
			}
			full, rem := spq/nLoaded, spq%nLoaded
			var perm []uint64
			if equalIssue {
				perm = make([]uint64, nLoaded)
			}
			for r := 0; r < full && !stopped; r++ {
				copyOf := loaded
				if equalIssue {
					// Shuffle the indices only: sequence ids (and so
					// ResponseIDs) follow the issue position.
					copy(perm, loaded)
					stdrand.Shuffle(sampleRNG, perm)
					copyOf = perm
				}
				for _, idx := range copyOf {
					add(idx)
				}
			}
			for _, idx := range loaded[:rem] {
				add(idx)
			}
		default: // SingleStream, Server
			var k int
			switch {
			case e.PerformanceIssueUnique:
				k = uniqueList[uniqueNext]
				uniqueNext++
			case e.PerformanceIssueSame:
				k = same
			case equalIssue:
				k = equalList[equalNext%len(equalList)]
				equalNext++
			default:
				k = nextMain()
			}
			add(loaded[k])
		}
		g.queries++
		if arrivals != nil {
			timestamp = arrivals[g.queries-1]
		}
		if g.sched != nil {
			g.sched = append(g.sched, timestamp)
		}
		prev = timestamp
		if arrivals != nil {
			if g.queries == len(arrivals) {
				break
			}
			continue
		}
		if e.Scenario == Server {
			timestamp += scheduleRNG.ExponentialNanos(e.TargetQPS)
		} else {
			timestamp += period
		}
		// Equal-issue: keep whole data-set multiples while the duration is
		// not yet covered.
		if equalIssue && uint64(g.queries) >= minQueries && prev < genDuration && e.Scenario != Offline {
			minQueries += uint64(nLoaded)
		}
	}
	if e.Scenario == Offline && accuracy {
		// The remainder query LoadGen would add when |L| is not a multiple
		// of spq; with spq = distEnd it never happens, kept for fidelity.
		if rem := nLoaded % spq; rem != 0 {
			for k := 0; k < rem; k++ {
				add(loaded[nextMain()])
			}
			g.queries++
		}
	}
	if stopped {
		return nil, context.Cause(ctx)
	}
	g.duration = timestamp
	return g, nil
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
