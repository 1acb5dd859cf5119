package session_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/serve"
	"aimeter/sut"
)

// BenchmarkSessions10k runs 10 000 concurrent two-turn sessions in one
// process (all starting at once, 50 ms of think time) through the whole
// chain of `aimeter sessions` (benchmark.Run with a Sessions plan) against
// aimeter's OpenAI simulator over loopback, and reports the peak heap per
// session above the heap before the run (prompts, encoded bodies, records,
// client state, the simulator's share included) and the turns per second.
func BenchmarkSessions10k(b *testing.B) {
	const sessions = 10_000
	out, _ := serve.ParseLengthDist("max_tokens")
	sim, err := serve.NewOpenAI(serve.OpenAIOptions{Models: []string{"sim"}, OutputTokens: out})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	defer func() { srv.Close(); sim.Close() }()
	var perSession, turnsPerSec float64
	for b.Loop() {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
		start := time.Now()
		o, err := benchmark.Run(context.Background(), benchmark.Plan{
			SUT: sut.Config{Kind: sut.OpenAI, Net: sut.Net{URLs: []string{srv.URL}, MaxConns: 1024},
				OpenAI: &sut.OpenAIConfig{IgnoreEOS: true}},
			Sessions:  &benchmark.Sessions{Sessions: sessions, MinTurns: 2, UserWords: 16, AnswerTokens: 4, Think: 50 * time.Millisecond},
			OutputDir: filepath.Join(b.TempDir(), "out"), NoReport: true, StallTimeout: time.Minute,
		})
		wall := time.Since(start)
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		if o.Sessions == nil || len(o.Sessions.Sessions) != sessions {
			b.Fatalf("sessions metrics: %+v", o.Sessions)
		}
		perSession = float64(peak.Load()-min(peak.Load(), base.HeapAlloc)) / sessions
		turnsPerSec = float64(2*sessions) / wall.Seconds()
	}
	b.ReportMetric(perSession, "peak_heap_B/session")
	b.ReportMetric(turnsPerSec, "turns/s")
}
