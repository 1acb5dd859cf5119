package compliance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/benchmark"
	"aimeter/sut"
)

// TestTEST01Reference: TEST01, the first example of aimeter audit's help,
// on the in-process reference model (its Offline passes cut to 110
// samples by target_qps: the model is some 80 times slower under -race;
// aimeter's defaults for it are checked by
// benchmark.TestGentleDefaultsForServers). The real model answers a
// performance run's logged samples as its accuracy run did, so TEST01's
// accuracy verification passes; the accuracy run's log, rescored against
// the reloaded data set (benchmark.ScoreBundle, aimeter accuracy DIR),
// gives the run's own score and verdict. The performance comparison of
// sub-second passes on a shared machine may go either way, and is left
// alone (TestTEST01 decides it on synctest's clock). The model is the
// user cache's, as aimeter audit's: trained weights, which meet the
// target. (This was internal/cli's TestAuditReference.)
func TestTEST01Reference(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	p := benchmark.Plan{SUT: sut.Config{Kind: sut.Reference}, Settings: benchmark.Settings{Scenario: "Offline", Set: []string{"target_qps=2000"}},
		OutputDir: dir, NoReport: true, Notify: func(benchmark.Notice) {}}
	res, err := Audit(context.Background(), TEST01, p)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := os.ReadFile(filepath.Join(dir, "TEST01", "verify_accuracy.txt"))
	if err != nil || !strings.Contains(string(acc), "num_perf_log_data_mismatch = 0\n") || !strings.HasSuffix(strings.TrimSpace(string(acc)), "TEST PASS") {
		t.Errorf("verify_accuracy.txt %v:\n%s", err, acc)
	}
	got, err := benchmark.ScoreBundle(context.Background(), filepath.Join(dir, "accuracy"), nil)
	if err != nil || !got.Pass || got.Target != 85 {
		t.Fatalf("the accuracy run rescored (%v): %+v", err, got)
	}
	if rec := res.AccuracyRun.Accuracy; rec == nil || rec.Value != got.Value || rec.Pass != got.Pass {
		t.Errorf("rescored %+v, but the run recorded %+v", got, rec)
	}
	if _, err := os.Stat(filepath.Join(dir, "TEST01", "verify_performance.txt")); err != nil {
		t.Error(err)
	}
}
