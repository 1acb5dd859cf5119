package cli

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"aimeter/internal/pgtest"
	"aimeter/store"
	"aimeter/tester"
)

// testServerDSNs are the databases the end-to-end test runs the service
// on: SQLite, and PostgreSQL when AIMETER_TEST_POSTGRES holds a DSN
// (AIMETER_REQUIRE_POSTGRES=1 makes its absence a failure).
func testServerDSNs(t *testing.T) map[string]func(t *testing.T) string {
	m := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "server.db") },
	}
	if dsn := pgtest.DSN(t); dsn != "" {
		m["postgres"] = func(t *testing.T) string { return pgtest.Fresh(t, dsn, "aimeter_cli_") }
	}
	return m
}

// TestAnnexAEndToEnd is the network test of GB/T 45087 Annex A through the
// commands: the tester's service runs over HTTPS with its self-signed
// certificate; the tested party makes a key (aimeter keygen); the tester
// registers the test item (aimeter server register: test ID, token,
// configuration file); the tested party runs the reference SUT with
// --config, --token and --key, which reports its lifecycle and uploads the
// signed bundle; the service verifies and recomputes it, and the run is on
// the dashboard with its lifecycle (test_start, data_download_start and
// _end, test_end, upload_complete) in order. A second upload of the same bundle is refused (exit 5).
func TestAnnexAEndToEnd(t *testing.T) {
	useUntrainedWeights(t, t.TempDir())
	for name, dsn := range testServerDSNs(t) {
		t.Run(name, func(t *testing.T) {
			dataDir := t.TempDir()
			db, err := store.Open(context.Background(), store.Options{DSN: dsn(t), FilesDir: filepath.Join(dataDir, "results")})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			srv, err := tester.New(tester.Options{Store: db, DataDir: dataDir})
			if err != nil {
				t.Fatal(err)
			}
			cfg, _, err := tester.TLSConfig("", "", dataDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(srv)
			ts.TLS = cfg
			ts.Config.ErrorLog = log.New(io.Discard, "", 0)
			ts.StartTLS()
			defer ts.Close()
			admin, _ := tester.LoadAdminToken(dataDir)
			cert := filepath.Join(dataDir, filepath.FromSlash(tester.SelfSignedCertFile))

			wd := t.TempDir()
			key := filepath.Join(wd, "lab")
			if r := runCLI(t, wd, "keygen", "--out", key); r.code != ExitOK {
				t.Fatal(r)
			}
			item := filepath.Join(wd, "item.json")
			r := runCLI(t, wd, "server", "register", "--server", ts.URL, "--ca", cert, "--token", admin,
				"--party", "Example Lab", "--public-key", key+".pub", "--out", item)
			if r.code != ExitOK {
				t.Fatal(r)
			}
			token := regexp.MustCompile(`(?m)^token:\s+(\S+)`).FindStringSubmatch(r.stdout)
			testID := regexp.MustCompile(`(?m)^test ID:\s+(\S+)`).FindStringSubmatch(r.stdout)
			if token == nil || testID == nil {
				t.Fatal(r)
			}
			out := filepath.Join(wd, "run")
			r = runCLI(t, wd, "run", "--sut", "reference", "--scenario", "Offline", "--set", "target_qps=1000", "--set", "min_duration=100", "--set", "min_query_count=10",
				"--output-dir", out, "--config", item, "--token", token[1], "--key", key+".key")
			// The verdict depends on the machine's speed (a short Offline run
			// may miss its minimum duration); either way the run is uploaded.
			if (r.code != ExitOK && r.code != ExitInvalid) || !strings.Contains(r.stdout, "uploaded: run 1 of test item "+testID[1]+", attempt 1, verified") {
				t.Fatal(r)
			}

			// The dashboard shows it, verified, with its lifecycle.
			hc, _ := tester.TrustPEM([]byte(readFileT(t, cert)))
			page := func(path string) string {
				req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
				req.Header.Set("Authorization", "Bearer "+admin)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
				}
				return string(b)
			}
			html := page("/tests/" + testID[1])
			for _, want := range []string{"verified", "Offline", "VALID", "test_start", "test_end", "upload_complete", "intact"} {
				if !strings.Contains(html, want) {
					t.Errorf("the test item's page lacks %q", want)
				}
			}
			var run tester.RunView
			if err := json.Unmarshal([]byte(page("/api/v1/runs/1")), &run); err != nil {
				t.Fatal(err)
			}
			if run.Status != store.StatusVerified || run.TestItemID != testID[1] || !strings.Contains(run.SUT, "Reference") || len(run.Metrics) == 0 {
				t.Errorf("run = %+v", run.Run)
			}
			var at tester.AuditTrail
			json.Unmarshal([]byte(page("/api/v1/events?test="+testID[1])), &at)
			// The Annex A lifecycle, in order: the run reported loading its
			// data set between test_start and test_end.
			lifecycle := []string{store.EventTestStart, store.EventDataDownloadStart, store.EventDataDownloadEnd, store.EventTestEnd, store.EventUploadComplete}
			var kinds []string
			for _, e := range at.Events {
				if slices.Contains(lifecycle, e.Kind) {
					kinds = append(kinds, e.Kind)
				}
				if e.Kind == store.EventDataDownloadEnd && (!strings.Contains(string(e.Detail), `"qsl"`) || !strings.Contains(string(e.Detail), `"total_samples"`)) {
					t.Errorf("data_download_end detail %s lacks the QSL", e.Detail)
				}
			}
			if !slices.Equal(kinds, lifecycle) {
				t.Errorf("lifecycle events %v, want %v", kinds, lifecycle)
			}

			// The same bundle again (a retry whose first answer was
			// lost): nothing stored, told it is stored already.
			r = runCLI(t, wd, "submit", out, "--config", item, "--token", token[1], "--key", key+".key")
			if r.code != ExitOK || !strings.Contains(r.stdout, "stored already, by an earlier upload of this bundle: run 1 of test item "+testID[1]) {
				t.Fatal(r)
			}
			// A flag missing fails before anything runs.
			r = runCLI(t, wd, "submit", out, "--config", item, "--key", key+".key")
			if r.code != ExitUsage || !strings.Contains(r.stderr, "--token") {
				t.Fatal(r)
			}
		})
	}
}
