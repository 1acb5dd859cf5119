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
	"demo": {extra: []string{"--duration", "100ms", "-q"}, codes: valid3},
	"run":  {extra: []string{"--set", "min_duration=500"}, codes: valid3},
	"run --model resnet50 --scenario Server --user-conf examples/user.conf --output-dir results": {
		extra: []string{"--set", "min_duration=300", "--set", "min_query_count=100"}, codes: valid3},
	"run --scenario Server --mode find-peak --set target_qps=50000 --set min_duration=2000": {
		extra: []string{"--set", "min_duration=200"}, codes: valid3},
	// The self-test's expected rate makes a query of a million samples,
	// 17 s under -race; 11,000 run the same command.
	"run --scenario Offline --sut null-async": {extra: []string{"--set", "target_qps=200000"}, codes: valid3},
	"run --arrival-mode 3 --sut reference --lambda 200 --duration 20s --burst-length 3s": {
		extra: []string{"--duration", "1s", "--burst-length", "300ms"}, codes: valid3},
	"video-streams --fps 25": {extra: []string{"--duration", "200ms", "--max-streams", "2", "-q"}},
	"report aimeter-results": {codes: valid3}, // exits with the verdict of the run it regenerates
	"serve openai --addr 127.0.0.1:8080 --output-tokens uniform:64:256 --ttft lognormal:50ms:200ms --tpot 20ms --fault-5xx 0.01 --seed 1": {
		skip: "serves until interrupted; TestServeOpenAI runs it"},
	"serve kserve --http 127.0.0.1:8000 --grpc 127.0.0.1:8001 &": {
		skip: "serves until interrupted; TestServeKServe runs it"},
	"run --sut kserve --url 127.0.0.1:8001 --grpc --scenario Server --set target_qps=500": {
		skip: "needs the server of the command before it on fixed ports; TestServeKServe runs aimeter serve kserve and the client, benchmark.TestKServeEveryScenario the four scenarios over HTTP and gRPC"},
	"train --workload reference": {extra: []string{"--dataset", "synthetic", "--trials", "1", "--epochs", "1", "-q"}},
	"train --scenario-id T1-1 --training-set-mb 150000 -- torchrun --nproc_per_node 8 train.py": {
		skip: "needs an MLPerf trainer; TestTrainCommandMLLOG runs a script that prints a two-rank MLLOG stream"},
	"train --logs results/8xH100/resnet/result_*.txt": {
		skip: "needs a submission folder; TestTrainTrialsAndLogsAgree reads five result logs as files and as a directory"},
	"train --listen 0.0.0.0:9400 --ranks 2": {
		skip: "serves until two ranks post; TestTrainListenTwoRanks runs it with two ranks posting through collect.Client"},
	"run --sut dispatch --backend openai --url http://10.0.0.1:8000 --url http://10.0.0.2:8000 --scenario Offline": {
		skip: "needs two servers on a network; TestDispatchOpenAIAgainstServe runs --sut dispatch against two simulators"},
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
// format) fails CI. Long commands get shortening flags from
// readmeAdjustments.
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
	env := cmdEnv{what: "README command", dir: dir}
	root := newRootCommand(&State{})
	used := map[string]bool{}
	for _, c := range cmds {
		key := c.key()
		adj, ok := readmeAdjustments[key]
		used[key] = ok
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
