package store_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/store"
)

func TestIngestLocalRun(t *testing.T) {
	dir := makeBundle(t, 0)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		run, err := store.RecordBundle(ctx, s, dir)
		if err != nil {
			t.Fatal(err)
		}
		if run.ID == 0 || run.TestItemID != "" || run.Attempt != 1 || run.Status != store.StatusRecorded {
			t.Errorf("run = %+v", run)
		}
		if run.Scenario != "Offline" || run.VerdictWord == "" || run.HeadlineName == "" || run.HeadlineValue <= 0 {
			t.Errorf("scenario %q verdict %q headline %q %v", run.Scenario, run.VerdictWord, run.HeadlineName, run.HeadlineValue)
		}
		got := must[*store.Run](t)(s.Run(ctx, run.ID))
		if got.Key != run.Key || got.SeriesKey != run.SeriesKey || got.BundleDigest != run.BundleDigest || string(got.Result) != string(run.Result) {
			t.Errorf("read back %+v\nwant %+v", got, run)
		}
		// Every manifest file, and the manifest, is an artifact whose
		// bytes are in the run's own directory with the recorded digest.
		m := must[*bundle.Manifest](t)(bundle.ReadManifest(dir))
		arts := must[[]store.Artifact](t)(s.Artifacts(ctx, run.ID))
		if len(arts) != len(m.Files)+1 {
			t.Fatalf("%d artifacts for %d manifest files", len(arts), len(m.Files))
		}
		if _, err := bundle.Read(s.Path(run.Dir)); err != nil {
			t.Errorf("the stored copy is not a valid bundle: %v", err)
		}
		for _, a := range arts {
			if _, err := os.Stat(s.Path(a.Path)); err != nil {
				t.Errorf("artifact %s: %v", a.Name, err)
			}
		}
		// The metrics: every number of result.json, and the latency
		// distribution with its spread.
		ms := must[[]store.Metric](t)(s.Metrics(ctx, run.ID))
		byName := map[string]store.Metric{}
		for _, m := range ms {
			byName[m.Name] = m
		}
		for _, name := range []string{"headline", "latency_ns", "latency_ns.p99", "samples.ok", "samples.issued"} {
			if _, ok := byName[name]; !ok {
				t.Errorf("no metric %s in %v", name, ms)
			}
		}
		lat := byName["latency_ns"]
		if lat.Count == 0 || lat.Stddev == nil || lat.Mean == nil || lat.P99 == nil || lat.Better != store.Lower {
			t.Errorf("latency_ns = %+v", lat)
		}
		if byName["headline"].Better != store.Higher {
			t.Errorf("Offline headline better = %q", byName["headline"].Better)
		}
		evs := must[[]store.Event](t)(s.Events(ctx, store.EventFilter{RunID: run.ID}))
		if len(evs) != 1 || evs[0].Kind != store.EventRunRecorded {
			t.Errorf("events %+v", evs)
		}
		runs := must[[]store.Run](t)(s.Runs(ctx, store.RunFilter{Local: true}))
		if len(runs) != 1 || runs[0].ID != run.ID {
			t.Errorf("runs %+v", runs)
		}
	})
}

// A bundle whose file changed after the run wrote it is refused, and leaves
// nothing behind: no row, no directory.
func TestIngestRefusesAlteredBundle(t *testing.T) {
	dir := makeBundle(t, 0)
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte of settings.json after reading: the copy's digest
	// check catches what bundle.Read could not.
	p := filepath.Join(dir, bundle.SettingsFile)
	data := must[[]byte](t)(os.ReadFile(p))
	data[len(data)/2] ^= 1
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.Ingest(ctx, dir, store.IngestOptions{Bundle: b})
		if err == nil || !contains(err.Error(), bundle.SettingsFile) {
			t.Fatalf("err = %v, want one naming %s", err, bundle.SettingsFile)
		}
		if _, err := s.Ingest(ctx, dir, store.IngestOptions{}); err == nil {
			t.Fatal("bundle.Read accepted a changed file")
		}
		runs := must[[]store.Run](t)(s.Runs(ctx, store.RunFilter{}))
		if len(runs) != 0 {
			t.Errorf("%d runs stored", len(runs))
		}
		ents, _ := os.ReadDir(filepath.Join(s.FilesDir(), store.LocalDir))
		if len(ents) != 0 {
			t.Errorf("result directories left: %v", ents)
		}
	})
}

func TestTestItemsAndAttempts(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		it, err := s.CreateTestItem(ctx, store.TestItem{
			ID: "T-1", Party: "ACME", Info: []byte(`{"model":"resnet50"}`), RetestAllowance: 1,
			PublicKey: pub, TokenHash: store.HashToken("secret"), ExpiresAt: time.Now().Add(time.Hour),
		})
		if err != nil {
			t.Fatal(err)
		}
		if it.Status != "registered" {
			t.Errorf("status %q", it.Status)
		}
		got, err := s.TestItemByToken(ctx, "secret")
		if err != nil || got.ID != "T-1" || !got.PublicKey.Equal(pub) || got.Party != "ACME" {
			t.Fatalf("by token: %+v, %v", got, err)
		}
		if _, err := s.TestItemByToken(ctx, "wrong"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("wrong token: %v", err)
		}
		if _, err := s.CreateTestItem(ctx, store.TestItem{ID: "T-1"}); err == nil {
			t.Error("a second item with the same ID was stored")
		}
		// One first attempt and one retest; the third claim is refused,
		// also when claims race.
		var wg sync.WaitGroup
		errs := make([]error, 5)
		for i := range errs {
			wg.Go(func() { _, errs[i] = s.ClaimAttempt(ctx, "T-1") })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, store.ErrRetestsExhausted):
				t.Errorf("claim: %v", err)
			}
		}
		if ok != 2 {
			t.Errorf("%d claims succeeded, want 2", ok)
		}
		got = must[*store.TestItem](t)(s.TestItem(ctx, "T-1"))
		if got.Attempts != 2 || got.RetestsUsed() != 1 {
			t.Errorf("attempts %d retests used %d", got.Attempts, got.RetestsUsed())
		}
		// An expired item.
		_, err = s.CreateTestItem(ctx, store.TestItem{ID: "T-2", TokenHash: store.HashToken("old"), ExpiresAt: time.Now().Add(-time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.TestItemByToken(ctx, "old"); !errors.Is(err, store.ErrExpired) {
			t.Errorf("expired token: %v", err)
		}
		if _, err := s.ClaimAttempt(ctx, "T-2"); !errors.Is(err, store.ErrExpired) {
			t.Errorf("expired claim: %v", err)
		}
		// A run of the item goes into the item's own directory.
		run, err := s.Ingest(ctx, makeBundle(t, 0), store.IngestOptions{TestItemID: "T-1"})
		if err != nil {
			t.Fatal(err)
		}
		if run.Attempt != 2 || filepath.Dir(filepath.FromSlash(run.Dir)) != "T-1" {
			t.Errorf("attempt %d dir %s", run.Attempt, run.Dir)
		}
		if err := s.SetRunStatus(ctx, run.ID, store.StatusVerified, "recomputed"); err != nil {
			t.Fatal(err)
		}
		got2 := must[*store.Run](t)(s.Run(ctx, run.ID))
		if got2.Status != store.StatusVerified || got2.StatusReason != "recomputed" {
			t.Errorf("status %q %q", got2.Status, got2.StatusReason)
		}
		if _, err := s.Ingest(ctx, makeBundle(t, 0), store.IngestOptions{TestItemID: "nobody"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown item: %v", err)
		}
		evs := must[[]store.Event](t)(s.Events(ctx, store.EventFilter{TestItemID: "T-1"}))
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
		}
		want := []string{store.EventTestCreated, store.EventAttemptClaimed, store.EventAttemptClaimed, store.EventRunRecorded, store.EventRunStatus}
		if len(kinds) != len(want) {
			t.Fatalf("events %v, want %v", kinds, want)
		}
		for i := range want {
			if kinds[i] != want[i] {
				t.Errorf("events %v, want %v", kinds, want)
				break
			}
		}
	})
}

func TestEventChain(t *testing.T) {
	// Each kind of later edit is found, at the row edited, in a chain
	// appended to concurrently.
	edits := []struct {
		name, sql, reason string
		seq               int64
	}{
		{"untouched", "", "", 0},
		{"a detail rewritten", `UPDATE events SET detail = '{"x":1}' WHERE seq = 5`, "edited", 5},
		{"a time moved", `UPDATE events SET at = at + 1 WHERE seq = 7`, "edited", 7},
		{"a row removed", `DELETE FROM events WHERE seq = 9`, "removed", 10},
		{"a row's kind and hash rewritten", `UPDATE events SET kind = 'test_end', hash = 'ab' WHERE seq = 3`, "edited", 3},
		{"a row replaced with a valid-looking link", `UPDATE events SET prev_hash = 'cd' WHERE seq = 12`, "prev_hash", 12},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, s *store.Store) {
				ctx := context.Background()
				var wg sync.WaitGroup
				for i := range 20 {
					wg.Go(func() {
						if _, err := s.AppendEvent(ctx, store.Event{TestItemID: "x", Kind: store.EventTestStart, Attempt: i}); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				if e.sql == "" {
					if n, err := s.VerifyChain(ctx); err != nil || n != 20 {
						t.Fatalf("VerifyChain = %d, %v", n, err)
					}
					return
				}
				if _, err := s.DB().ExecContext(ctx, e.sql); err != nil {
					t.Fatal(err)
				}
				_, err := s.VerifyChain(ctx)
				var ce *store.ChainError
				if !errors.As(err, &ce) || ce.Seq != e.seq || !contains(ce.Reason, e.reason) {
					t.Errorf("VerifyChain = %v, want a break at seq %d (%s)", err, e.seq, e.reason)
				}
			})
		})
	}
}
