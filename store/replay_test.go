package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"aimeter/store"
)

// sharedDSNs returns, per backend, a fresh database that several Stores
// may open at once, as several service processes would.
func sharedDSNs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"sqlite": filepath.Join(t.TempDir(), "results.db")}
	if dsn := os.Getenv("AIMETER_TEST_POSTGRES"); dsn != "" {
		out["postgres"] = freshDatabase(t, dsn)
	} else if os.Getenv("AIMETER_REQUIRE_POSTGRES") == "1" {
		t.Fatal("AIMETER_REQUIRE_POSTGRES=1 but AIMETER_TEST_POSTGRES is empty: run scripts/start-postgres.sh")
	}
	return out
}

// Two Stores on one database (two processes' worth of connections) each
// try to store one bundle under fresh upload IDs, and two bundles under one
// upload ID, at the same moment: the database lets exactly one of each
// through, and refuses the others with ErrDuplicate naming the stored run.
// None wastes an attempt.
func TestReplayAcrossStores(t *testing.T) {
	same := makeBundle(t, 0)
	others := []string{makeBundle(t, 0), makeBundle(t, 0), makeBundle(t, 0), makeBundle(t, 0)}
	for name, dsn := range sharedDSNs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			files := t.TempDir()
			a := openStore(t, store.Options{DSN: dsn, FilesDir: files})
			b := openStore(t, store.Options{DSN: dsn, FilesDir: files})
			if _, err := a.CreateTestItem(ctx, store.TestItem{ID: "T-1", RetestAllowance: 5}); err != nil {
				t.Fatal(err)
			}
			stores := []*store.Store{a, b, a, b}
			var wg sync.WaitGroup
			idErrs := make([]error, len(stores))
			bundleErrs := make([]error, len(stores))
			for i, s := range stores {
				wg.Go(func() {
					_, idErrs[i] = s.Ingest(ctx, others[i], store.IngestOptions{TestItemID: "T-1", NextAttempt: true, UploadID: "upload-0123456789"})
				})
				wg.Go(func() {
					_, bundleErrs[i] = s.Ingest(ctx, same, store.IngestOptions{TestItemID: "T-1", NextAttempt: true, UploadID: fmt.Sprintf("fresh-upload-%04d", i)})
				})
			}
			wg.Wait()
			for what, errs := range map[string][]error{"upload ID": idErrs, "bundle": bundleErrs} {
				ok := 0
				for _, err := range errs {
					var spent *store.UploadSpentError
					var dup *store.DuplicateBundleError
					switch {
					case err == nil:
						ok++
					case what == "upload ID" && errors.As(err, &spent) && spent.RunID != 0 && spent.Digest != "":
					case what == "bundle" && errors.As(err, &dup) && dup.RunID != 0:
					default:
						t.Errorf("%s: %v, want ErrDuplicate naming the stored run", what, err)
					}
				}
				if ok != 1 {
					t.Errorf("%s: %d of %d stored, want exactly 1 (errors %v)", what, ok, len(errs), errs)
				}
			}
			runs := must[[]store.Run](t)(b.Runs(ctx, store.RunFilter{TestItemID: "T-1"}))
			if len(runs) != 2 {
				t.Fatalf("runs %+v, want two", runs)
			}
			it := must[*store.TestItem](t)(a.TestItem(ctx, "T-1"))
			if it.Attempts != 2 {
				t.Errorf("%d attempts claimed, want 2: a refused copy wasted one", it.Attempts)
			}
			// Once stored, a later copy is refused naming the run, and
			// so is the upload ID, when an upload begins and at Ingest.
			byDigest := map[string]int64{}
			for _, r := range runs {
				byDigest[r.BundleDigest] = r.ID
			}
			_, err := b.Ingest(ctx, same, store.IngestOptions{TestItemID: "T-1", NextAttempt: true})
			var dup *store.DuplicateBundleError
			if !errors.As(err, &dup) || byDigest[dup.Digest] != dup.RunID || dup.TestItemID != "T-1" {
				t.Errorf("second ingest: %v, want a duplicate naming its run", err)
			}
			var spent *store.UploadSpentError
			err = a.BeginUpload(ctx, "T-1", "upload-0123456789", 2)
			if !errors.As(err, &spent) || spent.RunID == 0 || byDigest[spent.Digest] != spent.RunID {
				t.Errorf("BeginUpload of a spent ID: %v, want an *UploadSpentError naming its run", err)
			}
			if err := a.BeginUpload(ctx, "T-1", "upload-never-used-0000", 2); err != nil {
				t.Errorf("BeginUpload of a new ID: %v", err)
			}
			// A local run of the same bundle is still recorded.
			if _, err := store.RecordBundle(ctx, a, same); err != nil {
				t.Errorf("local copy: %v", err)
			}
			if n, err := a.VerifyChain(ctx); err != nil {
				t.Errorf("chain after %d events: %v", n, err)
			}
		})
	}
}

// An upload whose ingest fails does not spend its upload ID, nor take an
// attempt: the same upload retried under the same ID is stored, once.
func TestFailedIngestSpendsNothing(t *testing.T) {
	dir := makeBundle(t, 0)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.CreateTestItem(ctx, store.TestItem{ID: "T-1"}); err != nil {
			t.Fatal(err)
		}
		opts := store.IngestOptions{TestItemID: "T-1", NextAttempt: true, UploadID: "upload-0123456789"}
		if err := s.BeginUpload(ctx, "T-1", opts.UploadID, 0); err != nil {
			t.Fatal(err)
		}
		// The files directory refuses the result directory.
		parent := s.Path("T-1")
		os.MkdirAll(filepath.Dir(parent), 0o755)
		if err := os.WriteFile(parent, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Ingest(ctx, dir, opts); err == nil {
			t.Fatal("the ingest succeeded with its directory blocked")
		}
		os.Remove(parent)
		if err := s.BeginUpload(ctx, "T-1", opts.UploadID, 0); err != nil {
			t.Fatalf("the ID after a failed ingest: %v", err)
		}
		run, err := s.Ingest(ctx, dir, opts)
		if err != nil {
			t.Fatalf("the retry: %v", err)
		}
		if run.Attempt != 1 {
			t.Errorf("the retry took attempt %d, want 1: the failed ingest used one", run.Attempt)
		}
		if err := s.VerifyRun(ctx, run.ID); err != nil {
			t.Error(err)
		}
	})
}

// NextAttempt takes the claimed attempt while no run holds it, then claims
// the next, and refuses past the allowance without storing anything.
func TestIngestNextAttempt(t *testing.T) {
	dirs := []string{makeBundle(t, 0), makeBundle(t, 0), makeBundle(t, 0)}
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.CreateTestItem(ctx, store.TestItem{ID: "T-1", RetestAllowance: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimAttempt(ctx, "T-1"); err != nil {
			t.Fatal(err)
		}
		for i, want := range []int{1, 2} {
			run, err := s.Ingest(ctx, dirs[i], store.IngestOptions{TestItemID: "T-1", NextAttempt: true})
			if err != nil {
				t.Fatal(err)
			}
			if run.Attempt != want {
				t.Errorf("run %d: attempt %d, want %d", i, run.Attempt, want)
			}
		}
		_, err := s.Ingest(ctx, dirs[2], store.IngestOptions{TestItemID: "T-1", NextAttempt: true})
		if !errors.Is(err, store.ErrRetestsExhausted) {
			t.Errorf("third run: %v, want ErrRetestsExhausted", err)
		}
		if runs := must[[]store.Run](t)(s.Runs(ctx, store.RunFilter{TestItemID: "T-1"})); len(runs) != 2 {
			t.Errorf("%d runs stored, want 2", len(runs))
		}
	})
}

// Migration 0002 on a database of version 1 fills uploads from the logged
// upload_received events, so an upload ID spent before the upgrade stays
// spent after it.
func TestMigration2KeepsSpentUploadIDs(t *testing.T) {
	for name, dsn := range sharedDSNs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			files := t.TempDir()
			s := openStore(t, store.Options{DSN: dsn, FilesDir: files})
			if _, err := s.CreateTestItem(ctx, store.TestItem{ID: "T-1"}); err != nil {
				t.Fatal(err)
			}
			// Version 1 logged the upload_received event alone.
			if _, err := s.AppendEvent(ctx, store.Event{TestItemID: "T-1", Kind: store.EventUploadReceived, Detail: []byte(`{"upload_id":"spent-before-0002"}`)}); err != nil {
				t.Fatal(err)
			}
			// Back to version 1: the events stay, migration 0002's
			// objects go.
			for _, q := range []string{`DROP INDEX runs_item_bundle`, `DROP TABLE uploads`, `DELETE FROM schema_version WHERE version = 2`} {
				if _, err := s.DB().ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			s = openStore(t, store.Options{DSN: dsn, FilesDir: files})
			if err := s.BeginUpload(ctx, "T-1", "spent-before-0002", 0); !errors.Is(err, store.ErrDuplicate) {
				t.Errorf("an upload ID spent before the upgrade: %v, want ErrDuplicate", err)
			}
			if err := s.BeginUpload(ctx, "T-1", "new-after-0002", 0); err != nil {
				t.Errorf("a new upload ID: %v", err)
			}
			if _, err := s.VerifyChain(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}
