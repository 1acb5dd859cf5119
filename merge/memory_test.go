package merge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/merge"
)

// mergeHeapGrowth bounds how much more heap merging 4 × 1.2 M records may
// take than merging 4 × 300 k (3.6 M records more): the merge streams the
// shards' records and writes the union's straight to its records file,
// which the merged Result and its derived files read back a row group at
// a time, so that what the merge holds is fixed costs and bounded buffers
// (a few row groups of 65,536 records being merged, encoded and decoded;
// the report's exact latencies, at most 2^20 of them, which both sizes
// reach). Holding the union in memory as the merge did before (a
// loadgen.RecordTable, about 8 bytes a record here, and the derived
// files' work over it) grows by about 20 bytes a record: 70 MB here.
const mergeHeapGrowth = 16 << 20

// TestMergeMemoryFlat merges 4 synthetic shards of an Offline test (as
// BenchmarkMerge does) at two sizes and bounds the difference of the
// merge's peak heap (sampled every millisecond while merge.Write runs:
// the largest of live and not yet swept objects) and of the heap it
// leaves held by the merged bundle it returns (after a collection).
func TestMergeMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and merges 6 M synthetic records")
	}
	if raceEnabled {
		t.Skip("the race detector adds memory of its own to every allocation")
	}
	measure := func(n int) (peak, held uint64) {
		root := t.TempDir()
		dirs := writeBenchShards(t, root, n)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var top atomic.Uint64
		done, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					top.Store(max(top.Load(), heapBytes()))
				}
			}
		}()
		b, err := merge.Write(context.Background(), dirs, filepath.Join(root, "merged"), merge.Options{})
		close(done)
		<-stopped
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Result.RecordCount(); got != shards*n {
			t.Fatalf("merged %d records, want %d", got, shards*n)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(b)
		sub := func(a uint64) uint64 { return a - min(a, base) }
		return sub(top.Load()), sub(ms.HeapAlloc)
	}
	const small, large = 300_000, 1_200_000
	peakS, heldS := measure(small)
	peakL, heldL := measure(large)
	mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	t.Logf("4 × %d records: peak heap %s, held after %s; 4 × %d: %s, %s", small, mib(peakS), mib(heldS), large, mib(peakL), mib(heldL))
	if peakL > peakS+mergeHeapGrowth {
		t.Errorf("peak heap grew by %s from %d to %d records (bound %s): the merge holds memory per record",
			mib(peakL-peakS), shards*small, shards*large, mib(mergeHeapGrowth))
	}
	if heldL > heldS+mergeHeapGrowth {
		t.Errorf("the merged bundle holds %s more heap at %d records than at %d (bound %s): it holds its records",
			mib(heldL-heldS), shards*large, shards*small, mib(mergeHeapGrowth))
	}
}
