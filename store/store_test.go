package store_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
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
		// The spread is the successful latencies' own, worked out here
		// from the bundle's records by the textbook two-pass formula.
		b := must[*bundle.Bundle](t)(bundle.Read(dir))
		var lats []float64
		for rec := range b.Result.PassRecords(b.Result.ReportedPass()) {
			if rec.Status == loadgen.StatusOK {
				lats = append(lats, float64(rec.CompletedNs-rec.ScheduledNs))
			}
		}
		var sum, ss float64
		for _, v := range lats {
			sum += v
		}
		mean := sum / float64(len(lats))
		for _, v := range lats {
			ss += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(ss / float64(len(lats)-1))
		if lat.Count != int64(len(lats)) || lat.Mean == nil || math.Abs(*lat.Mean-mean) > 1e-9*mean ||
			lat.Stddev == nil || math.Abs(*lat.Stddev-sd) > 1e-9*max(sd, 1) {
			t.Errorf("latency_ns: count %d mean %v sd %v; the records give %d, %v, %v", lat.Count, lat.Mean, lat.Stddev, len(lats), mean, sd)
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
		if ents, _ := os.ReadDir(filepath.Join(s.FilesDir(), "nobody")); len(ents) != 0 {
			t.Errorf("a refused ingest left %v", ents)
		}
		// The same bundle again is found by its digest (a replayed upload).
		same := must[[]store.Run](t)(s.Runs(ctx, store.RunFilter{BundleDigest: run.BundleDigest}))
		if len(same) != 1 || same[0].ID != run.ID {
			t.Errorf("runs of digest %s: %+v", run.BundleDigest, same)
		}
		// A new token replaces the old one.
		if err := s.SetToken(ctx, "T-1", store.HashToken("new"), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TestItemByToken(ctx, "secret"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("old token: %v", err)
		}
		if it, err := s.TestItemByToken(ctx, "new"); err != nil || it.ID != "T-1" {
			t.Errorf("new token: %v", err)
		}
		evs := must[[]store.Event](t)(s.Events(ctx, store.EventFilter{TestItemID: "T-1"}))
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
		}
		want := []string{store.EventTestCreated, store.EventAttemptClaimed, store.EventAttemptClaimed, store.EventRunRecorded, store.EventRunStatus, store.EventTokenSet}
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

// Runs of the same SUT configuration and workload form one series; the
// newest is judged against its history with the stored thresholds.
func TestSeriesAndRegression(t *testing.T) {
	// The equal run is the first one's bundle again, copied: two real runs
	// of the same SUT differ by the machine's load (once 4× on a loaded CI
	// machine), which this test is not about.
	fast1, slow := makeBundle(t, time.Millisecond), makeBundle(t, 30*time.Millisecond)
	fast2 := filepath.Join(t.TempDir(), "again")
	if err := os.CopyFS(fast2, os.DirFS(fast1)); err != nil {
		t.Fatal(err)
	}
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := must[*store.Run](t)(store.RecordBundle(ctx, s, fast1))
		b := must[*store.Run](t)(store.RecordBundle(ctx, s, fast2))
		if a.SeriesKey != b.SeriesKey || a.SeriesKey == "" {
			t.Fatalf("series %q and %q", a.SeriesKey, b.SeriesKey)
		}
		series := must[[]store.Series](t)(s.AllSeries(ctx))
		if len(series) != 1 || series[0].Runs != 2 || series[0].LatestID != b.ID {
			t.Errorf("series %+v", series)
		}
		// The same figures as the run before: no change, no regression.
		fivePercent := []store.Threshold{{Limit: 5}}
		checks := must[[]store.Check](t)(s.CheckRun(ctx, b, fivePercent))
		if len(checks) != 1 || !checks[0].Judged || store.Regressed(checks) || checks[0].Change != 0 {
			t.Errorf("equal run: %+v", checks)
		}
		c := must[*store.Run](t)(store.RecordBundle(ctx, s, slow))
		if c.SeriesKey != a.SeriesKey {
			t.Fatalf("the slow run is in series %s, not %s", c.SeriesKey, a.SeriesKey)
		}
		// Store a per-series threshold and a default; the series' own wins.
		if err := s.SetThreshold(ctx, store.Threshold{Limit: 60}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetThreshold(ctx, store.Threshold{SeriesKey: c.SeriesKey, Limit: 50, Lookback: 2}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetThreshold(ctx, store.Threshold{SeriesKey: c.SeriesKey, Test: store.Welch}); err != nil {
			t.Fatal(err)
		}
		ts := must[[]store.Threshold](t)(s.Thresholds(ctx, c.SeriesKey))
		if len(ts) != 2 || ts[0].Limit != 50 && ts[1].Limit != 50 {
			t.Fatalf("thresholds %+v", ts)
		}
		checks = must[[]store.Check](t)(s.CheckRun(ctx, c, nil))
		if !store.Regressed(checks) {
			t.Errorf("a run 30× slower did not regress: %+v", checks)
		}
		for _, ch := range checks {
			if !ch.Judged || !ch.Regressed {
				t.Errorf("%s/%s: %+v", ch.Threshold.Test, ch.Threshold.Metric, ch)
			}
			if len(ch.Baseline) == 0 || ch.Baseline[0] != b.ID {
				t.Errorf("baseline %v, want newest first from %d", ch.Baseline, b.ID)
			}
		}
		if err := s.DeleteThreshold(ctx, c.SeriesKey, "latency_ns", store.Welch); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteThreshold(ctx, c.SeriesKey, "latency_ns", store.Welch); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

// A store reopened after its process ended (here: closed) has every run,
// and reopening applies no migration twice.
func TestReopen(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "sub", "results.db")
	ctx := context.Background()
	s := openStore(t, store.Options{DSN: dsn})
	run := must[*store.Run](t)(store.RecordBundle(ctx, s, makeBundle(t, 0)))
	s.Close()
	// Something an interrupted Ingest left in the staging directory is
	// swept on open.
	junk := filepath.Join(filepath.Dir(dsn), "results", ".staging", "x")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, store.Options{DSN: "sqlite:" + dsn})
	got := must[*store.Run](t)(s2.Run(ctx, run.ID))
	if got.Key != run.Key {
		t.Errorf("key %s, want %s", got.Key, run.Key)
	}
	if err := s2.VerifyRun(ctx, run.ID); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Errorf("staging left: %v", err)
	}
	var n int
	if err := s2.DB().QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n); err != nil || n != store.SchemaVersion() {
		t.Errorf("schema_version rows %d, %v", n, err)
	}
	// A changed stored file is found by VerifyRun.
	arts := must[[]store.Artifact](t)(s2.Artifacts(ctx, run.ID))
	if err := os.WriteFile(s2.Path(arts[0].Path), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s2.VerifyRun(ctx, run.ID); err == nil || !contains(err.Error(), arts[0].Name) {
		t.Errorf("VerifyRun = %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := store.Open(ctx, store.Options{DSN: "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"}); err == nil || !contains(err.Error(), "connect") {
		t.Errorf("unreachable server: %v", err)
	}
	if _, err := store.Open(ctx, store.Options{DSN: "sqlite:"}); err == nil {
		t.Error("empty SQLite path accepted")
	}
}

// Many ingests at once (the tester service receives uploads in parallel)
// all succeed, each run with its own directory and files, and the event
// chain stays one chain; of the copies of one bundle ingested at once for
// a test item, exactly one is stored and the others are refused as
// duplicates.
func TestConcurrentIngest(t *testing.T) {
	dir := makeBundle(t, 0)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.CreateTestItem(ctx, store.TestItem{ID: "load", RetestAllowance: 100}); err != nil {
			t.Fatal(err)
		}
		const n = 16
		var duplicates atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				opts := store.IngestOptions{}
				if i%2 == 0 {
					opts.TestItemID = "load"
				}
				_, err := s.Ingest(ctx, dir, opts)
				var dup *store.DuplicateBundleError
				switch {
				case opts.TestItemID != "" && errors.As(err, &dup):
					if !errors.Is(err, store.ErrDuplicate) || dup.RunID == 0 || dup.TestItemID != "load" {
						t.Errorf("duplicate refusal %v does not name the stored run", err)
					}
					duplicates.Add(1)
				case err != nil:
					t.Error(err)
				}
				if _, err := s.AppendEvent(ctx, store.Event{TestItemID: "load", Kind: store.EventUploadComplete}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		t.Logf("%d ingests in %v", n, time.Since(start))
		runs := must[[]store.Run](t)(s.Runs(ctx, store.RunFilter{}))
		if len(runs) != n/2+1 || duplicates.Load() != n/2-1 {
			t.Fatalf("%d runs and %d refused as duplicates, want %d and %d", len(runs), duplicates.Load(), n/2+1, n/2-1)
		}
		for _, r := range runs {
			if err := s.VerifyRun(ctx, r.ID); err != nil {
				t.Error(err)
			}
		}
		if c, err := s.VerifyChain(ctx); err != nil || c != n+n/2+2 {
			t.Errorf("chain %d, %v; want %d events", c, err, n+n/2+2)
		}
	})
}

// BenchmarkIngest records a small Offline bundle (about 70 records) over
// and over: the cost of storing one run, rows and files.
func BenchmarkIngest(b *testing.B) {
	dir := makeBundle(b, 0)
	for _, be := range []struct {
		name string
		dsn  string
	}{{"sqlite", filepath.Join(b.TempDir(), "results.db")}, {"postgres", os.Getenv("AIMETER_TEST_POSTGRES")}} {
		b.Run(be.name, func(b *testing.B) {
			if be.dsn == "" {
				b.Skip("AIMETER_TEST_POSTGRES is unset")
			}
			s, err := store.Open(context.Background(), store.Options{DSN: be.dsn, FilesDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			for b.Loop() {
				if _, err := store.RecordBundle(context.Background(), s, dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
