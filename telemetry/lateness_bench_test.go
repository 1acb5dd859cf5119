//go:build linux && (amd64 || arm64)

package telemetry

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
)

// BenchmarkServerLatenessSampling is loadgen's BenchmarkServerLateness
// (one-second Server tests at 100k QPS against the null SUT, how late
// each query was issued after its scheduled time) without sampling and
// with three sources read at 10 Hz beside it: RAPL (a sysfs fixture), NVML
// (the stand-in library) and Redfish (a loopback HTTP server, whose own
// work is on this machine too). Run the two interleaved and compare:
//
//	go test ./telemetry -run X -bench ServerLatenessSampling -benchtime 5x -count 3
func BenchmarkServerLatenessSampling(b *testing.B) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 100_000
	s.ServerTargetLatencyNs = 1_000_000
	s.MinDurationMs = 1000
	sources := func(b *testing.B) []Source {
		r, err := OpenRAPL(raplFixture(b, "1000", "20", "262143328850"), "")
		if err != nil {
			b.Fatal(err)
		}
		n, err := OpenNVML(fakeNVML(b), "")
		if err != nil {
			b.Fatal(err)
		}
		var watts atomic.Int64
		watts.Store(374)
		srv := redfishBMC(b, &watts, true)
		rf, err := OpenRedfish(strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1)+"/redfish/v1/Chassis/1U", "")
		if err != nil {
			b.Fatal(err)
		}
		return []Source{r, n, rf}
	}
	for _, c := range []struct {
		name    string
		sources func(*testing.B) []Source
	}{{"no-sampling", nil}, {"three-sources-10Hz", sources}} {
		b.Run(c.name, func(b *testing.B) {
			var srcs []Source
			if c.sources != nil {
				srcs = c.sources(b)
			}
			var lateness []int64
			valid, reads := 0, 0
			for b.Loop() {
				var sm *Sampler
				if srcs != nil {
					sm = Start(time.Now(), srcs, Options{Period: 100 * time.Millisecond})
				}
				res, err := loadgen.Run(context.Background(), null.SUT{}, &loadgentest.QSL{Total: 1024}, s, nil)
				if err != nil {
					b.Fatal(err)
				}
				if sm != nil {
					l, err := sm.Stop(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					reads += len(l.Readings)
				}
				if res.Summary.Valid {
					valid++
				}
				for r := range res.Records() {
					lateness = append(lateness, r.IssuedNs-r.ScheduledNs)
				}
			}
			slices.Sort(lateness)
			b.ReportMetric(float64(lateness[len(lateness)/2]), "p50-late-ns")
			b.ReportMetric(float64(lateness[len(lateness)*99/100]), "p99-late-ns")
			b.ReportMetric(float64(lateness[len(lateness)*999/1000]), "p99.9-late-ns")
			b.ReportMetric(float64(valid)/float64(b.N), "valid-fraction")
			b.ReportMetric(float64(reads)/float64(b.N), "readings/run")
		})
	}
}
