package console

import (
	"strings"
	"testing"

	"aimeter/store"
	"aimeter/tester"
)

func TestWriteUpload(t *testing.T) {
	var out, diffs strings.Builder
	flagged := WriteUpload(&out, &diffs, &tester.UploadReply{RunID: 3, TestID: "T-1", Attempt: 1, Status: store.StatusFlagged, KeyID: "k",
		Differences: []string{"result.json: latency_ns.p99 claimed 1, recomputed 3571470"}})
	if !flagged || !strings.Contains(out.String(), "run 3 of test item T-1, attempt 1, flagged") || diffs.String() != "  result.json: latency_ns.p99 claimed 1, recomputed 3571470\n" {
		t.Errorf("flagged %v: %q, differences %q", flagged, out.String(), diffs.String())
	}
	out.Reset()
	diffs.Reset()
	flagged = WriteUpload(&out, &diffs, &tester.UploadReply{RunID: 4, TestID: "T-1", Attempt: 2, Status: store.StatusVerified, KeyID: "k", Recomputed: []string{"result.json", "gbt.json"}})
	if flagged || !strings.Contains(out.String(), "attempt 2, verified") || !strings.Contains(out.String(), "recomputation of result.json, gbt.json agree") || diffs.Len() != 0 {
		t.Errorf("verified (flagged %v): %q, differences %q", flagged, out.String(), diffs.String())
	}
	out.Reset()
	WriteUpload(&out, &diffs, &tester.UploadReply{RunID: 4, TestID: "T-1", Attempt: 2, Status: store.StatusVerified, KeyID: "k", StoredAlready: true})
	if !strings.HasPrefix(out.String(), "stored already, by an earlier upload of this bundle: run 4 of test item T-1, attempt 2, verified") {
		t.Errorf("stored already: %q", out.String())
	}
	// A shard is stored apart, not as run 0: the line names the shard and
	// what its test still waits for.
	out.Reset()
	WriteUpload(&out, &diffs, &tester.UploadReply{TestID: "T-1", Status: tester.ShardStatus, KeyID: "k", Recomputed: []string{"result.json"}, Verdict: "VALID",
		Shard: &tester.ShardReply{Index: 1, Count: 3, Summary: "waiting for shards 0, 2 (1 of 3 arrived)"}})
	if got := out.String(); strings.Contains(got, "run 0") || !strings.Contains(got, "shard 1 of 3 of a sharded test of test item T-1") || !strings.Contains(got, "waiting for shards 0, 2") {
		t.Errorf("shard: %q", got)
	}
}
