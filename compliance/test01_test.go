package compliance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/internal/peerstest"
	"aimeter/loadgen"
)

// answerSUT answers each sample after a fixed service time with one byte:
// the sample's index (a deterministic model), or, with drift, a counter
// of the answers given (a system whose answers depend on the load, which
// TEST01 exists to catch).
type answerSUT struct {
	service time.Duration
	drift   bool
	n       atomic.Uint32
}

func (s *answerSUT) Name() string { return "AnswerSUT" }

func (s *answerSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		b := byte(q.Index)
		if s.drift {
			b = byte(s.n.Add(1))
		}
		go func() {
			time.Sleep(s.service)
			r.Complete(q.ID, []byte{b}, 0)
		}()
	}
}

func (s *answerSUT) FlushQueries() {}

// TestTEST01 runs TEST01 on synctest's clock: a SUT that answers each
// sample the same way in every mode passes; one whose answers drift
// fails the accuracy verification. Where numpy and MLPerf's compliance
// folder are here, MLPerf's verify_accuracy.py prints what aimeter wrote.
func TestTEST01(t *testing.T) {
	for _, tc := range []struct {
		drift bool
		pass  bool
	}{{false, true}, {true, false}} {
		dir := t.TempDir()
		var res *Result
		var err error
		synctest.Test(t, func(t *testing.T) {
			res, err = Run(context.Background(), TEST01, auditPlan(dir, &answerSUT{service: time.Millisecond, drift: tc.drift}))
		})
		if err != nil {
			t.Fatalf("drift %v: %v", tc.drift, err)
		}
		if res.Pass != tc.pass || res.Accuracy == nil || res.Accuracy.Pass != tc.pass {
			t.Errorf("drift %v: pass %v, want %v:\n%s%s", tc.drift, res.Pass, tc.pass, res.Accuracy.Output, res.Verification.Output)
		}
		if !res.Verification.Pass {
			t.Errorf("drift %v: the performance verification failed:\n%s", tc.drift, res.Verification.Output)
		}
		if res.Accuracy.PerfEntries == 0 || res.Accuracy.PerfQSLIdxMatch == 0 {
			t.Errorf("drift %v: the audit run logged no response to compare: %+v", tc.drift, res.Accuracy)
		}
		for _, f := range []string{"accuracy/mlperf_log_accuracy.json", "TEST01/verify_accuracy.txt", "TEST01/verify_performance.txt", "TEST01/accuracy/mlperf_log_accuracy.json", "TEST01/performance/run_1/mlperf_log_detail.txt"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
		script, _ := filepath.Abs("../../shared/peers/mlperf-inference/compliance/TEST01/verify_accuracy.py")
		if _, err := os.Stat(script); err != nil {
			continue
		}
		bin := peerstest.Bin(t, nil, "numpy")
		out, err := exec.Command(filepath.Join(bin, "python"), script, "-r", filepath.Join(dir, "accuracy", "mlperf_log_accuracy.json"),
			"-t", filepath.Join(dir, "audit", "mlperf_log_accuracy.json")).CombinedOutput()
		if err != nil {
			t.Fatalf("verify_accuracy.py: %v\n%s", err, out)
		}
		if string(out) != res.Accuracy.Output {
			t.Errorf("drift %v: MLPerf's verify_accuracy.py printed\n%s\naimeter\n%s", tc.drift, out, res.Accuracy.Output)
		}
	}
}
