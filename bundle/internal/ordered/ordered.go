// Package ordered encodes chunks of a file on several goroutines and
// writes them in order, for the record files of package bundle.
package ordered

import (
	"sync"
	"sync/atomic"
)

// Encode encodes chunks 0 to n-1 on up to workers goroutines and
// hands each chunk's bytes to emit, on the calling goroutine, in chunk
// order. Each worker gets its own encode function from newWorker (its
// scratch state stays its own), and encode is given a buffer to reuse (nil
// at first). A worker holds a buffer before it takes a chunk, so the chunk
// emit waits for always has one: at most workers+2 buffers exist at once.
// After the first error of encode or emit no further chunk is encoded or
// emitted, and that error is returned once the workers are done.
func Encode[M any](n, workers int, newWorker func() func(k int, buf []byte) ([]byte, M, error), emit func(data []byte, meta M) error) error {
	workers = max(1, min(workers, n))
	type result struct {
		data []byte
		meta M
		err  error
		done chan struct{}
	}
	results := make([]result, n)
	for i := range results {
		results[i].done = make(chan struct{})
	}
	free := make(chan []byte, workers+2)
	for range workers + 2 {
		free <- nil
	}
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			encode := newWorker()
			for {
				buf := <-free
				k := int(next.Add(1) - 1)
				if k >= n {
					free <- buf
					return
				}
				r := &results[k]
				r.data = buf[:0]
				if !failed.Load() {
					r.data, r.meta, r.err = encode(k, buf[:0])
				}
				close(r.done)
			}
		})
	}
	var err error
	for k := range results {
		r := &results[k]
		<-r.done
		if err == nil {
			err = r.err
		}
		if err == nil {
			err = emit(r.data, r.meta)
		}
		if err != nil {
			failed.Store(true)
		}
		free <- r.data
		r.data = nil
	}
	wg.Wait()
	return err
}
