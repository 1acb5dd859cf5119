package store_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"aimeter/store"
)

// crashEnv makes the test binary a child that ingests the bundle in
// $AIMETER_CRASH_BUNDLE into $AIMETER_CRASH_DSN over and over until killed.
const crashEnv = "AIMETER_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(crashEnv) == "1" {
		ctx := context.Background()
		s, err := store.Open(ctx, store.Options{DSN: os.Getenv("AIMETER_CRASH_DSN")})
		if err != nil {
			os.Exit(2)
		}
		for {
			if _, err := store.RecordBundle(ctx, s, os.Getenv("AIMETER_CRASH_BUNDLE")); err != nil {
				os.Exit(3)
			}
		}
	}
	os.Exit(m.Run())
}

// TestCrashLeavesNoHalfResult kills a process with SIGKILL while it ingests
// bundles, at several moments, and checks that every run the store holds
// afterwards has every file with its digest, and that no result directory
// is left without its run.
func TestCrashLeavesNoHalfResult(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	bundleDir := makeBundle(t, 0)
	dsn := filepath.Join(t.TempDir(), "results.db")
	ctx := context.Background()
	for i, after := range []time.Duration{150 * time.Millisecond, 230 * time.Millisecond, 310 * time.Millisecond, 390 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"=1", "AIMETER_CRASH_DSN="+dsn, "AIMETER_CRASH_BUNDLE="+bundleDir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		cmd.Process.Kill()
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("round %d: the child ended by itself: %v", i, err)
		}
	}
	s := openStore(t, store.Options{DSN: dsn})
	runs, err := s.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 {
		t.Fatal("no run was stored before the kills")
	}
	dirs := map[string]bool{}
	for _, r := range runs {
		if err := s.VerifyRun(ctx, r.ID); err != nil {
			t.Errorf("run %d: %v", r.ID, err)
		}
		dirs[filepath.Base(r.Dir)] = true
	}
	ents, err := os.ReadDir(filepath.Join(s.FilesDir(), store.LocalDir))
	if err != nil {
		t.Fatal(err)
	}
	orphans := 0
	for _, e := range ents {
		if !dirs[e.Name()] {
			orphans++
		}
	}
	// A kill between the rename and the commit can leave one complete
	// directory without a row per kill; never a row without its files.
	if orphans > 4 {
		t.Errorf("%d result directories without a run", orphans)
	}
	if n, err := s.VerifyChain(ctx); err != nil || n != int64(len(runs)) {
		t.Errorf("event chain: %d events for %d runs, %v", n, len(runs), err)
	}
	t.Logf("%d runs stored, %d orphan directories", len(runs), orphans)
}
