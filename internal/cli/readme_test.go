package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readmeAdjustments maps every README command that cannot run as written
// in a test (too long, or timing-dependent) to its adjustment. A key that
// no README command matches fails the test, so the table follows the
// README.
var readmeAdjustments = map[string]cmdAdjust{
	"demo": {extra: []string{"--duration", "100ms", "-q"}, codes: valid3,
		want: []string{"Scenario      Metric", "SingleStream  90.0th percentile latency (ns)  ", "Logs in aimeter-demo/<run>/, report in aimeter-demo/report.html"}},

	"serve openai --addr 127.0.0.1:8000 --ttft 20ms --tpot 5ms &": {skip: serveSkip},
	"run --sut openai --url http://127.0.0.1:8000 --input-tokens 128 --output-tokens 128 --ignore-eos --set target_qps=50 --set min_query_count=700": {
		extra: []string{"--set", "target_qps=100", "--set", "min_duration=200", "--set", "min_query_count=8"}, codes: valid3,
		want: []string{"Completed samples per second : ", "  TTFT p99 ", "  ITL p50 ", "  E2E latency p50 ", "  Output tokens/s "}},

	"serve kserve --http 127.0.0.1:8010 --grpc 127.0.0.1:8011 &": {skip: kserveSkip},
	"run --sut kserve --url 127.0.0.1:8011 --grpc --scenario Server --set target_qps=500": {
		extra: []string{"--set", "min_duration=200", "--set", "min_query_count=50"}, codes: valid3},

	"run --arrival-mode 2 --sut reference --lambda 200 --duration 10s --output-dir runs/poisson": {
		extra: []string{"--duration", "300ms"}, codes: valid3,
		want: []string{"Inference throughput (Table 18, T_DIP union): ", "Lost: 0 of ", "GB/T verdict: ", "Wrote runs/poisson (gbt_result.json, gbt_test.json, gbt_inference.log and the MLPerf logs)"}},

	"train --workload reference": {extra: []string{"--dataset", "synthetic", "--trials", "1", "--epochs", "1", "-q"}},

	"serve openai --addr 127.0.0.1:8080 --ttft 20ms --tpot 1ms &": {skip: serveSkip},
	"sweep --sut openai --url http://127.0.0.1:8080 --points 1,2,4,8 --slo ttft=100ms,tpot=10ms --duration 5s": {
		extra: []string{"--points", "1,2", "--duration", "200ms"}, codes: valid3,
		want: []string{"concurrency  region           verdict    system_tps tps_per_user     TTFT p90     TPOT p90      req/s   errors  goodput (ttft=100ms,tpot=10ms)"}},

	"server --listen 127.0.0.1:8443 &": {skip: "serves until interrupted; TestReadmeUploadQuickStart runs this block as written"},
	"server register --server https://127.0.0.1:8443 --ca ~/.local/share/aimeter/server/tls/cert.pem --token $(cat ~/.local/share/aimeter/server/admin.token) --party Example Lab --public-key lab.pub --out item.json --token-out item.token": {
		skip: "needs the service of the block before; TestReadmeUploadQuickStart runs this block as written, in bash"},
	"run --sut reference --scenario Offline --config item.json --token $(cat item.token) --key lab.key": {
		skip: "needs the service and the item of the commands before; TestReadmeUploadQuickStart runs this block as written, in bash"},
}

func TestShellWordsAndMarkdownCommands(t *testing.T) {
	got := shellWords(`ecp w.json "a b=c" 'x'  # comment "ignored"`)
	if want := []string{"ecp", "w.json", "a b=c", "x"}; !slices.Equal(got, want) {
		t.Errorf("shellWords: %q, want %q", got, want)
	}
	md := "text\n```sh\ngo run ./cmd/aimeter demo\ngo test ./...\naimeter run --a \\\n   --b   # why\n```\n" +
		"```go\naimeter.Run()\n```\n```python\naimeter run --python\n```\n" +
		"```\n$ go run ./cmd/aimeter demo\nScenario\naimeter: an error line\n```\n" +
		"```console\n$ echo '{\"a\":\"x | y\"}' | aimeter accuracy score auc --input -\n{\"auc\":1}\n```\n"
	var got2 []string
	for _, c := range markdownCommands(md) {
		got2 = append(got2, c.stdin+c.key())
	}
	want := []string{"demo", "run --a --b", "{\"a\":\"x | y\"}\naccuracy score auc --input -"}
	if got3 := readmeCommands(md); len(got3) != 3 || strings.Join(got3[1], " ") != "run --a --b" {
		t.Errorf("readmeCommands: %q, want markdownCommands' arguments", got3)
	}
	if !slices.Equal(got2, want) {
		t.Errorf("markdownCommands: %q, want %q (demo once, the continued run line, the piped input; no go test, no Go or Python code, no output)", got2, want)
	}
}

// Every aimeter command of README.md runs, in README order, in one fresh
// directory holding a copy of examples/, so that a broken example (a file
// that is not shipped, a flag that does not exist, a wrong argument
// format) fails CI. The quick starts' servers (`aimeter serve … &`) are
// served in process: the OpenAI simulator and a KServe v2 gRPC server,
// at the addresses the README names. Long commands get shortening flags
// from readmeAdjustments; a block marked notRunMark is skipped with its
// reason.
func TestReadmeCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every README command (about a minute)")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatal(err)
	}
	// The reference SUT caches its weights here, not in the user's cache.
	// Untrained weights are put there first: training takes minutes under
	// the race detector, and this test checks that the commands run, not
	// what the model learns (the demo's accuracy check may then fail: exit
	// 3, accepted).
	useUntrainedWeights(t, filepath.Join(dir, "cache"))
	t.Chdir(dir)

	cmds := markdownCommands(string(readme))
	if len(cmds) < 10 {
		t.Fatalf("found only %d aimeter commands in README.md: %q", len(cmds), cmds)
	}
	env := cmdEnv{what: "README command", dir: dir, url: newSimServer(t, "sim-readme"), rewrites: kserveRewrites(newKServeGRPC(t))}
	root := newRootCommand(&State{})
	used := map[string]bool{}
	for _, c := range cmds {
		key := c.key()
		adj, ok := readmeAdjustments[key]
		used[key] = ok
		if adj.skip == "" {
			adj.skip = c.skip
		}
		for _, w := range adj.want {
			if !strings.Contains(string(readme), w) {
				t.Errorf("readmeAdjustments[%q] wants %q printed, which the README no longer shows", key, w)
			}
		}
		if adj.skip != "" {
			env.skip(t, root, c, adj.skip)
			continue
		}
		env.run(t, c, adj)
	}
	checkStaleKeys(t, readmeAdjustments, used, "README command")
}

// Bad input to the README's commands gives a clear error and the exit code
// of the README's table: 2 when nothing ran.
func TestReadmeCommandsBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"a user.conf that is not there", []string{"run", "--model", "resnet50", "--user-conf", "user.conf"}, "--user-conf user.conf: no such file"},
		{"an mlperf.conf that is not there", []string{"run", "--mlperf-conf", "nope.conf"}, "--mlperf-conf nope.conf: no such file"},
		{"test information that is not there", []string{"run", "--arrival-mode", "1", "--info", "testinfo.yaml"}, "--info testinfo.yaml: no such file"},
		{"an ECP config that is not there", []string{"ecp", "weights.json", "poisson=runs/poisson"}, "CONFIG weights.json: no such file"},
		{"an ECP run directory without a GB/T result", []string{"ecp", "examples/ecp-weights.json", "poisson=runs/poisson"}, "holds no gbt_test.json"},
		{"a scenario ID that does not exist", []string{"run", "--arrival-mode", "2", "--scenario-id", "T11-99"}, "no such scenario"},
		{"a find-peak resolution out of range", []string{"run", "--mode", "find-peak", "--find-peak-resolution", "1.5"}, "--find-peak-resolution"},
	}
	for _, tc := range tests {
		r := runCLI(t, dir, append(tc.args, "-q", "--output-dir", "out")...)
		if tc.args[0] == "ecp" {
			r = runCLI(t, dir, tc.args...)
		}
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 naming %q, got %v", tc.name, tc.want, r)
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
			t.Errorf("%s: output written although nothing may run", tc.name)
		}
	}
}
