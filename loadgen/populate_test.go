package loadgen

import (
	"sync"
	"testing"
)

// TestPopulateChangesNothing: populating memory that holds data, and
// memory that another goroutine is writing at the same time, changes no
// byte (MADV_POPULATE_WRITE faults pages in without writing them), for
// ranges that start and end inside pages.
func TestPopulateChangesNothing(t *testing.T) {
	buf := make([]uint64, 3<<18) // 6 MB: several populate chunks
	for i := range buf {
		buf[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
	}
	// Odd bounds: from inside the first page to inside the last.
	populate(buf[3 : len(buf)-4])
	for i, v := range buf {
		if v != uint64(i)*0x9e3779b97f4a7c15+1 {
			t.Fatalf("element %d is %#x after populate, want %#x", i, v, uint64(i)*0x9e3779b97f4a7c15+1)
		}
	}

	// A writer and populate over fresh memory at once, as populateAhead
	// runs beside the issuer.
	fresh := make([]uint64, 1<<20)
	var wg sync.WaitGroup
	wg.Go(func() { populate(fresh) })
	for i := range fresh {
		fresh[i] = uint64(i) | 1<<63
	}
	wg.Wait()
	for i, v := range fresh {
		if v != uint64(i)|1<<63 {
			t.Fatalf("element %d is %#x after a concurrent populate", i, v)
		}
	}
}

// TestPopulateAheadOfAPass: an Offline pass large enough to be populated
// ahead records every completion as before.
func TestPopulateAheadOfAPass(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Offline
	s.Mode = PerformanceOnly
	// 1.1 × 120 000/s × 1 s = 132 000 samples, two populateMin of pages
	// (the pass ends as soon as they are issued: INVALID, but recorded).
	s.OfflineExpectedQPS = 120000
	s.MinDurationMs = 1000
	res, err := Run(t.Context(), nullSUT{}, &testQSL{total: 1024, perf: 1024}, s, &Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rec := range res.Records() {
		if rec.Status != StatusOK || rec.CompletedNs < rec.IssuedNs {
			t.Fatalf("record %+v", rec)
		}
		n++
	}
	if n < 2*populateMin*pageLen {
		t.Errorf("%d records, want at least %d", n, 2*populateMin*pageLen)
	}
}
