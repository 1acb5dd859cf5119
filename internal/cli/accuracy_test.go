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

// TestAccuracyLog: aimeter accuracy log scores an accuracy log top-1
// against labels, each sample once, missing ones wrong, and judges a
// target written as MLPerf writes them.
func TestAccuracyLog(t *testing.T) {
	dir := t.TempDir()
	// Samples 0-3 answered 1, 2, 3, 0 (sample 1 twice: its first answer
	// counts); sample 4 unanswered.
	log := `[
{"seq_id" : 0, "qsl_idx" : 0, "data" : "01"},
{"seq_id" : 1, "qsl_idx" : 1, "data" : "02"},
{"seq_id" : 2, "qsl_idx" : 1, "data" : "09"},
{"seq_id" : 3, "qsl_idx" : 2, "data" : "03"},
{"seq_id" : 4, "qsl_idx" : 3, "data" : "00"}
]`
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("mlperf_log_accuracy.json", log)
	labels := write("labels.json", "[1, 2, 3, 1, 4]")
	res := runCLI(t, "", "accuracy", "log", dir, "--labels", labels, "--target", "99% of FP32 (60)")
	want := `{"accuracy":60,"correct":3,"metric":"top-1","missing":1,"pass":true,"scored":4,"target":59.4,"target_text":"99% of FP32 (60)"}` + "\n"
	if res.code != ExitOK || res.stdout != want {
		t.Errorf("3 of 5 right against 59.4 %%: %s\nwant %s", res, want)
	}
	if res := runCLI(t, "", "accuracy", "log", dir, "--labels", labels, "--target", "61"); res.code != ExitInvalid || !strings.Contains(res.stderr, "below the target") {
		t.Errorf("below the target: %s", res)
	}
	short := write("short.json", "[1, 2]")
	if res := runCLI(t, "", "accuracy", "log", dir, "--labels", short); res.code != ExitUsage || !strings.Contains(res.stderr, "qsl_idx 2 is outside the data set of 2 samples") {
		t.Errorf("labels that do not cover the log: %s", res)
	}
	write("mlperf_log_accuracy.json", `[{"seq_id": 0, "qsl_idx": 0, "data": "0G"}]`)
	if res := runCLI(t, "", "accuracy", "log", dir, "--labels", labels); res.code != ExitUsage || !strings.Contains(res.stderr, "seq_id 0") {
		t.Errorf("bad hex: %s", res)
	}
}

// TestAccuracyBundleWithoutGroundTruth: aimeter accuracy DIR on a run
// whose log is empty (a performance run of the null SUT) or that is no
// bundle exits non-zero with the reason, printing nothing.
func TestAccuracyBundleWithoutGroundTruth(t *testing.T) {
	dir := runQuick(t, "Offline", []int{ExitOK, ExitInvalid})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir}, ExitUsage, "the run logged no responses"},
		{[]string{"log", dir, "--target", "85"}, ExitUsage, "--target applies with --labels"},
		{[]string{filepath.Join(dir, "absent")}, ExitFailure, "no such file"},
		{[]string{t.TempDir()}, ExitUsage, "not a run bundle"},
	} {
		res := runCLI(t, "", append([]string{"accuracy"}, tc.args...)...)
		if res.code != tc.code || res.stdout != "" || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: %s\nwant exit %d saying %q", tc.args, res, tc.code, tc.want)
		}
	}
}
