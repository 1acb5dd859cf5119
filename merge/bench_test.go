package merge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/merge"
)

// writeBenchShards writes, into root, the bundles of the 4 shards of an
// Offline test of 4 × n samples (shard i holding samples [i·n, (i+1)·n)
// of the one query, as the sample-blocks rule splits it), or with server
// of a Server test of 4 × n queries of one sample (shard i holding the
// queries q with q mod 4 = i, as the query-mod-N rule splits them, one
// scheduled every 250 µs and issued up to 50 µs late): the shards of a
// small run of the null SUT, whose records are replaced by n synthetic
// ones each, latencies spread from 1 ms to 1 s. Written by the library
// (bundle.Write, raw files only), not run: a test of 40 M samples would
// take each shard's process the whole query's memory to run. With
// network, the records are a network SUT's besides (a Server test's):
// each carries request and response bytes (samples.parquet) and the
// arrival times of 8 streamed tokens (tokens.parquet), as an OpenAI-style
// SUT's do.
func writeBenchShards(tb testing.TB, root string, n int, server, network bool) []string {
	tb.Helper()
	plan := offlinePlan
	if server {
		plan = serverPlan
	}
	var dirs []string
	for i := range shards {
		small := filepath.Join(root, fmt.Sprintf("small-%d", i))
		if _, err := benchmark.Run(context.Background(), plan(small, &benchmark.Shard{Index: i, Count: shards})); err != nil {
			tb.Fatal(err)
		}
		b, err := derived.Read(small)
		if err != nil {
			tb.Fatal(err)
		}
		res := b.Result
		p := &res.Passes[res.ReportedPass()]
		first := p.FirstSeq
		var query uint64 // the pass's first query (Server: of seq first)
		for r := range res.PassRecords(res.ReportedPass()) {
			query = r.QueryID - (r.SeqID - first)
			break
		}
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		t := loadgen.NewRecordTable(n)
		var traces []loadgen.TokenTrace
		chunk := make([]loadgen.Record, 0, 4096)
		var end int64
		for j := range n {
			k := uint64(i*n + j)
			r := loadgen.Record{SeqID: first + k, QueryID: query, SampleIndex: k % res.QSLTotalCount,
				IssuedNs: 1_000, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK}
			if server {
				k = uint64(shards*j + i)
				r.SeqID, r.QueryID, r.SampleIndex = first+k, query+k, k%res.QSLTotalCount
				r.ScheduledNs = int64(k) * 250_000
				r.IssuedNs = r.ScheduledNs + rng.Int64N(50_000)
			}
			r.CompletedNs = r.IssuedNs + 1_000_000 + rng.Int64N(1_000_000_000)
			if network {
				const tokens = 8
				r.RequestBytes, r.ResponseBytes = 200+int64(k%800), 100+int64(k%1000)
				r.Tokens = tokens
				times := make([]int64, tokens)
				for m := range times { // evenly from issue + a tenth to completion
					span := r.CompletedNs - r.IssuedNs
					times[m] = r.IssuedNs + span/10 + int64(m)*(span-span/10)/(tokens-1)
				}
				r.FirstTokenNs = times[0]
				traces = append(traces, loadgen.TokenTrace{SeqID: r.SeqID, TimesNs: times})
			}
			end = max(end, r.CompletedNs)
			chunk = append(chunk, r)
			if len(chunk) == cap(chunk) || j == n-1 {
				t.Append(chunk...)
				chunk = chunk[:0]
			}
		}
		p.EndSeq, p.EndNs = first+uint64(shards*n), end+1
		if server {
			p.QueriesIssued = uint64(n)
		}
		res.Accuracy = nil
		res.AttachTable(t)
		if traces != nil {
			res.AttachTokenTimes(traces)
		}
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		if err := bundle.Write(dir, b, nil); err != nil {
			tb.Fatal(err)
		}
		if err := os.RemoveAll(small); err != nil {
			tb.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// benchRecords is the records a shard of BenchmarkMerge holds:
// $AIMETER_MERGE_RECORDS, or 1 M.
func benchRecords(tb testing.TB) int {
	n := 1 << 20
	if s := os.Getenv("AIMETER_MERGE_RECORDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			tb.Fatalf("AIMETER_MERGE_RECORDS=%q: want a count of records", s)
		}
		n = v
	}
	return n
}

// TestWriteBenchShards writes BenchmarkMerge's 4 synthetic shards into
// $AIMETER_MERGE_BENCH_DIR for scripts/bench-merge.sh, which merges them
// with `aimeter merge` under /usr/bin/time; skipped without it. They are
// an Offline test's, or a Server test's with AIMETER_MERGE_SCENARIO=Server,
// or a network SUT's Server test (sample data and token times) with
// AIMETER_MERGE_SCENARIO=Network.
func TestWriteBenchShards(t *testing.T) {
	root := os.Getenv("AIMETER_MERGE_BENCH_DIR")
	if root == "" {
		t.Skip("AIMETER_MERGE_BENCH_DIR not set: scripts/bench-merge.sh sets it")
	}
	server, network := false, false
	switch sc := os.Getenv("AIMETER_MERGE_SCENARIO"); sc {
	case "", "Offline":
	case "Server":
		server = true
	case "Network":
		server, network = true, true
	default:
		t.Fatalf("AIMETER_MERGE_SCENARIO=%q: want Offline, Server or Network", sc)
	}
	for _, dir := range writeBenchShards(t, root, benchRecords(t), server, network) {
		t.Log(dir)
	}
}

// BenchmarkMerge merges (merge.Write: the merged bundle with every derived
// file) 4 synthetic shards of an Offline test, 1 M records each (or
// $AIMETER_MERGE_RECORDS), and reports the records merged per second and
// the peak heap over the merge, in bytes and bytes a record (sampled
// every millisecond, so a brief peak may be missed). scripts/bench-merge.sh
// measures the whole process's peak RSS at several sizes.
//
//	go test ./merge/ -run '^$' -bench Merge -benchtime 1x
func BenchmarkMerge(b *testing.B) {
	root := b.TempDir()
	dirs := writeBenchShards(b, root, benchRecords(b), false, false)
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
		m, err := merge.Write(context.Background(), dirs, filepath.Join(root, "merged"), merge.Options{})
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
