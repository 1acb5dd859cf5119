package tester_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/merge"
	"aimeter/shard"
	"aimeter/store"
	"aimeter/sut"
	"aimeter/tester"
)

const nShards = 3

// shardRuns are real shard bundles of one test, made once per test binary
// by the run library (benchmark.Run with a shard setting): nShards shards
// of an MLPerf Server test of the null SUT, a second run of shard 0 (the
// same shard of the same test: another bundle, the same index), and shard
// 1 of the test with another accuracy-log seed (the same schedule, so the
// same key, but another test to the merge).
type shardRuns struct {
	shards []string
	again0 string
	other1 string
}

var (
	shardRunsOnce sync.Once
	shardRunsVal  *shardRuns
	shardRunsErr  error
)

func shardPlan(dir string, index int, extra ...string) benchmark.Plan {
	set := append([]string{"target_qps=2000", "min_duration=100", "min_query_count=1"}, extra...)
	return benchmark.Plan{
		SUT:       sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		Settings:  benchmark.Settings{Scenario: "Server", Set: set},
		OutputDir: dir, Shard: &benchmark.Shard{Index: index, Count: nShards},
	}
}

func makeShards(t *testing.T) *shardRuns {
	t.Helper()
	shardRunsOnce.Do(func() {
		root, err := os.MkdirTemp("", "tester-shards-")
		if err != nil {
			shardRunsErr = err
			return
		}
		r := &shardRuns{}
		run := func(name string, p benchmark.Plan) string {
			if shardRunsErr != nil {
				return ""
			}
			if _, err := benchmark.Run(context.Background(), p); err != nil {
				shardRunsErr = fmt.Errorf("%s: %w", name, err)
			}
			return p.OutputDir
		}
		for i := range nShards {
			r.shards = append(r.shards, run(fmt.Sprintf("shard %d", i), shardPlan(filepath.Join(root, fmt.Sprint("shard-", i)), i)))
		}
		r.again0 = run("shard 0 again", shardPlan(filepath.Join(root, "again-0"), 0))
		r.other1 = run("shard 1 of another test", shardPlan(filepath.Join(root, "other-1"), 1, "accuracy_log_rng_seed=12345"))
		shardRunsVal = r
	})
	if shardRunsErr != nil {
		t.Fatal(shardRunsErr)
	}
	return shardRunsVal
}

func keyOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := shard.Of(b)
	if !rec.Sharded() {
		t.Fatalf("%s is no shard", dir)
	}
	return tester.ShardKey(rec)
}

func (p *party) shardSet(t *testing.T, key string) *tester.ShardSetView {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.client.BaseURL+"/api/v1/tests/"+p.reg.TestID+"/shards/"+key, nil)
	req.Header.Set("Authorization", "Bearer "+p.reg.Token)
	resp, err := p.client.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET shards/%s: %s", key, resp.Status)
	}
	var v tester.ShardSetView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func itemRuns(t *testing.T, s *service, item string) []store.Run {
	t.Helper()
	runs, err := s.st.Runs(context.Background(), store.RunFilter{TestItemID: item})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestShardedTest uploads the shards of one test (each with Client.Submit,
// as `aimeter submit` does) on each store: a shard is stored as a shard,
// not listed as a result, and the GET endpoint says which shards are
// missing; the same shard index from another bundle is refused naming the
// first upload; the same bundle again is answered as stored; the last two
// shards sent at once are merged exactly once, into one run equal to
// `aimeter merge` of the same shards, which names its shards.
func TestShardedTest(t *testing.T) {
	sr := makeShards(t)
	key := keyOf(t, sr.shards[0])
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := newService(t, b)
			p := s.register(t, 0, "")

			rep, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[0], p.key)
			if err != nil {
				t.Fatal(err)
			}
			if rep.RunID != 0 || rep.Status != tester.ShardStatus || rep.Shard == nil || rep.Shard.Key != key || rep.Shard.Index != 0 ||
				rep.Shard.State != store.ShardsWaiting || fmt.Sprint(rep.Shard.Missing) != "[1 2]" {
				t.Fatalf("first shard's reply: %+v, shard %+v", rep, rep.Shard)
			}
			v := p.shardSet(t, key)
			if fmt.Sprint(v.Arrived) != "[0]" || fmt.Sprint(v.Missing) != "[1 2]" || v.Summary != "waiting for shards 1, 2 (1 of 3 arrived)" || v.RunID != 0 {
				t.Errorf("GET after shard 0: arrived %v, missing %v, %q", v.Arrived, v.Missing, v.Summary)
			}
			if runs := itemRuns(t, s, p.reg.TestID); len(runs) != 0 {
				t.Errorf("a shard is listed as a result: %d runs", len(runs))
			}
			if page := s.dashboardGet(t, "/tests/"+p.reg.TestID); !strings.Contains(page, "waiting for shards 1, 2") || strings.Contains(page, `href="/runs/`) {
				t.Errorf("the test item's page does not show the test waiting, or shows a run")
			}
			firstUpload := v.Shards[0].UploadID

			// Another bundle of shard 0: refused, naming the index and
			// the first upload.
			_, err = p.client.Submit(ctx, p.reg.TestID, sr.again0, p.key)
			refusedWith(t, err, http.StatusConflict, "shard 0 of test "+key+" was uploaded already: by upload "+firstUpload)

			// The same bundle again (a retry): stored already.
			rep, err = p.client.Submit(ctx, p.reg.TestID, sr.shards[0], p.key)
			if err != nil || !rep.StoredAlready || rep.Shard == nil || rep.Shard.Index != 0 {
				t.Fatalf("retry of shard 0: %+v, %v", rep, err)
			}

			// The last two at once.
			var wg sync.WaitGroup
			reps := make([]*tester.UploadReply, 2)
			errs := make([]error, 2)
			for i := range 2 {
				wg.Go(func() { reps[i], errs[i] = p.client.Submit(ctx, p.reg.TestID, sr.shards[i+1], p.key) })
			}
			wg.Wait()
			var merged *tester.UploadReply
			for i, err := range errs {
				if err != nil {
					t.Fatalf("shard %d: %v", i+1, err)
				}
				if reps[i].RunID != 0 {
					if merged != nil {
						t.Fatalf("both last shards' replies name a run: %d and %d", merged.RunID, reps[i].RunID)
					}
					merged = reps[i]
				}
			}
			if merged == nil {
				t.Fatalf("neither last shard's reply names the merged run: %+v %+v", reps[0].Shard, reps[1].Shard)
			}
			runs := itemRuns(t, s, p.reg.TestID)
			if len(runs) != 1 || runs[0].ID != merged.RunID || runs[0].Attempt != 1 || runs[0].Status != store.StatusVerified {
				t.Fatalf("runs after the merge: %+v", runs)
			}
			v = p.shardSet(t, key)
			if v.State != store.ShardsMerged || v.RunID != merged.RunID || len(v.Missing) != 0 || len(v.Shards) != nShards {
				t.Errorf("GET after the merge: %+v", v)
			}

			// The stored run is the merge `aimeter merge` makes of the
			// same shards: the same result.json.
			wantDir := filepath.Join(t.TempDir(), "merged")
			if _, err := merge.Write(ctx, sr.shards, wantDir, merge.Options{}); err != nil {
				t.Fatal(err)
			}
			wantResult, _ := os.ReadFile(filepath.Join(wantDir, "result.json"))
			gotResult, err := os.ReadFile(filepath.Join(s.st.Path(runs[0].Dir), "result.json"))
			if err != nil || len(wantResult) == 0 || string(gotResult) != string(wantResult) {
				t.Errorf("merged run's result.json differs from aimeter merge's (%v):\n%s\nwant\n%s", err, gotResult, wantResult)
			}
			got, err := derived.Read(s.st.Path(runs[0].Dir))
			if err != nil {
				t.Fatal(err)
			}
			m := shard.MergeOf(got)
			if m == nil || len(m.Shards) != nShards {
				t.Fatalf("merged run's merge.json: %+v", m)
			}
			for i, sh := range m.Shards {
				if sh.ManifestSHA256 != v.Shards[i].BundleDigest {
					t.Errorf("merge.json's shard %d digest %s, stored shard's %s", i, sh.ManifestSHA256, v.Shards[i].BundleDigest)
				}
			}

			// The run's page names its shards.
			page := s.dashboardGet(t, fmt.Sprintf("/runs/%d", merged.RunID))
			for _, sh := range v.Shards {
				if !strings.Contains(page, sh.UploadID) || !strings.Contains(page, sh.BundleDigest) {
					t.Errorf("the merged run's page lacks shard %d (%s)", sh.Index, sh.UploadID)
				}
			}

			// A shard of the closed test is refused.
			_, err = p.client.Submit(ctx, p.reg.TestID, sr.again0, p.key)
			refusedWith(t, err, http.StatusConflict, "the test is closed")
		})
	}
}

// TestShardOfAnotherTest: a shard with the same schedule (so the same key)
// but another accuracy-log seed is refused with the merge's error naming
// it, and stores nothing.
func TestShardOfAnotherTest(t *testing.T) {
	sr := makeShards(t)
	key := keyOf(t, sr.shards[0])
	if k := keyOf(t, sr.other1); k != key {
		t.Fatalf("the other test's shard has key %s, want the same schedule's %s", k, key)
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := newService(t, b)
			p := s.register(t, 0, "")
			if _, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[0], p.key); err != nil {
				t.Fatal(err)
			}
			_, err := p.client.Submit(ctx, p.reg.TestID, sr.other1, p.key)
			refusedWith(t, err, http.StatusUnprocessableEntity, "shard 1 is not a part of test "+key)
			refusedWith(t, err, http.StatusUnprocessableEntity, "seeds differ from shard 0's")
			if v := p.shardSet(t, key); fmt.Sprint(v.Arrived) != "[0]" {
				t.Errorf("the refused shard was stored: arrived %v", v.Arrived)
			}
			// The right shard 1 is still taken.
			if rep, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[1], p.key); err != nil || rep.Shard.State != store.ShardsWaiting {
				t.Fatalf("shard 1 after the refusal: %+v, %v", rep, err)
			}
		})
	}
}

// TestMergedResultFailsRecomputation: a merged bundle whose claims its
// records do not support (result.json edited after the merge) is refused:
// the last upload gets 422, the test is failed with the reason, and no run
// is stored.
func TestMergedResultFailsRecomputation(t *testing.T) {
	sr := makeShards(t)
	key := keyOf(t, sr.shards[0])
	ctx := context.Background()
	s := newService(t, backends(t)[0])
	tester.SetShardHooks(s.srv, nil, func(dir string) { rewrite(t, dir, "result.json", betterP99) })
	p := s.register(t, 0, "")
	for i := range nShards - 1 {
		if _, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[i], p.key); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[nShards-1], p.key)
	refusedWith(t, err, http.StatusUnprocessableEntity, "the merged result fails recomputation")
	v := p.shardSet(t, key)
	if v.State != store.ShardsFailed || !strings.Contains(v.Reason, "the merged result fails recomputation") {
		t.Errorf("set after a failed merge: %s, %q", v.State, v.Reason)
	}
	if runs := itemRuns(t, s, p.reg.TestID); len(runs) != 0 {
		t.Errorf("%d runs stored of a refused merge", len(runs))
	}
}

// TestShardsSurviveRestart: a service stopped after the last shard was
// stored but before it merged (its merge fails as a crash would) keeps the
// shards; the next service merges them at start (ResumeShardMerges).
func TestShardsSurviveRestart(t *testing.T) {
	sr := makeShards(t)
	key := keyOf(t, sr.shards[0])
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, dataDir := b.dsn(t), t.TempDir()
			s := start(t, dsn, dataDir)
			tester.SetShardHooks(s.srv, func(string) error { return errors.New("killed") }, nil)
			p := s.register(t, 0, "")
			p.client.RetryFor = -1 // a 503 is answered to the last shard: no retry here
			for i := range nShards - 1 {
				if _, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[i], p.key); err != nil {
					t.Fatal(err)
				}
			}
			_, err := p.client.Submit(ctx, p.reg.TestID, sr.shards[nShards-1], p.key)
			refusedWith(t, err, http.StatusServiceUnavailable, "killed")
			if v := p.shardSet(t, key); v.State != store.ShardsMerging {
				t.Fatalf("set before the restart: %s", v.State)
			}
			s.stop()

			s = start(t, dsn, dataDir)
			if runs := itemRuns(t, s, p.reg.TestID); len(runs) != 0 {
				t.Fatalf("runs before the resumed merge: %d", len(runs))
			}
			if err := s.srv.ResumeShardMerges(ctx); err != nil {
				t.Fatal(err)
			}
			runs := itemRuns(t, s, p.reg.TestID)
			if len(runs) != 1 {
				t.Fatalf("runs after the resumed merge: %d", len(runs))
			}
			set, err := s.st.ShardSet(ctx, p.reg.TestID, key)
			if err != nil || set.State != store.ShardsMerged || set.RunID != runs[0].ID {
				t.Fatalf("set after the resumed merge: %+v, %v", set, err)
			}
			// Resuming again merges nothing more.
			if err := s.srv.ResumeShardMerges(ctx); err != nil {
				t.Fatal(err)
			}
			if runs := itemRuns(t, s, p.reg.TestID); len(runs) != 1 {
				t.Fatalf("runs after a second resume: %d", len(runs))
			}
		})
	}
}

// dashboardGet signs in to the dashboard and returns the page at path.
func (s *service) dashboardGet(t *testing.T, path string) string {
	t.Helper()
	b := newBrowser(t, s)
	c, _ := b.signIn()
	resp, page := b.do(http.MethodGet, path, nil, []*http.Cookie{c}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	return page
}

// TestShardsShareOneAttempt runs the shards as `aimeter run --server` does
// (Client.RunAttempt, with the shard in AttemptOptions): an item with no
// retest takes every shard's test_start, as one attempt, and the merged run
// is that attempt's.
func TestShardsShareOneAttempt(t *testing.T) {
	sr := makeShards(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := newService(t, b)
			p := s.register(t, 0, "")
			var last *tester.UploadReply
			for i, dir := range sr.shards {
				out, err := p.client.RunAttempt(ctx, p.reg.TestID, func(func(benchmark.Phase)) error { return nil },
					tester.AttemptOptions{Dir: dir, Key: p.key, Shard: &benchmark.Shard{Index: i, Count: nShards}})
				if err != nil {
					t.Fatalf("shard %d: %v", i, err)
				}
				if out.Attempt.Number != 1 {
					t.Errorf("shard %d started attempt %d, want 1", i, out.Attempt.Number)
				}
				last = out.Reply
			}
			if last.RunID == 0 || last.Attempt != 1 {
				t.Fatalf("the last shard's reply: %+v", last)
			}
			it, err := s.st.TestItem(ctx, p.reg.TestID)
			if err != nil || it.Attempts != 1 {
				t.Fatalf("item after the sharded test: %+v, %v", it, err)
			}
		})
	}
}

// TestInterruptedShardRefused: a shard whose run was interrupted (it wrote
// its bundle, having issued part of its schedule) is refused at upload,
// 422 naming it, and nothing is stored: stored, it would fail its whole
// test when the last shard came, for the merge refuses it.
func TestInterruptedShardRefused(t *testing.T) {
	sr := makeShards(t)
	dir := filepath.Join(t.TempDir(), "interrupted-1")
	p := shardPlan(dir, 1) // the test of sr.shards: one key
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p.Phase = func(ph benchmark.Phase) {
		if ph.Kind == benchmark.DataLoadEnd {
			cancel(errors.New("interrupted by SIGTERM"))
		}
	}
	if _, err := benchmark.Run(ctx, p); err == nil {
		t.Fatal("a run cancelled before it issued ended without an error")
	}
	if b, err := bundle.Read(dir); err != nil || b.Result.Interrupted == "" {
		t.Fatalf("the interrupted shard's bundle: %v (interrupted %q)", err, b.Result.Interrupted)
	}
	key := keyOf(t, sr.shards[0])
	s := newService(t, backends(t)[0])
	pt := s.register(t, 0, "")
	_, err := pt.client.Submit(context.Background(), pt.reg.TestID, dir, pt.key)
	refusedWith(t, err, http.StatusUnprocessableEntity, "shard 1 of test "+key+" was interrupted (interrupted by SIGTERM)")
	if _, err := pt.client.Submit(context.Background(), pt.reg.TestID, sr.shards[0], pt.key); err != nil {
		t.Fatal(err)
	}
	if v := pt.shardSet(t, key); fmt.Sprint(v.Arrived) != "[0]" {
		t.Errorf("the refused shard was stored: arrived %v", v.Arrived)
	}
}
