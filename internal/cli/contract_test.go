package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/serve"
)

// contractServer is a server a contract cell runs against: aimeter's own
// simulators over real sockets, healthy or faulty.
type contractServer struct {
	name string
	args []string // the SUT flags that reach it
}

// contractServers starts the servers of the contract matrix: an in-process
// SUT needs none; the OpenAI-compatible simulator healthy, with a third of
// its answers HTTP 5xx, and resetting every connection; the KServe v2
// simulator's null model over HTTP.
func contractServers(t *testing.T) map[string]contractServer {
	t.Helper()
	openai := func(faults serve.Faults) string {
		ttft, _ := serve.ParseDurationDist("1ms")
		tpot, _ := serve.ParseDurationDist("100us")
		sim := newSim(t, "4", serve.OpenAIOptions{Models: []string{"sim"}, TTFT: ttft, TPOT: tpot, Seed: 3, Faults: faults})
		srv := httptest.NewServer(sim)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	k, err := serve.NewKServe(serve.KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	ks := httptest.NewServer(k)
	t.Cleanup(ks.Close)
	llm := []string{"--qsl-size", "16", "--input-tokens", "8", "--output-tokens", "4"}
	return map[string]contractServer{
		"null":       {"null", []string{"--sut", "null"}},
		"null-async": {"null-async", []string{"--sut", "null-async"}},
		"openai":     {"openai", append([]string{"--sut", "openai", "--url", openai(serve.Faults{})}, llm...)},
		"openai-5xx": {"openai-5xx", append([]string{"--sut", "openai", "--url", openai(serve.Faults{Status5xx: 0.3})}, llm...)},
		"openai-rst": {"openai-rst", append([]string{"--sut", "openai", "--url", openai(serve.Faults{Reset: 1})}, llm...)},
		"kserve":     {"kserve", []string{"--sut", "kserve", "--url", ks.URL, "--qsl-size", "16"}},
	}
}

// contractCell is one command line of the matrix.
type contractCell struct {
	name    string
	command []string // the command and its load flags; the server's and --output-dir are added
	server  string
	// duration is what the cell asked for (0: the run has none); a run
	// that passes must have lasted it, or said before it started why not.
	duration time.Duration
	// study: the output folder holds one bundle per point (a sweep), whose
	// verdicts the exit code does not carry one for one.
	study bool
}

// contractCells is the matrix: every command that runs load, over the SUT
// kinds, the scenarios, the GB/T arrival modes and fixed concurrency, with
// healthy and faulty servers. Each cell is short: what is checked is that
// every writer says the same thing, not what the verdict is.
func contractCells() []contractCell {
	short := []string{"--set", "min_query_count=16"}
	var cells []contractCell
	add := func(c contractCell) { cells = append(cells, c) }
	for _, sc := range []string{"SingleStream", "MultiStream", "Server", "Offline"} {
		cmd := append([]string{"run", "--scenario", sc, "--duration", "100ms"}, short...)
		if sc == "Offline" {
			// The null SUT's default expected rate makes an Offline query
			// of 2.2 million samples, some 45 s under -race; 220 say the
			// same (a run that misses min_duration, INVALID everywhere).
			cmd = append(cmd, "--set", "target_qps=2000")
		}
		add(contractCell{name: "run/" + sc + "/null", command: cmd, server: "null", duration: 100 * time.Millisecond})
	}
	for _, srv := range []string{"openai", "openai-5xx", "openai-rst", "kserve"} {
		add(contractCell{name: "run/Server/" + srv, command: []string{"run", "--scenario", "Server", "--duration", "300ms", "--set", "target_qps=100", "--set", "min_query_count=20"},
			server: srv, duration: 300 * time.Millisecond})
		add(contractCell{name: "run/Offline/" + srv, command: []string{"run", "--scenario", "Offline", "--duration", "100ms", "--set", "min_query_count=20"},
			server: srv, duration: 100 * time.Millisecond})
		add(contractCell{name: "run/concurrency/" + srv, command: []string{"run", "--concurrency", "2", "--duration", "200ms", "--set", "min_query_count=10"},
			server: srv, duration: 200 * time.Millisecond})
	}
	gbt := map[string][]string{
		"0": {"--arrival-mode", "0", "--duration", "300ms"},
		"1": {"--arrival-mode", "1", "--period", "20ms", "--duration", "300ms", "--set", "min_query_count=10"},
		"2": {"--arrival-mode", "2", "--lambda", "50", "--duration", "300ms", "--set", "min_query_count=10"},
		"3": {"--arrival-mode", "3", "--lambda", "20", "--bursts", "1", "--burst-length", "50ms", "--burst-jobs", "5", "--duration", "400ms", "--set", "min_query_count=5"},
		"4": {"--arrival-mode", "4"},
		"5": {"--arrival-mode", "5", "--mixed-base-mode", "2", "--lambda", "40", "--mixed-lambda", "20", "--duration", "300ms", "--set", "min_query_count=5"},
	}
	for _, mode := range []string{"0", "1", "2", "3", "4", "5"} {
		d := 300 * time.Millisecond
		if mode == "4" {
			d = 0
		} else if mode == "3" {
			d = 400 * time.Millisecond
		}
		add(contractCell{name: "gbt/mode" + mode + "/null-async", command: append([]string{"run"}, gbt[mode]...), server: "null-async", duration: d})
	}
	for _, srv := range []string{"openai", "openai-rst", "kserve"} {
		add(contractCell{name: "gbt/mode0/" + srv, command: append([]string{"run"}, gbt["0"]...), server: srv, duration: 300 * time.Millisecond})
		add(contractCell{name: "gbt/mode2/" + srv, command: append([]string{"run"}, gbt["2"]...), server: srv, duration: 300 * time.Millisecond})
	}
	add(contractCell{name: "gbt/mode2-timeout/openai", command: []string{"run", "--arrival-mode", "2", "--lambda", "50", "--duration", "300ms",
		"--job-timeout", "1ms", "--set", "min_query_count=10"}, server: "openai", duration: 300 * time.Millisecond})
	add(contractCell{name: "gbt/mode2-cut/null-async", command: []string{"run", "--arrival-mode", "2", "--lambda", "50", "--duration", "400ms",
		"--timeout", "150ms", "--set", "min_query_count=10"}, server: "null-async", duration: 400 * time.Millisecond})
	add(contractCell{name: "sweep/openai", command: []string{"sweep", "--points", "1,2", "--duration", "200ms", "--set", "min_query_count=6"}, server: "openai", study: true})
	add(contractCell{name: "sweep/openai-rst", command: []string{"sweep", "--points", "1", "--duration", "200ms", "--set", "min_query_count=6"}, server: "openai-rst", study: true})
	add(contractCell{name: "sessions/openai", command: []string{"sessions", "--sessions", "2", "--turns", "2", "--think", "1ms", "--user-words", "8", "--answer-tokens", "4"}, server: "openai"})
	return cells
}

var (
	reportBadge  = regexp.MustCompile(`<h2>[^<]*<span class="badge (\w+)">([^<]*)</span></h2>`)
	consoleWords = regexp.MustCompile(`(?m)^(?:Result is : |GB/T verdict: )(\S+)$`)
)

// TestRunContract is issue 39's contract, checked over the whole command
// surface: for every cell of the matrix (contractCells), the exit code,
// the console's verdict and reasons, result.json, report.html's headline
// badge, the summary's GB/T note and `aimeter check` say the same thing;
// a passing run lasted what it asked for or said why before it started;
// a run whose every sample failed has no headline figure. A mutation of
// any one of these writers fails it.
func TestRunContract(t *testing.T) {
	servers := contractServers(t)
	for _, c := range contractCells() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			args := append(append(append([]string{}, c.command...), servers[c.server].args...), "-q", "--no-store", "--output-dir", out)
			if c.command[0] == "sessions" {
				args = withoutFlags(args, "--qsl-size", "--input-tokens", "--output-tokens")
			}
			res := runCLI(t, "", args...)
			interrupted := res.code == ExitInterrupted && slices.Contains(args, "--timeout")
			if res.code != ExitOK && res.code != ExitInvalid && !interrupted {
				t.Fatalf("%v: %v", args, res)
			}
			dirs := bundleDirs(t, out)
			if len(dirs) == 0 {
				t.Fatalf("no bundle under %s: %v", out, res)
			}
			anyFail := false
			for _, dir := range dirs {
				r := readResultT(t, dir)
				if !r.Verdict.Pass && r.Verdict.Kind != derived.VerdictNone {
					anyFail = true
				}
				checkContract(t, c, dir, r, res)
			}
			// The exit code is the verdict: of the run, or for a study, 3
			// when any point failed.
			want := ExitOK
			if anyFail {
				want = ExitInvalid
			}
			if c.study && res.code != want && res.code != ExitOK {
				t.Errorf("exit %d, want %d (or 0: a study's exit code is its own finding)", res.code, want)
			}
			if interrupted && anyFail {
				want = ExitInterrupted // a run cut by --timeout, documented as 4
			}
			if !c.study && res.code != want {
				t.Errorf("exit %d, but result.json says %v", res.code, readResultT(t, dirs[0]).VerdictWord)
			}
			if !c.study {
				words := consoleWords.FindAllStringSubmatch(res.stdout, -1)
				r := readResultT(t, dirs[0])
				if r.Verdict.Kind != derived.VerdictNone && (len(words) != 1 || words[0][1] != r.VerdictWord) {
					t.Errorf("console verdict %q, result.json %s:\n%s", words, r.VerdictWord, res.stdout)
				}
				for _, why := range r.Verdict.Reasons {
					if !strings.Contains(res.stdout, "* "+why) {
						t.Errorf("the reason %q of result.json is not on the console:\n%s", why, res.stdout)
					}
				}
				if c.duration > 0 && r.Verdict.Pass {
					checkLasted(t, dirs[0], c.duration, res.stderr)
				}
			}
		})
	}
}

// checkContract checks one bundle against result.json: the report's
// badge, the summary's GB/T note, the headline, and `aimeter check`.
func checkContract(t *testing.T, c contractCell, dir string, r *derived.ResultJSON, res cliResult) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if m := reportBadge.FindSubmatch(page); r.Verdict.Kind != derived.VerdictNone && (m == nil || string(m[2]) != r.VerdictWord) {
		t.Errorf("%s: report.html's badge %q, result.json %s", dir, m, r.VerdictWord)
	}
	for _, why := range r.Verdict.Reasons {
		if !strings.Contains(string(page), htmlEscape(why)) {
			t.Errorf("%s: the reason %q is not in report.html", dir, why)
		}
	}
	if r.GBT != nil {
		sum := readFileT(t, filepath.Join(dir, "mlperf_log_summary.txt"))
		if !strings.Contains(sum, "its whole duration: "+r.VerdictWord+",") {
			t.Errorf("%s: the summary's GB/T note does not say %s:\n%s", dir, r.VerdictWord, sum)
		}
	}
	if r.Samples.OK == 0 && r.Headline != nil {
		t.Errorf("%s: no sample succeeded, yet a headline %+v", dir, r.Headline)
	}
	chk := runCLI(t, "", "check", dir)
	wantCheck := ExitOK
	if !r.Verdict.Pass && r.Verdict.Kind != derived.VerdictNone {
		wantCheck = ExitInvalid
	}
	if chk.code != wantCheck {
		t.Errorf("%s: aimeter check exits %d, the run's verdict is %s (%q):\n%s", dir, chk.code, r.VerdictWord, r.Verdict.Reasons, chk.stdout)
	}
	// Its errors are the verdict's reasons, no more: an intact bundle
	// has nothing else wrong.
	if n := strings.Count(chk.stdout, "ERROR "); n != len(r.Verdict.Reasons) {
		t.Errorf("%s: aimeter check reports %d errors, the verdict %d reasons (%q):\n%s", dir, n, len(r.Verdict.Reasons), r.Verdict.Reasons, chk.stdout)
	}
}

// checkLasted: a run that passed lasted its requested duration, or a note
// before it started said how long it would take instead.
func checkLasted(t *testing.T, dir string, want time.Duration, stderr string) {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	pass := b.Result.ReportedPass()
	if pass < 0 {
		return
	}
	got := time.Duration(b.Result.Passes[pass].EndNs)
	// A fixed-period schedule's last job is a period before the end.
	if got < want*8/10 && !strings.Contains(stderr, "aimeter:") {
		t.Errorf("%s: the run lasted %v of the %v asked, and nothing said so before it started:\n%s", dir, got, want, stderr)
	}
}

// bundleDirs lists the bundles under out (out itself, or a study's
// points).
func bundleDirs(t *testing.T, out string) []string {
	t.Helper()
	var dirs []string
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == derived.ResultFile {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	return dirs
}

func readResultT(t *testing.T, dir string) *derived.ResultJSON {
	t.Helper()
	var r derived.ResultJSON
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(dir, derived.ResultFile))), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// htmlEscape escapes s as html/template escapes text.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// withoutFlags drops each named flag and its value from args.
func withoutFlags(args []string, flags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		drop := false
		for _, f := range flags {
			if args[i] == f {
				drop = true
			}
		}
		if drop {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
