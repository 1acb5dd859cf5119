package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// TestMixedModeReferenceForeignJobs: a mixed test (mode 5) against the
// reference SUT runs its foreign jobs on samples that are loaded (on the old
// code 81 of 100 failed "sample N is not loaded in the QSL" and the run
// still said PASS), ends with its duration, and shows the foreign jobs on
// the console.
func TestMixedModeReferenceForeignJobs(t *testing.T) {
	dir := t.TempDir()
	useUntrainedWeights(t, dir)
	out := filepath.Join(dir, "out")
	r := runCLI(t, dir, "run", "-q", "--sut", "reference", "--arrival-mode", "5", "--lambda", "50", "--duration", "1s",
		"--mixed-lambda", "20", "--set", "min_query_count=1", "--output-dir", out)
	if r.code != ExitOK {
		t.Fatalf("%v", r)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if b.Foreign == nil {
		t.Fatal("no foreign run in the bundle")
	}
	var sent, failed int
	for rec := range b.Foreign.Result.Records() {
		sent++
		if rec.Status == loadgen.StatusError {
			failed++
		}
	}
	if sent < 5 || failed != 0 {
		t.Errorf("foreign jobs: %d sent, %d failed; want several, none failed", sent, failed)
	}
	if strings.Contains(readFileT(t, filepath.Join(out, bundle.ForeignDir, bundle.RecordsFile)), "not loaded") {
		t.Error("a foreign record says not loaded")
	}
	for _, want := range []string{"Foreign jobs (mode 5, IN-50): lost 0 of", "GB/T verdict: PASS"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("console lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestAccuracyModeReferencePrintsScore: an accuracy run of the reference
// SUT is scored against the data set's labels, printed as the demo prints
// it and kept in run.json (it printed only "Accuracy log: N responses").
func TestAccuracyModeReferencePrintsScore(t *testing.T) {
	dir := t.TempDir()
	useUntrainedWeights(t, dir)
	out := filepath.Join(dir, "out")
	r := runCLI(t, dir, "run", "-q", "--sut", "reference", "--mode", "accuracy", "--scenario", "Offline", "--output-dir", out)
	// Untrained weights miss the target: the score decides the exit code.
	if r.code != ExitInvalid {
		t.Fatalf("want exit %d (an untrained model misses the target):\n%v", ExitInvalid, r)
	}
	if !strings.Contains(r.stdout, "Accuracy: ") || !strings.Contains(r.stdout, "top-1 (target ") || !strings.Contains(r.stdout, ") FAIL") {
		t.Errorf("no score on the console:\n%s", r.stdout)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if a := b.AccuracyCheck; a == nil || a.Metric != "top-1 accuracy (%)" || a.Pass {
		t.Errorf("run.json accuracy check %+v", a)
	}
	regen := runCLI(t, dir, "report", out, "--output-dir", filepath.Join(dir, "regen"))
	if regen.code != ExitInvalid || !strings.Contains(regen.stdout, "Accuracy: ") {
		t.Errorf("aimeter report gives another verdict:\n%v", regen)
	}
	// aimeter accuracy DIR rescores the log against the reloaded data set
	// and prints the run's own score and verdict as JSON, exiting 3 below
	// the target.
	res := runCLI(t, dir, "accuracy", out)
	var got struct {
		Accuracy, Target float64
		Pass             *bool
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || res.code != ExitInvalid || got.Pass == nil || *got.Pass ||
		b.AccuracyCheck == nil || got.Accuracy != b.AccuracyCheck.Value || got.Target != b.AccuracyCheck.Target {
		t.Errorf("aimeter accuracy of the run (%v): %s", err, res)
	}
}

// TestFromRepeatsANullRun: --from repeats the recorded run (SUT, settings,
// GB/T plan) into a new directory, with the same schedule; it refuses its
// own bundle as the output and a directory that is not a bundle.
func TestFromRepeatsANullRun(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	r := runCLI(t, dir, "run", "-q", "--sut", "null-async", "--qsl-size", "99", "--arrival-mode", "2", "--lambda", "2000",
		"--duration", "200ms", "--seed", "5", "--output-dir", first)
	if r.code != ExitOK {
		t.Fatalf("%v", r)
	}
	again := filepath.Join(dir, "again")
	r = runCLI(t, dir, "run", "-q", "--from", first, "--output-dir", again)
	if r.code != ExitOK {
		t.Fatalf("--from: %v", r)
	}
	a, b := readRecordsT(t, first), readRecordsT(t, again)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d records, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].ScheduledNs != b[i].ScheduledNs || a[i].SampleIndex != b[i].SampleIndex {
			t.Fatalf("record %d differs: %+v vs %+v", i, a[i], b[i])
		}
	}
	inv := readFileT(t, filepath.Join(again, bundle.InvocationFile))
	for _, want := range []string{`"--from"`, `"kind": "null-async"`, `"qsl_size": 99`, `"gbt"`} {
		if !strings.Contains(inv, want) {
			t.Errorf("invocation.json lacks %s:\n%s", want, inv)
		}
	}
	for _, c := range []struct {
		why  string
		args []string
		want string
	}{
		{"its own bundle as the output", []string{"--from", first, "--output-dir", first}, "is the bundle --from repeats"},
		{"not a bundle", []string{"--from", dir, "--output-dir", filepath.Join(dir, "x")}, "not a run bundle"},
	} {
		r := runCLI(t, dir, append([]string{"run", "-q"}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: want exit 2 saying %q:\n%v", c.why, c.want, r)
		}
	}
}

// TestFromRepeatsAnOpenAIRun: a --sut openai bundle records every client
// option, the prompts file's hash and the client's figures, and --from
// repeats it against the server with the same settings; a prompts file
// changed since is refused, naming it.
func TestFromRepeatsAnOpenAIRun(t *testing.T) {
	url := newSimServer(t, "sim-from")
	dir := t.TempDir()
	promptsFile := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(promptsFile, []byte(`{"prompt": "one two three"}`+"\n"+`{"prompt": "four five"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first")
	r := runCLI(t, dir, "run", "-q", "--sut", "openai", "--url", url, "--scenario", "Offline", "--prompts", promptsFile,
		"--output-tokens", "8", "--ignore-eos", "--api", "completions", "--request-timeout", "7s",
		"--set", "min_duration=0", "--set", "min_query_count=40", "--output-dir", first)
	if r.code != ExitOK {
		t.Fatalf("%v", r)
	}
	inv := readFileT(t, filepath.Join(first, bundle.InvocationFile))
	for _, want := range []string{`"output_tokens": 8`, `"ignore_eos": true`, `"api": "completions"`, `"request_timeout_ns": 7000000000`,
		`"prompts_sha256": "`, `"command_line": [`, `"client": {`, `"requests": `} {
		if !strings.Contains(inv, want) {
			t.Errorf("invocation.json lacks %s:\n%s", want, inv)
		}
	}
	again := filepath.Join(dir, "again")
	r = runCLI(t, dir, "run", "-q", "--from", first, "--output-dir", again)
	if r.code != ExitOK {
		t.Fatalf("--from: %v", r)
	}
	if x, y := readRunInfoT(t, first), readRunInfoT(t, again); x.Requested != y.Requested {
		t.Errorf("requested settings differ:\n%+v\n%+v", x.Requested, y.Requested)
	}
	if err := os.WriteFile(promptsFile, []byte(`{"prompt": "changed"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, dir, "run", "-q", "--from", first, "--output-dir", filepath.Join(dir, "third"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, promptsFile) || !strings.Contains(r.stderr, "SHA-256") {
		t.Errorf("a changed prompts file: want exit 2 naming it:\n%v", r)
	}
}
