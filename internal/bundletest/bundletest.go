// Package bundletest makes small real run bundles for tests: a short run
// against the null SUT through benchmark.Run, made once per test binary
// and copied into each test's own directory.
package bundletest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/gbt"
)

// Kind chooses the run.
type Kind int

const (
	// MLPerf is a Server-scenario run of about 0.1 s at 2,000 samples/s.
	MLPerf Kind = iota
	// GBT is a GB/T 45087 inference test in arrival mode 2 (Poisson) of
	// 0.2 s at 1,000 jobs/s.
	GBT
)

var (
	mu    sync.Mutex
	cache = map[Kind]string{}
	root  string
)

// Copy returns a fresh copy of the bundle of kind k in a directory of t's
// own ("run" under t.TempDir()); the run itself happens once per process.
func Copy(t testing.TB, k Kind) string {
	t.Helper()
	src := Source(t, k)
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Source returns the shared directory of the bundle of kind k, running the
// test the first time; callers must not change it.
func Source(t testing.TB, k Kind) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if d, ok := cache[k]; ok {
		return d
	}
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "bundletest"); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, filepath.Base(t.Name())+"-"+[]string{"mlperf", "gbt"}[k])
	if err := Make(dir, k); err != nil {
		t.Fatal(err)
	}
	cache[k] = dir
	return dir
}

// Make runs the test of kind k and writes its bundle into dir.
func Make(dir string, k Kind) error {
	p := benchmark.Plan{OutputDir: dir}
	switch k {
	case MLPerf:
		p.Settings = benchmark.Settings{Scenario: "Server", Set: []string{
			"target_qps=2000", "min_duration=100", "min_query_count=100",
		}}
	case GBT:
		p.GBT = &benchmark.GBT{Input: gbt.PlanInput{
			Arrival:       gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 1000, Duration: 200 * time.Millisecond},
			LossThreshold: 0.01,
		}}
	}
	_, err := benchmark.Run(context.Background(), p)
	return err
}

// Cleanup removes the shared bundles; call it from TestMain after m.Run.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if root != "" {
		os.RemoveAll(root)
	}
	root, cache = "", map[Kind]string{}
}
