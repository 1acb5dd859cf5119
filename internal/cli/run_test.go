package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/workload/trace"
)

// Small settings per scenario that give a VALID null-SUT run in well under a
// second, even with -race.
// Small settings per scenario that give a VALID null-SUT run in a fraction
// of a second, even with -race. SingleStream and MultiStream issue back to
// back, and a null SUT answers in about 100 ns (SingleStream) or 500 ns per
// 8-sample query (MultiStream) without -race: the pre-generated queries
// (twice expected rate × min_duration) must outlast min_duration or the run
// ends early with an error, so the expected latencies stay tiny and
// min_duration short, which also keeps query generation cheap under -race.
var quickSets = map[string][]string{
	// 20M expected queries/s × 2 × 5 ms = 200k generated; ~50k needed.
	"SingleStream": {"--set", "min_duration=5", "--set", "target_latency=0.00005"},
	// 5M expected queries/s × 2 × 5 ms = 50k generated; ~10k needed.
	// MultiStream early stopping at p99 needs at least 662 queries.
	"MultiStream": {"--set", "min_duration=5", "--set", "target_latency=0.0002", "--set", "min_query_count=700"},
	// About 900 queries in 300 ms (p99 early stopping needs 459 with none
	// over the bound, 662 with one). A -race build on a busy machine issues
	// a few thousand queries a second at worst, and a 1 s bound keeps any
	// scheduling hiccup from making the run INVALID.
	"Server": {"--set", "min_duration=300", "--set", "target_qps=3000", "--set", "target_latency=1000"},
	// The null SUT finishes 2000 samples in about a millisecond, so no
	// positive min_duration is reliably met: min_duration 0 and a fixed
	// query size instead.
	"Offline": {"--set", "min_duration=0", "--set", "min_query_count=2000"},
}

var testScenarios = []string{"SingleStream", "MultiStream", "Server", "Offline"}

func quickArgs(scenario, out string, extra ...string) []string {
	args := []string{"run", "-q", "--scenario", scenario, "--output-dir", out}
	args = append(args, quickSets[scenario]...)
	return append(args, extra...)
}

func TestRunScenarios(t *testing.T) {
	type row struct {
		scenario, sut string
		trace         bool
		reason        string
	}
	var rows []row
	for _, sc := range testScenarios {
		rows = append(rows,
			row{sc, "null", false, "synchronous SUT completes inside IssueQuery"},
			row{sc, "null-async", sc == "Server" || sc == "MultiStream", "asynchronous SUT completes from a worker goroutine; --trace on some rows"},
		)
	}
	wantName := map[string]string{"null": "NullSUT", "null-async": "NullAsyncSUT"}
	for _, r := range rows {
		t.Run(r.scenario+"/"+r.sut, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			extra := []string{"--sut", r.sut}
			if r.trace {
				extra = append(extra, "--trace")
			}
			res := runCLI(t, "", quickArgs(r.scenario, out, extra...)...)
			if res.code != ExitOK {
				t.Fatalf("%s: want exit 0\n%s\n%s", r.reason, res, readFileT(t, filepath.Join(out, bundle.SummaryFile)))
			}
			if !strings.Contains(res.stdout, "Result is : VALID") {
				t.Errorf("stdout lacks the VALID verdict:\n%s", res.stdout)
			}
			if !strings.Contains(res.stdout, "SUT "+wantName[r.sut]+", QSL NullQSL (1024 samples), "+r.scenario+", PerformanceOnly") {
				t.Errorf("stdout lacks the run line:\n%s", res.stdout)
			}
			if !strings.Contains(res.stdout, "Logs written to "+out) {
				t.Errorf("stdout does not say where the logs are:\n%s", res.stdout)
			}
			if e := withoutScheduleWarning(res.stderr); e != "" {
				t.Errorf("-q run wrote to stderr:\n%s", e)
			}
			checkSendLatenessLine(t, res.stdout, out, r.scenario == "Server")
			if len(res.exits) != 0 {
				t.Errorf("Exit called with %v", res.exits)
			}
			for _, f := range []string{bundle.SummaryFile, bundle.DetailFile, bundle.AccuracyFile, bundle.RecordsFile, bundle.SettingsFile, bundle.TraceFile} {
				_, err := os.Stat(filepath.Join(out, f))
				want := f != bundle.TraceFile || r.trace
				if want && err != nil {
					t.Errorf("%s missing: %v", f, err)
				}
				if !want && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s written without --trace (stat: %v)", f, err)
				}
			}
			if r.trace {
				if b := readFileT(t, filepath.Join(out, bundle.TraceFile)); !json.Valid([]byte(b)) {
					t.Errorf("%s is not valid JSON", bundle.TraceFile)
				}
			}
			entries, dirErr := os.ReadDir(out)
			if dirErr != nil {
				t.Fatal(dirErr)
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}

			summary := readFileT(t, filepath.Join(out, bundle.SummaryFile))
			if !strings.Contains(summary, "Result is : VALID\n") || !strings.Contains(summary, "Scenario : "+r.scenario+"\n") {
				t.Errorf("summary is not a VALID %s summary:\n%s", r.scenario, summary)
			}
			if !strings.HasSuffix(summary, "\nNo warnings encountered during test.\n\nNo errors encountered during test.\n") {
				t.Errorf("summary footer reports warnings or errors:\n%s", summary)
			}

			info := readRunInfoT(t, out)
			recs := readRecordsT(t, out)
			if len(info.Passes) != 1 || !info.Passes[0].Reported || info.Passes[0].Kind != loadgen.PassPerformance {
				t.Fatalf("want one reported performance pass, got %+v", info.Passes)
			}
			p := info.Passes[0]
			wantRows := p.QueriesIssued * info.Effective.SamplesPerQuery
			if uint64(len(recs)) != wantRows {
				t.Errorf("records.csv has %d rows, want queries issued %d × samples per query %d = %d",
					len(recs), p.QueriesIssued, info.Effective.SamplesPerQuery, wantRows)
			}
			d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
			if q := detailValue[uint64](t, d, "result_query_count"); q != p.QueriesIssued {
				t.Errorf("detail result_query_count %d, settings.json queries_issued %d", q, p.QueriesIssued)
			}
			if v := detailValue[string](t, d, "result_validity"); v != "VALID" {
				t.Errorf("detail result_validity %q", v)
			}
			queries := map[uint64]bool{}
			for i, rec := range recs {
				if rec.Status != loadgen.StatusOK {
					t.Fatalf("record %d: status %v", i, rec.Status)
				}
				if rec.SeqID < p.FirstSeq || rec.SeqID >= p.EndSeq {
					t.Fatalf("record %d: seq id %d outside the pass [%d, %d)", i, rec.SeqID, p.FirstSeq, p.EndSeq)
				}
				if rec.SampleIndex >= 1024 {
					t.Fatalf("record %d: sample index %d beyond the QSL", i, rec.SampleIndex)
				}
				if rec.CompletedNs < rec.IssuedNs || rec.IssuedNs < 0 {
					t.Fatalf("record %d: issued %d, completed %d", i, rec.IssuedNs, rec.CompletedNs)
				}
				queries[rec.QueryID] = true
			}
			if uint64(len(queries)) != p.QueriesIssued {
				t.Errorf("records hold %d distinct queries, want %d", len(queries), p.QueriesIssued)
			}
		})
	}
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	badConf := filepath.Join(dir, "user.conf")
	if err := os.WriteFile(badConf, []byte("# user settings\n*.Server.target_qps 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-mlperf.conf")
	rows := []struct {
		name   string
		args   []string
		want   []string // substrings of stderr
		reason string
	}{
		{"unknown scenario", []string{"--scenario", "Streaming"}, []string{"--scenario", `unknown scenario "Streaming"`},
			"the scenario name is checked before anything else"},
		{"unknown mode", []string{"--mode", "fast"}, []string{"--mode", `unknown mode "fast"`},
			"the mode name is checked before any config is read"},
		{"set without =", []string{"--set", "nonsense"}, []string{`--set "nonsense"`, "NAME=VALUE"},
			"a --set without '=' cannot name a key"},
		{"set with scenario prefix", []string{"--set", "Server.target_qps=5"}, []string{`--set "Server.target_qps=5"`},
			"--set takes a bare key; the scenario comes from --scenario"},
		{"set with empty value", []string{"--set", "min_duration="}, []string{`--set "min_duration="`},
			"a key without value sets nothing and is refused"},
		{"set non-number", []string{"--set", "min_duration=soon"}, []string{"min_duration", "integer or a double"},
			"config values must be numbers"},
		{"negative target_qps", []string{"--scenario", "Server", "--set", "target_qps=-1"}, []string{"server_target_qps", "-1"},
			"Validate refuses a negative rate before the run and names the field"},
		{"unknown key", []string{"--set", "foo=1"}, []string{"foo", "is not a setting"},
			"a key LoadGen never reads would be silently ignored"},
		{"key of another scenario", []string{"--scenario", "Offline", "--set", "target_latency=5"}, []string{"target_latency", "is not a setting"},
			"Offline has no target_latency"},
		{"qsl size zero", []string{"--qsl-size", "0"}, []string{"--qsl-size"},
			"an empty QSL has nothing to issue"},
		{"same index beyond the set", []string{"--scenario", "SingleStream", "--performance-sample-count", "10",
			"--set", "performance_issue_same=1", "--set", "performance_issue_same_index=99"},
			[]string{"performance_issue_same_index", "99", "performance_sample_count (10)"},
			"the repeated sample must be in the loaded performance set"},
		{"find-peak with Offline", []string{"--scenario", "Offline", "--mode", "find-peak"},
			[]string{"FindPeakPerformance is only supported in the Server scenario"},
			"find-peak searches a Server rate"},
		{"user.conf syntax error", []string{"--user-conf", badConf}, []string{badConf + ":2:", "target_qps", "key = value"},
			"LoadGen fails a config file with a malformed line; the file and line are named"},
		{"missing mlperf.conf", []string{"--mlperf-conf", missing}, []string{missing, "no such file"},
			"an explicitly named config file must exist"},
		{"unknown sut", []string{"--sut", "gpu"}, []string{`--sut "gpu"`},
			"only the null SUTs are built in"},
		{"unknown flag", []string{"--speed", "11"}, []string{"unknown flag: --speed", "aimeter --help"},
			"cobra's own errors are usage errors too"},
		{"positional argument", []string{"Server"}, []string{"unknown command", "aimeter --help"},
			"run takes no arguments"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", out}, r.args...)...)
			if res.code != ExitUsage {
				t.Fatalf("%s: want exit %d\n%s", r.reason, ExitUsage, res)
			}
			for _, w := range r.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", r.reason, w, res.stderr)
				}
			}
			if !strings.HasPrefix(res.stderr, "aimeter: ") {
				t.Errorf("stderr does not start with the program name:\n%s", res.stderr)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: nothing should have run, but the output directory exists (stat: %v)", r.reason, err)
			}
			if res.stdout != "" {
				t.Errorf("stdout not empty:\n%s", res.stdout)
			}
		})
	}
}

func TestRunAccuracyMode(t *testing.T) {
	const qslSize = 300
	for _, sc := range testScenarios {
		t.Run(sc, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", quickArgs(sc, out, "--mode", "accuracy", "--qsl-size", strconv.Itoa(qslSize))...)
			if res.code != ExitOK {
				t.Fatalf("accuracy run: want exit 0\n%s", res)
			}
			entries := readAccuracyT(t, out)
			if !strings.Contains(res.stdout, "Accuracy log: "+strconv.Itoa(len(entries))+" responses") {
				t.Errorf("stdout does not count the %d accuracy responses:\n%s", len(entries), res.stdout)
			}
			if strings.Contains(res.stdout, "Result is") {
				t.Errorf("an accuracy run has no performance verdict:\n%s", res.stdout)
			}
			count := map[uint64]int{}
			seqs := map[uint64]bool{}
			for _, e := range entries {
				if e.QSLIdx >= qslSize {
					t.Fatalf("qsl_idx %d beyond the QSL of %d", e.QSLIdx, qslSize)
				}
				if seqs[e.SeqID] {
					t.Fatalf("seq_id %d logged twice", e.SeqID)
				}
				seqs[e.SeqID] = true
				count[e.QSLIdx]++
			}
			if len(count) != qslSize {
				t.Errorf("%d distinct QSL samples logged, want all %d", len(count), qslSize)
			}
			if sc == "MultiStream" {
				// Queries of 8 samples: the last one is padded with repeats
				// of the first samples of the set.
				if len(entries)%8 != 0 || len(entries) < qslSize || len(entries) >= qslSize+8 {
					t.Errorf("MultiStream logged %d responses, want the %d samples padded to whole queries of 8", len(entries), qslSize)
				}
			} else {
				for idx, n := range count {
					if n != 1 {
						t.Errorf("QSL sample %d logged %d times, want exactly once", idx, n)
					}
				}
				if len(entries) != qslSize {
					t.Errorf("%d responses, want %d", len(entries), qslSize)
				}
			}
			recs := readRecordsT(t, out)
			if len(recs) != len(entries) {
				t.Errorf("records.csv has %d rows, accuracy log %d entries", len(recs), len(entries))
			}
			info := readRunInfoT(t, out)
			if len(info.Passes) != 1 || info.Passes[0].Kind != loadgen.PassAccuracy || info.Passes[0].Reported {
				t.Errorf("want one unreported accuracy pass, got %+v", info.Passes)
			}
			summary := readFileT(t, filepath.Join(out, bundle.SummaryFile))
			if strings.Contains(summary, "MLPerf Results Summary") {
				t.Errorf("accuracy-only summary has a performance block:\n%s", summary)
			}

			// report on an accuracy-only run succeeds and says so.
			out2 := filepath.Join(t.TempDir(), "re")
			rep := runCLI(t, "", "report", out, "--output-dir", out2)
			if rep.code != ExitOK || !strings.Contains(rep.stdout, "has no performance pass") {
				t.Errorf("report of an accuracy run:\n%s", rep)
			}
			if got := readFileT(t, filepath.Join(out2, bundle.SummaryFile)); got != summary {
				t.Errorf("report changed the accuracy-only summary:\n%s\nwant:\n%s", got, summary)
			}
		})
	}
}

func TestRunAuditConfig(t *testing.T) {
	rows := []struct {
		name     string
		audit    string
		extra    []string
		wantMinQ uint64
		reason   string
	}{
		{"applied", "*.SingleStream.min_query_count = 1234\n", nil, 1234,
			"audit.config in the working directory overrides the self-test defaults"},
		{"other scenario ignored", "*.Server.min_query_count = 1234\n", nil, 100,
			"lines for another scenario do not apply, but the file is still found"},
		{"model-specific line ignored", "resnet50.SingleStream.min_query_count = 1234\n", nil, 100,
			"LoadGen reads audit.config with model \"*\" only"},
		{"--set wins", "*.SingleStream.min_query_count = 1234\n", []string{"--set", "min_query_count=300"}, 300,
			"--set is applied after audit.config, as run --help says"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			wd := t.TempDir()
			if err := os.WriteFile(filepath.Join(wd, "audit.config"), []byte(r.audit), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, wd, quickArgs("SingleStream", out, r.extra...)...)
			if res.code != ExitOK {
				t.Fatalf("%s: want exit 0\n%s", r.reason, res)
			}
			if !strings.Contains(res.stderr, "warning: "+mlperfconf.AuditConfigWarning) {
				t.Errorf("stderr lacks the audit.config warning:\n%s", res.stderr)
			}
			info := readRunInfoT(t, out)
			if info.Effective.MinQueryCount != r.wantMinQ || info.Requested.MinQueryCount != r.wantMinQ {
				t.Errorf("%s: settings.json min_query_count requested %d effective %d, want %d",
					r.reason, info.Requested.MinQueryCount, info.Effective.MinQueryCount, r.wantMinQ)
			}
			d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
			if got := detailValue[uint64](t, d, "effective_min_query_count"); got != r.wantMinQ {
				t.Errorf("%s: detail effective_min_query_count %d, want %d", r.reason, got, r.wantMinQ)
			}
			var warned bool
			for _, v := range d["warning_generic_message"] {
				var s string
				if json.Unmarshal(v, &s) == nil && s == mlperfconf.AuditConfigWarning {
					warned = true
				}
			}
			if !warned {
				t.Errorf("detail log lacks the audit.config warning_generic_message")
			}
			summary := readFileT(t, filepath.Join(out, bundle.SummaryFile))
			if !strings.Contains(summary, "\nmin_query_count : "+strconv.Itoa(int(r.wantMinQ))+"\n") {
				t.Errorf("summary does not show min_query_count %d", r.wantMinQ)
			}
			if !strings.Contains(summary, "\n1 warning encountered. See detailed log.\n") {
				t.Errorf("summary footer does not count the audit.config warning:\n%s", summary)
			}
			if info.Passes[0].QueriesIssued < r.wantMinQ {
				t.Errorf("issued %d queries, fewer than min_query_count %d", info.Passes[0].QueriesIssued, r.wantMinQ)
			}
		})
	}

	t.Run("syntax error", func(t *testing.T) {
		wd := t.TempDir()
		if err := os.WriteFile(filepath.Join(wd, "audit.config"), []byte("*.SingleStream.min_query_count = many\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		res := runCLI(t, wd, quickArgs("SingleStream", out)...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, filepath.Join(wd, "audit.config")+":1:") {
			t.Errorf("a malformed audit.config must stop the run naming the file and line:\n%s", res)
		}
	})
}

// interruptRun starts a long Server run, fires the twin's interrupt after
// delay, and returns what the command did.
func interruptRun(t *testing.T, delay time.Duration, second bool) (cliResult, string, time.Duration) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	tw := newTwin(t, "run", "-q", "--scenario", "Server", "--output-dir", out,
		"--set", "min_duration=60000", "--set", "target_qps=1000", "--set", "target_latency=100")
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- tw.main() }()
	select {
	case <-tw.notified:
	case code := <-done:
		t.Fatalf("run ended with %d before asking for interrupts\n%s", code, tw.stderr.String())
	}
	time.Sleep(delay)
	tw.mu.Lock()
	interrupt, onSecond := tw.interrupt, tw.second
	tw.mu.Unlock()
	interrupt(errors.New("interrupted by test signal"))
	if second {
		onSecond()
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end within 20 s of the interrupt")
	}
	elapsed := time.Since(start)
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.stopped {
		t.Errorf("the interrupt handler was never stopped")
	}
	return cliResult{code: code, stdout: tw.stdout.String(), stderr: tw.stderr.String(), exits: tw.exits}, out, elapsed
}

func TestRunInterrupt(t *testing.T) {
	res, out, elapsed := interruptRun(t, 300*time.Millisecond, false)
	if res.code != ExitInterrupted {
		t.Fatalf("want exit %d after an interrupt\n%s", ExitInterrupted, res)
	}
	if elapsed > 10*time.Second {
		t.Errorf("the 60 s run took %v to stop", elapsed)
	}
	if len(res.exits) != 0 {
		t.Errorf("Exit called with %v on a single interrupt", res.exits)
	}
	if !strings.Contains(res.stdout, "  * Issuing stopped early: interrupted by test signal.\n") {
		t.Errorf("stdout does not say why the run ended:\n%s", res.stdout)
	}
	if strings.Count(res.stdout, "interrupted by test signal") != 1 || strings.Contains(res.stdout, "QPS") {
		t.Errorf("stdout must say once that the run was interrupted, with no QPS advice:\n%s", res.stdout)
	}
	if !strings.Contains(res.stdout, "Result is : INVALID") {
		t.Errorf("stdout does not show INVALID:\n%s", res.stdout)
	}
	if !strings.Contains(res.stderr, "aimeter: run interrupted: interrupted by test signal") {
		t.Errorf("stderr does not report the interruption:\n%s", res.stderr)
	}
	for _, f := range []string{bundle.SummaryFile, bundle.DetailFile, bundle.AccuracyFile, bundle.RecordsFile, bundle.SettingsFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written after the interrupt: %v", f, err)
		}
	}
	summary := readFileT(t, filepath.Join(out, bundle.SummaryFile))
	for _, want := range []string{"Result is : INVALID\n", "  Min duration satisfied : NO\n",
		" * Issuing stopped early: interrupted by test signal.\n"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	info := readRunInfoT(t, out)
	if info.Interrupted != "interrupted by test signal" {
		t.Errorf("settings.json interrupted = %q", info.Interrupted)
	}
	recs := readRecordsT(t, out)
	// About 300 queries at 1000/s; far fewer than the 60 000 scheduled.
	if len(recs) == 0 || len(recs) > 20000 {
		t.Errorf("%d records after a 300 ms run at 1000 qps", len(recs))
	}
	if uint64(len(recs)) != info.Passes[0].QueriesIssued {
		t.Errorf("records.csv has %d rows, %d queries issued", len(recs), info.Passes[0].QueriesIssued)
	}

	// The stored run reports the same verdict; report itself exits 3
	// (INVALID), as there is nothing to interrupt.
	out2 := filepath.Join(t.TempDir(), "re")
	rep := runCLI(t, "", "report", out, "--output-dir", out2)
	if rep.code != ExitInvalid {
		t.Errorf("report of an interrupted run: want exit %d\n%s", ExitInvalid, rep)
	}
	if got := readFileT(t, filepath.Join(out2, bundle.SummaryFile)); got != summary {
		t.Errorf("report of the interrupted run differs:\n%s\nwant:\n%s", got, summary)
	}
}

func TestRunSecondInterrupt(t *testing.T) {
	res, _, _ := interruptRun(t, 100*time.Millisecond, true)
	if len(res.exits) != 1 || res.exits[0] != ExitForced {
		t.Errorf("a second interrupt must call Exit(%d), got %v", ExitForced, res.exits)
	}
	if !strings.Contains(res.stderr, "second interrupt, exiting without writing logs") {
		t.Errorf("stderr lacks the forced-exit message:\n%s", res.stderr)
	}
	// The twin's Exit returns, so the command goes on as after one interrupt.
	if res.code != ExitInterrupted {
		t.Errorf("want exit %d once Exit returned\n%s", ExitInterrupted, res)
	}
}

// TestRunTimeoutFlag checks that --timeout ends a run like an interrupt.
func TestRunTimeoutFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	res := runCLI(t, "", "run", "-q", "--scenario", "Server", "--output-dir", out, "--timeout", "300ms",
		"--set", "min_duration=60000", "--set", "target_qps=1000", "--set", "target_latency=100")
	if res.code != ExitInterrupted {
		t.Fatalf("--timeout: want exit %d\n%s", ExitInterrupted, res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("--timeout 300ms took %v", d)
	}
	if !strings.Contains(res.stdout, "Issuing stopped early: run timeout of 300ms reached") {
		t.Errorf("stdout:\n%s", res.stdout)
	}
}

// withoutScheduleWarning is stderr without the warning of a Server run
// whose issuer fell behind its schedule (benchmark's scheduleWarning),
// which a machine loaded by other tests may earn a run its share.
func withoutScheduleWarning(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "warning: the issuer fell behind its schedule: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// checkSendLatenessLine checks the console's send-lateness line of a run
// written to dir against result.json's send_lateness: both or neither
// (only a run on a schedule has one), with the same counts.
func checkSendLatenessLine(t *testing.T, stdout, dir string, scheduled bool) {
	t.Helper()
	var r struct {
		SendLateness *trace.LatenessSummary `json:"send_lateness"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(dir, "result.json"))), &r); err != nil {
		t.Fatal(err)
	}
	const prefix = "Send lateness (issued − scheduled) "
	has := strings.Contains(stdout, prefix)
	switch {
	case scheduled && r.SendLateness == nil:
		t.Errorf("result.json of a run on a schedule has no send_lateness")
	case !scheduled && (has || r.SendLateness != nil):
		t.Errorf("a run off a schedule has a send lateness: console %v, result.json %+v", has, r.SendLateness)
	case scheduled:
		l := r.SendLateness
		want := fmt.Sprintf("; %d of %d later than %v\n", l.Late, l.Count, l.LateAfter)
		if i := strings.Index(stdout, prefix); i < 0 || !strings.Contains(stdout[i:], want) {
			t.Errorf("console lacks result.json's send lateness %q:\n%s", prefix+"…"+want, stdout)
		}
	}
}
