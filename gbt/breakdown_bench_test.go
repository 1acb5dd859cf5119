package gbt

import (
	"testing"
	"time"

	"aimeter/loadgen"
)

// synthRun builds n synthetic records and test-clock stage times: a Server
// run at about 100 000 samples/s with millisecond-scale stages, a token
// count per sample and one sample in 1000 lost. Deterministic (xorshift).
func synthRun(n int) ([]loadgen.Record, []loadgen.StageTimes) {
	records := make([]loadgen.Record, n)
	stages := make([]loadgen.StageTimes, n)
	x := uint64(88172645463325252)
	rnd := func(m int64) int64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int64(x % uint64(m))
	}
	t := int64(0)
	for i := range records {
		t += rnd(20_000) // 10 µs mean gap
		recv := t + 50_000 + rnd(100_000)
		pre := recv + rnd(200_000)
		preE := pre + 100_000 + rnd(500_000)
		inf := preE + rnd(50_000)
		infE := inf + 1_000_000 + rnd(20_000_000)
		post := infE + rnd(50_000)
		postE := post + 50_000 + rnd(300_000)
		sent := inf + 200_000 + rnd(1_000_000)
		done := postE + 50_000 + rnd(100_000)
		tokens := 1 + rnd(256)
		r := loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), SampleIndex: uint64(i) % 24576,
			ScheduledNs: t, IssuedNs: t, FirstTokenNs: sent + 60_000, CompletedNs: done, Tokens: tokens, Status: loadgen.StatusOK}
		st := loadgen.StageTimes{Clock: loadgen.TestClock, Received: recv, PreprocessStart: pre, PreprocessEnd: preE,
			InferenceStart: inf, InferenceEnd: infE, PostprocessStart: post, PostprocessEnd: postE, ResultSent: sent}
		if i%1000 == 999 {
			r.Status, r.CompletedNs, r.FirstTokenNs = loadgen.StatusLost, loadgen.NoTime, loadgen.NoTime
			st = loadgen.NoStages
		}
		records[i], stages[i] = r, st
	}
	return records, stages
}

// BenchmarkBreakdown10M computes the full Table 16 breakdown of 10 million
// samples (the requirement: < 10 s and < 1 GiB). It only runs with -bench;
// the inputs (about 1.4 GB) are built outside the timer.
func BenchmarkBreakdown10M(b *testing.B) {
	const n = 10_000_000
	records, stages := synthRun(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		bd := ComputeBreakdown(records, stages, BreakdownOptions{Timeout: 4 * time.Second})
		if bd.TDIP.Stat.N != n-n/1000 {
			b.Fatalf("T_DIP over %d samples", bd.TDIP.Stat.N)
		}
	}
}

// BenchmarkThroughput10M is the Table 18 throughput (the T_DIP interval
// union) of the same 10 million samples, with the first token excluded so
// that the union is taken twice.
func BenchmarkThroughput10M(b *testing.B) {
	const n = 10_000_000
	records, stages := synthRun(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		th := InferenceThroughput(records, stages, ThroughputOptions{ExcludeFirstToken: true})
		if th.Samples != n-n/1000 {
			b.Fatalf("%d samples", th.Samples)
		}
	}
}
