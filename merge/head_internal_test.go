package merge

import (
	"context"
	"path/filepath"
	"testing"

	"aimeter/benchmark"
	"aimeter/sut"
)

// TestShardReadAsHead: a shard of the null SUT (records alone, no sample
// data, stage times or token times) is read as its head, its records left
// on disk; its summary, read from the records file in passes, is the one
// bundle.Read computes.
func TestShardReadAsHead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard-0")
	plan := benchmark.Plan{SUT: sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		Settings:  benchmark.Settings{Scenario: "Offline", Set: []string{"target_qps=20000", "min_duration=100"}},
		OutputDir: dir, Shard: &benchmark.Shard{Index: 0, Count: 2}}
	run, err := benchmark.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	in, err := read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.whole || in.b.Result.RecordCount() != 0 {
		t.Fatalf("the shard was read whole (%d records held)", in.b.Result.RecordCount())
	}
	if err := in.summarize(); err != nil {
		t.Fatal(err)
	}
	got, want := in.b.Result.Summary, run.Bundle.Result.Summary
	if got == nil || want == nil || got.Percentiles != want.Percentiles || got.SampleCount != want.SampleCount || got.Valid != want.Valid {
		t.Fatalf("the head's summary %+v, the run's %+v", got, want)
	}
}
