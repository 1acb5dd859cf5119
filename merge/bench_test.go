package merge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/merge"
	"aimeter/sut"
)

// BenchmarkMerge merges 4 shards of an Offline test of the null SUT, about
// 1 M records each (the one query's samples in 4 blocks), and reports the
// records merged per second and the peak heap over the merge, in bytes and
// bytes a record (sampled every millisecond, so a brief peak may be
// missed). The merged bundle is built (merge.Bundles), not written.
//
//	go test ./merge/ -run '^$' -bench Merge -benchtime 3x
func BenchmarkMerge(b *testing.B) {
	root := b.TempDir()
	var dirs []string
	for i := range shards {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		plan := benchmark.Plan{
			SUT: sut.Config{Kind: sut.NullAsync},
			// 3.64 M samples/s × 1 s × 1.1 = 4,004,000 samples in the query.
			Settings:  benchmark.Settings{Scenario: "Offline", Set: []string{"target_qps=3640000", "min_duration=1000"}},
			OutputDir: dir, Shard: &benchmark.Shard{Index: i, Count: shards},
		}
		if _, err := benchmark.Run(context.Background(), plan); err != nil {
			b.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	runtime.GC()
	base := heapBytes()
	var records uint64
	var peak atomic.Uint64
	b.ResetTimer()
	for b.Loop() {
		done := make(chan struct{})
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					if h := heapBytes(); h > peak.Load() {
						peak.Store(h)
					}
				}
			}
		}()
		m, err := merge.Bundles(context.Background(), dirs, merge.Options{})
		close(done)
		<-stopped
		if err != nil {
			b.Fatal(err)
		}
		records = uint64(m.Result.RecordCount())
	}
	b.StopTimer()
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(records)/perOp, "records/s")
	b.ReportMetric(float64(records), "records")
	if p := peak.Load(); p > base {
		b.ReportMetric(float64(p-base), "peak-heap-B")
		b.ReportMetric(float64(p-base)/float64(records), "peak-heap-B/record")
	}
}

// heapBytes is the heap's live and not yet swept objects, in bytes.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
