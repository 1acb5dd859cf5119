package loadgen

import "sync/atomic"

// Per-sample and per-query storage is kept in pages of pageLen elements, so
// that a pass whose queries are generated on demand (closed-loop
// SingleStream and MultiStream, GB/T arrival mode 0) holds memory for the
// samples it issued, not for every sample it might have issued.
const (
	pageShift = 10
	pageLen   = 1 << pageShift
	pageMask  = pageLen - 1
)

// Page directories are two-level: a top directory of one pointer per
// block of dirLen page pointers, blocks allocated with their first page.
// A pass generated on demand is sized for every query it might issue (2 ×
// min_duration at the expected latency, hundreds of millions of samples
// when that latency is tiny), and a flat directory of one pointer per page
// was then tens of megabytes of pointers that every garbage collection
// scanned, and that the start of a run had to allocate and mark (issue 27:
// a quarter of the OpenAI client's CPU in a 5-second bench-stream.sh run).
// Two levels hold 8 bytes per 2^20 elements until pages are used. An
// array of at most flatPages pages keeps a flat directory instead (128 KB
// at most): its elements are reached through one pointer, not two, which
// an Offline run's completions, five array elements each, feel (4.4 M
// samples: 50 ms of 600).
const (
	dirShift  = 10
	dirLen    = 1 << dirShift
	dirMask   = dirLen - 1
	flatPages = 1 << 14
)

// paged is an array of n elements stored in pages allocated on demand.
// Pages (and the directory blocks that point to them) are published with
// atomic pointers: a page allocated by one goroutine (the issuer, or a
// completer filling an optional column) is seen whole by the others. at
// requires the page of i to exist; load and page tolerate a missing page.
type paged[T any] struct {
	flat   []atomic.Pointer[[pageLen]T]  // the directory of an array of at most flatPages pages
	top    []atomic.Pointer[dirBlock[T]] // the two-level directory of a larger one
	npages int
}

// dirBlock is one block of a paged array's directory.
type dirBlock[T any] [dirLen]atomic.Pointer[[pageLen]T]

// newPaged returns a paged array of n elements with no page allocated.
func newPaged[T any](n int) paged[T] { return newPagedFlat[T](n, flatPages) }

// newPagedFlat is newPaged with a flat directory up to flat pages.
func newPagedFlat[T any](n, flat int) paged[T] {
	pages := (n + pageMask) >> pageShift
	if pages <= flat {
		return paged[T]{flat: make([]atomic.Pointer[[pageLen]T], pages), npages: pages}
	}
	return paged[T]{top: make([]atomic.Pointer[dirBlock[T]], (pages+dirMask)>>dirShift), npages: pages}
}

// pages returns the number of pages.
func (s *paged[T]) pages() int { return s.npages }

// page returns page k, nil when it was never allocated.
func (s *paged[T]) page(k int) *[pageLen]T {
	if s.top == nil {
		return s.flat[k].Load()
	}
	b := s.top[k>>dirShift].Load()
	if b == nil {
		return nil
	}
	return b[k&dirMask].Load()
}

// slot returns the directory entry of page k, allocating its block first
// if needed. Concurrent callers get the same block.
func (s *paged[T]) slot(k int) *atomic.Pointer[[pageLen]T] {
	if s.top == nil {
		return &s.flat[k]
	}
	t := &s.top[k>>dirShift]
	b := t.Load()
	if b == nil {
		t.CompareAndSwap(nil, new(dirBlock[T])) // a loser takes the winner's block
		b = t.Load()
	}
	return &b[k&dirMask]
}

// ensure returns page k, allocating it first if needed; init, if not nil,
// fills a new page before it is published. Concurrent callers get the same
// page.
func (s *paged[T]) ensure(k int, init func(pg *[pageLen]T, first int)) *[pageLen]T {
	if pg := s.page(k); pg != nil {
		return pg
	}
	pg := new([pageLen]T)
	if init != nil {
		init(pg, k<<pageShift)
	}
	e := s.slot(k)
	if e.CompareAndSwap(nil, pg) {
		return pg
	}
	return e.Load()
}

// ensureRange allocates the missing pages of kFrom..kTo (inclusive) from
// one block, filling each with init (if not nil) before it is published:
// one allocation for a chunk of pages instead of one per page.
func (s *paged[T]) ensureRange(kFrom, kTo int, init func(pg *[pageLen]T, first int)) (fresh [][pageLen]T) {
	missing := 0
	for k := kFrom; k <= kTo; k++ {
		if s.page(k) == nil {
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	block := make([][pageLen]T, missing)
	fresh = block
	for k := kFrom; k <= kTo; k++ {
		if s.page(k) != nil {
			continue
		}
		pg := &block[0]
		block = block[1:]
		if init != nil {
			init(pg, k<<pageShift)
		}
		s.slot(k).CompareAndSwap(nil, pg)
	}
	return fresh
}

// at returns a pointer to element i, whose page must exist.
func (s *paged[T]) at(i int) *T {
	if s.top == nil {
		return &s.flat[i>>pageShift].Load()[i&pageMask]
	}
	return &s.top[i>>(pageShift+dirShift)].Load()[(i>>pageShift)&dirMask].Load()[i&pageMask]
}

// load returns element i, or def when its page was never allocated.
func (s *paged[T]) load(i int, def T) T {
	pg := s.page(i >> pageShift)
	if pg == nil {
		return def
	}
	return pg[i&pageMask]
}

// chunkDir is the directory of a generated pass's chunks of samples (see
// generatedQueries): n entries, each set once, in a paged array, so that
// the directory of a pass generated on demand holds memory for the chunks
// made, not for every chunk the pass might make. A fixed-concurrency run
// generates queries for requests as short as a microsecond (hundreds of
// millions of chunks for a 10-minute run): a flat directory of one
// pointer per chunk was 20 MB for every 20 seconds of min_duration
// (issue 43), more than the samples a network run issued in that time.
type chunkDir struct {
	p paged[atomic.Pointer[[]QuerySample]]
	n int
}

// newChunkDir returns a directory of n chunks, none set.
func newChunkDir(n int) chunkDir {
	return chunkDir{p: newPaged[atomic.Pointer[[]QuerySample]](n), n: n}
}

// len returns the number of chunks.
func (d *chunkDir) len() int { return d.n }

// load returns chunk c, which must have been stored.
func (d *chunkDir) load(c int) *[]QuerySample { return d.p.at(c).Load() }

// store sets chunk c. Only the issuing goroutine stores.
func (d *chunkDir) store(c int, s *[]QuerySample) {
	d.p.ensure(c>>pageShift, nil)[c&pageMask].Store(s)
}
