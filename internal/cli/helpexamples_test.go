package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exampleAdjustments maps every --help example that cannot run as written
// in a test (too long, a server that runs until interrupted, a file or a
// placeholder of the user's) to its adjustment. A key that no example
// matches fails the test, so that the table follows the help.
var exampleAdjustments = map[string]cmdAdjust{
	// Runs: shortened.
	"run": {extra: []string{"--set", "min_duration=300"}, codes: valid3},
	"run --scenario Offline --sut null-async": {extra: []string{"--set", "target_qps=200000"}, codes: valid3},
	"run --model resnet50 --scenario Server --user-conf examples/user.conf": {
		extra: []string{"--set", "min_duration=300", "--set", "min_query_count=100"}, codes: valid3},
	"run --scenario SingleStream --set min_duration=1000 --set target_latency=0.001": {extra: []string{"--set", "min_duration=200"}, codes: valid3},
	"run --arrival-mode 2 --lambda 500 --duration 5s":                                {extra: []string{"--duration", "500ms"}, codes: valid3},
	"run --sut openai --url http://localhost:8000 --concurrency 8 --warmup 20 --duration 60s": {
		extra: []string{"--duration", "500ms", "--warmup", "2"}, codes: valid3},
	"run --from aimeter-results --output-dir again":                                             {codes: valid3},
	"replay trace.jsonl --sut openai --url http://localhost:8000 --ignore-eos":                  {codes: valid3},
	"replay trace.jsonl --sut openai --url http://localhost:8000 --speedup 2 --max-duration 5m": {codes: valid3},
	"replay requests.csv --sut openai --url http://localhost:8000 --max-requests 1000":          {codes: valid3},
	"sessions --sut openai --url http://localhost:8000 --sessions 100 --turns 2:6 --think 2s": {
		extra: []string{"--sessions", "4", "--think", "10ms"}, codes: valid3},
	"sessions --sut openai --url http://localhost:8000 --sharegpt ShareGPT_V3.json --sessions 500 --interval 100ms": {
		extra: []string{"--interval", "10ms"}, codes: valid3},
	"sweep --sut openai --url http://127.0.0.1:8000 --max-concurrency 64 --duration 20s": { // Endpoints' regions need more than 32
		extra: []string{"--max-concurrency", "33", "--duration", "200ms"}, codes: valid3},
	"sweep --sut openai --url http://127.0.0.1:8000 --points 1,2,4,8 --slo ttft=100ms,tpot=10ms --duration 10s": {
		extra: []string{"--points", "1,2", "--duration", "300ms"}, codes: valid3},
	"sweep --sut openai --url http://127.0.0.1:8000 --slo tpot=8ms --goodput-target 0.9 --max-concurrency 256 --duration 10s": {
		extra: []string{"--max-concurrency", "4", "--duration", "300ms"}, codes: valid3},
	"audit TEST01 --scenario Offline --sut reference":      {extra: []string{"--set", "min_duration=200"}, codes: valid3},
	"audit TEST04 --scenario SingleStream --sut reference": {extra: []string{"--set", "min_duration=200"}, codes: valid3},
	"audit TEST04 --scenario Offline --sut openai --url http://localhost:8000 --output-dir audit-vllm": {
		extra: []string{"--set", "min_duration=200"}, codes: valid3},
	"report aimeter-sweep": {codes: valid3}, // exits with the verdict of the sweep it regenerates
	// The results store holds the runs above (a sweep records each point).
	"results compare 11 12":                                                      {codes: []int{ExitOK, ExitFailure, 5}},
	"results compare --fail-on-regression":                                       {codes: gate}, // the newest run, an accuracy run, starts a series of its own
	"results compare 23 --baseline 22 --fail-on-regression":                      {codes: gate},
	"results compare --fail-on-regression --allow-no-baseline":                   {codes: []int{ExitOK, ExitFailure, ExitRegression}},
	"results compare --baseline latest-of:6b9ce791e35c0f45 --fail-on-regression": {skip: "6b9ce791… stands for a series key; TestCompareGateWithoutBaseline picks one"},
	"results compare --fail-on-regression --test zscore --metric latency_ns.p99": {codes: gate}, // zscore needs 3 earlier runs of the series
	"results threshold --series 3f2a… --test welch --limit 0.01 --min-change 2":  {skip: "3f2a… stands for a series key"},
	"results threshold --series 3f2a… --test welch --delete":                     {skip: "3f2a… stands for a series key"},
	"export aimeter-run > records.csv": {args: []string{"export", "aimeter-results", "--output", "records.csv"},
		why: "aimeter-run stands for a run directory, and the test has no shell to redirect"},
	// The sweep writes the Endpoints tree and the export writes it again
	// from the sweep's folder (submission.yaml: sweep/endpoints' test
	// file, in exampleFiles).
	"sweep --sut openai --url http://127.0.0.1:8000 --max-concurrency 64 --duration 20s --set schedule_rng_seed=10487924139932647040 --set sample_index_rng_seed=586478644936801402 --endpoints submission --submission submission.yaml": {
		extra: []string{"--max-concurrency", "33", "--duration", "100ms", "--qsl-size", "64", "--set", "min_query_count=8"}, codes: valid3},
	"export --endpoints submission --submission submission.yaml aimeter-sweep": {
		args: []string{"export", "--endpoints", "submission-again", "--submission", "submission.yaml", "aimeter-sweep"},
		why:  "the sweep example, its one-step alternative, wrote submission/ already, and the export refuses to write over a tree"},
	"accuracy aimeter-out": {codes: valid3, // untrained weights may miss the target
		before: [][]string{{"run", "-q", "--sut", "reference", "--scenario", "Offline", "--mode", "accuracy", "--output-dir", "aimeter-out"}}},
	"accuracy log run --labels labels.json --target 99% of FP32 (76.46)": {skip: "needs a classifier's run and its labels file; TestAccuracyLog scores one"},
	"ecp examples/ecp-weights.json poisson=runs/poisson fixed-period=runs/fixed-period": {
		skip: "needs two GB/T runs in runs/; TestECPFromTwoRuns combines two"},
	"serve openai --addr 127.0.0.1:8000 --ttft 20ms --tpot 5ms &": {skip: "serves until interrupted; the test runs the same simulator in process for the examples that follow it"},
	"serve kserve": {skip: "serves until interrupted; TestServeKServe runs it"},
	"run --sut kserve --url http://127.0.0.1:8000 --scenario Offline":                 {skip: "needs aimeter serve kserve on a fixed port; TestServeKServe runs it and the client"},
	"run --sut kserve --grpc --url 127.0.0.1:8001 --scenario Server":                  {skip: "needs aimeter serve kserve on a fixed port; TestServeKServe runs it and the client"},
	"server --listen 127.0.0.1:8443":                                                  {skip: "serves until interrupted; the server tests run it"},
	"server --db postgres://aimeter@db/aimeter --tls-cert cert.pem --tls-key key.pem": {skip: "needs a PostgreSQL server and a certificate"},
	"server register --server https://127.0.0.1:8443 --ca ~/.local/share/aimeter/server/tls/cert.pem --token $(cat ~/.local/share/aimeter/server/admin.token) --party Example Lab --public-key lab.pub --retests 2": {
		skip: "needs a running tester's service"},
	"submit aimeter-results --config T20261127-080000-abcdef.json --token amt_… --key lab.key": {skip: "needs a running tester's service and its token"},
}

// helpExamples returns the example commands of every command of the tree
// under root ("  aimeter …" lines of Example, joining "\"-continued
// lines), each command's arguments once, in the tree's order.
func helpExamples(root *cobra.Command) [][]string {
	var out [][]string
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cont := ""
		for _, line := range strings.Split(c.Example, "\n") {
			trim := strings.TrimSpace(line)
			if cont != "" {
				trim, cont = cont+" "+trim, ""
			}
			if strings.HasSuffix(trim, "\\") {
				cont = strings.TrimSpace(strings.TrimSuffix(trim, "\\"))
				continue
			}
			rest, ok := strings.CutPrefix(trim, "aimeter ")
			if !ok {
				continue
			}
			args := shellWords(rest)
			if key := strings.Join(args, " "); !seen[key] {
				seen[key] = true
				out = append(out, args)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// makesRuns says whether an example makes runs (which the examples that
// read runs need first).
func makesRuns(args []string) bool {
	return len(args) == 0 || slices.Contains([]string{"run", "replay", "sessions", "sweep", "audit"}, args[0])
}

// Every example command of the --help texts runs against `aimeter serve
// openai`'s simulator, in one fresh directory holding a copy of examples/
// and the files the examples name, sharing one results store: the runs
// first, then the commands that read them. Long commands get shortening
// flags from exampleAdjustments.
func TestHelpExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every --help example (about half a minute)")
	}
	dir := t.TempDir()
	exampleFiles(t, dir)
	useUntrainedWeights(t, filepath.Join(dir, "cache"))
	t.Chdir(dir)
	url := newSimServer(t, "sim-examples")
	storePath := filepath.Join(t.TempDir(), "results.db")

	root := newRootCommand(&State{})
	examples := helpExamples(root)
	if len(examples) < 20 {
		t.Fatalf("found only %d --help examples: %q", len(examples), examples)
	}
	slices.SortStableFunc(examples, func(a, b []string) int {
		switch ma, mb := makesRuns(a), makesRuns(b); {
		case ma && !mb:
			return -1
		case mb && !ma:
			return 1
		}
		return 0
	})
	env := cmdEnv{what: "--help example", dir: dir, store: storePath, url: url}
	used := map[string]bool{}
	for _, args := range examples {
		key := strings.Join(args, " ")
		adj, ok := exampleAdjustments[key]
		used[key] = ok
		if adj.skip != "" {
			env.skip(t, root, docCommand{args: args}, adj.skip)
			continue
		}
		env.run(t, docCommand{args: args}, adj)
	}
	checkStaleKeys(t, exampleAdjustments, used, "--help example")
}
