package trace_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut"
	"aimeter/workload/trace"
)

// benchTrace writes a CSV trace of n requests at rate per second (evenly
// spaced to the µs, as a recorded trace's ms timestamps are not fine
// enough for 5 k/s) and returns its path.
func benchTrace(b *testing.B, n int, rate float64) string {
	var sb strings.Builder
	for k := range n {
		fmt.Fprintf(&sb, "%.3f,8,1\n", float64(k)*1000/rate)
	}
	p := filepath.Join(b.TempDir(), "bench.csv")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// nullSUT completes every sample inside IssueQuery.
type nullSUT struct{}

func (nullSUT) Name() string { return "null" }
func (nullSUT) IssueQuery(r *loadgen.Responder, qs []loadgen.QuerySample) {
	for _, q := range qs {
		r.Complete(q.ID, nil, 0)
	}
}
func (nullSUT) FlushQueries() {}

// nQSL is a QSL of n samples.
type nQSL uint64

func (q nQSL) Name() string                   { return "bench" }
func (q nQSL) TotalSampleCount() uint64       { return uint64(q) }
func (q nQSL) PerformanceSampleCount() uint64 { return uint64(q) }
func (q nQSL) LoadSamples(_ []uint64) error   { return nil }
func (q nQSL) UnloadSamples(_ []uint64) error { return nil }

// BenchmarkReplayLateness replays 5 000 requests/s for 2 s and reports the
// send lateness (issue time − trace time): p99_lateness_µs should stay
// ≤ 100 on an idle machine (issue 29). "issuer" measures LoadGen's issuer
// alone (a SUT that completes inside IssueQuery); "openai" the whole chain
// of `aimeter replay` (benchmark.Run with a Replay plan) against aimeter's
// OpenAI simulator over loopback, where lateness includes the client's
// own IssueQuery. Run it alone: other load on the machine is lateness.
func BenchmarkReplayLateness(b *testing.B) {
	const rate, n = 5000, 10000
	b.Run("issuer", func(b *testing.B) {
		tr, err := trace.Read(benchTrace(b, n, rate))
		if err != nil {
			b.Fatal(err)
		}
		s, err := tr.Schedule(trace.ScheduleOptions{})
		if err != nil {
			b.Fatal(err)
		}
		set := loadgen.DefaultSettings()
		set.Scenario = loadgen.Server
		set.MinDurationMs, set.MinQueryCount = 0, 1
		var last trace.LatenessSummary
		for b.Loop() {
			res, err := loadgen.Run(context.Background(), nullSUT{}, nQSL(n), set,
				&loadgen.Options{Arrivals: s.Arrivals, ArrivalSamples: s.Samples()})
			if err != nil {
				b.Fatal(err)
			}
			last = trace.Lateness(res.Records(), 0)
		}
		report(b, last)
	})
	b.Run("openai", func(b *testing.B) {
		out, _ := serve.ParseLengthDist("1")
		sim, err := serve.NewOpenAI(serve.OpenAIOptions{Models: []string{"sim"}, OutputTokens: out})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(sim)
		defer func() { srv.Close(); sim.Close() }()
		path := benchTrace(b, n, rate)
		var last trace.LatenessSummary
		for b.Loop() {
			o, err := benchmark.Run(context.Background(), benchmark.Plan{
				SUT:       sut.Config{Kind: sut.OpenAI, Net: sut.Net{URLs: []string{srv.URL}}, OpenAI: &sut.OpenAIConfig{IgnoreEOS: true}},
				Replay:    &benchmark.Replay{Path: path},
				OutputDir: filepath.Join(b.TempDir(), "out"), NoReport: true, StallTimeout: time.Minute,
			})
			if err != nil {
				b.Fatal(err)
			}
			last = *o.Lateness
		}
		report(b, last)
	})
}

func report(b *testing.B, l trace.LatenessSummary) {
	b.ReportMetric(float64(l.P50)/1e3, "p50_lateness_µs")
	b.ReportMetric(float64(l.P99)/1e3, "p99_lateness_µs")
	b.ReportMetric(float64(l.Max)/1e3, "max_lateness_µs")
	b.ReportMetric(float64(l.Late), "late_>1ms")
}
