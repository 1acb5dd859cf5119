package dataset

import (
	"fmt"
	"sync"

	"aimeter/loadgen"
)

// QSL serves an image set as a loadgen sample library. LoadSamples does the
// real preprocessing work (bytes to float32 in [0, 1]) for the samples of a
// loadable set; Sample then returns them to the SUT.
type QSL struct {
	set  *Images
	perf uint64

	mu     sync.RWMutex
	pixels []float32 // Len()×Rows×Cols, valid where loaded
	loaded []uint32  // load count per sample (a set may list a sample twice)
}

var _ loadgen.QSL = (*QSL)(nil)

// NewQSL returns a QSL over set reporting performanceSampleCount (0 means
// the whole set, capped at 1024 — a set that fits in memory many times over).
func NewQSL(set *Images, performanceSampleCount uint64) *QSL {
	if performanceSampleCount == 0 {
		performanceSampleCount = min(uint64(set.Len()), 1024)
	}
	return &QSL{set: set, perf: performanceSampleCount, loaded: make([]uint32, set.Len())}
}

// Name returns the name of the image set.
func (q *QSL) Name() string { return q.set.Name }

// TotalSampleCount returns the number of images.
func (q *QSL) TotalSampleCount() uint64 { return uint64(q.set.Len()) }

// PerformanceSampleCount returns the count given to NewQSL.
func (q *QSL) PerformanceSampleCount() uint64 { return q.perf }

// Set returns the underlying image set.
func (q *QSL) Set() *Images { return q.set }

// LoadSamples converts the listed images to float32.
func (q *QSL) LoadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.set.Rows * q.set.Cols
	if q.pixels == nil {
		q.pixels = make([]float32, q.set.Len()*n)
	}
	for _, i := range indices {
		if i >= uint64(q.set.Len()) {
			return fmt.Errorf("sample index %d is outside %s (%d images)", i, q.set.Name, q.set.Len())
		}
		if q.loaded[i] == 0 {
			dst := q.pixels[int(i)*n : int(i+1)*n]
			for k, p := range q.set.Image(int(i)) {
				dst[k] = float32(p) / 255
			}
		}
		q.loaded[i]++
	}
	return nil
}

// UnloadSamples releases the listed images.
func (q *QSL) UnloadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, i := range indices {
		if i >= uint64(q.set.Len()) || q.loaded[i] == 0 {
			return fmt.Errorf("unloading sample %d of %s, which is not loaded", i, q.set.Name)
		}
		q.loaded[i]--
	}
	return nil
}

// Sample returns the preprocessed pixels of a loaded sample, or false if it
// is not loaded. The slice must not be modified.
func (q *QSL) Sample(i uint64) ([]float32, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if i >= uint64(len(q.loaded)) || q.loaded[i] == 0 {
		return nil, false
	}
	n := q.set.Rows * q.set.Cols
	return q.pixels[int(i)*n : int(i+1)*n : int(i+1)*n], true
}

// Label returns the ground-truth class of sample i.
func (q *QSL) Label(i uint64) uint8 { return q.set.Labels[i] }
