package loadgen

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"
)

// Shards of one test.
//
// A test too large for one load generator runs as N shards, one process
// each, that generate the same seeded schedule and each issue a part of
// it, so that the union of what the shards issue is, query for query and
// sample for sample, what one process would have issued. The rule is here,
// in one place:
//
//   - Server (LoadGen's Poisson schedule or Options.Arrivals: GB/T 45087
//     arrival modes 1–3), SingleStream, fixed concurrency and MultiStream:
//     query q goes to shard q mod N. A Server query keeps its scheduled
//     time, so every shard issues its queries at the whole schedule's
//     times and the rate of the union is the whole rate; interleaving
//     (not blocks) keeps every shard's load even over the run, so that a
//     shard that ends early (a duration, a budget) ends with the others.
//     In the closed-loop scenarios a query's time is its issue, so the
//     shards issue the same queries (samples and ids), each shard after
//     its own previous query.
//   - Offline (one query of S samples, all at time 0): samples in contiguous
//     blocks, shard i issuing samples [i·⌊S/N⌋ + min(i, S mod N), …) of
//     ⌊S/N⌋ samples, one more for the first S mod N shards. Blocks, not
//     interleaving, because the query is issued as one call: a block is a
//     slice of the generated query, issued without a copy.
//
// Counts that bound a shard's issuing are split by the same rule, as
// ShardSplit computes them: Settings.Concurrency (a shard keeps ShardSplit
// of the queries in flight), min_query_count and max_query_count (a shard
// counts only the queries it issues). Durations stay those of the test.
// Sequence ids and query ids are the whole test's: a record of a shard has
// the ids it would have had in the single-host run, so that merging the
// shards' records is a union.

// Shard names one part of a sharded test. The zero value (Count 0) is an
// unsharded test, as is Count 1.
type Shard struct {
	// Index is the shard's number, from 0 to Count−1.
	Index int
	// Count is the number of shards; 0 or 1 for a test that is not split.
	Count int
}

// Sharded reports whether s splits the test over more than one shard.
func (s Shard) Sharded() bool { return s.Count > 1 }

// String returns "I/N" (Index/Count), or "" for an unsharded test.
func (s Shard) String() string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Validate checks that Index is within [0, Count) and Count ≥ 0.
func (s Shard) Validate() error {
	if s.Count < 0 {
		return &FieldError{Field: "Options.Shard.Count", Value: s.Count, Allowed: "must be ≥ 0 (0 or 1: not sharded)"}
	}
	if s.Index < 0 || (s.Count > 0 && s.Index >= s.Count) || (s.Count == 0 && s.Index != 0) {
		return &FieldError{Field: "Options.Shard.Index", Value: s.Index, Allowed: fmt.Sprintf("must be in [0, %d)", max(s.Count, 1))}
	}
	return nil
}

// OwnsQuery reports whether the shard issues query q (its index in its
// pass) of a scenario other than Offline: q mod Count = Index.
func (s Shard) OwnsQuery(q int) bool {
	return !s.Sharded() || q%s.Count == s.Index
}

// Block returns the half-open range of the samples of an Offline query of
// n samples that the shard issues.
func (s Shard) Block(n int) (lo, hi int) {
	if !s.Sharded() {
		return 0, n
	}
	q, r := n/s.Count, n%s.Count
	lo = s.Index*q + min(s.Index, r)
	hi = lo + q
	if s.Index < r {
		hi++
	}
	return lo, hi
}

// ShardSplit is the shard's part of a count of the whole test (a
// concurrency, a query or sample count): of the items 0 … count−1, those
// with item mod Count = Index, that is ⌊count/N⌋, one more for the first
// count mod N shards. The parts of all shards add up to count.
func (s Shard) ShardSplit(count uint64) uint64 {
	if !s.Sharded() {
		return count
	}
	return perThread(count, s.Index, s.Count)
}

// issuedEnd is one past the last query a closed-loop pass issued, given
// that the shard issued n queries: its own, in order from the first
// (Index, Index+Count, …), so the last is Index + (n−1)·Count.
func (s Shard) issuedEnd(n uint64) uint64 {
	if !s.Sharded() || n == 0 {
		return n
	}
	return uint64(s.Index) + (n-1)*uint64(s.Count) + 1
}

// checkShard refuses shards of a test they cannot split.
func (o *Options) checkShard(s Settings) error {
	sh := o.Shard
	if err := sh.Validate(); err != nil {
		return err
	}
	if !sh.Sharded() {
		return nil
	}
	switch {
	case s.Mode == FindPeakPerformance:
		return &FieldError{Field: "Options.Shard", Value: sh.String(), Allowed: "a find-peak search chooses each probe's rate from the last probe's result, which one shard does not have: run it unsharded"}
	case o.Chains != nil:
		return &FieldError{Field: "Options.Shard", Value: sh.String(), Allowed: "chained queries (sessions) wait for each other's answers, which another shard would receive: run them unsharded"}
	case s.Concurrency > 0 && s.Concurrency < uint64(sh.Count):
		return &FieldError{Field: "Options.Shard", Value: sh.String(), Allowed: fmt.Sprintf("concurrency %d is split over the shards: it needs at least one query in flight per shard (%d)", s.Concurrency, sh.Count)}
	}
	return nil
}

// DefaultStartTolerance is the default Options.StartTolerance.
const DefaultStartTolerance = 100 * time.Millisecond

// ErrMissedStart is returned (wrapped, in a *StartError) by Run when the
// reported pass could not start within Options.StartTolerance of
// Options.StartAt.
var ErrMissedStart = errors.New("missed the common start")

// StartError says by how much a run missed Options.StartAt.
type StartError struct {
	StartAt   time.Time     // the start asked for, on this host's clock
	Late      time.Duration // how late issuing could start
	Tolerance time.Duration
}

func (e *StartError) Error() string {
	return fmt.Sprintf("%v: ready to issue %v after the start at %s, more than the tolerance of %v; refusing to run rather than shift the schedule",
		ErrMissedStart, e.Late.Round(time.Microsecond), e.StartAt.UTC().Format(time.RFC3339Nano), e.Tolerance)
}

// Unwrap returns ErrMissedStart.
func (e *StartError) Unwrap() error { return ErrMissedStart }

func (o *Options) startTolerance() time.Duration {
	if o.StartTolerance > 0 {
		return o.StartTolerance
	}
	return DefaultStartTolerance
}

// startsHere reports whether a pass of kind k is the one Options.StartAt
// starts: the performance pass, or in an accuracy-only test the first
// accuracy pass.
func (t *testRun) startsHere(k PassKind) bool {
	if t.opts.StartAt.IsZero() || t.startDone {
		return false
	}
	return k == PassPerformance || (k == PassAccuracy && t.eff.Mode == AccuracyOnly)
}

// waitStart waits until Options.StartAt, or until the run is cancelled,
// and checks that issuing can start within the tolerance of it.
func (t *testRun) waitStart() error {
	t.startDone = true
	at := t.opts.StartAt
	// Sleep to within the spin window of the start, then spin through it,
	// as the Server issuer does for each query (Options.SpinWindow): a
	// timer alone wakes a millisecond or more late on a busy machine.
	window := t.opts.spinWindow()
	if d := time.Until(at) - window; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-t.ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w: waiting for the start at %s: %s", ErrInterrupted, at.UTC().Format(time.RFC3339Nano), t.cancelReason())
		}
	}
	for time.Now().Before(at) && t.ctx.Err() == nil {
	}
	if t.ctx.Err() != nil {
		return fmt.Errorf("%w: waiting for the start at %s: %s", ErrInterrupted, at.UTC().Format(time.RFC3339Nano), t.cancelReason())
	}
	late := time.Since(at)
	t.startLate = late
	if late > t.opts.startTolerance() {
		return &StartError{StartAt: at, Late: late, Tolerance: t.opts.startTolerance()}
	}
	t.event(Event{TimeNs: t.now(), Key: "generic_message", Value: fmt.Sprintf("Common start at %s: issuing %v after it", at.UTC().Format(time.RFC3339Nano), late.Round(time.Microsecond))})
	return nil
}

// ShardRun is what a shard recorded of the whole test (Result.Shard).
type ShardRun struct {
	Shard
	// ScheduleSHA256 is the hex SHA-256 of the whole test's schedule, every
	// shard's part included: the digests of its passes (Passes), in order.
	// Shards of one test have the same.
	ScheduleSHA256 string
	// Passes are the schedule digests of the test's passes, in the order of
	// Result.Passes. A pass's digest is the hex SHA-256 of "aimeter
	// schedule v1\0", the pass kind and a NUL, then, as little-endian
	// uint64s, the generated query count and samples per query as LoadGen
	// logs them and the generated duration, then for each generated query
	// its scheduled time (Server; 0 for Offline; −1 for the closed-loop
	// scenarios, whose queries are scheduled at their issue) and each of
	// its samples' response id and QSL index. A closed-loop pass extended
	// past LoadGen's count (Options.ExtendToDuration) is covered up to
	// LoadGen's count; its further queries follow from the same settings.
	Passes []string
	// StartLate is how long after Options.StartAt issuing started; 0
	// without a StartAt.
	StartLate time.Duration
}

// scheduleDigest returns the hex SHA-256 of the whole schedule of one pass
// (see ShardRun.Passes for what it covers). g is the pass as generated,
// before the shard's part is taken; a pass generated on demand is
// generated again, a chunk at a time, from the same settings.
func scheduleDigest(ctx context.Context, e *Effective, accuracy bool, set loadableSet, seqBase uint64, arrivals []int64, samples []uint64, g *generatedQueries, kind PassKind) (string, error) {
	h := sha256.New()
	var buf [8]byte
	put := func(h hash.Hash, v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	h.Write([]byte("aimeter schedule v1\x00"))
	h.Write([]byte(kind))
	h.Write([]byte{0})
	queries := g.logged
	put(h, uint64(queries))
	put(h, uint64(g.loggedSPQ))
	put(h, uint64(g.duration))
	src := g
	if g.src != nil || g.made < g.chunks.len() {
		// On demand: generate a copy, chunk by chunk, keeping none.
		var err error
		if src, err = generateQueriesAt(ctx, e, accuracy, set, seqBase, arrivals, samples); err != nil {
			return "", err
		}
	}
	for q := range queries {
		if src.chunkShift == lazyChunkShift && !src.generated(q) {
			if c := q >> lazyChunkShift; c > 0 {
				src.chunks.store(c-1, nil) // hashed: let it go
			}
			src.generate(q)
		}
		sched := NoTime
		switch {
		case src.sched != nil:
			sched = src.sched[q]
		case e.Scenario == Offline:
			sched = 0
		}
		put(h, uint64(sched))
		for _, smp := range src.query(q) {
			put(h, uint64(smp.ID))
			put(h, smp.Index)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// combineDigests is the test's schedule digest: the SHA-256 of its
// passes' digests, in order, each followed by a newline.
func combineDigests(passes []string) string {
	h := sha256.New()
	for _, d := range passes {
		h.Write([]byte(d))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// offlineBlock returns the shard's block [lo, hi) of an Offline pass
// generated whole, as a pass of its own of one query (none when the block
// is empty), sharing the generated samples.
func (g *generatedQueries) offlineBlock(lo, hi int) *generatedQueries {
	all := *g.chunks.load(0)
	part := all[lo:hi:hi]
	b := &generatedQueries{spq: max(hi-lo, 1), n: hi - lo, chunkShift: 62, duration: g.duration,
		loggedSPQ: g.loggedSPQ, made: 1}
	if hi > lo {
		b.queries = 1
	}
	b.logged = b.queries // the whole pass's count is logged before
	b.chunks = newChunkDir(1)
	b.chunks.store(0, &part)
	return b
}
