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

// mergePeakGrowth and mergeHeldGrowth bound how much more heap merging
// 4 × 3 M records may take than merging 4 × 1 M (8 M records more),
// at its peak and held by the merged bundle afterwards. The merge streams
// the shards' records and writes the union's straight to its records
// file, which the merged Result and its derived files read back a row
// group at a time, so that what it holds is fixed costs and bounded
// buffers: a few row groups of 65,536 records being merged, encoded and
// decoded (about 5 MB each, one for each derived file reading the records
// at the time, and more of them meet at the peak of a longer merge), and
// the report's exact latencies, at most 2^20 of them, which both sizes
// reach. The peak's bound leaves room for those buffers (from run to run
// the peak moves by 10 to 30 MiB with the collector's timing); holding
// the union in memory, as the merge did before (258b583), grew the peak
// by 180 MiB here (22 bytes a record) and the heap held by 120 to 150.
const (
	mergePeakGrowth = 40 << 20
	mergeHeldGrowth = 16 << 20
)

// TestMergeMemoryFlat merges 4 synthetic shards of an Offline test (as
// BenchmarkMerge does), of a Server test, and of a network SUT's Server
// test (sample data and 8 token times on every record: samples.parquet
// and tokens.parquet, which the merge read whole and held before, its
// peak growing by 2.5 GiB here and the heap held by 1 GiB) at two sizes
// and bounds the difference of the
// merge's peak heap (sampled every millisecond while merge.Write runs:
// the largest of live and not yet swept objects) and of the heap it
// leaves held by the merged bundle it returns (after a collection).
func TestMergeMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and merges 32 M synthetic records")
	}
	if raceEnabled {
		t.Skip("the race detector adds memory of its own to every allocation")
	}
	measure := func(n int, server, network bool) (peak, held uint64) {
		root := t.TempDir()
		dirs := writeBenchShards(t, root, n, server, network)
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
	const small, large = 1_000_000, 3_000_000
	for _, sc := range []struct {
		name            string
		server, network bool
	}{{"Offline", false, false}, {"Server", true, false}, {"Network", true, true}} {
		peakS, heldS := measure(small, sc.server, sc.network)
		peakL, heldL := measure(large, sc.server, sc.network)
		mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
		t.Logf("%s, 4 × %d records: peak heap %s, held after %s; 4 × %d: %s, %s", sc.name, small, mib(peakS), mib(heldS), large, mib(peakL), mib(heldL))
		if peakL > peakS+mergePeakGrowth {
			t.Errorf("%s: peak heap grew by %s from %d to %d records (bound %s): the merge holds memory per record",
				sc.name, mib(peakL-peakS), shards*small, shards*large, mib(mergePeakGrowth))
		}
		if heldL > heldS+mergeHeldGrowth {
			t.Errorf("%s: the merged bundle holds %s more heap at %d records than at %d (bound %s): it holds its records",
				sc.name, mib(heldL-heldS), shards*large, shards*small, mib(mergeHeldGrowth))
		}
	}
}
