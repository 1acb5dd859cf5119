package console

import (
	"fmt"
	"io"
	"strings"

	"aimeter/tester"
)

// WriteUpload writes what the service stored of an upload (aimeter submit,
// aimeter run --server): one line on w, and for a run stored flagged the
// claims the raw records do not support, one a line, on diffs. It returns
// whether the run was stored flagged, which a command treats as a refusal.
// A reply with StoredAlready (the bundle was stored by an earlier upload)
// says so in place of "uploaded".
func WriteUpload(w, diffs io.Writer, rep *tester.UploadReply) (flagged bool) {
	what := "uploaded"
	if rep.StoredAlready {
		what = "stored already, by an earlier upload of this bundle"
	}
	if rep.Flagged() {
		fmt.Fprintf(w, "%s: run %d of test item %s, attempt %d, flagged (signature with key %s and digests agree; the raw records do not support %d claim(s)); verdict %s\n",
			what, rep.RunID, rep.TestID, rep.Attempt, rep.KeyID, len(rep.Differences), rep.Verdict)
		for _, d := range rep.Differences {
			fmt.Fprintf(diffs, "  %s\n", d)
		}
		return true
	}
	if sh := rep.Shard; sh != nil && rep.RunID == 0 {
		// A shard is stored apart until its test's last shard arrives.
		fmt.Fprintf(w, "%s: shard %d of %d of a sharded test of test item %s (signature with key %s, digests and the recomputation of %s agree; verdict %s); %s\n",
			what, sh.Index, sh.Count, rep.TestID, rep.KeyID, strings.Join(rep.Recomputed, ", "), rep.Verdict, sh.Summary)
		return false
	}
	fmt.Fprintf(w, "%s: run %d of test item %s, attempt %d, %s (signature with key %s, digests and the recomputation of %s agree); verdict %s\n",
		what, rep.RunID, rep.TestID, rep.Attempt, rep.Status, rep.KeyID, strings.Join(rep.Recomputed, ", "), rep.Verdict)
	return false
}
