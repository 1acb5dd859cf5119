package shardtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docPage is the page whose one-machine example TestShardedServerAsDocumented
// runs, and docMarker the comment above the example's block.
const (
	docPage   = "../../docs/sharding.md"
	docMarker = "<!-- internal/shardtest runs this block as it is: keep them in step -->"
)

// docAddr is the simulator's address in the page's example; the test gives
// it a free port instead.
const docAddr = "127.0.0.1:8000"

// docExample is the page's one-machine example, command by command.
type docExample struct {
	serve   []string // aimeter serve openai …, without the final "&"
	start   string   // the line that sets $START
	indices []int    // the shard indices of the for loop
	run     []string // the shard's aimeter run …, with $i and $START, without "&"
	merge   []string // aimeter merge …
	report  []string // aimeter report …
	check   []string // aimeter check …
}

// readDocExample reads the shell block after docMarker in docPage: its
// "\"-continued lines joined, "# …" comments dropped, it must be the
// commands of docExample in that order (a serve in the background, START,
// a for loop over the shards that starts each in the background, wait,
// merge, report, check).
func readDocExample(t *testing.T) docExample {
	t.Helper()
	md, err := os.ReadFile(docPage)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(md), docMarker)
	if !ok {
		t.Fatalf("%s has no %q above its one-machine example", docPage, docMarker)
	}
	after = strings.TrimLeft(after, "\n")
	if !strings.HasPrefix(after, "```sh\n") {
		t.Fatalf("%s: no ```sh block right after %q", docPage, docMarker)
	}
	block, _, ok := strings.Cut(strings.TrimPrefix(after, "```sh\n"), "\n```")
	if !ok {
		t.Fatalf("%s: the example's block does not end", docPage)
	}
	var lines []string
	cont := ""
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, " #"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if strings.HasSuffix(l, "\\") {
			cont += strings.TrimSuffix(l, "\\")
			continue
		}
		if l = strings.TrimSpace(cont + l); l != "" {
			lines = append(lines, l)
		}
		cont = ""
	}
	bad := func(i int, want string) {
		t.Helper()
		got := "(the end)"
		if i < len(lines) {
			got = lines[i]
		}
		t.Fatalf("%s's example, line %d: %q; the test wants %s", docPage, i+1, got, want)
	}
	aimeter := func(i int, sub string) []string {
		t.Helper()
		if i >= len(lines) {
			bad(i, "aimeter "+sub+" …")
		}
		w := strings.Fields(lines[i])
		if len(w) < 2 || w[0] != "aimeter" || w[1] != sub {
			bad(i, "aimeter "+sub+" …")
		}
		return w[1:]
	}
	var ex docExample
	ex.serve = aimeter(0, "serve")
	if ex.serve[len(ex.serve)-1] != "&" {
		bad(0, "aimeter serve … & (in the background)")
	}
	ex.serve = ex.serve[:len(ex.serve)-1]
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "START=") {
		bad(1, "START=…")
	}
	ex.start = lines[1]
	loop := strings.Fields(strings.ReplaceAll(lines[2], ";", " ;"))
	if len(loop) < 6 || loop[0] != "for" || loop[1] != "i" || loop[2] != "in" || !slices.Equal(loop[len(loop)-2:], []string{";", "do"}) {
		bad(2, "for i in 0 1 … N-1; do")
	}
	for _, w := range loop[3 : len(loop)-2] {
		n, err := strconv.Atoi(w)
		if err != nil {
			bad(2, "for i in 0 1 … N-1; do")
		}
		ex.indices = append(ex.indices, n)
	}
	ex.run = aimeter(3, "run")
	if ex.run[len(ex.run)-1] != "&" {
		bad(3, "aimeter run … & (in the background)")
	}
	ex.run = ex.run[:len(ex.run)-1]
	if len(lines) < 6 || lines[4] != "done" || lines[5] != "wait" {
		bad(4, "done, then wait")
	}
	ex.merge, ex.report, ex.check = aimeter(6, "merge"), aimeter(7, "report"), aimeter(8, "check")
	if len(lines) != 9 {
		bad(9, "nothing more")
	}
	return ex
}

// TestDocExampleIsWhole: the page's example runs the shards of one test
// (0 … N−1, each "--shard $i/N" into "shard-$i" with the common
// "--start-at $START" and a clock reference, the simulator's address) and
// the START line puts the start ahead of now.
func TestDocExampleIsWhole(t *testing.T) {
	ex := readDocExample(t)
	n := len(ex.indices)
	for i, k := range ex.indices {
		if k != i {
			t.Fatalf("the for loop runs shards %v, want 0 to %d", ex.indices, n-1)
		}
	}
	run := strings.Join(ex.run, " ")
	for _, want := range []string{fmt.Sprintf("--shard $i/%d", n), "--start-at $START", "--clock-ref http://" + docAddr, "--output-dir shard-$i", "--url http://" + docAddr} {
		if !strings.Contains(run, want) {
			t.Errorf("the example's aimeter run has no %q: %s", want, run)
		}
	}
	if !strings.Contains(strings.Join(ex.serve, " "), "--addr "+docAddr) {
		t.Errorf("the example's aimeter serve has no --addr %s: %v", docAddr, ex.serve)
	}
	if !strings.Contains(ex.start, "date -u -d '+") || !strings.Contains(ex.start, "+%Y-%m-%dT%H:%M:%SZ") {
		t.Errorf("the example's start is not `date -u -d '+N seconds' +%%Y-%%m-%%dT%%H:%%M:%%SZ` (RFC 3339, UTC): %s", ex.start)
	}
}

// TestShardedServerAsDocumented runs docs/sharding.md's one-machine example
// as the page gives it (the simulator on a free port instead of 8000, the
// start 5 s ahead, in a fresh directory): `aimeter serve openai`, N
// shards of a Server test as separate processes with a common start and
// the simulator's clock as the reference, `aimeter merge shard-*`,
// `aimeter report merged` and `aimeter check merged`. The same test run
// on one host (the run's command as shard 0/1, no common start) gives the schedule the
// merge must hold bit for bit; DuckDB over the shards' records.parquet
// gives the percentiles it must report; report and check must give its
// verdict.
func TestShardedServerAsDocumented(t *testing.T) {
	t.Parallel()
	ex := readDocExample(t)
	python := duckdbPython(t)
	bin := buildAimeter(t)
	dir := t.TempDir()
	url := startServe(t, bin, ex.serve)
	addr := strings.TrimPrefix(url, "http://")
	n := len(ex.indices)
	subst := func(args []string, start string, i int) []string {
		out := make([]string, len(args))
		for k, a := range args {
			a = strings.ReplaceAll(a, docAddr, addr)
			a = strings.ReplaceAll(a, "$START", start)
			out[k] = strings.ReplaceAll(a, "$i", strconv.Itoa(i))
		}
		return out
	}

	// The one-host run: the shard's command as shard 0/1 (which records
	// the schedule's digest in shard.json) without a common start, into
	// whole/.
	var whole []string
	for k := 0; k < len(ex.run); k++ {
		switch ex.run[k] {
		case "--shard":
			k++
			whole = append(whole, "--shard", "0/1")
		case "--start-at", "--start-tolerance":
			k++
		case "--output-dir":
			k++
			whole = append(whole, "--output-dir", "whole")
		default:
			whole = append(whole, ex.run[k])
		}
	}
	if o := runAimeter(t, bin, dir, subst(whole, "", 0)...); o.code != 0 && o.code != 3 {
		t.Fatalf("the one-host run: %v", o)
	}

	start := startAt(5 * time.Second)
	var shards [][]string
	for _, i := range ex.indices {
		shards = append(shards, subst(ex.run, start, i))
	}
	for _, o := range runAll(t, bin, dir, shards) {
		if o.code != 0 {
			t.Fatalf("a shard: %v", o)
		}
	}
	var merge []string
	for _, a := range ex.merge {
		if !strings.ContainsAny(a, "*?[") {
			merge = append(merge, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(dir, a))
		if err != nil || len(m) != n {
			t.Fatalf("the merge's %s matches %v (%v), want the %d shards", a, m, err, n)
		}
		for _, p := range m {
			merge = append(merge, filepath.Base(p))
		}
	}
	mo := runAimeter(t, bin, dir, merge...)
	if mo.code != 0 && mo.code != 3 {
		t.Fatalf("merge: %v", mo)
	}
	merged := filepath.Join(dir, "merged")
	if i := slices.Index(ex.merge, "--output-dir"); i < 0 || i+1 >= len(ex.merge) || ex.merge[i+1] != "merged" {
		t.Fatalf("the example's merge does not write merged/: %v", ex.merge)
	}
	var clocks int
	for i := range n {
		var rec struct {
			Clock *struct{ URL string } `json:"clock"`
		}
		readJSON(t, filepath.Join(shardDirs(dir, n)[i], "shard.json"), &rec)
		if rec.Clock != nil && strings.HasPrefix(rec.Clock.URL, url) {
			clocks++
		}
	}
	if clocks != n {
		t.Errorf("%d of %d shards measured their clock against the simulator", clocks, n)
	}
	sameSchedule(t, filepath.Join(dir, "whole"), shardDirs(dir, n), merged, true)
	exactPercentiles(t, python, shardDirs(dir, n), merged)
	sameVerdict(t, bin, dir, mo, merged, ex.report, ex.check)
}
