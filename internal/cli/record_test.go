package cli

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/store"
	"aimeter/tester"
)

// storedSources returns the bundle directories of the runs in the store
// dsn, sorted.
func storedSources(t *testing.T, dsn string) []string {
	t.Helper()
	s, err := store.Open(context.Background(), store.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range runs {
		out = append(out, r.Source)
	}
	slices.Sort(out)
	return out
}

// abs returns the absolute forms of dirs, sorted.
func abs(t *testing.T, dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Every run of aimeter sweep (each point) and aimeter audit (each run) is
// recorded in the results store; --no-store records none. (target_qps
// keeps the null SUT's Offline audit runs to a few samples, not a million
// each.)
func TestStudiesRecordEachRun(t *testing.T) {
	url := newSimServer(t, "sim")
	dir := t.TempDir()
	dsn := filepath.Join(dir, "store", "results.db")

	sw := filepath.Join(dir, "sweep")
	r := runCLI(t, "", "sweep", "--points", "1,2", "--sut", "openai", "--url", url, "--qsl-size", "8", "--duration", "100ms",
		"--set", "min_query_count=8", "-q", "--output-dir", sw, "--store", dsn)
	if r.code != ExitOK && r.code != ExitInvalid {
		t.Fatal(r)
	}
	want := abs(t, filepath.Join(sw, "c00001"), filepath.Join(sw, "c00002"))
	if got := storedSources(t, dsn); !slices.Equal(got, want) {
		t.Fatalf("stored %v, want the sweep's points %v", got, want)
	}

	au := filepath.Join(dir, "audit")
	r = runCLI(t, "", "audit", "TEST04", "--scenario", "Offline", "--set", "min_duration=50", "--set", "target_qps=1000", "-q", "--output-dir", au, "--store", dsn)
	if r.code != ExitOK && r.code != ExitInvalid {
		t.Fatal(r)
	}
	want = abs(t, filepath.Join(sw, "c00001"), filepath.Join(sw, "c00002"), filepath.Join(au, "audit"), filepath.Join(au, "performance", "run_1"))
	if got := storedSources(t, dsn); !slices.Equal(got, want) {
		t.Fatalf("stored %v, want the sweep's points and the audit's runs %v", got, want)
	}

	// --no-store: the runs are made, and nothing is recorded (the
	// command says nothing about a store either).
	for _, args := range [][]string{
		{"sweep", "--points", "1", "--sut", "openai", "--url", url, "--qsl-size", "8", "--duration", "100ms", "--set", "min_query_count=8", "--output-dir", filepath.Join(dir, "sweep2")},
		{"audit", "TEST04", "--scenario", "Offline", "--set", "min_duration=50", "--set", "target_qps=1000", "--output-dir", filepath.Join(dir, "audit2")},
	} {
		r := runCLI(t, "", append(args, "--no-store")...)
		if (r.code != ExitOK && r.code != ExitInvalid) || strings.Contains(r.stderr, "recorded as run") {
			t.Errorf("%s --no-store: %s", args[0], r)
		}
		if r := runCLI(t, "", append(args[:1], "--no-store", "--store", dsn)...); r.code != ExitUsage {
			t.Errorf("%s with --store and --no-store: %s", args[0], r)
		}
	}
	if got := storedSources(t, dsn); len(got) != 4 {
		t.Errorf("%d runs stored after the --no-store runs, want 4", len(got))
	}
}

// Each of the demo's five runs is recorded in the results store.
func TestDemoRecordsEachRun(t *testing.T) {
	useUntrainedWeights(t, t.TempDir())
	dir := t.TempDir()
	dsn := filepath.Join(dir, "results.db")
	out := filepath.Join(dir, "demo")
	r := runCLI(t, "", "demo", "--duration", "20ms", "-q", "--output-dir", out, "--store", dsn)
	if r.code != ExitOK && r.code != ExitInvalid {
		t.Fatal(r)
	}
	var want []string
	for _, name := range []string{"accuracy", "singlestream", "multistream", "server", "offline"} {
		want = append(want, filepath.Join(out, name))
	}
	if got := storedSources(t, dsn); !slices.Equal(got, abs(t, want...)) {
		t.Errorf("stored %v, want the demo's runs %v", got, want)
	}
}

// An upload the service stored flagged prints its differences and exits 6,
// as a refusal does; a verified one exits 0.
func TestPrintUploadFlagged(t *testing.T) {
	var out, errs strings.Builder
	st := &State{Stdout: &out, Stderr: &errs}
	err := printUpload(st, &tester.UploadReply{RunID: 3, TestID: "T-1", Attempt: 1, Status: store.StatusFlagged, KeyID: "k",
		Differences: []string{"result.json: latency_ns.p99 claimed 1, recomputed 3571470"}})
	var xe *exitError
	if !errors.As(err, &xe) || xe.code != ExitRefused || !strings.Contains(out.String(), "flagged") || !strings.Contains(errs.String(), "latency_ns.p99 claimed 1") {
		t.Errorf("flagged: %v, stdout %q, stderr %q", err, out.String(), errs.String())
	}
	if err := printUpload(st, &tester.UploadReply{RunID: 4, Status: store.StatusVerified}); err != nil {
		t.Errorf("verified: %v", err)
	}
}
