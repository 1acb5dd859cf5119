package netsut

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// BenchmarkConcurrency is the per-request cost of loadgen's
// fixed-concurrency mode through the SUT, with an endpoint that yields
// once (a stand-in for the wait on the network) and answers: the issuer's
// wake-up, the hand-off of each sample to a worker and the response. One
// op is one request, 64 in flight; client-cpu-ns/op is the process's
// user+system CPU per request, which counts the scheduler's work (the
// wake-ups of idle threads) that ns/op alone hides on an idle machine.
func BenchmarkConcurrency(b *testing.B) {
	ep := &fakeEndpoint{do: func(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
		runtime.Gosched()
	}}
	sut := New(context.Background(), ep, Options{RequestTimeout: time.Minute})
	defer sut.Close()
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.SingleStream
	s.Mode = loadgen.PerformanceOnly
	s.MinDurationMs = 0
	s.MinQueryCount = uint64(max(b.N, 64))
	s.Concurrency = 64
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	res, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 64}, s, &loadgen.Options{Timeout: time.Hour})
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "client-cpu-ns/op")
	if err != nil || res.FailedSamples != 0 {
		b.Fatalf("%v, %d failed", err, res.FailedSamples)
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
