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

// paged is an array of n elements stored in pages allocated on demand.
// Pages are published with an atomic pointer: a page allocated by one
// goroutine (the issuer, or a completer filling an optional column) is
// seen whole by the others. at requires the page of i to exist; load and
// page tolerate a missing page.
type paged[T any] struct {
	dir []atomic.Pointer[[pageLen]T]
}

// newPaged returns a paged array of n elements with no page allocated.
func newPaged[T any](n int) paged[T] {
	return paged[T]{dir: make([]atomic.Pointer[[pageLen]T], (n+pageMask)>>pageShift)}
}

// pages returns the number of pages.
func (s *paged[T]) pages() int { return len(s.dir) }

// page returns page k, nil when it was never allocated.
func (s *paged[T]) page(k int) *[pageLen]T { return s.dir[k].Load() }

// ensure returns page k, allocating it first if needed; init, if not nil,
// fills a new page before it is published. Concurrent callers get the same
// page.
func (s *paged[T]) ensure(k int, init func(pg *[pageLen]T, first int)) *[pageLen]T {
	if pg := s.dir[k].Load(); pg != nil {
		return pg
	}
	pg := new([pageLen]T)
	if init != nil {
		init(pg, k<<pageShift)
	}
	if s.dir[k].CompareAndSwap(nil, pg) {
		return pg
	}
	return s.dir[k].Load()
}

// ensureRange allocates the missing pages of kFrom..kTo (inclusive) from
// one block, filling each with init (if not nil) before it is published:
// one allocation for a chunk of pages instead of one per page.
func (s *paged[T]) ensureRange(kFrom, kTo int, init func(pg *[pageLen]T, first int)) {
	missing := 0
	for k := kFrom; k <= kTo; k++ {
		if s.dir[k].Load() == nil {
			missing++
		}
	}
	if missing == 0 {
		return
	}
	block := make([][pageLen]T, missing)
	for k := kFrom; k <= kTo; k++ {
		if s.dir[k].Load() != nil {
			continue
		}
		pg := &block[0]
		block = block[1:]
		if init != nil {
			init(pg, k<<pageShift)
		}
		s.dir[k].CompareAndSwap(nil, pg)
	}
}

// at returns a pointer to element i, whose page must exist.
func (s *paged[T]) at(i int) *T { return &s.dir[i>>pageShift].Load()[i&pageMask] }

// load returns element i, or def when its page was never allocated.
func (s *paged[T]) load(i int, def T) T {
	pg := s.dir[i>>pageShift].Load()
	if pg == nil {
		return def
	}
	return pg[i&pageMask]
}
