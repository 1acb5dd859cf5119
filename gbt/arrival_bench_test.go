package gbt

import (
	"context"
	"slices"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

// BenchmarkArrivalLateness runs one-second GB/T arrival-mode tests at about
// 100 k jobs/s against a null SUT and reports how late jobs were issued
// after their scheduled time (the load generator's own share of latency):
// mode 1 with T = 100 µs and n = 10, and mode 3 with a 100 k jobs/s
// background and two 200 ms bursts at σ = 200 k jobs/s.
func BenchmarkArrivalLateness(b *testing.B) {
	cases := []struct {
		name string
		a    Arrival
	}{
		{"mode1", Arrival{Mode: ModeFixedPeriod, Period: 100 * time.Microsecond, N: 10, Duration: time.Second}},
		{"mode3", Arrival{Mode: ModePeak, Lambda: 100_000, Duration: time.Second, Bursts: 2,
			BurstLength: 200 * time.Millisecond, BurstPeriod: 50 * time.Microsecond, BurstN: 10, Seed: 1}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			a := c.a.WithDefaults()
			a.Timeout = 4 * time.Second
			arrivals, _, err := a.Schedule()
			if err != nil {
				b.Fatal(err)
			}
			s := loadgen.DefaultSettings()
			s.Scenario = loadgen.Server
			s.ServerTargetQPS = float64(len(arrivals)) / a.Duration.Seconds()
			s.MinDurationMs = uint64(a.Duration.Milliseconds())
			var late []int64
			lost := uint64(0)
			for b.Loop() {
				res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 1024}, s, &loadgen.Options{Arrivals: arrivals, SampleTimeout: a.Timeout})
				if err != nil {
					b.Fatal(err)
				}
				lost += res.LostSamples
				for r := range res.Records() {
					late = append(late, r.IssuedNs-r.ScheduledNs)
				}
			}
			slices.Sort(late)
			b.ReportMetric(float64(len(arrivals))/a.Duration.Seconds(), "jobs/s")
			b.ReportMetric(float64(late[len(late)/2]), "p50-late-ns")
			b.ReportMetric(float64(late[len(late)*99/100]), "p99-late-ns")
			b.ReportMetric(float64(lost), "lost")
		})
	}
}
