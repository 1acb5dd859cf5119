package compliance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/loadgentest"
)

// serviceSUT answers each sample after a fixed service time; with cache,
// a sample index it has answered before is answered a hundred times
// sooner (the result cache that TEST04 exists to catch; not at once,
// which on synctest's clock would let a run issue without end).
type serviceSUT struct {
	service time.Duration
	cache   bool
	mu      sync.Mutex
	seen    map[uint64]bool
}

func (s *serviceSUT) Name() string {
	if s.cache {
		return "CachingSUT"
	}
	return "ServiceSUT"
}

func (s *serviceSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		s.mu.Lock()
		hit := s.cache && s.seen[q.Index]
		if s.seen == nil {
			s.seen = map[uint64]bool{}
		}
		s.seen[q.Index] = true
		s.mu.Unlock()
		d := s.service
		if hit {
			d /= 100
		}
		go func() {
			time.Sleep(d)
			r.Complete(q.ID, nil, 0)
		}()
	}
}

func (s *serviceSUT) FlushQueries() {}

// auditPlan is a short SingleStream plan against sut: about a thousand
// queries over 4,096 samples, so that a cache serves few of the reference
// run's samples and all but one of the audit run's.
func auditPlan(dir string, sut loadgen.SUT) benchmark.Plan {
	return benchmark.Plan{
		Custom:    &benchmark.Custom{SUT: sut, QSL: &loadgentest.QSL{Total: 4096}},
		Settings:  benchmark.Settings{Scenario: "SingleStream", Set: []string{"min_duration=1000", "min_query_count=200", "target_latency=1"}},
		OutputDir: dir,
		NoReport:  true,
		// No spinning before an issue: under synctest the clock moves
		// only when every goroutine waits.
		SpinWindow: -1,
	}
}

// TestTEST04 runs TEST04 on the run's own clock (synctest: the service
// times are exact): a SUT whose every answer takes 1 ms passes; the same
// SUT with a result cache answers the repeated sample at once and fails.
func TestTEST04(t *testing.T) {
	for _, tc := range []struct {
		cache bool
		pass  bool
	}{{false, true}, {true, false}} {
		dir := t.TempDir()
		var res *Result
		var err error
		synctest.Test(t, func(t *testing.T) {
			res, err = Run(context.Background(), TEST04, auditPlan(dir, &serviceSUT{service: time.Millisecond, cache: tc.cache}))
		})
		if err != nil {
			t.Fatalf("cache %v: %v", tc.cache, err)
		}
		if res.Pass != tc.pass {
			summary, _ := os.ReadFile(filepath.Join(dir, "performance", "run_1", "mlperf_log_summary.txt"))
			t.Errorf("cache %v: pass %v, want %v:\n%s\nreference summary:\n%s", tc.cache, res.Pass, tc.pass, res.Verification.Output, summary)
		}
		v, err := os.ReadFile(filepath.Join(dir, "TEST04", "verify_performance.txt"))
		if err != nil || string(v) != res.Verification.Output {
			t.Errorf("cache %v: verify_performance.txt %q, %v; want the verification's output", tc.cache, v, err)
		}
		for _, f := range []string{"performance/run_1/mlperf_log_summary.txt", "audit/mlperf_log_summary.txt", "audit/manifest.json",
			"TEST04/performance/run_1/mlperf_log_summary.txt", "TEST04/performance/run_1/mlperf_log_detail.txt", "audit.config"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("cache %v: %v", tc.cache, err)
			}
		}
		detail, _ := os.ReadFile(filepath.Join(dir, "audit", "mlperf_log_detail.txt"))
		if !strings.Contains(string(detail), `"effective_performance_issue_same", "value": true`) {
			t.Errorf("cache %v: the audit run's detail log does not show performance_issue_same", tc.cache)
		}
		checkWithMLPerf(t, dir, tc.pass)
	}
}

// checkWithMLPerf runs MLPerf's own TEST04 run_verification.py on the
// audit's folder (skipped without python3 or the compliance folder) and
// checks its verdict and that it wrote what aimeter wrote.
func checkWithMLPerf(t *testing.T, dir string, pass bool) {
	t.Helper()
	script, err := filepath.Abs("../../shared/peers/mlperf-inference/compliance/TEST04/run_verification.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("MLPerf's compliance folder is not here: %v", err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	out := t.TempDir()
	cmd := exec.Command(py, script, "-r", dir, "-c", filepath.Join(dir, "audit"), "-o", out)
	cmd.Dir = t.TempDir() // it writes verify_performance.txt in its working directory
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run_verification.py: %v\n%s", err, b)
	}
	if got := strings.Contains(string(b), "Performance check pass: True"); got != pass {
		t.Errorf("MLPerf's run_verification.py says pass %v, want %v:\n%s", got, pass, b)
	}
	theirs, err := os.ReadFile(filepath.Join(out, "TEST04", "verify_performance.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := os.ReadFile(filepath.Join(dir, "TEST04", "verify_performance.txt"))
	if string(theirs) != string(ours) {
		t.Errorf("verify_performance.txt differs from MLPerf's:\n--- MLPerf\n%s--- aimeter\n%s", theirs, ours)
	}
}
