package benchmark_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
	"aimeter/internal/cli"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden bundles in testdata/train/golden")

// goldenCase is one way into aimeter train whose bundle is kept as golden
// files.
type goldenCase struct {
	name string
	// args are the train command's arguments after --output-dir DIR.
	args []string
	// plan is the same test as a benchmark.TrainPlan, without its output
	// directory.
	plan benchmark.TrainPlan
	// bubble runs the case in a synctest bubble: its clock is fake and
	// stands still while the training computes, so every time the run
	// records is the bubble's fixed start (2000-01-01 UTC) and the CPU
	// sampler never ticks.
	bubble bool
}

var goldenCases = []goldenCase{
	// A child program printing a two-rank MLPerf Training log whose times
	// are fixed (time_ms).
	{name: "child", args: []string{"--trials", "1", "--scenario-id", "T1-1", "--training-set-mb", "150", "--", "sh", "testdata/train/child.sh"},
		plan: benchmark.TrainPlan{Command: &benchmark.TrainCommand{Argv: []string{"sh", "testdata/train/child.sh"}, Trials: 1}, ScenarioID: "T1-1", TrainingSetMB: 150}},
	// The built-in reference model on the synthetic set, two short
	// trials, on the bubble's fake clock.
	{name: "reference", args: []string{"--workload", "reference", "--dataset", "synthetic", "--trials", "2", "--epochs", "1"}, bubble: true,
		plan: benchmark.TrainPlan{Reference: &benchmark.TrainReference{Dataset: "synthetic", Trials: 2, Epochs: 1}}},
	// A checked-in MLPerf Training result log.
	{name: "logs", args: []string{"--logs", "testdata/train/result_0.txt", "--alpha", "50"},
		plan: benchmark.TrainPlan{Logs: []string{"testdata/train/result_0.txt"}, Alpha: 50}},
}

// runCLITrain runs aimeter train through the command line's entry point
// into dir and returns its exit code and output.
func runCLITrain(t *testing.T, dir string, args []string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	st := &cli.State{
		Args:   append([]string{"train", "-q", "--no-store", "--node", "golden-node", "--output-dir", dir}, args...),
		Stdout: &stdout,
		Stderr: &stderr,
		Getwd:  os.Getwd,
		NotifyInterrupt: func(parent context.Context, _ func()) (context.Context, context.CancelFunc) {
			return context.WithCancel(parent)
		},
		Exit: func(code int) { t.Errorf("aimeter exited %d", code) },
	}
	code := cli.Main(st)
	return code, stdout.String() + stderr.String()
}

// hostKeys are the JSON keys whose values describe the machine the run
// ran on: training_run.json's system description (sysinfo.System) and the
// test information that testinfo.FromHost detects; gbt_training.json and
// report.html repeat the latter.
var hostKeys = []string{"system", "servers", "os", "framework", "interconnect", "node_topology", "node_count", "virtualization", "virtualization_component"}

// hostKeyRE matches a line that opens one of hostKeys, in JSON or in the
// HTML-escaped JSON of report.html: its indent, and its value's first
// character.
var hostKeyRE = regexp.MustCompile(`^(\s*)(?:"|&#34;)(` + strings.Join(hostKeys, "|") + `)(?:"|&#34;): (.)`)

// runRE are the facts of the run that differ every time on the wall clock:
// how long the child took (training_run.json's duration_ns), and the
// report's System table of the machine.
var runRE = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"duration_ns": \d+`), `"duration_ns": 0`},
	{regexp.MustCompile(`<tr><th>(Host|OS / architecture|CPU|Logical CPUs|Memory|Go|Accelerators?)</th><td>.*</td></tr>`), `<tr><th>$1</th><td>(host)</td></tr>`},
}

// normalise replaces, in a bundle file, what differs from one run to the
// next however the run is made: the machine's description (hostKeys, the
// report's System table) and the child's wall-clock duration. Every other
// byte is compared. Checksums in manifest.json are checked against the
// files first (checkManifest), then left out.
func normalise(data []byte) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		m := hostKeyRE.FindStringSubmatch(lines[i])
		if m == nil {
			out.WriteString(lines[i])
			continue
		}
		indent, open := m[1], m[3]
		comma := ""
		if open == "{" || open == "[" {
			// Skip to the line closing the value at the same indent.
			for i++; i < len(lines); i++ {
				l := strings.TrimRight(lines[i], "\n")
				if strings.HasPrefix(l, indent) && len(l) > len(indent) && (l[len(indent)] == '}' || l[len(indent)] == ']') {
					comma = strings.TrimPrefix(l[len(indent)+1:], "")
					break
				}
			}
		} else if strings.HasSuffix(strings.TrimRight(lines[i], "\n"), ",") {
			comma = ","
		}
		out.WriteString(indent + "\"" + m[2] + "\": \"(host)\"" + comma + "\n")
	}
	s := out.String()
	for _, r := range runRE {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return []byte(assetRE.ReplaceAllString(s, "$1(the report's own asset: report's TestAssets checks it)$3"))
}

// assetRE matches the stylesheets and scripts report.html inlines: the
// goldens hold the page's own content, so that a change of style does not
// rewrite them (report's TestAssets checks the assets once).
var assetRE = regexp.MustCompile(`(?s)(<(?:style|script)[^>]*>)(.*?)(</(?:style|script)>)`)

var (
	shaRE   = regexp.MustCompile(`"sha256": "[0-9a-f]{64}"`)
	bytesRE = regexp.MustCompile(`"bytes": \d+`)
)

// checkManifest checks each file's checksum in manifest.json against the
// file, and leaves the checksums out of the manifest: they follow the
// files, compared on their own.
func checkManifest(t *testing.T, files map[string][]byte) {
	t.Helper()
	raw, ok := files["manifest.json"]
	if !ok {
		return
	}
	var m struct {
		Files []struct {
			Name   string `json:"name"`
			Bytes  int    `json:"bytes"`
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		if f.SHA256 == "" {
			continue
		}
		sum := sha256.Sum256(files[f.Name])
		if hex.EncodeToString(sum[:]) != f.SHA256 || f.Bytes != len(files[f.Name]) {
			t.Errorf("manifest.json: %s's size or checksum is not the file's", f.Name)
		}
	}
	raw = shaRE.ReplaceAll(raw, []byte(`"sha256": "(checked)"`))
	files["manifest.json"] = bytesRE.ReplaceAll(raw, []byte(`"bytes": (checked)`))
}

// bundleFiles reads every file of the bundle in dir, by name.
func bundleFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runLibraryTrain runs the case's plan through benchmark.Train into dir.
func runLibraryTrain(t *testing.T, dir string, c goldenCase) (int, string) {
	t.Helper()
	p := c.plan
	p.OutputDir, p.Node, p.Version = dir, "golden-node", cli.Version
	out, err := benchmark.Train(context.Background(), p)
	switch {
	case err != nil:
		return cli.ExitFailure, err.Error()
	case out.Incomplete != "" || out.NoScore != "":
		return cli.ExitInvalid, out.Incomplete + out.NoScore
	}
	return cli.ExitOK, ""
}

// TestMain runs the package's tests in UTC: the training bundles record
// the local time zone and their logs print local times, and the goldens
// are in UTC wherever the tests run. It is set before any test starts: a
// test that set it would race with the timers other tests leave running.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

// TestTrainGolden runs aimeter train over a child program, the reference
// model and --logs, both through the command line and through
// benchmark.Train, and compares every file of each bundle, byte for byte
// after normalising, with the golden bundles in testdata/train/golden
// (made by the command line before benchmark.Train existed).
func TestTrainGolden(t *testing.T) {
	paths := []struct {
		name string
		run  func(t *testing.T, dir string, c goldenCase) (int, string)
	}{
		{"cli", func(t *testing.T, dir string, c goldenCase) (int, string) { return runCLITrain(t, dir, c.args) }},
		{"library", runLibraryTrain},
	}
	for _, path := range paths {
		if *updateGolden && path.name != "cli" {
			continue
		}
		for _, c := range goldenCases {
			t.Run(path.name+"/"+c.name, func(t *testing.T) { goldenRun(t, c, path.run) })
		}
	}
}

// goldenRun runs one case one way and compares its bundle with the golden.
func goldenRun(t *testing.T, c goldenCase, run func(t *testing.T, dir string, c goldenCase) (int, string)) {
	dir := filepath.Join(t.TempDir(), "out")
	var code int
	var out string
	if c.bubble {
		// The model computes on the calling goroutine alone with
		// one P: its worker pool, which lives as long as the
		// process, cannot be started inside the bubble.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		synctest.Test(t, func(t *testing.T) { code, out = run(t, dir, c) })
	} else {
		code, out = run(t, dir, c)
	}
	if code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	files := bundleFiles(t, dir)
	checkManifest(t, files)
	compareGolden(t, filepath.Join("testdata", "train", "golden", c.name), files)
}

// compareGolden compares files, normalised, with the golden directory.
func compareGolden(t *testing.T, golden string, files map[string][]byte) {
	t.Helper()
	if *updateGolden {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			p := filepath.Join(golden, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, normalise(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := bundleFiles(t, golden)
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range files {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: not in the golden bundle", n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		got, ok := files[n]
		if !ok {
			t.Errorf("%s: missing from the bundle", n)
			continue
		}
		if got = normalise(got); !bytes.Equal(got, want[n]) {
			t.Errorf("%s differs from %s:\n%s", n, filepath.Join(golden, n), firstDiff(got, want[n]))
		}
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + clip(gl) + "\n want " + clip(wl)
		}
	}
	return "(same lines, different bytes)"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
