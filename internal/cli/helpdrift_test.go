package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/store"
)

// TestSessionsHelpNamesTheHistoryDefault: `sessions --help` says what a
// later turn's history holds by default, the --history flag's default
// (server: the server's own answers), and how to get the data set's
// answers instead; it said the data set's answers were sent, which is
// --history dataset.
func TestSessionsHelpNamesTheHistoryDefault(t *testing.T) {
	res := runCLI(t, "", "sessions", "--help")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	cmd := newSessionsCommand(&State{})
	def := cmd.Flags().Lookup("history").DefValue
	long := strings.Join(strings.Fields(cmd.Long), " ")
	if def != "server" || !strings.Contains(long, "By default (--history server) the earlier answers in it are the server's own") ||
		!strings.Contains(long, "--history dataset sends the data set's reference answers") {
		t.Errorf("--history defaults to %q; the help's account of the history:\n%s", def, cmd.Long)
	}
	if !strings.Contains(res.stdout, "By default (--history server)") {
		t.Errorf("sessions --help does not print the history's default:\n%s", res.stdout)
	}
}

// TestResultsListHelpNamesItsColumns: the columns `results list --help`
// promises are the ones its table has, each of them and no other (it
// promised a "test" column the table never had).
func TestResultsListHelpNamesItsColumns(t *testing.T) {
	res := runCLI(t, "", "results", "list", "--help")
	if res.code != ExitOK {
		t.Fatal(res)
	}
	first, _, _ := strings.Cut(res.stdout, "\n")
	_, cols, ok := strings.Cut(first, "newest first: ")
	if !ok {
		t.Fatalf("results list --help does not list its columns:\n%s", res.stdout)
	}
	// The words of the help for each header of store.WriteRuns.
	header := map[string]string{"ID": "ID", "time": "RECORDED (UTC)", "kind": "KIND", "scenario": "SCENARIO", "mode": "MODE", "SUT": "SUT",
		"verdict": "VERDICT", "status": "STATUS", "headline metric": "HEADLINE", "series": "SERIES"}
	var buf bytes.Buffer
	if err := store.WriteRuns(&buf, []store.Run{{ID: 1, RecordedAt: time.Unix(0, 0), Kind: "inference"}}); err != nil {
		t.Fatal(err)
	}
	printed, _, _ := strings.Cut(buf.String(), "\n")
	named := map[string]bool{}
	for _, c := range strings.Split(cols, ", ") {
		h, ok := header[c]
		if !ok || !strings.Contains(printed, h) {
			t.Errorf("results list --help names a column %q; the table's header is %q", c, printed)
		}
		named[h] = true
	}
	for _, h := range header {
		if !named[h] {
			t.Errorf("results list prints %q, which its help does not name (%q)", h, cols)
		}
	}
}

// TestReplaySpeedupRange: --speedup 0 is refused before the run, naming
// the flag, like the other factors outside [1e-6, 1e6] (it replayed at
// 1× while 1e-9 and -2 were refused).
func TestReplaySpeedupRange(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		io.WriteString(w, `{"data":[{"id":"m"}]}`)
	}))
	defer srv.Close()
	trace, err := filepath.Abs("../../workload/trace/testdata/mooncake_sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ v, shown, why string }{
		{"0", "0", "a factor of 0 would stop the clock; it ran at 1×"},
		{"-2", "-2", "a negative factor"},
		{"1e-9", "1e-09", "below 1e-6"},
		{"2e6", "2e+06", "above 1e6"},
		{"NaN", "NaN", "not a number"},
	} {
		res := runCLI(t, "", "replay", trace, "-q", "--sut", "openai", "--url", srv.URL, "--speedup", tc.v, "--output-dir", filepath.Join(t.TempDir(), "out"))
		if res.code != ExitUsage || !strings.Contains(res.stderr, "--speedup "+tc.shown+": want a factor in [1e-6, 1e6]") {
			t.Errorf("%s: %v", tc.why, res)
		}
	}
	if n := posts.Load(); n != 0 {
		t.Errorf("%d requests sent by refused replays", n)
	}
}

// TestSweepDocNotYetIsNotBuilt: docs/sweep.md's "Not yet" list names no
// feature the commands have (it listed the rate search and run --slo
// goodput, both built).
func TestSweepDocNotYetIsNotBuilt(t *testing.T) {
	b, err := os.ReadFile("../../docs/sweep.md")
	if err != nil {
		t.Fatal(err)
	}
	_, notYet, ok := strings.Cut(string(b), "\n## Not yet\n")
	if !ok {
		return // nothing listed as missing
	}
	notYet, _, _ = strings.Cut(notYet, "\n## ")
	notYet = strings.Join(strings.Fields(notYet), " ")
	for _, tc := range []struct {
		phrase, cmd, flag, why string
	}{
		{"request rate", "sweep", "--max-rate", "the goodput search over request rate (sweep --max-rate)"},
		{"--slo", "run", "--slo", "a single run's goodput (run --slo)"},
	} {
		if !strings.Contains(notYet, tc.phrase) {
			continue
		}
		if res := runCLI(t, "", tc.cmd, "--help"); strings.Contains(res.stdout, tc.flag+" ") {
			t.Errorf("docs/sweep.md lists as not yet %s, which is built", tc.why)
		}
	}
}
