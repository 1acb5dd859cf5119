package cli

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/serve"
	"aimeter/store"
)

// TestResultsListAfterRun: a run is in `aimeter results list` right after
// `aimeter run`; --no-store records nothing; show and export give all of it.
func TestResultsListAfterRun(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "store", "results.db")
	out := filepath.Join(t.TempDir(), "run")
	r := runCLI(t, "", "run", "--scenario", "Offline", "--output-dir", out, "--store", dsn)
	if r.code != ExitOK || !strings.Contains(r.stderr, "recorded as run 1") {
		t.Fatal(r)
	}
	if r := runCLI(t, "", "run", "-q", "--scenario", "Offline", "--output-dir", out, "--no-store", "--store", dsn); r.code != ExitUsage {
		t.Errorf("--store with --no-store: %s", r)
	}
	out2 := filepath.Join(t.TempDir(), "run2")
	if r := runCLI(t, "", "run", "-q", "--scenario", "SingleStream", "--output-dir", out2, "--no-store"); r.code != ExitOK {
		t.Fatal(r)
	}
	list := runCLI(t, "", "results", "list", "--store", dsn)
	if list.code != ExitOK {
		t.Fatal(list)
	}
	lines := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "1 ") || !strings.Contains(lines[1], "Offline") || !strings.Contains(lines[1], "VALID") || !strings.Contains(lines[1], "Samples per second") {
		t.Fatalf("list:\n%s", list.stdout)
	}
	show := runCLI(t, "", "results", "show", "1", "--store", dsn)
	for _, want := range []string{"verdict", "VALID (MLPerf)", "latency_ns.p99", "records.parquet", "manifest.json", "run_recorded"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	if r := runCLI(t, "", "results", "show", "7", "--store", dsn); r.code != ExitUsage || !strings.Contains(r.stderr, "no run 7") {
		t.Errorf("show of a missing run: %s", r)
	}
	if r := runCLI(t, "", "results", "show", "x", "--store", dsn); r.code != ExitUsage {
		t.Errorf("show x: %s", r)
	}
	// A bundle made with --no-store is added afterwards.
	if r := runCLI(t, "", "results", "add", out2, "--store", dsn); r.code != ExitOK || !strings.Contains(r.stdout, "run 2") {
		t.Fatal(r)
	}
	if r := runCLI(t, "", "results", "list", "--store", dsn, "--limit", "1"); !strings.Contains(r.stdout, "SingleStream") || strings.Contains(r.stdout, "Offline") {
		t.Errorf("list --limit 1 after add:\n%s", r.stdout)
	}
	if r := runCLI(t, "", "results", "add", t.TempDir(), "--store", dsn); r.code != ExitFailure {
		t.Errorf("add of a directory without a bundle: %s", r)
	}
	exp := runCLI(t, "", "results", "export", "1", "--store", dsn)
	var details []struct {
		Run     store.Run      `json:"run"`
		Metrics []store.Metric `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(exp.stdout), &details); err != nil || len(details) != 1 || details[0].Run.Scenario != "Offline" || len(details[0].Metrics) < 10 {
		t.Fatalf("export json (%v):\n%s", err, exp)
	}
	csvOut := runCLI(t, "", "results", "export", "1", "--format", "csv", "--store", dsn)
	rows, err := csv.NewReader(strings.NewReader(csvOut.stdout)).ReadAll()
	if err != nil || len(rows) != len(details[0].Metrics)+1 || rows[0][0] != "run_id" {
		t.Fatalf("export csv (%v):\n%s", err, csvOut)
	}
	if r := runCLI(t, "", "results", "export", "--format", "xml", "--store", dsn); r.code != ExitUsage || !strings.Contains(r.stderr, "--format") {
		t.Errorf("export --format xml: %s", r)
	}
}

// TestCompareFailOnRegression: runs against an OpenAI-compatible server
// with an added service time; compare --fail-on-regression passes on an
// equal run and fails (exit 5) on a run made slower.
func TestCompareFailOnRegression(t *testing.T) {
	sim, err := serve.NewOpenAI(serve.OpenAIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var delay atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(time.Duration(delay.Load()))
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { sim.Close(); srv.Close() })
	dsn := filepath.Join(t.TempDir(), "results.db")
	run := func(d time.Duration) {
		t.Helper()
		delay.Store(int64(d))
		r := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--scenario", "SingleStream",
			"--qsl-size", "16", "--input-tokens", "4", "--output-tokens", "2",
			"--set", "min_duration=0", "--set", "min_query_count=16", "--set", "target_latency=0.1",
			"--output-dir", filepath.Join(t.TempDir(), "run"), "--store", dsn)
		if r.code != ExitOK && r.code != ExitInvalid {
			t.Fatal(r)
		}
	}
	compare := func(args ...string) cliResult {
		return runCLI(t, "", append([]string{"results", "compare", "--store", dsn, "--fail-on-regression"}, args...)...)
	}
	// The service time dominates the median latency, so two runs at 20 ms
	// differ by far less than 50 % and a run at 100 ms by far more (the
	// tail of a run on a busy machine is too noisy for a tight bound).
	p50 := []string{"--metric", "latency_ns.p50", "--limit", "50"}
	run(20 * time.Millisecond)
	if r := compare(p50...); r.code != ExitOK || !strings.Contains(r.stdout, "not judged") {
		t.Errorf("one run, no history: %s", r)
	}
	run(20 * time.Millisecond)
	if r := compare(p50...); r.code != ExitOK || !strings.Contains(r.stdout, "percent latency_ns.p50: ok") {
		t.Errorf("an equal run: %s", r)
	}
	run(100 * time.Millisecond)
	r := compare(p50...)
	if r.code != ExitRegression || !strings.Contains(r.stdout, "REGRESSION") || !strings.Contains(r.stderr, "run 3 regressed") {
		t.Errorf("a slower run: %s", r)
	}
	// Welch's t-test on the latency samples finds it too; the runs named
	// explicitly are compared whatever their order on the command line.
	if r := compare("--test", "welch", "--min-samples", "16", "--min-change", "50"); r.code != ExitRegression {
		t.Errorf("welch: %s", r)
	}
	if r := compare("3", "1"); r.code != ExitRegression {
		t.Errorf("compare 3 1: %s", r)
	}
	if r := compare(append([]string{"1", "2"}, p50...)...); r.code != ExitOK {
		t.Errorf("compare 1 2: %s", r)
	}
	// A stored threshold for every series judges the same way.
	if r := runCLI(t, "", "results", "threshold", "--store", dsn, "--test", "zscore", "--metric", "latency_ns.p50", "--min-samples", "2", "--min-change", "50"); r.code != ExitOK {
		t.Fatal(r)
	}
	if r := compare(); r.code != ExitRegression || !strings.Contains(r.stdout, "zscore latency_ns.p50: REGRESSION") {
		t.Errorf("stored zscore threshold: %s", r)
	}
	if r := compare("--test", "bogus"); r.code != ExitUsage || !strings.Contains(r.stderr, "bogus") {
		t.Errorf("--test bogus: %s", r)
	}
	if r := runCLI(t, "", "results", "threshold", "--store", dsn); !strings.Contains(r.stdout, "latency_ns.p50  zscore") {
		t.Errorf("threshold list:\n%s", r)
	}
	if r := runCLI(t, "", "results", "threshold", "--store", dsn, "--test", "zscore", "--metric", "latency_ns.p50", "--delete"); r.code != ExitOK {
		t.Errorf("threshold --delete: %s", r)
	}
	if r := runCLI(t, "", "results", "threshold", "--store", dsn); !strings.Contains(r.stdout, "no thresholds stored") {
		t.Errorf("threshold list after delete:\n%s", r)
	}
}

// TestResultsOnPostgres: the same commands against a PostgreSQL store
// (AIMETER_TEST_POSTGRES, as in package store's tests).
func TestResultsOnPostgres(t *testing.T) {
	dsn := os.Getenv("AIMETER_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("AIMETER_REQUIRE_POSTGRES") == "1" {
			t.Fatal("AIMETER_REQUIRE_POSTGRES=1 but AIMETER_TEST_POSTGRES is empty")
		}
		t.Skip("AIMETER_TEST_POSTGRES is unset (scripts/start-postgres.sh prints a DSN)")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("aimeter_cli_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	pg := u.String()
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // the files of a PostgreSQL store
	r := runCLI(t, "", "run", "--scenario", "Offline", "--output-dir", filepath.Join(t.TempDir(), "run"), "--store", pg)
	if r.code != ExitOK || !strings.Contains(r.stderr, "recorded as run 1") {
		t.Fatal(r)
	}
	if r := runCLI(t, "", "results", "list", "--store", pg); !strings.Contains(r.stdout, "Offline") {
		t.Errorf("list:\n%s", r)
	}
	if r := runCLI(t, "", "results", "show", "1", "--store", pg); !strings.Contains(r.stdout, "records.parquet") {
		t.Errorf("show:\n%s", r)
	}
}

// TestTrainIsRecorded: aimeter train records its training bundle too.
func TestTrainIsRecorded(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "results.db")
	out := filepath.Join(t.TempDir(), "train")
	r := runCLI(t, "", "train", "--trials", "1", "--output-dir", out, "--store", dsn, "--", "sh", "../../benchmark/testdata/train/child.sh")
	if !strings.Contains(r.stderr, "recorded as run 1") {
		t.Fatal(r)
	}
	list := runCLI(t, "", "results", "list", "--store", dsn, "--json")
	var runs []store.Run
	if err := json.Unmarshal([]byte(list.stdout), &runs); err != nil || len(runs) != 1 || runs[0].Kind != "training" {
		t.Fatalf("list (%v):\n%s", err, list)
	}
	show := runCLI(t, "", "results", "show", "1", "--store", dsn)
	if show.code != ExitOK || !strings.Contains(show.stdout, "training_events.jsonl") {
		t.Errorf("show:\n%s", show)
	}
}
