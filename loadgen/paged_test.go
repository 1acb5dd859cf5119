package loadgen

import (
	"runtime"
	"sync"
	"testing"
)

// TestPaged checks the two-level directory at the edges of its pages and
// blocks: a value put through ensure or ensureRange is read back by at,
// load and page, and the pages around it stay unallocated.
func TestPaged(t *testing.T) {
	const n = 3*dirLen*pageLen + 5 // four blocks, the last one with one short page
	lastPage := (n - 1) >> pageShift
	tests := []struct {
		name  string
		i     int
		byRng bool // allocate with ensureRange instead of ensure
	}{
		{"first element of the first page", 0, false},
		{"last element of the first page", pageLen - 1, false},
		{"last page of the first block", (dirLen-1)<<pageShift + 7, false},
		{"first page of the second block", dirLen << pageShift, false},
		{"a middle block, by ensureRange", 2*dirLen<<pageShift + 3, true},
		{"the short last page of the last block", n - 1, false},
		{"the short last page, by ensureRange", n - 2, true},
	}
	for _, layout := range pagedLayouts {
		for _, tt := range tests {
			t.Run(layout.name+"/"+tt.name, func(t *testing.T) {
				s := newPagedFlat[int64](n, layout.flat)
				if s.pages() != lastPage+1 {
					t.Fatalf("pages() = %d, want %d", s.pages(), lastPage+1)
				}
				k := tt.i >> pageShift
				fill := func(pg *[pageLen]int64, first int) {
					for j := range pg {
						pg[j] = int64(first + j)
					}
				}
				if tt.byRng {
					s.ensureRange(k, k, fill)
				} else {
					s.ensure(k, fill)
				}
				if got := *s.at(tt.i); got != int64(tt.i) {
					t.Errorf("at(%d) = %d, want the init's %d", tt.i, got, tt.i)
				}
				*s.at(tt.i) = -1
				if got := s.load(tt.i, 99); got != -1 {
					t.Errorf("load(%d) = %d after a store through at, want -1", tt.i, got)
				}
				if s.page(k) == nil {
					t.Errorf("page(%d) is nil after it was allocated", k)
				}
				for _, other := range []int{k - 1, k + 1} {
					if other < 0 || other > lastPage {
						continue
					}
					if s.page(other) != nil {
						t.Errorf("page(%d) allocated along with page %d", other, k)
					}
					if got := s.load(other<<pageShift, 99); got != 99 {
						t.Errorf("load of the unallocated page %d = %d, want the default 99", other, got)
					}
				}
			})
		}
	}
}

// pagedLayouts are the two directories a paged array can have: the tests
// of one run on both, whatever the array's size.
var pagedLayouts = []struct {
	name string
	flat int // newPagedFlat's bound
}{
	{"two-level", 0},
	{"flat", 1 << 30},
}

// TestPagedEnsureRangeAcrossBlocks allocates pages on both sides of a block
// boundary in one call, some of them already there.
func TestPagedEnsureRangeAcrossBlocks(t *testing.T) {
	for _, layout := range pagedLayouts {
		t.Run(layout.name, func(t *testing.T) {
			checkEnsureRangeAcrossBlocks(t, newPagedFlat[int32](2*dirLen*pageLen, layout.flat))
		})
	}
}

func checkEnsureRangeAcrossBlocks(t *testing.T, s paged[int32]) {
	before := s.ensure(dirLen, nil) // the first page of the second block
	before[0] = 42
	s.ensureRange(dirLen-2, dirLen+1, func(pg *[pageLen]int32, first int) { pg[0] = int32(first >> pageShift) })
	for k := dirLen - 2; k <= dirLen+1; k++ {
		want := int32(k)
		if k == dirLen {
			want = 42 // kept, not replaced
		}
		if got := s.page(k)[0]; got != want {
			t.Errorf("page %d starts with %d, want %d", k, got, want)
		}
	}
	if s.page(dirLen-3) != nil || s.page(dirLen+2) != nil {
		t.Error("ensureRange allocated pages outside its range")
	}
}

// TestPagedConcurrentEnsure has goroutines race to allocate the same pages
// (and so the same directory block): all of them must get the same page.
func TestPagedConcurrentEnsure(t *testing.T) {
	for _, layout := range pagedLayouts {
		t.Run(layout.name, func(t *testing.T) { checkConcurrentEnsure(t, newPagedFlat[int64](4*dirLen*pageLen, layout.flat)) })
	}
}

func checkConcurrentEnsure(t *testing.T, s paged[int64]) {
	const workers = 8
	got := make([][]*[pageLen]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := range 3 {
				got[w] = append(got[w], s.ensure(2*dirLen+k, nil))
			}
		})
	}
	wg.Wait()
	for w := 1; w < workers; w++ {
		for k := range got[w] {
			if got[w][k] != got[0][k] {
				t.Fatalf("worker %d got another page %d than worker 0", w, k)
			}
		}
	}
}

// BenchmarkPagedGC is the garbage collector's cost of an on-demand pass's
// arrays before they are used: 11 paged arrays sized for 2^29 samples, the
// generated count of a 5-second closed-loop run at an expected latency of
// 10 µs at concurrency 64, with one page each in use. With a flat
// directory each array held 4 MiB of page pointers to scan.
func BenchmarkPagedGC(b *testing.B) {
	arrays := make([]paged[int64], 11)
	for k := range arrays {
		arrays[k] = newPaged[int64](1 << 29)
		arrays[k].ensure(0, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
	}
	runtime.KeepAlive(arrays)
}

// BenchmarkPagedAt is the cost of an element's address, the completion
// path's access to each per-sample array.
func BenchmarkPagedAt(b *testing.B) {
	s := newPaged[int64](1 << 20)
	s.ensureRange(0, s.pages()-1, nil)
	i := 0
	for b.Loop() {
		*s.at(i)++
		i = (i + 1) & (1<<20 - 1)
	}
}

func TestPagedLayoutBySize(t *testing.T) {
	for _, c := range []struct {
		why      string
		n        int
		twoLevel bool
	}{
		{"a closed-loop pass sized for 2^29 samples: its flat directory would be 4 MiB of pointers", 1 << 29, true},
		{"the largest flat one: 128 KiB of pointers", flatPages * pageLen, false},
		{"one element more", flatPages*pageLen + 1, true},
		{"an Offline pass of 4.4 M samples: one pointer to its elements, not two", 4_400_000, false},
		{"empty", 0, false},
	} {
		s := newPaged[int64](c.n)
		if got := s.top != nil; got != c.twoLevel {
			t.Errorf("%s: %d elements: two-level %v, want %v", c.why, c.n, got, c.twoLevel)
		}
		if s.pages() != (c.n+pageMask)>>pageShift {
			t.Errorf("%s: %d pages", c.why, s.pages())
		}
	}
}
