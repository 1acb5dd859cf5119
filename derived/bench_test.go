package derived

import (
	"aimeter/bundle"
	"context"
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

// BenchmarkWriteOffline writes the bundle of an Offline run of 2^20
// samples, one completion each: what `aimeter run` spends after the run.
// ns/sample is the cost per sample of the whole bundle.
func BenchmarkWriteOffline(b *testing.B) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 1 << 20
	s.OfflineExpectedQPS = 1
	res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 1024}, s, nil)
	if err != nil {
		b.Fatal(err)
	}
	n := res.RecordCount()
	for _, c := range []struct {
		name     string
		noReport bool
	}{{"records+logs", true}, {"records+logs+report", false}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				if err := Write(dir, &bundle.Bundle{Result: res, Version: "bench", NoReport: c.noReport}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
		})
	}
}
