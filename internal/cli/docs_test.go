package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docsAdjustments maps every command of docs/*.md that cannot run as
// written in a test (too long, a server that runs until interrupted, a
// placeholder of the user's) to its adjustment. A key is the doc's file
// name, ": " and the command's arguments, so that one doc's row never
// covers another doc's command; a key that no command matches fails the
// test, so that the table follows the docs.
var docsAdjustments = map[string]cmdAdjust{
	// ais-bench.md: the inference package is refused, saying why.
	"ais-bench.md: run --ais-bench resnet50-inference": {codes: []int{ExitUsage}},

	"accuracy.md: accuracy score auc --input -": {want: []string{`{"auc":0.75,"defined":true}`}},

	// bandwidth.md needs aimeter serve kserve, not the OpenAI simulator.
	"bandwidth.md: serve kserve --http 127.0.0.1:8000 --grpc 127.0.0.1:8001 &": {skip: bandwidthSkip},
	"bandwidth.md: run --sut kserve --url http://127.0.0.1:8000 --binary-data --model resnet50 --input-dtype fp32 --scenario Offline --set target_qps=5000 --set min_duration=1000 --set min_query_count=1 --output-dir bw-none":                            {skip: bandwidthSkip},
	"bandwidth.md: run --sut kserve --url http://127.0.0.1:8000 --binary-data --model resnet50 --input-dtype fp32 --compression lossless --scenario Offline --set target_qps=5000 --set min_duration=1000 --set min_query_count=1 --output-dir bw-lossless": {skip: bandwidthSkip},
	"bandwidth.md: check bw-lossless":  {skip: bandwidthSkip},
	"bandwidth.md: report bw-lossless": {skip: bandwidthSkip},
	"bandwidth.md: run --sut kserve --url http://127.0.0.1:8000 --model gptj --compression lossless --scenario Offline": {skip: bandwidthSkip},
	"bandwidth.md: run --sut kserve --url http://127.0.0.1:8000 --compression original --scenario Offline":              {skip: bandwidthSkip},

	// endpoints.md: the sweep shortened to Endpoints' automatic points up
	// to 33 (its regions need more than 32), 100 ms each.
	"endpoints.md: serve openai --addr 127.0.0.1:8000 --ttft 20ms --tpot 5ms &": {skip: serveSkip},
	"endpoints.md: sweep --sut openai --url http://127.0.0.1:8000 --max-concurrency 64 --duration 10m --set schedule_rng_seed=10487924139932647040 --set sample_index_rng_seed=586478644936801402 --output-dir my-sweep": {
		extra: []string{"--max-concurrency", "33", "--duration", "100ms", "--qsl-size", "64", "--set", "min_query_count=8", "-q"}, codes: valid3},

	// The doc checks the tree with MLCommons' checker at submission/Example.
	"endpoints.md: export --endpoints submission --submission submission.yaml my-sweep": {want: []string{"submission/Example"}},

	// The doc's figures are of a 250 W + 150 W replay, as docsFiles'.
	"power.md: run --scenario Offline --power replay:trace.csv": {extra: []string{"--set", "min_duration=200"}, codes: valid3,
		want: []string{"2 devices): average 400.0 W, peak 400.0 W", "(trapezoid), coverage 100.0 %", "Samples per joule :"}},
	"power.md: run --scenario SingleStream --set min_duration=3000 --power rapl:$PWD/fakerapl": {
		extra: []string{"--set", "min_duration=300"}, codes: valid3},

	// network-division.md: a Server run on a shared machine may miss its
	// bound; the SUT is on the same host, so check fails it, as the doc says.
	"network-division.md: serve openai --addr 127.0.0.1:8000 &": {skip: serveSkip},
	"network-division.md: run --sut openai --url http://127.0.0.1:8000 --scenario Server --set target_qps=50 --duration 2s --division network --system-desc examples/system-desc.yaml --output-dir netdiv": {
		codes: valid3, want: []string{"MLPerf network division: \"Example two-node inference cluster\", 2 SUT nodes with 4 NICs (800 Gb/s in all), 2 components between, ethernet, TCP over IPv4; diagram system_diagram.svg"}},
	"network-division.md: check netdiv":  {codes: []int{ExitInvalid}, want: []string{"never left the LoadGen host (loopback address, lo): the network division needs the SUT on physically separate systems"}},
	"network-division.md: report netdiv": {codes: valid3},

	"replay.md: serve openai --addr 127.0.0.1:8080 --ttft 20ms --tpot 2ms &":                               {skip: serveSkip},
	"replay.md: replay trace.jsonl --sut openai --url http://127.0.0.1:8080 --ignore-eos":                  {codes: valid3},
	"replay.md: replay requests.csv --sut openai --url http://127.0.0.1:8080 --max-requests 1000":          {codes: valid3},
	"replay.md: replay trace.jsonl --sut openai --url http://127.0.0.1:8080 --speedup 2 --max-duration 5m": {codes: valid3},

	"server.md: server --listen 0.0.0.0:8443 --host tester.example": {skip: "serves until interrupted; TestAnnexAEndToEnd runs the service"},
	"server.md: server register --server https://tester.example:8443 --ca ~/.local/share/aimeter/server/tls/cert.pem --token $(cat ~/.local/share/aimeter/server/admin.token) --party Example Lab --public-key lab.pub --retests 2 --out item.json": {
		skip: "needs the service of the first command; TestAnnexAEndToEnd registers an item with it"},
	"server.md: run --sut reference --scenario Offline --config item.json --token amt_… --key lab.key": {
		skip: "needs the service and the item of the commands before; TestAnnexAEndToEnd runs it"},
	"server.md: submit aimeter-results --config item.json --token amt_… --key lab.key": {
		skip: "needs the service and the item of the commands before; TestAnnexAEndToEnd submits a bundle"},

	"sessions.md: serve openai --addr 127.0.0.1:8080 --ttft 20ms --tpot 2ms &": {skip: serveSkip},
	"sessions.md: sessions --sut openai --url http://127.0.0.1:8080 --sessions 100 --turns 2:6 --think 2s --ignore-eos": {
		extra: []string{"--sessions", "4", "--think", "10ms"}, codes: valid3},
	"sessions.md: sessions --sut openai --url http://127.0.0.1:8080 --sharegpt ShareGPT_V3.json --sessions 500 --interval 100ms": {
		extra: []string{"--interval", "10ms"}, codes: valid3},

	"store.md: run --sut openai --url http://localhost:8000 --scenario SingleStream": {
		extra: []string{"--set", "min_duration=300"}, codes: valid3},
	// The doc's store holds one run: a gate that judged nothing exits 7,
	// as the doc says above the command.
	"store.md: results compare --fail-on-regression --metric latency_ns.p50 --limit 10": {codes: []int{ExitNoBaseline}, want: []string{"no baseline"}},

	// sharding.md: "…" stands for the test's other run flags.
	"sharding.md: run --scenario Server --set target_qps=40000 --shard 0/4 --output-dir shard-0 …": {
		args:  []string{"run", "--scenario", "Server", "--set", "target_qps=40000", "--shard", "0/4", "--output-dir", "shard-0"},
		why:   "… stands for the test's other run flags",
		extra: []string{"--set", "min_duration=200"}, codes: valid3},
	"sharding.md: run --scenario Server --set target_qps=40000 --shard 1/4 --output-dir shard-1 …": {
		args:  []string{"run", "--scenario", "Server", "--set", "target_qps=40000", "--shard", "1/4", "--output-dir", "shard-1"},
		why:   "… stands for the test's other run flags",
		extra: []string{"--set", "min_duration=200"}, codes: valid3},
	// sharding.md's one-machine example: internal/shardtest runs the whole
	// block as separate processes (TestShardedServerAsDocumented); here the
	// merge, report and check run on shards run in process.
	"sharding.md: serve openai --addr 127.0.0.1:8000 --ttft 2ms &": {skip: shardExample},
	"sharding.md: run --sut openai --url http://127.0.0.1:8000 --output-tokens 8 --qsl-size 64 --scenario Server --set target_qps=200 --set min_duration=3000 --no-store --shard $i/4 --start-at $START --start-tolerance 1s --clock-ref http://127.0.0.1:8000 --output-dir shard-$i &": {
		skip: shardExample},
	"sharding.md: merge shard-* --output-dir merged": {
		args: []string{"merge", "shard-0", "shard-1", "shard-2", "shard-3", "--output-dir", "merged"},
		why:  "the shell expands shard-*; shards 0 and 1 are the doc's commands above",
		before: [][]string{
			{"run", "--scenario", "Server", "--set", "target_qps=40000", "--shard", "2/4", "--output-dir", "shard-2", "--set", "min_duration=200"},
			{"run", "--scenario", "Server", "--set", "target_qps=40000", "--shard", "3/4", "--output-dir", "shard-3", "--set", "min_duration=200"},
		},
		codes: valid3}, // exits with the merged test's verdict
	"sharding.md: check merged": {codes: valid3}, // an INVALID verdict's reasons are errors
	// The doc runs shards 0 and 1 by hand; the merge needs all four.
	"sharding.md: merge shard-0 shard-1 shard-2 shard-3 --output-dir merged": {
		before: [][]string{
			{"run", "--scenario", "Server", "--set", "target_qps=40000", "--shard", "2/4", "--output-dir", "shard-2", "--set", "min_duration=200"},
			{"run", "--scenario", "Server", "--set", "target_qps=40000", "--shard", "3/4", "--output-dir", "shard-3", "--set", "min_duration=200"},
		},
		codes: valid3}, // exits with the merged test's verdict
	"sharding.md: report merged": {codes: valid3},
	"kubernetes.md: merge bench-8/shard-* --output-dir bench-8-merged": {
		skip: "the shards' bundles come from the Job's volume (kubectl cp above); internal/shardtest's TestShardedServerAsDocumented merges shards run as processes with the same glob (aimeter merge shard-*), TestMergeCommand shards run by the CLI"},
	"sharding.md: run --scenario Server --set target_qps=40000 --shards 4 --start-at 2026-11-29T02:00:00Z --clock-ref https://tester.lab:8443 --output-dir /results/shard": {
		skip: "needs a Kubernetes Indexed Job's JOB_COMPLETION_INDEX and the tester's clock at --clock-ref; TestRunShards runs --shards with both"},

	"sweep.md: serve openai --addr 127.0.0.1:8000 --ttft 20ms --tpot 5ms &": {skip: serveSkip},
	"sweep.md: sweep --sut openai --url http://127.0.0.1:8000 --max-concurrency 64 --duration 20s": {
		extra: []string{"--max-concurrency", "33", "--duration", "100ms"}, codes: valid3}, // Endpoints' regions need more than 32
	"sweep.md: sweep --sut openai --url http://127.0.0.1:8000 --points 1,2,4,8 --slo ttft=100ms,tpot=10ms --duration 10s": {
		extra: []string{"--points", "1,2", "--duration", "200ms"}, codes: valid3},
	"sweep.md: sweep --sut openai --url http://127.0.0.1:8000 --slo ttft=100ms --goodput-target 0.9 --max-concurrency 256 --duration 10s": {
		extra: []string{"--max-concurrency", "4", "--duration", "200ms"}, codes: valid3},
	"sweep.md: report aimeter-sweep": {codes: valid3}, // exits with the verdict of the sweep it regenerates
	"sweep.md: report sweep-a sweep-b --output-dir both": {codes: valid3, before: [][]string{
		{"sweep", "--sut", "openai", "--url", "http://127.0.0.1:8000", "--points", "1,2", "--duration", "200ms", "--output-dir", "sweep-a", "-q"},
		{"sweep", "--sut", "openai", "--url", "http://127.0.0.1:8000", "--points", "1,2", "--duration", "200ms", "--output-dir", "sweep-b", "-q"},
	}},
	"sweep.md: sweep --sut openai --url http://127.0.0.1:8000 --slo ttft=100ms --goodput-target 0.9 --min-rate 2 --max-rate 64 --duration 10s": {
		// Each probe is a Server run: min_query_count, not the duration,
		// makes a 2 requests/s probe long; a faster start and 8 queries
		// keep the search to a few seconds.
		extra: []string{"--min-rate", "20", "--max-rate", "80", "--set", "min_query_count=8", "--duration", "200ms"}, codes: valid3},
	"sweep.md: report aimeter-rate-search": {codes: valid3},
}

// bandwidthSkip is why docs/bandwidth.md's commands are skipped here.
const bandwidthSkip = "needs aimeter serve kserve; TestBandwidthDocCommands runs every command of docs/bandwidth.md against it"

// serveSkip is why a doc's `aimeter serve openai … &` is skipped.
// shardExample is why TestDocsCommandsRun skips commands of sharding.md's
// one-machine example.
const shardExample = "a command of a shell loop ($i, $START, in the background) that internal/shardtest's TestShardedServerAsDocumented runs as separate processes"

const serveSkip = "serves until interrupted; the test runs the same simulator in process for the doc's commands that follow it (TestServeOpenAI runs the command)"

// docsFiles are the files a doc's commands read besides exampleFiles',
// by the doc's file name: path in the doc's directory → contents.
var docsFiles = map[string]map[string]string{
	// A power replay of two devices, 250 W and 150 W, over 10 s.
	"power.md": {
		"trace.csv": "t_ns,node,device,watts\n-1000000000,node-1,cpu,250\n-1000000000,node-1,gpu0,150\n10000000000,node-1,cpu,250\n10000000000,node-1,gpu0,150\n",
		// A powercap tree of one package whose counter stands still.
		"fakerapl/intel-rapl:0/name":                "package-0\n",
		"fakerapl/intel-rapl:0/energy_uj":           "1000000\n",
		"fakerapl/intel-rapl:0/max_energy_range_uj": "262143328850\n",
	},
}

// docsCopies are the files of the repository a doc's commands read, by the
// doc's file name: path in the doc's directory → path from this package.
var docsCopies = map[string]map[string]string{
	// ais-bench.md runs aimeter's test packages as a lab's own.
	"ais-bench.md": treeCopies(map[string]string{
		"resnet50":           filepath.Join("..", "..", "aisbench", "testdata", "resnet50"),
		"resnet50-inference": filepath.Join("..", "..", "aisbench", "testdata", "resnet50-inference"),
	}),
}

// treeCopies lists every file under each source folder as a docsCopies
// entry: the path under its name in the doc's directory → the source.
func treeCopies(dirs map[string]string) map[string]string {
	out := map[string]string{}
	for name, src := range dirs {
		_ = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(src, path)
				out[filepath.Join(name, rel)] = path
			}
			return nil
		})
	}
	return out
}

// Every aimeter command of the code blocks of docs/*.md (markdownCommands'
// rule: lines of ```sh, ```bash, ```console and bare blocks that start
// with "aimeter " or "$ aimeter ") runs against `aimeter serve openai`'s
// simulator, each doc's commands in the doc's order in one fresh
// directory and results store of the doc's own, so that a command reads
// what the doc's earlier commands made. Long commands get shortening
// flags from docsAdjustments.
func TestDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of docs/*.md (about half a minute)")
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	useUntrainedWeights(t, filepath.Join(t.TempDir(), "cache"))
	url := newSimServer(t, "sim-docs")
	rewrites := kserveRewrites(newKServeGRPC(t))
	root := newRootCommand(&State{})
	used := map[string]bool{}
	total := 0
	for _, path := range docs {
		name := filepath.Base(path)
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cmds := markdownCommands(string(md))
		if len(cmds) == 0 {
			continue
		}
		total += len(cmds)
		for _, c := range cmds {
			key := name + ": " + c.key()
			_, used[key] = docsAdjustment(key)
		}
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			dir := t.TempDir()
			exampleFiles(t, dir)
			for rel, body := range docsFiles[name] {
				writeDocFile(t, filepath.Join(dir, rel), []byte(body))
			}
			for rel, src := range docsCopies[name] {
				body, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				writeDocFile(t, filepath.Join(dir, rel), body)
			}
			t.Chdir(dir)
			env := cmdEnv{what: "docs/" + name + " command", dir: dir, store: filepath.Join(t.TempDir(), "results.db"), url: url, rewrites: rewrites}
			for _, c := range cmds {
				key := name + ": " + c.key()
				adj, _ := docsAdjustment(key)
				if adj.skip == "" {
					adj.skip = c.skip // a block marked notRunMark
				}
				for _, w := range adj.want {
					if !strings.Contains(string(md), w) {
						t.Errorf("docsAdjustments[%q] wants %q printed, which the doc no longer shows", key, w)
					}
				}
				if adj.skip != "" {
					env.skip(t, root, c, adj.skip)
					continue
				}
				env.run(t, c, adj)
			}
		})
	}
	if total < 20 {
		t.Errorf("found only %d aimeter commands in docs/*.md", total)
	}
	checkStaleKeys(t, docsAdjustments, used, "docs/*.md command")
	checkStaleKeys(t, taskDocsAdjustments, used, "docs/*.md command")
}

// writeDocFile writes body to path, making its directory.
func writeDocFile(t *testing.T, path string, body []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
}

// notCommands are the backquoted "aimeter …" spans of docs/*.md and
// README.md that are not commands, each with what it is. A span here that
// the docs no longer hold fails the test.
var notCommands = map[string]string{
	"aimeter VERSION":                    "the client's name and version in an Endpoints config.yaml",
	"aimeter <version>":                  "a User-Agent header",
	"aimeter mode : fixed concurrency N": "a line of mlperf_log_summary.txt",
	`aimeter schedule v1\0`:              "the prefix of the bytes a pass's schedule digest is taken over",
}

// TestDocsInlineFlagsExist checks the commands docs/*.md and README.md
// name in running text (`aimeter SUBCOMMAND … --flag …` in backquotes,
// often synopses with placeholders and "a\\|b" alternatives of a table,
// so not run) and those the --help texts name ('aimeter …' or "aimeter
// …" in quotes, or an indented "  aimeter …" synopsis line): the
// subcommand exists and so does each flag it names.
func TestDocsInlineFlagsExist(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	docs = append(docs, filepath.Join("..", "..", "README.md"))
	root := newRootCommand(&State{})
	type span struct{ where, text string }
	var spans []span
	backquoted := regexp.MustCompile("`aimeter ([^`]+)`")
	for _, path := range docs {
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range backquoted.FindAllStringSubmatch(string(md), -1) {
			spans = append(spans, span{filepath.Base(path), m[1]})
		}
	}
	quoted := regexp.MustCompile(`'aimeter ([^']+)'|"aimeter ([^"]+)"|(?m)^ +aimeter (.+)$`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, m := range quoted.FindAllStringSubmatch(c.Long, -1) {
			spans = append(spans, span{c.CommandPath() + " --help", m[1] + m[2] + m[3]})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	seen := map[string]bool{}
	checked := 0
	for _, sp := range spans {
		text := strings.Join(strings.Fields(sp.text), " ")
		if _, ok := notCommands["aimeter "+text]; ok {
			seen["aimeter "+text] = true
			continue
		}
		checked++
		words := shellWords(strings.NewReplacer("[", " ", "]", " ", `\|`, " ", "|", " ", "…", " ", "...", " ").Replace(text))
		for _, p := range commandProblems(root, words) {
			t.Errorf("%s: `aimeter %s`: %s", sp.where, text, p)
		}
	}
	if checked < 60 {
		t.Errorf("found only %d aimeter commands in running text", checked)
	}
	for span := range notCommands {
		if !seen[span] {
			t.Errorf("notCommands has %q, which the docs no longer hold", span)
		}
	}
}

// docErrorLine is how TestDocsErrorLinesHold makes one error message a doc
// shows: the files to write and the command (exit 2: nothing runs).
type docErrorLine struct {
	files  map[string]string
	copies map[string]string // path in the directory → path from this package
	args   []string
}

// docsErrorLines maps every error message of docs/*.md's shell blocks
// (a line "aimeter: …" and the more indented lines under it), keyed by
// the doc's file name, ": " and the message's first line, to a bad input
// that gives it.
var docsErrorLines = map[string]docErrorLine{
	// network-division.md: examples/system-desc.yaml with one field broken.
	`network-division.md: aimeter: --system-desc no-l4.yaml: protocol.transport: missing: OSI layer 4 (MLPerf's network division asks for enough to determine OSI layers 1 to 4)`: {
		files: map[string]string{"no-l4.yaml": editedSystemDesc("  transport: TCP\n", "")},
		args:  []string{"run", "--system-desc", "no-l4.yaml"}},
	`network-division.md: aimeter: --system-desc no-nics.yaml: sut_nodes[0].nics[0].count: 0: a NIC count is at least 1`: {
		files: map[string]string{"no-nics.yaml": editedSystemDesc("    nics:\n      - count: 2\n", "    nics:\n      - count: 0\n")},
		args:  []string{"run", "--system-desc", "no-nics.yaml"}},
	`network-division.md: aimeter: --system-desc speed.yaml: sut_nodes[0].nics[0].speed: "200 Gbpz": unknown unit "Gbpz" (want Mb/s, Gb/s, Tb/s, Mbps, Gbps, GbE, …)`: {
		files: map[string]string{"speed.yaml": editedSystemDesc("        speed: 200 Gb/s\n", "        speed: 200 Gbpz\n")},
		args:  []string{"run", "--system-desc", "speed.yaml"}},
	`network-division.md: aimeter: --system-desc fabric.yaml: protocol.data_link: "Ethernet (IEEE 802.3), MTU 9000" names the ethernet link layer, but fabric is infiniband`: {
		files: map[string]string{"fabric.yaml": editedSystemDesc("fabric: ethernet\n", "fabric: infiniband\n")},
		args:  []string{"run", "--system-desc", "fabric.yaml"}},
	`replay.md: aimeter: trace t.csv line 3: field "t_ms": 9.5 ms is before the 10 ms of line 2: a trace must be in time order`: {
		files: map[string]string{"t.csv": "t_ms,input_tokens,output_tokens\n10,10,2\n9.5,10,2\n"},
		args:  []string{"replay", "t.csv", "--sut", "openai", "--url", "http://127.0.0.1:8080"}},
	`replay.md: aimeter: trace t.jsonl line 1: field "timestamp": -3: negative`: {
		files: map[string]string{"t.jsonl": `{"timestamp":-3,"input_length":10,"output_length":2,"hash_ids":[1]}` + "\n"},
		args:  []string{"replay", "t.jsonl", "--sut", "openai", "--url", "http://127.0.0.1:8080"}},
	`replay.md: aimeter: trace t.jsonl line 7: field "input_length": missing (a Mooncake line has timestamp, input_length, output_length and hash_ids)`: {
		files: map[string]string{"t.jsonl": strings.Repeat(`{"timestamp":1,"input_length":10,"output_length":2,"hash_ids":[1]}`+"\n", 6) +
			`{"timestamp":7,"output_length":2,"hash_ids":[1]}` + "\n"},
		args: []string{"replay", "t.jsonl", "--sut", "openai", "--url", "http://127.0.0.1:8080"}},
	`replay.md: aimeter: trace t.jsonl line 2: field "hash_ids": 1 ids for 513 input tokens: want 2, one per 512-token block`: {
		files: map[string]string{"t.jsonl": `{"timestamp":0,"input_length":10,"output_length":2,"hash_ids":[1]}` + "\n" +
			`{"timestamp":1,"input_length":513,"output_length":2,"hash_ids":[1]}` + "\n"},
		args: []string{"replay", "t.jsonl", "--sut", "openai", "--url", "http://127.0.0.1:8080"}},
	// A CSV trace without a header: its first line is a request.
	`replay.md: aimeter: trace t.csv line 1: field "input_tokens": 5000000 tokens: want 1 to 1048576`: {
		files: map[string]string{"t.csv": "0,5000000,2\n"},
		args:  []string{"replay", "t.csv", "--sut", "openai", "--url", "http://127.0.0.1:8080"}},
	`sessions.md: aimeter: sharegpt bad.json line 2: entry 0: "conversations"[1]: a user turn where an assistant turn must come: the turns must alternate user, assistant, user, …`: {
		files: map[string]string{"bad.json": "[\n" + `{"conversations":[{"from":"human","value":"hi"},{"from":"human","value":"again"}]}]` + "\n"},
		args:  []string{"sessions", "--sut", "openai", "--url", "http://127.0.0.1:8080", "--sharegpt", "bad.json"}},
	`sessions.md: aimeter: sharegpt f.json line 1: entry 0 (id "e"): "conversations"[1]: field "value": empty gpt turn`: {
		files: map[string]string{"f.json": `[{"id":"e","conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":""}]}]` + "\n"},
		args:  []string{"sessions", "--sut", "openai", "--url", "http://127.0.0.1:8080", "--sharegpt", "f.json"}},
	`endpoints.md: aimeter: --endpoints: the sweep would not run with seed set A's seeds (schedule_rng_seed 0, the set's scheduler_rng_seed is 10487924139932647040; sample_index_rng_seed 0, the set's is 586478644936801402), and MLCommons' checker refuses every such point (seed-runtime-match); run it with`: {
		copies: map[string]string{"submission.yaml": endpointsSubmission},
		args:   []string{"sweep", "--sut", "openai", "--url", "http://127.0.0.1:8000", "--max-concurrency", "64", "--endpoints", "submission", "--submission", "submission.yaml"}},
}

// docErrorMessages returns the error messages of md's shell blocks: each
// line that starts with "aimeter: ", with the more indented lines that
// follow it (their common indentation removed).
// editedSystemDesc is examples/system-desc.yaml with old replaced by new
// once; "" when the example cannot be read (the row's test then fails).
func editedSystemDesc(old, new string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "system-desc.yaml"))
	if err != nil {
		return ""
	}
	return strings.Replace(string(b), old, new, 1)
}

func docErrorMessages(md string) []string {
	var out []string
	inBlock, lang, indent := false, "", -1
	for _, line := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			inBlock, lang, indent = !inBlock, strings.TrimPrefix(trim, "```"), -1
			continue
		}
		if !inBlock || !shellBlock(lang) {
			continue
		}
		lead := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case strings.HasPrefix(trim, "aimeter: "):
			out, indent = append(out, trim), lead
		case indent >= 0 && lead > indent && trim != "":
			out[len(out)-1] += "\n" + line[indent:]
		default:
			indent = -1
		}
	}
	return out
}

// Each error message docs/*.md shows is what aimeter prints, exit 2, for
// the bad input of docsErrorLines; a message of the docs without a row,
// or a row the docs no longer show, fails the test.
func TestDocsErrorLinesHold(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	used := map[string]bool{}
	for _, path := range docs {
		name := filepath.Base(path)
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range docErrorMessages(string(md)) {
			first, _, _ := strings.Cut(msg, "\n")
			key := name + ": " + first
			used[key] = true
			tc, ok := docsErrorLines[key]
			if !ok {
				t.Errorf("docs/%s shows the error %q, which docsErrorLines has no input for", name, first)
				continue
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				for rel, body := range tc.files {
					writeDocFile(t, filepath.Join(dir, rel), []byte(body))
				}
				for rel, src := range tc.copies {
					body, err := os.ReadFile(src)
					if err != nil {
						t.Fatal(err)
					}
					writeDocFile(t, filepath.Join(dir, rel), body)
				}
				t.Chdir(dir)
				// The URL is never reached: a bad input stops the command
				// before it sends anything.
				env := cmdEnv{what: "docs/" + name + " error", dir: dir, url: "http://127.0.0.1:1"}
				env.run(t, docCommand{args: tc.args}, cmdAdjust{codes: []int{ExitUsage}, want: []string{msg}})
			})
		}
	}
	for key := range docsErrorLines {
		if !used[key] {
			t.Errorf("docsErrorLines has %q, which the docs no longer show", key)
		}
	}
}

func TestDocErrorMessages(t *testing.T) {
	md := "```\naimeter: one\nnot a message\n```\n- item:\n\n  ```\n  aimeter: two, run it with\n    --set a=1\n    --set b=2\n  aimeter: three\n  ```\n```go\naimeter: in Go\n```\naimeter: outside a block\n"
	got := docErrorMessages(md)
	want := []string{"aimeter: one", "aimeter: two, run it with\n  --set a=1\n  --set b=2", "aimeter: three"}
	if !slices.Equal(got, want) {
		t.Errorf("docErrorMessages: %q, want %q (indented lines under a message belong to it; Go blocks and running text hold none)", got, want)
	}
}
