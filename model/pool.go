package model

import (
	"runtime"
	"sync"
)

// chunkRunner is a piece of parallel work split into total chunks; chunk idx
// is run by exactly one goroutine. Implementations are pointers to
// preallocated job structs, so handing one to the pool does not allocate.
type chunkRunner interface {
	runChunk(idx, total int)
}

// poolTask is one chunk sent to a pool worker.
type poolTask struct {
	r          chunkRunner
	idx, total int
	wg         *sync.WaitGroup
}

// workerPool is the package's persistent set of helper goroutines. It grows
// lazily to GOMAXPROCS-1 workers (the calling goroutine always runs chunk 0
// itself) and never shrinks; idle workers block on the channel and cost
// nothing.
var workerPool struct {
	mu      sync.Mutex
	workers int
	tasks   chan poolTask
}

// ensureWorkers starts workers until at least n exist.
func ensureWorkers(n int) {
	workerPool.mu.Lock()
	if workerPool.tasks == nil {
		workerPool.tasks = make(chan poolTask, 256)
	}
	for workerPool.workers < n {
		workerPool.workers++
		go poolWorker(workerPool.tasks)
	}
	workerPool.mu.Unlock()
}

func poolWorker(tasks <-chan poolTask) {
	for t := range tasks {
		t.r.runChunk(t.idx, t.total)
		t.wg.Done()
	}
}

// maxProcs returns the number of goroutines parallel work may use.
func maxProcs() int {
	p := runtime.GOMAXPROCS(0)
	if p < 1 {
		p = 1
	}
	return p
}

// parallelFor runs r's chunks 0..total-1, chunk 0 on the calling goroutine
// and the others on pool workers, and returns when all are done. wg must
// not be in use by another parallelFor call. It does not allocate once the
// pool has its workers.
func parallelFor(r chunkRunner, total int, wg *sync.WaitGroup) {
	if total <= 1 {
		r.runChunk(0, 1)
		return
	}
	ensureWorkers(total - 1)
	wg.Add(total - 1)
	for i := 1; i < total; i++ {
		workerPool.tasks <- poolTask{r: r, idx: i, total: total, wg: wg}
	}
	r.runChunk(0, total)
	wg.Wait()
}

// split returns the half-open range of chunk idx when n items are divided
// into total nearly equal contiguous chunks.
func split(n, idx, total int) (lo, hi int) {
	return n * idx / total, n * (idx + 1) / total
}
