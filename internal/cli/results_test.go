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
	if r := compare(p50...); r.code != ExitNoBaseline || !strings.Contains(r.stdout, "not judged") {
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

// TestCompareGateWithoutBaseline is issue 41's reproduction: a build
// served on another port starts a series of its own, and a run 5× slower
// there passed `compare --fail-on-regression` (exit 0, "not judged: 0
// earlier runs"). Now the gate exits 7 and says why, printing the series
// keys and the field that differs; --allow-no-baseline lets it pass on
// purpose, and --baseline picks the run to compare with.
func TestCompareGateWithoutBaseline(t *testing.T) {
	server := func(delay time.Duration) *httptest.Server {
		sim, err := serve.NewOpenAI(serve.OpenAIOptions{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				time.Sleep(delay)
			}
			sim.ServeHTTP(w, r)
		}))
		t.Cleanup(func() { sim.Close(); srv.Close() })
		return srv
	}
	old, slow := server(20*time.Millisecond), server(100*time.Millisecond)
	dsn := filepath.Join(t.TempDir(), "results.db")
	for _, srv := range []*httptest.Server{old, slow} {
		r := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--scenario", "SingleStream",
			"--qsl-size", "16", "--input-tokens", "4", "--output-tokens", "2",
			"--set", "min_duration=0", "--set", "min_query_count=16", "--set", "target_latency=0.1",
			"--output-dir", filepath.Join(t.TempDir(), "run"), "--store", dsn)
		if r.code != ExitOK && r.code != ExitInvalid {
			t.Fatal(r)
		}
	}
	var runs []store.Run
	if err := json.Unmarshal([]byte(runCLI(t, "", "results", "list", "--store", dsn, "--json").stdout), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("list: %v", err)
	}
	newKey, oldKey := runs[0].SeriesKey, runs[1].SeriesKey
	if newKey == oldKey {
		t.Fatalf("both runs in series %s: the port is part of the SUT configuration", newKey)
	}
	compare := func(args ...string) cliResult {
		return runCLI(t, "", append([]string{"results", "compare", "--store", dsn, "--metric", "latency_ns.p50", "--limit", "50"}, args...)...)
	}

	r := compare("--fail-on-regression")
	if r.code != ExitNoBaseline {
		t.Fatalf("a slower run in a new series passed the gate: %s", r)
	}
	for _, want := range []string{"run 2 was not judged: it has no baseline", "no earlier run shares its series " + newKey,
		"nearest series: " + oldKey, "--baseline latest-of:" + oldKey, "--allow-no-baseline"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the gate's message lacks %q:\n%s", want, r.stderr)
		}
	}
	// The series keys are printed, and the field that made a new series.
	for _, want := range []string{"series of run 2: " + newKey + " (system ", "no baseline: no run of series " + newKey,
		"differs in SUT configuration: net.urls[0] \"" + old.URL + "\" there, \"" + slow.URL + "\" here"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, r.stdout)
		}
	}
	js := compare("--fail-on-regression", "--json")
	var doc struct {
		NoBaseline bool             `json:"no_baseline"`
		Series     store.SeriesKeys `json:"series"`
		Nearest    []struct {
			Key string `json:"key"`
		} `json:"nearest_series"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil || js.code != ExitNoBaseline || !doc.NoBaseline || doc.Series.Key != newKey || len(doc.Nearest) != 1 || doc.Nearest[0].Key != oldKey {
		t.Errorf("--json (%v): %s", err, js)
	}

	if r := compare("--fail-on-regression", "--allow-no-baseline"); r.code != ExitOK || !strings.Contains(r.stderr, "not judged: no baseline (allowed by --allow-no-baseline)") {
		t.Errorf("--allow-no-baseline: %s", r)
	}
	if r := compare("--allow-no-baseline"); r.code != ExitUsage || !strings.Contains(r.stderr, "--allow-no-baseline applies only with --fail-on-regression") {
		t.Errorf("--allow-no-baseline without --fail-on-regression: %s", r)
	}
	// A baseline picked explicitly judges the run: it regressed.
	for _, pick := range []string{"1", "latest-of:" + oldKey} {
		r := compare("--fail-on-regression", "--baseline", pick)
		if r.code != ExitRegression || !strings.Contains(r.stdout, "REGRESSION") || !strings.Contains(r.stdout, "series of the baseline: "+oldKey) ||
			!strings.Contains(r.stderr, "differ in SUT configuration") {
			t.Errorf("--baseline %s: %s", pick, r)
		}
	}
	// A gate with a baseline that judged nothing (a metric the run does not
	// have) does not pass either.
	if r := compare("--fail-on-regression", "--baseline", "1", "--metric", "latency_ns.p77"); r.code != ExitNoBaseline ||
		!strings.Contains(r.stderr, "run 2 was not judged: run 2 has no metric latency_ns.p77") {
		t.Errorf("a mistyped metric: %s", r)
	}
	if r := compare("--fail-on-regression", "--baseline", "1", "--metric", "latency_ns.p77", "--allow-no-baseline"); r.code != ExitOK {
		t.Errorf("a mistyped metric, allowed: %s", r)
	}
	for _, tc := range []struct {
		args []string
		want string
		why  string
	}{
		{[]string{"--baseline", "9"}, "--baseline 9: no run 9 in the results store", "a run the store lacks"},
		{[]string{"--baseline", "latest-of:0123456789abcdef"}, "--baseline latest-of:0123456789abcdef: no series 0123456789abcdef", "a series the store lacks"},
		{[]string{"1", "--baseline", "latest-of:" + newKey}, "has no run recorded before run 1", "a series with no run before the one judged"},
		{[]string{"--baseline", "2"}, "--baseline 2: run 2 is the run being judged", "a run compared with itself"},
		{[]string{"--baseline", "latest-of", oldKey}, "--baseline latest-of:" + oldKey + " (latest-of SERIES as two words is not taken)", "the two-word spelling"},
		{[]string{"--baseline", "latest-of:"}, "name the series after the colon", "no series named"},
		{[]string{"--baseline", "newest"}, `--baseline "newest": want a run ID or latest-of:SERIES`, "neither form"},
		{[]string{"1", "2", "--baseline", "1"}, "--baseline applies only to one run ID or none", "runs named beside a baseline"},
	} {
		if r := compare(append([]string{"--fail-on-regression"}, tc.args...)...); r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: %s\nwant exit 2 and %q", tc.why, r, tc.want)
		}
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
