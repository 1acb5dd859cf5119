package shardtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"aimeter/derived"
	"aimeter/internal/binarytest"
	"aimeter/internal/peerstest"
	"aimeter/loadgen"
	"aimeter/shard"
)

// aimeterBin is the binary the tests run, built once.
var aimeterBin binarytest.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	aimeterBin.Remove()
	os.Exit(code)
}

// buildAimeter builds cmd/aimeter once and returns its path.
func buildAimeter(t *testing.T) string { return aimeterBin.Path(t) }

// duckdbPython is the python of a peers virtualenv that imports duckdb:
// the test is skipped without one, and fails under AIMETER_REQUIRE_PEERS=1.
func duckdbPython(t *testing.T) string {
	t.Helper()
	return filepath.Join(peerstest.Bin(t, nil, "duckdb"), "python")
}

// outcome is how one aimeter process ended.
type outcome struct {
	args           []string
	code           int
	stdout, stderr string
}

func (o outcome) String() string {
	return fmt.Sprintf("aimeter %s: exit %d\n--- stdout:\n%s--- stderr:\n%s", strings.Join(o.args, " "), o.code, o.stdout, o.stderr)
}

// processTimeout bounds every aimeter process of the tests.
const processTimeout = 2 * time.Minute

// command is aimeter with args in dir, not started.
func command(bin, dir string, args []string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	return cmd, &stdout, &stderr
}

// runAimeter runs aimeter with args in dir and returns how it ended.
func runAimeter(t *testing.T, bin, dir string, args ...string) outcome {
	t.Helper()
	return runAll(t, bin, dir, [][]string{args})[0]
}

// runAll runs one aimeter process for each of argss at once, in dir, and
// returns how each ended. A process still running after processTimeout
// is killed and fails t.
func runAll(t *testing.T, bin, dir string, argss [][]string) []outcome {
	t.Helper()
	out := make([]outcome, len(argss))
	var wg sync.WaitGroup
	for i, args := range argss {
		cmd, stdout, stderr := command(bin, dir, args)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(processTimeout, func() { cmd.Process.Kill() })
		wg.Go(func() {
			defer timer.Stop()
			cmd.Wait()
			out[i] = outcome{args: args, code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
		})
	}
	wg.Wait()
	return out
}

// startServe starts `aimeter serve openai` with args (their --addr
// replaced by a free loopback port) and returns its base URL; the server
// is stopped (SIGTERM) when t ends.
func startServe(t *testing.T, bin string, args []string) string {
	t.Helper()
	args = slices.Clone(args)
	i := slices.Index(args, "--addr")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("aimeter %s: no --addr", strings.Join(args, " "))
	}
	args[i+1] = "127.0.0.1:0"
	cmd := exec.Command(bin, args...)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	line, err := bufio.NewReader(pipe).ReadString('\n')
	m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("aimeter %s: no address in %q (%v)\n%s", strings.Join(args, " "), line, err, stderr.String())
	}
	go func() { // the rest of its output, so that it never blocks writing
		buf := make([]byte, 4096)
		for {
			if _, err := pipe.Read(buf); err != nil {
				return
			}
		}
	}()
	return m[1]
}

// startAt is a common start lead from now, in whole seconds, as
// docs/sharding.md's `date -u -d '+N seconds' +%Y-%m-%dT%H:%M:%SZ` writes
// it: at least lead − 1 s ahead.
func startAt(lead time.Duration) string {
	return time.Now().Add(lead).UTC().Format(time.RFC3339)
}

// shardArgs are the arguments of shard i of n: args with "--shard i/n"
// and "--output-dir shard-i" appended.
func shardArgs(args []string, i, n int) []string {
	return append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", i, n), "--output-dir", fmt.Sprintf("shard-%d", i))
}

// shardDirs are shard-0 … shard-(n−1) under dir.
func shardDirs(dir string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, filepath.Join(dir, fmt.Sprintf("shard-%d", i)))
	}
	return out
}

// passRecords reads the bundle in dir and returns it with the records of
// its reported pass by sequence id.
func passRecords(t *testing.T, dir string) (*loadgen.Result, loadgen.PassInfo, map[uint64]loadgen.Record) {
	t.Helper()
	b, err := derived.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := b.Result
	p := res.ReportedPass()
	if p < 0 {
		t.Fatalf("%s: no reported pass", dir)
	}
	recs := map[uint64]loadgen.Record{}
	for r := range res.PassRecords(p) {
		if _, dup := recs[r.SeqID]; dup {
			t.Fatalf("%s: seq %d recorded twice", dir, r.SeqID)
		}
		recs[r.SeqID] = r
	}
	if len(recs) == 0 {
		t.Fatalf("%s: the reported pass has no records", dir)
	}
	return res, res.Passes[p], recs
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// sameSchedule checks (a): every shard names the one-host run's schedule
// digest, issued exactly its queries by the rule (query q to shard q mod
// N), and their union is the one-host run's records (sequence id, query
// id, sample index and, when times is set, the scheduled time), bit for
// bit; the merged bundle holds that union, each shard's scheduled times
// moved by the shift merge.json records for it.
func sameSchedule(t *testing.T, whole string, shards []string, merged string, times bool) {
	t.Helper()
	var wholeRec shard.Record
	readJSON(t, filepath.Join(whole, shard.File), &wholeRec)
	if wholeRec.Count != 1 || len(wholeRec.ScheduleSHA256) != 64 {
		t.Fatalf("the one-host run's shard.json: %+v, want a whole test's with a digest", wholeRec)
	}
	_, wholePass, want := passRecords(t, whole)
	var m shard.Merge
	readJSON(t, filepath.Join(merged, shard.MergeFile), &m)
	if m.ScheduleSHA256 != wholeRec.ScheduleSHA256 || m.Count != len(shards) || len(m.Shards) != len(shards) {
		t.Fatalf("merge.json: %d of %d shards, schedule %s; want %d, the one-host run's %s", len(m.Shards), m.Count, m.ScheduleSHA256, len(shards), wholeRec.ScheduleSHA256)
	}
	owner := map[uint64]int{}
	union := map[uint64]loadgen.Record{}
	for i, dir := range shards {
		var rec shard.Record
		readJSON(t, filepath.Join(dir, shard.File), &rec)
		if rec.Index != i || rec.Count != len(shards) || rec.ScheduleSHA256 != wholeRec.ScheduleSHA256 || !slices.Equal(rec.PassSchedules, wholeRec.PassSchedules) {
			t.Fatalf("%s: shard.json %+v; want shard %d of %d with the one-host run's schedule %s", dir, rec, i, len(shards), wholeRec.ScheduleSHA256)
		}
		_, pass, recs := passRecords(t, dir)
		if pass.FirstSeq != wholePass.FirstSeq {
			t.Fatalf("%s: the pass starts at seq %d, the one-host run's at %d", dir, pass.FirstSeq, wholePass.FirstSeq)
		}
		sh := loadgen.Shard{Index: i, Count: len(shards)}
		for seq, r := range recs {
			if o, dup := owner[seq]; dup {
				t.Fatalf("seq %d issued by shards %d and %d", seq, o, i)
			}
			if q := int(seq - pass.FirstSeq); !sh.OwnsQuery(q) {
				t.Fatalf("%s: issued query %d (seq %d), which is shard %d's", dir, q, seq, q%len(shards))
			}
			owner[seq], union[seq] = i, r
		}
		if m.Shards[i].Index != i || m.Shards[i].Records != uint64(len(recs)) {
			t.Errorf("merge.json's shard %d: %+v; the shard's pass has %d records", i, m.Shards[i], len(recs))
		}
	}
	id := func(r loadgen.Record, shift int64) string {
		s := fmt.Sprintf("seq %d query %d sample %d", r.SeqID, r.QueryID, r.SampleIndex)
		if times {
			s += fmt.Sprintf(" scheduled %d", r.ScheduledNs+shift)
		}
		return s
	}
	if len(union) != len(want) {
		t.Errorf("the shards issued %d samples, the one-host run %d", len(union), len(want))
	}
	for seq, w := range want {
		if u, ok := union[seq]; !ok || id(u, 0) != id(w, 0) {
			t.Fatalf("one host: %s; the shards: %s (found %v)", id(w, 0), id(u, 0), ok)
		}
	}
	_, _, got := passRecords(t, merged)
	if len(got) != len(want) {
		t.Errorf("the merged bundle has %d samples, the one-host run %d", len(got), len(want))
	}
	for seq, w := range want {
		g, ok := got[seq]
		shift := m.Shards[owner[seq]].ShiftNs
		if !ok || id(g, 0) != id(w, shift) {
			t.Fatalf("one host: %s (+ shard %d's shift %d ns); merged: %s (found %v)", id(w, 0), owner[seq], shift, id(g, 0), ok)
		}
	}
	t.Logf("%d samples: the shards' union and the merge are the one-host schedule (%s)", len(want), wholeRec.ScheduleSHA256[:12])
	shardTable(t, merged, &m)
}

// shardTable checks that the merged bundle's report.html shows its
// per-shard table: one row per shard, with its bundle's digest.
func shardTable(t *testing.T, merged string, m *shard.Merge) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(merged, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(page), `-shards">Per shard</h3>`)
	if !ok {
		t.Fatalf("the merged report.html has no per-shard table")
	}
	table, _, _ = strings.Cut(table, "</table>")
	if rows := strings.Count(table, "<tr><th>") - 1; rows != m.Count {
		t.Errorf("the merged report.html's shard table has %d rows, want %d", rows, m.Count)
	}
	for _, s := range m.Shards {
		if !strings.Contains(table, fmt.Sprintf("<tr><th>%d</th><td>%s</td>", s.Index, s.Dir)) || !strings.Contains(table, s.ManifestSHA256) {
			t.Errorf("the merged report.html's shard table has no row for shard %d (%s, %s)", s.Index, s.Dir, s.ManifestSHA256)
		}
	}
}

// duckdbScript computes, with DuckDB over Parquet record files, the
// sample latencies (completion − scheduled time) of the completed samples
// with sequence ids in [first, end): their count by status, and min, max,
// LoadGen's integer mean and, for each percentile p, the value at LoadGen's
// rank trunc(n × p) (an IEEE double product) of the sorted latencies.
const duckdbScript = `
import duckdb, json, sys
args = json.loads(sys.argv[1])
con = duckdb.connect()
con.execute("CREATE TABLE r AS SELECT * FROM read_parquet(?) WHERE seq_id >= ? AND seq_id < ?", [args["files"], args["first"], args["end"]])
statuses = dict(con.execute("SELECT status, count(*) FROM r GROUP BY status").fetchall())
con.execute("CREATE TABLE lat AS SELECT completed_ns - scheduled_ns AS v FROM r WHERE status = 1")
n, lo, hi, mean = con.execute("SELECT count(*), min(v), max(v), CAST(sum(v) // count(*) AS BIGINT) FROM lat").fetchone()
ranked = "SELECT v FROM (SELECT v, row_number() OVER (ORDER BY v) - 1 AS rank FROM lat) WHERE rank = CAST(floor(CAST(? AS DOUBLE) * CAST(? AS DOUBLE)) AS BIGINT)"
pct = {repr(p): con.execute(ranked, [n, p]).fetchone()[0] for p in args["percentiles"]}
print(json.dumps({"statuses": {str(k): v for k, v in statuses.items()}, "n": n, "min": lo, "max": hi, "mean": mean, "percentiles": pct}))
`

// duckdbLatencies is duckdbScript's answer.
type duckdbLatencies struct {
	Statuses    map[string]int64 `json:"statuses"`
	N           int64            `json:"n"`
	Min         int64            `json:"min"`
	Max         int64            `json:"max"`
	Mean        int64            `json:"mean"`
	Percentiles map[string]int64 `json:"percentiles"`
}

// pyRepr is Python's repr of a float, the key of duckdbLatencies.Percentiles.
func pyRepr(p float64) string {
	s := strconv.FormatFloat(p, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// summaryLine matches a percentile or min/max/mean line of
// mlperf_log_summary.txt's additional stats.
var summaryLine = regexp.MustCompile(`(?m)^(\d+\.\d\d percentile|Min|Max|Mean) latency \(ns\)\s*: (\d+)$`)

// exactPercentiles checks (b): the merged bundle's latency figures
// (result.json and mlperf_log_summary.txt) are those DuckDB computes over
// the shards' records.parquet files, for every completed sample of the
// reported pass; no sample of it failed or was lost.
func exactPercentiles(t *testing.T, python string, shards []string, merged string) {
	t.Helper()
	res, pass, _ := passRecords(t, merged)
	var files []string
	for _, dir := range shards {
		files = append(files, filepath.Join(dir, "records.parquet"))
	}
	ps := append(slices.Clone(loadgen.ReportedPercentiles[:]), res.Effective.TargetLatencyPercentile)
	in, _ := json.Marshal(map[string]any{"files": files, "first": pass.FirstSeq, "end": pass.EndSeq, "percentiles": ps})
	cmd := exec.Command(python, "-c", duckdbScript, string(in))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderr.String())
	}
	var d duckdbLatencies
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("duckdb's answer %q: %v", out, err)
	}
	if len(d.Statuses) != 1 || d.Statuses["1"] != d.N || d.N == 0 {
		t.Fatalf("DuckDB: samples by status %v (1 ok, 2 failed, 3 lost), %d latencies; the test wants every sample completed", d.Statuses, d.N)
	}
	var result struct {
		Latency map[string]int64 `json:"latency_ns"`
	}
	readJSON(t, filepath.Join(merged, "result.json"), &result)
	want := map[string]int64{"count": d.N, "min": d.Min, "max": d.Max, "mean": d.Mean,
		"p50": d.Percentiles["0.5"], "p90": d.Percentiles["0.9"], "p95": d.Percentiles["0.95"], "p99": d.Percentiles["0.99"], "p99_9": d.Percentiles["0.999"]}
	for k, v := range want {
		if got, ok := result.Latency[k]; !ok || got != v {
			t.Errorf("merged result.json latency_ns.%s = %d (present %v); DuckDB over the shards' records: %d", k, got, ok, v)
		}
	}
	summary, err := os.ReadFile(filepath.Join(merged, "mlperf_log_summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := summaryLine.FindAllStringSubmatch(string(summary), -1)
	if len(lines) != 3+len(loadgen.ReportedPercentiles) {
		t.Fatalf("merged mlperf_log_summary.txt: %d latency lines, want %d:\n%s", len(lines), 3+len(loadgen.ReportedPercentiles), summary)
	}
	for _, l := range lines {
		var w int64
		switch l[1] {
		case "Min":
			w = d.Min
		case "Max":
			w = d.Max
		case "Mean":
			w = d.Mean
		default:
			p, _ := strconv.ParseFloat(strings.TrimSuffix(l[1], " percentile"), 64)
			i := slices.IndexFunc(loadgen.ReportedPercentiles[:], func(q float64) bool { return fmt.Sprintf("%.2f", q*100) == fmt.Sprintf("%.2f", p) })
			if i < 0 {
				t.Fatalf("merged summary: %q is no reported percentile", l[0])
			}
			w = d.Percentiles[pyRepr(loadgen.ReportedPercentiles[i])]
		}
		if l[2] != strconv.FormatInt(w, 10) {
			t.Errorf("merged mlperf_log_summary.txt %q; DuckDB over the shards' records: %d", l[0], w)
		}
	}
	target := pyRepr(res.Effective.TargetLatencyPercentile)
	if got := res.Summary.TargetPercentile.SampleLatency; got != d.Percentiles[target] {
		t.Errorf("the merged summary's target percentile (%s) is %d; DuckDB: %d", target, got, d.Percentiles[target])
	}
	t.Logf("DuckDB over the shards' Parquet records: %d latencies, p50 %d, p99 %d ns, as the merge reports", d.N, d.Percentiles["0.5"], d.Percentiles["0.99"])
}

// verdictLine is the console's verdict line: LoadGen's, or a GB/T test's.
var verdictLine = regexp.MustCompile(`(?m)^(?:Result is :|GB/T verdict:) (.*)$`)

// checkVerdictLine matches what `aimeter check` prints for each reason of
// a run's verdict.
var checkVerdictLine = regexp.MustCompile(`(?m)^ERROR (.*?): (.*) \(verdict\)$`)

// sameVerdict checks (c): the merged bundle's verdict (result.json; the
// merge's console and exit code, given) is the one `aimeter report`
// recomputes from it (report, run in dir), which rewrites its derived
// files byte for byte, and the one `aimeter check` prints (check): each
// reason an error, exit 0 only for a pass.
func sameVerdict(t *testing.T, bin, dir string, merge outcome, merged string, report, check []string) {
	t.Helper()
	var result struct {
		Word    string   `json:"verdict_word"`
		Reasons []string `json:"reasons"`
		Verdict struct {
			Pass bool `json:"pass"`
		} `json:"verdict"`
	}
	readJSON(t, filepath.Join(merged, "result.json"), &result)
	if m := verdictLine.FindStringSubmatch(merge.stdout); m == nil || m[1] != result.Word || result.Word == "-" || result.Word == "" {
		t.Fatalf("merged result.json says %q; the merge printed %v:\n%s", result.Word, m, merge)
	}
	if wantCode := map[bool]int{true: 0, false: 3}[result.Verdict.Pass]; merge.code != wantCode {
		t.Errorf("the merge exited %d with a %s verdict, want %d", merge.code, result.Word, wantCode)
	}
	derivedFiles := []string{"result.json", "mlperf_log_summary.txt", "mlperf_log_detail.txt", "report.html"}
	before := map[string][]byte{}
	for _, f := range derivedFiles {
		data, err := os.ReadFile(filepath.Join(merged, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = data
	}
	rep := runAimeter(t, bin, dir, report...)
	if m := verdictLine.FindStringSubmatch(rep.stdout); m == nil || m[1] != result.Word || rep.code != merge.code {
		t.Errorf("aimeter report of the merged bundle: %v, want %q and exit %d\n%s", m, result.Word, merge.code, rep)
	}
	for _, f := range derivedFiles {
		if data, _ := os.ReadFile(filepath.Join(merged, f)); !bytes.Equal(data, before[f]) {
			t.Errorf("aimeter report rewrote the merge's %s with other bytes", f)
		}
	}
	chk := runAimeter(t, bin, dir, check...)
	var reasons []string
	for _, m := range checkVerdictLine.FindAllStringSubmatch(chk.stdout+chk.stderr, -1) {
		reasons = append(reasons, m[2])
	}
	if result.Verdict.Pass {
		if len(reasons) != 0 || chk.code != 0 {
			t.Errorf("aimeter check of a merged %s bundle: %v\n%s", result.Word, reasons, chk)
		}
	} else if !slices.Equal(reasons, result.Reasons) || chk.code == 0 {
		t.Errorf("aimeter check of the merged bundle gives the verdict's reasons %q (exit %d); result.json %q\n%s", reasons, chk.code, result.Reasons, chk)
	}
	t.Logf("verdict %s (%d reasons): the merge, aimeter report and aimeter check agree", result.Word, len(result.Reasons))
}

// shardedRun runs a test of args (a whole test's run flags, no output
// directory) on one host into dir/whole (as shard 0/1, which records the
// schedule's digest in shard.json), then as n shards, separate
// processes with a common start, into dir/shard-I, and merges them into
// dir/merged; it returns the merge's outcome. times says whether the
// schedule's times are compared (an open-loop schedule's; a closed loop's
// depend on the answers).
func shardedRun(t *testing.T, bin, dir string, args []string, n int) outcome {
	t.Helper()
	whole := runAimeter(t, bin, dir, append(slices.Clone(args), "--shard", "0/1", "--output-dir", "whole")...)
	if whole.code != 0 && whole.code != 3 {
		t.Fatalf("the one-host run: %v", whole)
	}
	start := startAt(4 * time.Second)
	var argss [][]string
	for i := range n {
		argss = append(argss, append(shardArgs(args, i, n), "--start-at", start, "--start-tolerance", "1s"))
	}
	for _, o := range runAll(t, bin, dir, argss) {
		if o.code != 0 {
			t.Fatalf("a shard: %v", o)
		}
	}
	merge := runAimeter(t, bin, dir, append([]string{"merge", "--output-dir", "merged"}, shardDirs(".", n)...)...)
	if merge.code != 0 && merge.code != 3 {
		t.Fatalf("merge: %v", merge)
	}
	return merge
}

// checkSharded runs the checks (a) to (c) on a test shardedRun ran in dir.
func checkSharded(t *testing.T, bin, dir string, n int, merge outcome, times bool) {
	t.Helper()
	python := duckdbPython(t)
	shards := shardDirs(dir, n)
	merged := filepath.Join(dir, "merged")
	sameSchedule(t, filepath.Join(dir, "whole"), shards, merged, times)
	exactPercentiles(t, python, shards, merged)
	sameVerdict(t, bin, dir, merge, merged, []string{"report", "merged"}, []string{"check", "merged"})
}

// TestShardedGBTPoisson: a GB/T 45087 test in arrival mode 2 (Poisson
// arrivals of one seeded schedule), the null SUT in each process, as 4
// shards: the merge is the one-host schedule bit for bit, its percentiles
// DuckDB's over the shards' records, its verdict (GB/T's PASS or FAIL)
// aimeter report's and aimeter check's.
func TestShardedGBTPoisson(t *testing.T) {
	t.Parallel()
	duckdbPython(t) // before the build: skipped at once without DuckDB
	bin := buildAimeter(t)
	dir := t.TempDir()
	args := []string{"run", "--sut", "null-async", "--qsl-size", "64", "--arrival-mode", "2", "--lambda", "400", "--duration", "1500ms", "--seed", "7", "--no-store", "-q"}
	merge := shardedRun(t, bin, dir, args, 4)
	checkSharded(t, bin, dir, 4, merge, true)
}

// TestShardedFixedConcurrency: aimeter's fixed-concurrency mode (a closed
// loop of 8 in flight, 400 queries) as 4 shards of 2 in flight each: the
// merge holds the one-host run's queries (ids and samples; a closed
// loop's times are its own), its percentiles are DuckDB's over the
// shards' records and its verdict aimeter report's and aimeter check's.
func TestShardedFixedConcurrency(t *testing.T) {
	t.Parallel()
	duckdbPython(t) // before the build: skipped at once without DuckDB
	bin := buildAimeter(t)
	dir := t.TempDir()
	args := []string{"run", "--sut", "null-async", "--qsl-size", "64", "--concurrency", "8",
		"--set", "min_duration=0", "--set", "min_query_count=400", "--set", "max_query_count=400", "--no-store", "-q"}
	merge := shardedRun(t, bin, dir, args, 4)
	checkSharded(t, bin, dir, 4, merge, false)
}

// TestShardKilledMidRun: of 4 shards with a common start, shard 2 is
// killed while it issues; the others complete.
//
// SIGKILL (a node lost, the OOM killer) leaves shard 2 no bundle: the
// merge of the four directories refuses (exit 2), naming shard 2's, and
// writes nothing; the three others merged with --allow-partial are
// INVALID, naming shard 2 as missing.
//
// SIGTERM (what Kubernetes sends the other pods of a failed Job) lets
// shard 2 write an interrupted bundle (exit 4): the merge refuses it too,
// naming it; with --allow-partial it merges it, and the merged test is
// INVALID, interrupted, naming shard 2.
func TestShardKilledMidRun(t *testing.T) {
	t.Parallel()
	bin := buildAimeter(t)
	const n, victim = 4, 2
	t.Run("SIGKILL", func(t *testing.T) {
		dir := t.TempDir()
		killedShards(t, bin, dir, n, victim, syscall.SIGKILL, -1)
		r := runAimeter(t, bin, dir, append([]string{"merge", "--output-dir", "merged"}, shardDirs(".", n)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, fmt.Sprintf("shard-%d", victim)) {
			t.Errorf("the merge with a killed shard: %v; want exit 2 naming shard-%d", r, victim)
		}
		t.Logf("the merge refused: %s", strings.TrimSpace(r.stderr))
		if _, err := os.Stat(filepath.Join(dir, "merged")); err == nil {
			t.Errorf("a refused merge wrote its output directory")
		}
		var others []string
		for i, d := range shardDirs(".", n) {
			if i != victim {
				others = append(others, d)
			}
		}
		r = runAimeter(t, bin, dir, append([]string{"merge", "--allow-partial", "--output-dir", "partial"}, others...)...)
		if want := fmt.Sprintf("shard(s) [%d] missing", victim); r.code != 3 || !strings.Contains(r.stdout, want) {
			t.Errorf("--allow-partial without the killed shard: %v; want exit 3 saying %q", r, want)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		dir := t.TempDir()
		killedShards(t, bin, dir, n, victim, syscall.SIGTERM, 4)
		r := runAimeter(t, bin, dir, append([]string{"merge", "--output-dir", "merged"}, shardDirs(".", n)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, fmt.Sprintf("shard %d (", victim)) || !strings.Contains(r.stderr, "interrupted") {
			t.Errorf("the merge with an interrupted shard: %v; want exit 2 naming shard %d as interrupted", r, victim)
		}
		t.Logf("the merge refused: %s", strings.TrimSpace(r.stderr))
		if _, err := os.Stat(filepath.Join(dir, "merged")); err == nil {
			t.Errorf("a refused merge wrote its output directory")
		}
		r = runAimeter(t, bin, dir, append([]string{"merge", "--allow-partial", "--output-dir", "merged"}, shardDirs(".", n)...)...)
		if m := verdictLine.FindStringSubmatch(r.stdout); r.code != 3 || m == nil || m[1] != "INVALID" {
			t.Fatalf("--allow-partial with the interrupted shard: %v; want INVALID, exit 3", r)
		}
		if want := fmt.Sprintf("shard %d/%d: interrupted by SIGTERM", victim, n); !strings.Contains(r.stdout, want) {
			t.Errorf("--allow-partial: the verdict does not name the interrupted shard (%q): %v", want, r)
		}
		var settings struct {
			Interrupted string `json:"interrupted"`
		}
		readJSON(t, filepath.Join(dir, "merged", "settings.json"), &settings)
		if want := fmt.Sprintf("shard %d/%d: interrupted by SIGTERM", victim, n); settings.Interrupted != want {
			t.Errorf("the merged settings.json's interrupted: %q, want %q", settings.Interrupted, want)
		}
	})
}

// killedShards runs n shards of a 3-second Server test of the null SUT
// with a common start in dir, sends shard victim sig a second after the
// start, and waits for all: the others must exit 0, the victim with code
// (-1: killed by the signal).
func killedShards(t *testing.T, bin, dir string, n, victim int, sig syscall.Signal, code int) {
	t.Helper()
	args := []string{"run", "--sut", "null-async", "--qsl-size", "64", "--set", "target_qps=200", "--set", "min_duration=3000",
		"--set", "min_query_count=1", "--no-store", "-q"}
	startTime := time.Now().Add(4 * time.Second).Truncate(time.Second)
	start := startTime.UTC().Format(time.RFC3339)
	var wg sync.WaitGroup
	out := make([]outcome, n)
	for i := range n {
		a := append(shardArgs(args, i, n), "--start-at", start, "--start-tolerance", "1s")
		cmd, stdout, stderr := command(bin, dir, a)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(processTimeout, func() { cmd.Process.Kill() })
		if i == victim {
			kill := time.AfterFunc(time.Until(startTime.Add(time.Second)), func() { cmd.Process.Signal(sig) })
			defer kill.Stop()
		}
		wg.Go(func() {
			defer timer.Stop()
			cmd.Wait()
			out[i] = outcome{args: a, code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
		})
	}
	wg.Wait()
	for i, o := range out {
		want := 0
		if i == victim {
			want = code
		}
		if o.code != want {
			t.Fatalf("shard %d: %v; want exit %d", i, o, want)
		}
	}
}
