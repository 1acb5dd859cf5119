package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccuracyScore: aimeter accuracy score prints the scorer's JSON object
// and exits 0; a bad input, an unknown metric or a missing --input exit 2
// with an error naming the problem, and print nothing on standard output.
func TestAccuracyScore(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`{"num_classes":3,"scores":[[0.1,0.7,0.2],[0.5,0.5,0]],"labels":[1,1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"num_classes":3,"scores":[[0.1,0.7]],"labels":[1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "accuracy", "score", "topk", "--input", good)
	if res.code != ExitOK || res.stdout != `{"top1":0.5,"top5":1,"n":2}`+"\n" {
		t.Errorf("a good input: %s", res)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topk", "--input", bad}, "scores[0] has 2 values, want num_classes = 3"},
		{[]string{"nope", "--input", good}, "unknown metric \"nope\""},
		{[]string{"topk"}, "--input is required"},
		{[]string{"topk", "--input", filepath.Join(dir, "absent.json")}, "no such file"},
	} {
		res := runCLI(t, "", append([]string{"accuracy", "score"}, tc.args...)...)
		if res.code != ExitUsage || res.stdout != "" || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: %s\nwant exit %d saying %q", tc.args, res, ExitUsage, tc.want)
		}
	}
	// Standard input.
	tw := newTwin(t, "accuracy", "score", "wer", "-i", "-")
	tw.st.Stdin = strings.NewReader(`{"references":["a b"],"hypotheses":["a b"]}`)
	if code := tw.main(); code != ExitOK || tw.stdout.String() != `{"wer":0,"cer":0,"words":2,"chars":3}`+"\n" {
		t.Errorf("from standard input: exit %d, %q", code, tw.stdout.String())
	}
}
