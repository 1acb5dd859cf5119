package tester

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"aimeter/attest"
	"aimeter/bundle"
	"aimeter/merge"
	"aimeter/recompute"
	"aimeter/shard"
	"aimeter/store"
)

// Sharded tests (issue 43, item 3; docs/server.md "Sharded tests"). A test
// split over N load generators (aimeter run --shard I/N) uploads N shard
// bundles, each signed, verified and recomputed like any upload. A shard is
// stored as a shard of its test (store.PutShard), not as a run: it takes no
// attempt and no result lists it. The upload that completes the set merges
// the shards with package merge, as `aimeter merge` does, recomputes the
// merged bundle and stores it (store.Ingest) as one run of the test item,
// whose page names its shards.

// ShardStatus is the status of an upload's reply that stored a shard and
// no run (UploadReply.Shard says more).
const ShardStatus store.RunStatus = "shard stored"

// mergeUploadPrefix begins the upload ID under which a set's merged run is
// stored: "shards:" and the set's key. A client's upload ID cannot hold
// ':' (uploadIDPattern), so only a merge spends it, and two merges of one
// set store one run (the ID is spent once per test item).
const mergeUploadPrefix = "shards:"

// ShardKey returns the key of the sharded test that a shard belongs to:
// the first 32 hex digits of the SHA-256 of its schedule digest and its
// shard count, "SCHEDULE/N". Shards of one test have one key; whether they
// are truly parts of one test (seeds, settings, version, common start) is
// the merge's check.
func ShardKey(rec *shard.Record) string {
	h := sha256.Sum256([]byte(rec.ScheduleSHA256 + "/" + strconv.Itoa(rec.Count)))
	return hex.EncodeToString(h[:16])
}

// ShardReply describes, in an upload's reply, the shard it stored or
// found stored and its test as it then stood.
type ShardReply struct {
	// Key identifies the test (ShardKey); Index is the shard's, Count
	// the test's number of shards.
	Key   string `json:"key"`
	Index int    `json:"index"`
	Count int    `json:"count"`
	// State is the test's: waiting, merging, merged or failed; Summary
	// says it in words ("waiting for shards 2, 3").
	State   store.ShardSetState `json:"state"`
	Summary string              `json:"summary"`
	// Arrived and Missing are the indexes of the shards stored and not.
	Arrived []int `json:"arrived"`
	Missing []int `json:"missing"`
	// RunID is the merged run, once there is one.
	RunID int64 `json:"run_id,omitempty"`
	// URL is the API path that shows the test's shards.
	URL string `json:"url"`
}

// ShardSetView is a sharded test as GET /api/v1/tests/{id}/shards/{key}
// shows it: the stored set, which shards arrived and which are missing.
type ShardSetView struct {
	*store.ShardSet
	Arrived []int  `json:"arrived"`
	Missing []int  `json:"missing"`
	Summary string `json:"summary"`
}

func newShardSetView(ss *store.ShardSet) *ShardSetView {
	v := &ShardSetView{ShardSet: ss, Arrived: []int{}, Missing: ss.Missing(), Summary: shardSummary(ss)}
	for _, sh := range ss.Shards {
		v.Arrived = append(v.Arrived, sh.Index)
	}
	if v.Missing == nil {
		v.Missing = []int{}
	}
	return v
}

// shardSummary says where a set stands in words.
func shardSummary(ss *store.ShardSet) string {
	switch ss.State {
	case store.ShardsWaiting:
		m := ss.Missing()
		word := "shards"
		if len(m) == 1 {
			word = "shard"
		}
		return fmt.Sprintf("waiting for %s %s (%d of %d arrived)", word, indexList(m), len(ss.Shards), ss.Count)
	case store.ShardsMerging:
		return fmt.Sprintf("all %d shards arrived; merging", ss.Count)
	case store.ShardsMerged:
		return fmt.Sprintf("all %d shards arrived; merged as run %d", ss.Count, ss.RunID)
	case store.ShardsFailed:
		return fmt.Sprintf("all %d shards arrived; the merge failed: %s", ss.Count, ss.Reason)
	}
	return string(ss.State)
}

// indexList is "2, 3" for []int{2, 3}.
func indexList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

func shardReply(ss *store.ShardSet, index int) *ShardReply {
	v := newShardSetView(ss)
	return &ShardReply{Key: ss.Key, Index: index, Count: ss.Count, State: ss.State, Summary: v.Summary,
		Arrived: v.Arrived, Missing: v.Missing, RunID: ss.RunID, URL: shardSetPath(ss.TestItemID, ss.Key)}
}

func shardSetPath(item, key string) string { return "/api/v1/tests/" + item + "/shards/" + key }

// shardMerges is the service's state of merges: the sets being merged by
// this process (so that two requests of one process do not merge one set
// twice; the store's upload ID decides between processes) and the hooks
// tests set.
type shardMerges struct {
	mu       sync.Mutex
	inFlight map[string]bool
	// beforeMerge, when not nil, is called before a set is merged; an
	// error leaves the set to merge later, as a crash would.
	beforeMerge func(key string) error
	// afterMerge, when not nil, is called with the merged bundle's
	// directory before it is recomputed.
	afterMerge func(dir string)
}

func (m *shardMerges) begin(item, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inFlight == nil {
		m.inFlight = map[string]bool{}
	}
	if m.inFlight[item+"/"+key] {
		return false
	}
	m.inFlight[item+"/"+key] = true
	return true
}

func (m *shardMerges) end(item, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.inFlight, item+"/"+key)
}

// readShardRecord reads dir's shard.json; nil when it has none or it is
// malformed (the recomputation then reports it).
func readShardRecord(dir string) *shard.Record {
	f, err := os.Open(filepath.Join(dir, shard.File))
	if err != nil {
		return nil
	}
	defer f.Close()
	rec, err := shard.Read(f)
	if err != nil {
		return nil
	}
	return rec
}

// shardRetry answers, before it is recomputed, the upload of a shard
// bundle stored already as a shard of the item (a retry after a lost
// answer): the shard's reply with StoredAlready, and the set's merge driven
// again when it is complete and unmerged. ok is false for any other
// upload.
func (s *Server) shardRetry(ctx context.Context, it *store.TestItem, dir, digest string) (rep *UploadReply, ref *refusal, ok bool) {
	if rec := readShardRecord(dir); !rec.Sharded() {
		return nil, nil, false
	}
	ss, index, err := s.store.ShardByDigest(ctx, it.ID, digest)
	if err != nil {
		return nil, nil, false
	}
	rep, ref = s.shardStoredReply(ctx, it, ss, index, digest)
	return rep, ref, true
}

// shardStoredReply is the reply of an upload of a shard found stored:
// StoredAlready, and the merge's outcome when its set is complete.
func (s *Server) shardStoredReply(ctx context.Context, it *store.TestItem, ss *store.ShardSet, index int, digest string) (*UploadReply, *refusal) {
	if ss.State == store.ShardsMerging {
		if rep, ref := s.mergeShards(ctx, it, ss); ref != nil || rep.RunID != 0 {
			if rep != nil {
				rep.StoredAlready, rep.Shard.Index = true, index
			}
			return rep, ref
		}
	}
	rep := &UploadReply{TestID: it.ID, Status: ShardStatus, BundleDigest: digest, KeyID: attest.KeyID(it.PublicKey),
		StoredAlready: true, Shard: shardReply(ss, index)}
	if ss.State == store.ShardsMerged {
		if r := s.storedReply(ctx, it, ss.RunID); r != nil {
			r.BundleDigest, r.StoredAlready, r.Shard = digest, true, rep.Shard
			return r, nil
		}
	}
	return rep, nil
}

// storeShard stores a verified, recomputed shard of a sharded test and,
// when it completes its test, merges the test's shards. release gives
// back the upload's memory (the merge takes its own).
// shardUpload is what the upload of a shard verified and recomputed: its
// status and reason (store.IngestOptions'), its bundle's digest, the files
// recomputed and the verdict its signed statement claims.
type shardUpload struct {
	status     store.RunStatus
	reason     string
	digest     string
	recomputed []string
	verdict    string
	// interrupted is why the shard's run stopped early ("" when it ran
	// to its end): such a shard issued only part of its schedule, and the
	// merge would refuse it (merge.ErrInterrupted).
	interrupted string
}

func (s *Server) storeShard(ctx context.Context, it *store.TestItem, uid, dir string, rec *shard.Record, up shardUpload, release func()) (*UploadReply, *refusal) {
	status, reason, digest := up.status, up.reason, up.digest
	key := ShardKey(rec)
	if up.interrupted != "" {
		// Refused before it is stored: stored, it would close its test
		// as failed when the last shard came (the merge refuses it).
		return nil, refuse(http.StatusUnprocessableEntity, fmt.Sprintf("shard %d of test %s was interrupted (%s) before it issued all of its schedule: run it again; the merge would refuse it", rec.Index, key, up.interrupted))
	}
	// A shard must be of the test the first shard stored began: checked
	// now with the merge's own check, on the two, so that a shard of
	// another test is refused and stores nothing.
	if ss, err := s.store.ShardSet(ctx, it.ID, key); err == nil {
		if ref := s.shardAdmissible(ctx, ss, rec, dir); ref != nil {
			return nil, ref
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, refuse(http.StatusServiceUnavailable, "reading the test's shards failed: retry the upload: "+err.Error())
	}
	ss, complete, err := s.store.PutShard(ctx, dir, store.ShardOptions{
		TestItemID: it.ID, Key: key, Count: rec.Count, Index: rec.Index, ScheduleSHA256: rec.ScheduleSHA256,
		UploadID: uid, Status: status, StatusReason: reason, Move: true,
	})
	var idx *store.ShardIndexError
	var dup *store.ShardStoredError
	switch {
	case errors.As(err, &dup):
		return s.shardStoredReply(ctx, it, dup.Set, dup.Index, digest)
	case errors.As(err, &idx):
		return nil, shardIndexRefusal(idx.Key, &idx.First)
	case errors.Is(err, store.ErrDuplicate):
		return nil, s.replayRefusal(ctx, it, uid, err)
	case errors.Is(err, store.ErrShardSetClosed):
		return nil, refuse(http.StatusConflict, fmt.Sprintf("shard %d of test %s: the test's shards are all stored already and it is closed: %v", rec.Index, key, err))
	case err != nil:
		s.log.Error("storing a shard failed; the client may retry it", "test", it.ID, "upload", uid, "err", err)
		ref := refuse(http.StatusServiceUnavailable, "storing the shard failed: retry the upload: "+err.Error())
		ref.busy = true
		return nil, ref
	}
	s.log.Info("shard stored", "test", it.ID, "key", key, "index", rec.Index, "count", rec.Count, "complete", complete)
	rep := &UploadReply{TestID: it.ID, Status: ShardStatus, BundleDigest: digest, KeyID: attest.KeyID(it.PublicKey),
		Verdict: up.verdict, Recomputed: up.recomputed, Shard: shardReply(ss, rec.Index)}
	if !complete {
		return rep, nil
	}
	release()
	merged, ref := s.mergeShards(ctx, it, ss)
	if ref != nil {
		return nil, ref
	}
	if merged.RunID == 0 {
		return rep, nil
	}
	merged.Shard.Index = rec.Index
	return merged, nil
}

func shardIndexRefusal(key string, first *store.StoredShard) *refusal {
	return refuse(http.StatusConflict, fmt.Sprintf("shard %d of test %s was uploaded already: by upload %s at %s (bundle manifest SHA-256 %s); a shard index is given once",
		first.Index, key, first.UploadID, first.ReceivedAt.Format(time.RFC3339), first.BundleDigest))
}

// shardAdmissible refuses a shard that its stored set cannot take: a set
// closed, an index stored already, or a shard that the merge's check finds
// of another test than the set's first shard.
func (s *Server) shardAdmissible(ctx context.Context, ss *store.ShardSet, rec *shard.Record, dir string) *refusal {
	switch ss.State {
	case store.ShardsMerged, store.ShardsFailed:
		return refuse(http.StatusConflict, fmt.Sprintf("shard %d of test %s: the test is closed: %s", rec.Index, ss.Key, shardSummary(ss)))
	}
	for _, sh := range ss.Shards {
		if sh.Index == rec.Index {
			return shardIndexRefusal(ss.Key, &sh)
		}
	}
	if len(ss.Shards) == 0 {
		return nil
	}
	first := ss.Shards[0]
	if err := merge.Check(ctx, []string{s.store.Path(first.Dir), dir}, merge.Options{AllowPartial: true}); err != nil {
		if ctx.Err() != nil {
			return refuse(http.StatusServiceUnavailable, "the upload was abandoned: "+err.Error())
		}
		return refuse(http.StatusUnprocessableEntity, fmt.Sprintf("shard %d is not a part of test %s, whose shard %d (upload %s) is stored: the merge refuses it: %v",
			rec.Index, ss.Key, first.Index, first.UploadID, err))
	}
	return nil
}

// mergeShards merges a complete set (state merging), recomputes the merged
// bundle and stores it as one run of the item, then records the set
// merged. A refusal of the merge or of the recomputation fails the set
// (422); a failure that may pass (memory, the database) leaves it to merge
// later, when a shard of it is uploaded again or the service starts. A
// reply without RunID says that another request of this process is
// merging the set.
func (s *Server) mergeShards(ctx context.Context, it *store.TestItem, ss *store.ShardSet) (*UploadReply, *refusal) {
	base := &UploadReply{TestID: it.ID, Status: ShardStatus, KeyID: attest.KeyID(it.PublicKey), Shard: shardReply(ss, -1)}
	if !s.shards.begin(it.ID, ss.Key) {
		return base, nil
	}
	defer s.shards.end(it.ID, ss.Key)
	if h := s.shards.beforeMerge; h != nil {
		if err := h(ss.Key); err != nil {
			return nil, refuse(http.StatusServiceUnavailable, "the test's shards are all stored; merging them failed and is retried later: "+err.Error())
		}
	}
	fail := func(code int, msg string, reasons ...string) *refusal {
		reason := msg
		if len(reasons) > 0 {
			reason += ": " + strings.Join(reasons, "; ")
		}
		if _, err := s.store.FinishShardSet(context.WithoutCancel(ctx), it.ID, ss.Key, store.ShardsFailed, 0, reason); err != nil {
			s.log.Error("recording a failed merge failed", "test", it.ID, "key", ss.Key, "err", err)
		}
		s.log.Warn("merge of shards failed", "test", it.ID, "key", ss.Key, "reason", reason)
		return refuse(code, msg, reasons...)
	}
	var dirs []string
	var need int64
	for _, sh := range ss.Shards {
		d := s.store.Path(sh.Dir)
		dirs = append(dirs, d)
		n, err := recompute.EstimateNeed(d)
		if err != nil {
			return nil, fail(http.StatusUnprocessableEntity, fmt.Sprintf("shard %d cannot be read: %v", sh.Index, err))
		}
		need += n.Bytes
	}
	// The merge holds the shards and their union; the recomputation of
	// the merged bundle about the shards' sum.
	release, err := s.admit.acquire(ctx, 2*need)
	if err != nil {
		var big *tooBigError
		if errors.As(err, &big) {
			return nil, refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("the test's shards are all stored, but merging them needs an estimated %d bytes of memory, above the service's budget of %d bytes (aimeter server --memory-budget); the merge runs when the service starts with more", 2*need, big.budget))
		}
		ref := refuse(http.StatusServiceUnavailable, "the test's shards are all stored; their merge waits for memory: upload any shard again later to merge them: "+err.Error())
		ref.busy = true
		return nil, ref
	}
	defer release()
	tmp, err := os.MkdirTemp(filepath.Join(s.dataDir, StagingDir), "merge-")
	if err != nil {
		return nil, refuse(http.StatusInternalServerError, "internal error: "+err.Error())
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "bundle")
	if _, err := merge.Write(ctx, dirs, out, merge.Options{}); err != nil {
		if ctx.Err() != nil {
			return nil, refuse(http.StatusServiceUnavailable, "the merge was abandoned; it is retried when a shard is uploaded again or the service starts: "+err.Error())
		}
		return nil, fail(http.StatusUnprocessableEntity, fmt.Sprintf("the test's %d shards are stored, but the merge refuses them: %v", ss.Count, err))
	}
	if h := s.shards.afterMerge; h != nil {
		h(out)
	}
	rc, err := recompute.Check(out, recompute.Options{Version: s.version})
	if err != nil {
		return nil, fail(http.StatusUnprocessableEntity, "the merged result cannot be recomputed from its raw records: "+err.Error())
	}
	if !rc.OK() {
		var diffs []string
		for _, d := range rc.Differences {
			diffs = append(diffs, d.String())
		}
		return nil, fail(http.StatusUnprocessableEntity, fmt.Sprintf("the merged result fails recomputation: the raw records do not support %d claim(s) of the merged bundle", len(diffs)), diffs...)
	}
	digest, err := bundle.Digest(out)
	if err != nil {
		return nil, refuse(http.StatusInternalServerError, "internal error: "+err.Error())
	}
	status := store.StatusVerified
	reason := fmt.Sprintf("the merge of %d shards, each signed with key %s, its digests and its recomputation agreeing; the merged bundle recomputed from the union of their raw records", ss.Count, attest.KeyID(it.PublicKey))
	var flagged []string
	for _, sh := range ss.Shards {
		if sh.Status != store.StatusVerified {
			flagged = append(flagged, fmt.Sprintf("shard %d: %s", sh.Index, sh.StatusReason))
		}
	}
	if len(flagged) > 0 {
		status = store.StatusFlagged
		reason += ", but " + strings.Join(flagged, "; ")
	}
	type shardRef struct {
		Index        int    `json:"index"`
		UploadID     string `json:"upload_id"`
		BundleDigest string `json:"bundle_digest"`
	}
	var refs []shardRef
	for _, sh := range ss.Shards {
		refs = append(refs, shardRef{sh.Index, sh.UploadID, sh.BundleDigest})
	}
	uid := mergeUploadPrefix + ss.Key
	run, err := s.store.Ingest(ctx, out, store.IngestOptions{
		TestItemID: it.ID, NextAttempt: true, Status: status, StatusReason: reason,
		Source: "merge of the shards of test " + ss.Key, Bundle: rc.Bundle, Derived: rc.Derived, Move: true, UploadID: uid,
		Events: func(run *store.Run) []store.Event {
			detail, _ := json.Marshal(map[string]any{"upload_id": uid, "run_id": run.ID, "bundle_digest": digest, "key_id": attest.KeyID(it.PublicKey),
				"recomputed": rc.Compared, "status": run.Status, "shards": refs, "shard_set": ss.Key})
			return []store.Event{{Kind: store.EventUploadComplete, Detail: detail}}
		},
	})
	var spent *store.UploadSpentError
	var dup *store.DuplicateBundleError
	var runID int64
	switch {
	case errors.As(err, &spent) && spent.RunID != 0:
		runID = spent.RunID // merged before: by another process, or before a crash
	case errors.As(err, &dup) && dup.RunID != 0 && dup.TestItemID == it.ID:
		runID = dup.RunID
	case errors.Is(err, store.ErrRetestsExhausted):
		return nil, fail(http.StatusConflict, fmt.Sprintf("the test's shards are merged, but test item %s has no attempt left for the merged run: its first attempt and the %d retest(s) it was allowed are used", it.ID, it.RetestAllowance))
	case errors.Is(err, store.ErrExpired):
		return nil, fail(http.StatusUnauthorized, "the test's shards are merged, but the test item has expired: ask the tester for a new test item")
	case err != nil:
		s.log.Error("storing a merged run failed; it is retried", "test", it.ID, "key", ss.Key, "err", err)
		ref := refuse(http.StatusServiceUnavailable, "the test's shards are merged, but storing the merged run failed: upload any shard again to retry: "+err.Error())
		ref.busy = true
		return nil, ref
	default:
		runID = run.ID
	}
	done, err := s.store.FinishShardSet(context.WithoutCancel(ctx), it.ID, ss.Key, store.ShardsMerged, runID, "")
	if err != nil {
		s.log.Error("recording a merged set failed; it is recorded when merged again", "test", it.ID, "key", ss.Key, "err", err)
		done = ss
		done.State, done.RunID = store.ShardsMerged, runID
	}
	s.log.Info("shards merged", "test", it.ID, "key", ss.Key, "run", runID)
	rep := s.storedReply(ctx, it, runID)
	if rep == nil {
		rep = &UploadReply{RunID: runID, TestID: it.ID, KeyID: attest.KeyID(it.PublicKey), BundleDigest: digest}
	}
	rep.Shard = shardReply(done, -1)
	return rep, nil
}

// ResumeShardMerges merges the sharded tests whose shards are all stored
// but whose merged run is not (a service stopped, or a merge that could
// not run, between the two), as the upload of their last shard would
// have. Serve calls it at start; it returns the first error met and goes
// on with the other tests.
func (s *Server) ResumeShardMerges(ctx context.Context) error {
	sets, err := s.store.ShardSets(ctx, "", store.ShardsMerging)
	if err != nil {
		return err
	}
	var first error
	for _, ss := range sets {
		it, err := s.store.TestItem(ctx, ss.TestItemID)
		if err == nil {
			if _, ref := s.mergeShards(ctx, it, ss); ref != nil {
				err = ref
			}
		}
		if err != nil {
			s.log.Warn("resuming a merge of shards failed", "test", ss.TestItemID, "key", ss.Key, "err", err)
			if first == nil {
				first = fmt.Errorf("test item %s, sharded test %s: %w", ss.TestItemID, ss.Key, err)
			}
		}
	}
	return first
}

// shardRoutes adds the API of sharded tests.
func (s *Server) shardRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /api/v1/tests/{id}/shards", s.handleShardSets)
	m.HandleFunc("GET /api/v1/tests/{id}/shards/{key}", s.handleShardSet)
}

// itemFor returns the test item of the request's path for the admin or
// the item's own client, or writes the refusal and returns nil.
func (s *Server) itemFor(w http.ResponseWriter, r *http.Request) *store.TestItem {
	id := r.PathValue("id")
	if !s.isAdmin(r) {
		return s.client(w, r, id)
	}
	it, err := s.store.TestItem(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no test item "+id)
		return nil
	}
	if err != nil {
		s.internal(w, err)
		return nil
	}
	return it
}

// handleShardSets lists the item's sharded tests, for the admin or the
// item's client.
func (s *Server) handleShardSets(w http.ResponseWriter, r *http.Request) {
	it := s.itemFor(w, r)
	if it == nil {
		return
	}
	sets, err := s.store.ShardSets(r.Context(), it.ID, "")
	if err != nil {
		s.internal(w, err)
		return
	}
	out := []*ShardSetView{}
	for _, ss := range sets {
		out = append(out, newShardSetView(ss))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleShardSet shows one sharded test: which shards arrived, which are
// missing, and its merged run once merged.
func (s *Server) handleShardSet(w http.ResponseWriter, r *http.Request) {
	it := s.itemFor(w, r)
	if it == nil {
		return
	}
	key := r.PathValue("key")
	ss, err := s.store.ShardSet(r.Context(), it.ID, key)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("test item %s has no sharded test %s", it.ID, key))
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, newShardSetView(ss))
}

// ShardStart is the shard a test_start event's detail names ({"shard":
// {"index": 1, "count": 4}}), sent by a shard's run (AttemptOptions.Shard).
type ShardStart struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// claimAttempt claims the attempt of a test_start whose detail is detail:
// for a shard of a test of several, its test's attempt
// (store.ClaimShardAttempt: the shards of one test starting together share
// one); for anything else, the next (store.ClaimAttempt).
func (s *Server) claimAttempt(ctx context.Context, id string, detail json.RawMessage) (int, error) {
	var d struct {
		Shard *ShardStart `json:"shard"`
	}
	if len(detail) > 0 && json.Unmarshal(detail, &d) == nil && d.Shard != nil && d.Shard.Count > 1 && d.Shard.Index >= 0 && d.Shard.Index < d.Shard.Count {
		a, _, err := s.store.ClaimShardAttempt(ctx, id, d.Shard.Index, d.Shard.Count)
		return a, err
	}
	return s.store.ClaimAttempt(ctx, id)
}
