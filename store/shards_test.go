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

// shardBundles makes two bundles of distinct digests that stand for
// shards: the store keeps a shard's files and rows and reads no shard
// record.
func shardBundles(t *testing.T) [2]string {
	t.Helper()
	return [2]string{makeBundle(t, 0), makeBundle(t, 0)}
}

// TestPutShard stores the two shards of a test: the first leaves it
// waiting for the other; the second completes it (and only it is told);
// the same bundle again, another bundle under a stored index, a spent
// upload ID and a shard of a closed test are each refused, storing
// nothing.
func TestPutShard(t *testing.T) {
	bs := shardBundles(t)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		must[*store.TestItem](t)(s.CreateTestItem(ctx, store.TestItem{ID: "T-1"}))
		opts := func(index int, uid string) store.ShardOptions {
			return store.ShardOptions{TestItemID: "T-1", Key: "k1", Count: 2, Index: index, ScheduleSHA256: "abc", UploadID: uid}
		}
		set, complete, err := s.PutShard(ctx, bs[0], opts(0, "up-0"))
		if err != nil || complete || set.State != store.ShardsWaiting || fmt.Sprint(set.Missing()) != "[1]" || len(set.Shards) != 1 || set.Shards[0].UploadID != "up-0" {
			t.Fatalf("first shard: %+v, %v, %v", set, complete, err)
		}
		if _, err := os.Stat(filepath.Join(s.Path(set.Shards[0].Dir), "manifest.json")); err != nil {
			t.Errorf("the shard's files are not in place: %v", err)
		}

		for _, row := range []struct {
			why   string
			dir   string
			opts  store.ShardOptions
			check func(err error) bool
		}{
			{"the same bundle again is a retry", bs[0], opts(0, "up-0b"), func(err error) bool {
				var e *store.ShardStoredError
				return errors.As(err, &e) && e.Index == 0 && e.Set.Key == "k1"
			}},
			{"another bundle under index 0 names the first upload", bs[1], opts(0, "up-0c"), func(err error) bool {
				var e *store.ShardIndexError
				return errors.As(err, &e) && e.First.UploadID == "up-0" && errors.Is(err, store.ErrDuplicate)
			}},
			{"an upload ID spent by shard 0", bs[1], opts(1, "up-0"), func(err error) bool {
				var e *store.UploadSpentError
				return errors.As(err, &e)
			}},
			{"a key that cannot name a directory", bs[1], store.ShardOptions{TestItemID: "T-1", Key: "../x", Count: 2, Index: 1}, func(err error) bool { return err != nil }},
			{"an index out of range", bs[1], store.ShardOptions{TestItemID: "T-1", Key: "k1", Count: 2, Index: 2}, func(err error) bool { return err != nil }},
		} {
			if _, _, err := s.PutShard(ctx, row.dir, row.opts); !row.check(err) {
				t.Errorf("%s: err = %v", row.why, err)
			}
		}
		if got, err := s.ShardSet(ctx, "T-1", "k1"); err != nil || len(got.Shards) != 1 {
			t.Fatalf("after the refusals: %+v, %v", got, err)
		}

		set, complete, err = s.PutShard(ctx, bs[1], opts(1, "up-1"))
		if err != nil || !complete || set.State != store.ShardsMerging || len(set.Missing()) != 0 {
			t.Fatalf("second shard: %+v, %v, %v", set, complete, err)
		}
		merging, err := s.ShardSets(ctx, "", store.ShardsMerging)
		if err != nil || len(merging) != 1 || merging[0].Key != "k1" {
			t.Fatalf("sets merging: %+v, %v", merging, err)
		}
		done, err := s.FinishShardSet(ctx, "T-1", "k1", store.ShardsFailed, 0, "the merge refused it")
		if err != nil || done.State != store.ShardsFailed || done.Reason != "the merge refused it" {
			t.Fatalf("finish: %+v, %v", done, err)
		}
		if _, _, err := s.PutShard(ctx, bs[1], store.ShardOptions{TestItemID: "T-1", Key: "k2", Count: 2, Index: 1}); err == nil {
			t.Error("a bundle stored as a shard of one test was stored as a shard of another")
		}
		// The key's set is closed; a third bundle is not needed to see it:
		// the closed check comes before the index's.
		if _, _, err := s.PutShard(ctx, shardCopy(t, bs[0]), opts(0, "up-x")); !errors.Is(err, store.ErrShardSetClosed) {
			t.Errorf("a shard of a failed test: err = %v, want ErrShardSetClosed", err)
		}
	})
}

// shardCopy is a copy of the bundle in dir with another manifest digest
// (a byte appended to the manifest's end, which JSON ignores).
func shardCopy(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(out, "manifest.json"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	return out
}

// TestPutShardLastTwoAtOnce stores the last two shards of a test of three
// at once, in many tests: exactly one of the two calls is told that it
// completed its test, every time. (Without the lock on the set's row,
// PostgreSQL's two transactions each count only their own shard besides
// the first, and neither completes.)
func TestPutShardLastTwoAtOnce(t *testing.T) {
	bs := shardBundles(t)
	third := makeBundle(t, 0)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for round := range 12 {
			item := fmt.Sprintf("T-%d", round)
			must[*store.TestItem](t)(s.CreateTestItem(ctx, store.TestItem{ID: item}))
			if _, _, err := s.PutShard(ctx, third, store.ShardOptions{TestItemID: item, Key: "k", Count: 3, Index: 0}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var completes [2]bool
			var errs [2]error
			start := make(chan struct{})
			for i := range 2 {
				wg.Go(func() {
					<-start
					_, completes[i], errs[i] = s.PutShard(ctx, bs[i], store.ShardOptions{TestItemID: item, Key: "k", Count: 3, Index: i + 1, UploadID: fmt.Sprintf("up-%d", i)})
				})
			}
			close(start)
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: %v, %v", round, errs[0], errs[1])
			}
			if completes[0] == completes[1] {
				t.Fatalf("round %d: completes %v: want exactly one", round, completes)
			}
			set, err := s.ShardSet(ctx, item, "k")
			if err != nil || set.State != store.ShardsMerging || len(set.Shards) != 3 {
				t.Fatalf("round %d: %+v, %v", round, set, err)
			}
		}
	})
}

// TestClaimShardAttempt: the shards of one test starting at once share one
// attempt (one claims, the others join); a shard of an index that started
// already under it, or one after the attempt holds a run, claims the next.
func TestClaimShardAttempt(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		must[*store.TestItem](t)(s.CreateTestItem(ctx, store.TestItem{ID: "T-1", RetestAllowance: 1}))
		var wg sync.WaitGroup
		attempts, joined, errs := make([]int, 3), make([]bool, 3), make([]error, 3)
		for i := range 3 {
			wg.Go(func() { attempts[i], joined[i], errs[i] = s.ClaimShardAttempt(ctx, "T-1", i, 3) })
		}
		wg.Wait()
		claims := 0
		for i := range 3 {
			if errs[i] != nil || attempts[i] != 1 {
				t.Fatalf("shard %d: attempt %d, %v", i, attempts[i], errs[i])
			}
			if !joined[i] {
				claims++
			}
		}
		if claims != 1 {
			t.Errorf("%d of the shards claimed an attempt, want 1", claims)
		}
		// Shard 0 again: a second run of the test, the next attempt.
		if a, j, err := s.ClaimShardAttempt(ctx, "T-1", 0, 3); err != nil || a != 2 || j {
			t.Errorf("shard 0 again: attempt %d, joined %v, %v", a, j, err)
		}
		// No retest left for a third.
		if _, _, err := s.ClaimShardAttempt(ctx, "T-1", 0, 3); !errors.Is(err, store.ErrRetestsExhausted) {
			t.Errorf("a third run: %v, want ErrRetestsExhausted", err)
		}
		// A shard of another count does not join.
		if _, _, err := s.ClaimShardAttempt(ctx, "T-1", 1, 4); !errors.Is(err, store.ErrRetestsExhausted) {
			t.Errorf("a shard of 4 under an attempt of shards of 3: %v, want a claim (refused: no retest left)", err)
		}
	})
}
