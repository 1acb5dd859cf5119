package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"aimeter/sweep"
)

// TestSweepCommand sweeps two listed points and the Offline point against
// the simulator over a real socket, regenerates the summary with aimeter
// report (the same bytes), and puts two sweeps side by side.
func TestSweepCommand(t *testing.T) {
	url := newSimServer(t, "sim")
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	common := []string{"--sut", "openai", "--url", url, "--qsl-size", "8", "--duration", "200ms", "--set", "min_query_count=16", "-q"}
	res := runCLI(t, "", append([]string{"sweep", "--points", "1,2", "--offline", "--slo", "ttft=10s,e2e=20s", "--name", "first", "--output-dir", a}, common...)...)
	if res.code != ExitOK && res.code != ExitInvalid { // a short point may miss early stopping: INVALID, exit 3, and still a point
		t.Fatal(res)
	}
	for _, re := range []string{
		`(?m)^ +1 +(IN)?VALID +[0-9.]+ +[0-9.]+ .*100\.0 % \(`,
		`(?m)^ +2 +(IN)?VALID `,
		`(?m)^ +Offline +(IN)?VALID `,
		`(?m)^Offline point: [0-9.]+ % of the Cmax point's system_tps \(concurrency 2\)`,
		`(?m)^Sweep written to ` + regexp.QuoteMeta(a),
	} {
		if !regexp.MustCompile(re).MatchString(res.stdout) {
			t.Errorf("stdout lacks %s:\n%s", re, res.stdout)
		}
	}
	first, err := os.ReadFile(filepath.Join(a, sweep.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum sweep.Summary
	if err := json.Unmarshal(first, &sum); err != nil || len(sum.Points) != 2 || sum.Offline == nil || sum.SLO != "ttft=10s,e2e=20s" {
		t.Fatalf("sweep.json: %v, %+v", err, sum)
	}
	rep := runCLI(t, "", "report", a)
	if rep.code != res.code || !strings.Contains(rep.stdout, "Offline point:") { // the sweep's own exit code
		t.Fatal(rep)
	}
	if again, _ := os.ReadFile(filepath.Join(a, sweep.SummaryFile)); !bytes.Equal(first, again) {
		t.Errorf("aimeter report changed sweep.json:\n%s\nwas\n%s", again, first)
	}
	b := filepath.Join(dir, "b")
	if res := runCLI(t, "", append([]string{"sweep", "--points", "3", "--name", "second", "--output-dir", b}, common...)...); res.code != ExitOK && res.code != ExitInvalid {
		t.Fatal(res)
	}
	both := filepath.Join(dir, "both")
	rep = runCLI(t, "", "report", a, b, "--output-dir", both)
	if rep.code != ExitOK || !strings.Contains(rep.stdout, "2 sweeps side by side") {
		t.Fatal(rep)
	}
	page, err := os.ReadFile(filepath.Join(both, sweep.PageFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. first", "2. second", `class="pareto"`, `class="goodput-concurrency"`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the side-by-side page lacks %q", want)
		}
	}
}

// TestSweepSearchNoneNamesTheBound searches with a TPOT bound of 1 µs that
// the simulator (200 µs a token) meets only with one-token responses: the search stops at its
// first probe, exit 3, and the console, the exit message, sweep.json and
// sweep.html all say no concurrency (JSON null, never 0) and name TPOT,
// its p90 and the bound, in one text.
func TestSweepSearchNoneNamesTheBound(t *testing.T) {
	url := newSimServer(t, "sim")
	out := filepath.Join(t.TempDir(), "none")
	res := runCLI(t, "", "sweep", "--sut", "openai", "--url", url, "--qsl-size", "8", "--duration", "100ms", "--set", "min_query_count=8",
		"--slo", "ttft=10s,tpot=1us", "--goodput-target", "0.9", "--min-concurrency", "4", "--max-concurrency", "64", "--output-dir", out, "-q")
	if res.code != ExitInvalid {
		t.Fatalf("want exit 3: %v", res)
	}
	m := regexp.MustCompile(`(?m)^Outcome: (no concurrency from 4 to 64 met the goodput target 0\.9: TPOT p90 [0-9.]+ ms > 0\.001 ms \([0-9.]+ % of requests within it\) at concurrency 4 \(goodput fraction [0-9.]+ < 0\.9\))$`).FindStringSubmatch(res.stdout)
	if m == nil {
		t.Fatalf("stdout lacks the outcome naming TPOT:\n%s", res.stdout)
	}
	text := m[1]
	if strings.Contains(text, "TTFT") {
		t.Errorf("the outcome names TTFT, which every request met: %s", text)
	}
	if !strings.Contains(res.stderr, "aimeter: "+text) {
		t.Errorf("the exit message is not the outcome %q:\n%s", text, res.stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, sweep.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"best": null`)) {
		t.Errorf("sweep.json: want \"best\": null\n%s", data)
	}
	var sum sweep.Summary
	if err := json.Unmarshal(data, &sum); err != nil || sum.Search == nil || sum.Search.Best != nil || sum.Search.Shortfall == nil {
		t.Fatalf("sweep.json: %v %+v", err, sum.Search)
	}
	if got := "no concurrency from 4 to 64 met the goodput target 0.9: " + sum.Search.Shortfall.Text; got != text {
		t.Errorf("sweep.json's shortfall %q, the console's %q", got, text)
	}
	page, err := os.ReadFile(filepath.Join(out, sweep.PageFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<strong>"+template.HTMLEscapeString(text)+"</strong>")) {
		t.Errorf("sweep.html lacks the outcome %q", text)
	}
	if bytes.Contains(page, []byte("<strong>0</strong>")) {
		t.Error("sweep.html says 0")
	}
}

// TestSweepCommandAutomatic runs Endpoints' automatic points for Cmin 1,
// Cmax 33 (regions 2–4, 5–11, 12–33) and the Offline point.
func TestSweepCommandAutomatic(t *testing.T) {
	url := newSimServer(t, "sim")
	out := filepath.Join(t.TempDir(), "auto")
	res := runCLI(t, "", "sweep", "--sut", "openai", "--url", url, "--qsl-size", "8", "--duration", "100ms", "--set", "min_query_count=8",
		"--max-concurrency", "33", "--output-dir", out, "-q")
	if res.code != ExitOK && res.code != ExitInvalid { // 100 ms points may miss early stopping: exit 3, still measured
		t.Fatal(res)
	}
	if !strings.Contains(res.stdout, "Endpoints regions for Cmin 1, Cmax 33: ultra-low 1–1, low 2–4, medium 5–11, high 12–33") {
		t.Errorf("stdout lacks the regions:\n%s", res.stdout)
	}
	var sum sweep.Summary
	data, _ := os.ReadFile(filepath.Join(out, sweep.SummaryFile))
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, p := range sum.Points {
		got = append(got, p.Concurrency)
	}
	// 1; the region tops 4, 11, 33; the middles round(√(2·4)) = 3,
	// round(√(5·11)) = 7, round(√(12·33)) = 20.
	if want := "[1 3 4 7 11 20 33]"; fmt.Sprint(got) != want {
		t.Errorf("points %v, want %s", got, want)
	}
	if sum.Offline == nil || sum.Uncovered != nil {
		t.Errorf("offline %+v, uncovered %v: want an Offline point and every region covered", sum.Offline, sum.Uncovered)
	}
}

func TestSweepCommandFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args   []string
		want   string
		reason string
	}{
		{[]string{"--points", "1,2", "--concurrency", "4"}, "--concurrency does not apply", "each point sets its own concurrency"},
		{[]string{"--points", "1,x"}, `--points item 2 "x"`, "a bad item is named by its place"},
		{[]string{"--points", "0"}, `--points item 1 "0"`, "concurrency 0 runs nothing"},
		{[]string{"--points", "1,2", "--max-concurrency", "64"}, "--max-concurrency chooses points automatically", "listed and automatic points conflict"},
		{[]string{}, "give --points, or --max-concurrency", "a sweep needs its points"},
		{[]string{"--max-concurrency", "20"}, "must be > 32", "Endpoints' regions need Cmax above the ultra-low region"},
		{[]string{"--max-concurrency", "64", "--point-count", "40"}, "point count 40", "more than 31 fixed points"},
		{[]string{"--points", "1", "--slo", "ttft=fast"}, `invalid argument "ttft=fast" for "--slo" flag: SLO item 1 "ttft=fast"`, "a bad SLO names its item"},
		{[]string{"--goodput-target", "0.9", "--max-concurrency", "8"}, "--goodput-target needs --slo", "the fraction is of requests meeting an SLO"},
		{[]string{"--goodput-target", "0.9", "--slo", "ttft=1s"}, "needs --max-concurrency", "the search needs its upper bound"},
		{[]string{"--goodput-target", "1.5", "--slo", "ttft=1s", "--max-concurrency", "8"}, "--goodput-target 1.5", "a fraction above 1"},
		{[]string{"--goodput-target", "0.9", "--slo", "ttft=1s", "--max-concurrency", "8", "--points", "1"}, "--points applies to a sweep", "a search chooses its own probes"},
		{[]string{"--points", "1", "--scenario", "Server"}, "--scenario Server", "points run on SingleStream's issuing"},
		{[]string{"--points", "1", "--arrival-mode", "2"}, "--arrival-mode does not apply", "a sweep is no GB/T test"},
	} {
		res := runCLI(t, "", append([]string{"sweep", "--output-dir", filepath.Join(t.TempDir(), "s")}, c.args...)...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("sweep %v: exit %d, stderr %q; want exit 2 naming %q: %s", c.args, res.code, res.stderr, c.want, c.reason)
		}
	}
}

func TestReportSweepErrors(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if res := runCLI(t, "", "run", "-q", "--sut", "null", "--set", "min_duration=50", "--output-dir", run); res.code != ExitOK && res.code != ExitInvalid {
		t.Fatal(res)
	}
	for _, c := range []struct {
		args   []string
		want   string
		reason string
	}{
		{[]string{"report", run, run, "--output-dir", filepath.Join(dir, "x")}, "is not a sweep directory", "several directories must all be sweeps"},
	} {
		res := runCLI(t, "", c.args...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: %s; want exit 2 naming %q: %s", c.args, res, c.want, c.reason)
		}
	}
}
