package store_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/store"
)

// crashEnv makes the test binary a child that ingests the bundle in
// $AIMETER_CRASH_BUNDLE into $AIMETER_CRASH_DSN over and over until killed
// (crashEnv=1), or once as a run of test item T-1 under upload ID
// crashUploadID, stopping just before the commit after writing the run's
// directory to $AIMETER_CRASH_PAUSED (crashEnv=pause).
const crashEnv = "AIMETER_STORE_CRASH_CHILD"

const crashUploadID = "upload-killed-0001"

func TestMain(m *testing.M) {
	if os.Getenv(crashEnv) == "pause" {
		ctx := context.Background()
		s, err := store.Open(ctx, store.Options{DSN: os.Getenv("AIMETER_CRASH_DSN"), FilesDir: os.Getenv("AIMETER_CRASH_FILES"),
			BeforeCommit: func(ctx context.Context, run *store.Run) error {
				os.WriteFile(os.Getenv("AIMETER_CRASH_PAUSED"), []byte(run.Dir), 0o644)
				select {} // until killed
			}})
		if err != nil {
			os.Exit(2)
		}
		s.Ingest(ctx, os.Getenv("AIMETER_CRASH_BUNDLE"), store.IngestOptions{TestItemID: "T-1", NextAttempt: true, UploadID: crashUploadID})
		os.Exit(3)
	}
	if os.Getenv(crashEnv) == "1" {
		ctx := context.Background()
		s, err := store.Open(ctx, store.Options{DSN: os.Getenv("AIMETER_CRASH_DSN")})
		if err != nil {
			os.Exit(2)
		}
		progress, err := os.OpenFile(os.Getenv("AIMETER_CRASH_PROGRESS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			os.Exit(2)
		}
		for {
			if _, err := store.RecordBundle(ctx, s, os.Getenv("AIMETER_CRASH_BUNDLE")); err != nil {
				os.Exit(3)
			}
			progress.Write([]byte("stored\n"))
		}
	}
	os.Exit(m.Run())
}

// TestCrashLeavesNoHalfResult kills a process with SIGKILL while it ingests
// bundles, at several moments, and checks that every run the store holds
// afterwards has every file with its digest, and that no result directory
// is left without its run once the store is opened again.
func TestCrashLeavesNoHalfResult(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	bundleDir := makeBundle(t, 0)
	dsn := filepath.Join(t.TempDir(), "results.db")
	ctx := context.Background()
	progress := filepath.Join(t.TempDir(), "progress")
	stored := func() int {
		b, _ := os.ReadFile(progress)
		return strings.Count(string(b), "\n")
	}
	for i, after := range []time.Duration{0, 17 * time.Millisecond, 29 * time.Millisecond, 41 * time.Millisecond, 53 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"=1", "AIMETER_CRASH_DSN="+dsn, "AIMETER_CRASH_BUNDLE="+bundleDir, "AIMETER_CRASH_PROGRESS="+progress)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Each round stores a run at least (whatever the machine's
		// speed), then is killed at a moment of a later ingest.
		for n, deadline := stored(), time.Now().Add(60*time.Second); stored() == n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("round %d: the child stored nothing in 60 s", i)
			}
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
	// A kill between the rename and the commit leaves a complete
	// directory without a row, which Open removes.
	if len(runs) < stored() {
		t.Errorf("%d runs stored, but the children reported %d", len(runs), stored())
	}
	if orphans > 0 {
		t.Errorf("%d result directories without a run", orphans)
	}
	if n, err := s.VerifyChain(ctx); err != nil || n != int64(len(runs)) {
		t.Errorf("event chain: %d events for %d runs, %v", n, len(runs), err)
	}
	t.Logf("%d runs stored, %d orphan directories", len(runs), orphans)
}

// TestKilledBeforeCommit kills a process with SIGKILL at the last moment of
// an ingest of a test item's run (every row written, the result directory
// in place, the transaction not committed), on each database, and checks
// that nothing of it remains once the store is opened again: no run, no
// event, no attempt, no result directory, no staging directory, the upload
// ID unspent; and that the same ingest then stores the run exactly once.
func TestKilledBeforeCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	bundleDir := makeBundle(t, 0)
	for name, dsn := range sharedDSNs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			files := t.TempDir()
			s := openStore(t, store.Options{DSN: dsn, FilesDir: files})
			if _, err := s.CreateTestItem(ctx, store.TestItem{ID: "T-1"}); err != nil {
				t.Fatal(err)
			}
			events := must[[]store.Event](t)(s.Events(ctx, store.EventFilter{}))
			s.Close()

			paused := filepath.Join(t.TempDir(), "paused")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashEnv+"=pause", "AIMETER_CRASH_DSN="+dsn, "AIMETER_CRASH_FILES="+files,
				"AIMETER_CRASH_BUNDLE="+bundleDir, "AIMETER_CRASH_PAUSED="+paused)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var killedDir string
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if b, err := os.ReadFile(paused); err == nil {
					killedDir = string(b)
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the child never reached the commit")
				}
			}
			if _, err := os.Stat(filepath.Join(files, filepath.FromSlash(killedDir))); err != nil {
				t.Fatalf("the result directory is not in place before the commit: %v", err)
			}
			cmd.Process.Kill()
			cmd.Wait()

			s = openStore(t, store.Options{DSN: dsn, FilesDir: files})
			if runs := must[[]store.Run](t)(s.Runs(ctx, store.RunFilter{})); len(runs) != 0 {
				t.Errorf("%d runs after the kill", len(runs))
			}
			if after := must[[]store.Event](t)(s.Events(ctx, store.EventFilter{})); len(after) != len(events) {
				t.Errorf("%d events after the kill, %d before", len(after), len(events))
			}
			if it := must[*store.TestItem](t)(s.TestItem(ctx, "T-1")); it.Attempts != 0 {
				t.Errorf("the killed ingest claimed %d attempts", it.Attempts)
			}
			if _, err := os.Stat(filepath.Join(files, filepath.FromSlash(killedDir))); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the killed ingest's result directory %s remains: %v", killedDir, err)
			}
			if ents, _ := os.ReadDir(filepath.Join(files, ".staging")); len(ents) != 0 {
				t.Errorf("%d entries in the staging directory, want none: the dead store's are swept, and the open one has ingested nothing", len(ents))
			}
			if err := s.BeginUpload(ctx, "T-1", crashUploadID, 0); err != nil {
				t.Errorf("the killed ingest spent its upload ID: %v", err)
			}
			run, err := s.Ingest(ctx, bundleDir, store.IngestOptions{TestItemID: "T-1", NextAttempt: true, UploadID: crashUploadID})
			if err != nil {
				t.Fatalf("the retry: %v", err)
			}
			if run.Attempt != 1 {
				t.Errorf("the retry stored attempt %d, want 1", run.Attempt)
			}
			if err := s.VerifyRun(ctx, run.ID); err != nil {
				t.Error(err)
			}
			_, err = s.Ingest(ctx, bundleDir, store.IngestOptions{TestItemID: "T-1", NextAttempt: true, UploadID: crashUploadID})
			var dup *store.DuplicateBundleError
			if !errors.As(err, &dup) || dup.RunID != run.ID {
				t.Errorf("a second retry: %v, want a duplicate of run %d", err, run.ID)
			}
			if ents, _ := os.ReadDir(filepath.Join(files, "T-1")); len(ents) != 1 {
				t.Errorf("%d result directories of T-1, want 1", len(ents))
			}
			if _, err := s.VerifyChain(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}
