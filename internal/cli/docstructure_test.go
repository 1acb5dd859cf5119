package cli

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"google.golang.org/grpc"

	"aimeter/serve"
)

// This file holds the tests that keep the README and docs/ in shape
// (issue 46): the README's budget of lines and of lines a paragraph, an
// index of docs/ that links every page, links that resolve, and the
// adjustments of the task pages' commands that moved out of the README.

// readmeMaxLines and readmeMaxParagraphLines are the README's budget: one
// screen per purpose, paragraphs short enough to scan.
const (
	readmeMaxLines          = 300
	readmeMaxParagraphLines = 8
)

// docsIndex is the page of docs/ that links every other page.
const docsIndex = "README.md"

// taskDocsAdjustments maps the commands of the task pages that issue 46
// made from the README (their rows were readmeAdjustments') to their
// adjustment, keyed like docsAdjustments: the doc's file name, ": " and
// the command's arguments. docsAdjustment reads both tables.
var taskDocsAdjustments = map[string]cmdAdjust{
	"first-runs.md: demo": {skip: "the README's main command; TestReadmeCommandsRun runs it (and .ci/run, with shorter runs)"},
	"first-runs.md: run":  {extra: []string{"--set", "min_duration=500"}, codes: valid3},
	"first-runs.md: run --model resnet50 --scenario Server --user-conf examples/user.conf --output-dir results": {
		extra: []string{"--set", "min_duration=300", "--set", "min_query_count=100"}, codes: valid3},
	"first-runs.md: run --scenario Server --mode find-peak --set target_qps=50000 --set min_duration=2000": {
		extra: []string{"--set", "min_duration=200"}, codes: valid3},
	// The self-test's expected rate makes a query of a million samples,
	// 17 s under -race; 11,000 run the same command.
	"first-runs.md: run --scenario Offline --sut null-async": {extra: []string{"--set", "target_qps=200000"}, codes: valid3},
	"first-runs.md: report aimeter-results":                  {codes: valid3}, // exits with the verdict of the run it regenerates

	"openai.md: serve openai --addr 127.0.0.1:8000 --ttft 20ms --tpot 5ms &": {skip: serveSkip},
	"openai.md: run --sut openai --url http://127.0.0.1:8000 --scenario Server --input-tokens 128 --output-tokens 128 --ignore-eos --set target_qps=5 --set ttft_latency=2000 --set tpot_latency=200": {
		extra: []string{"--set", "target_qps=100", "--set", "min_duration=200", "--set", "min_query_count=8"}, codes: valid3},

	"kserve.md: serve kserve --http 127.0.0.1:8000 --grpc 127.0.0.1:8001 &": {skip: kserveSkip},
	"kserve.md: run --sut kserve --url 127.0.0.1:8001 --grpc --scenario Server --set target_qps=500": {
		extra: []string{"--set", "min_duration=200", "--set", "min_query_count=50"}, codes: valid3},
	"kserve.md: run --sut dispatch --backend openai --url http://10.0.0.1:8000 --url http://10.0.0.2:8000 --scenario Offline": {
		skip: "needs two servers on a network; TestDispatchOpenAIAgainstServe runs --sut dispatch against two simulators"},

	"gbt-inference.md: run --arrival-mode 3 --sut reference --lambda 200 --duration 20s --burst-length 3s": {
		extra: []string{"--duration", "1s", "--burst-length", "300ms"}, codes: valid3},
	"gbt-inference.md: video-streams --fps 25": {extra: []string{"--duration", "200ms", "--max-streams", "2", "-q"}},

	"gbt-training.md: train --workload reference": {skip: "the README's training quick start; TestReadmeCommandsRun runs it"},
	"gbt-training.md: train --scenario-id T1-1 --training-set-mb 150000 -- torchrun --nproc_per_node 8 train.py": {
		skip: "needs an MLPerf trainer; TestTrainCommandMLLOG runs a script that prints a two-rank MLLOG stream"},
	"gbt-training.md: train --logs results/8xH100/resnet/result_*.txt": {
		skip: "needs a submission folder; TestTrainTrialsAndLogsAgree reads five result logs as files and as a directory"},
	"gbt-training.md: train --listen 0.0.0.0:9400 --ranks 2": {
		skip: "serves until two ranks post; TestTrainListenTwoRanks runs it with two ranks posting through collect.Client"},

	"serve.md: serve openai --addr 127.0.0.1:8080 --output-tokens uniform:64:256 --ttft lognormal:50ms:200ms --tpot 20ms --fault-5xx 0.01 --seed 1": {
		skip: "serves until interrupted; TestServeOpenAI runs it"},
}

// kserveSkip is why a doc's `aimeter serve kserve … &` is skipped.
const kserveSkip = "serves until interrupted; the test serves the reference model's shapes over gRPC in process for the doc's commands that follow it (TestServeKServe runs the command)"

// kserveExampleAddrs are the gRPC addresses of `aimeter serve kserve` that
// the README and docs name; a test points them at newKServeGRPC's server.
var kserveExampleAddrs = []string{"127.0.0.1:8001", "127.0.0.1:8011"}

// docsAdjustment returns the adjustment of a docs/*.md command, keyed as
// docsAdjustments is, from docsAdjustments or taskDocsAdjustments.
func docsAdjustment(key string) (cmdAdjust, bool) {
	if adj, ok := docsAdjustments[key]; ok {
		return adj, true
	}
	adj, ok := taskDocsAdjustments[key]
	return adj, ok
}

// newKServeGRPC serves KServe v2 over gRPC on a loopback port with the
// null model (answers at once, the reference model's shapes) and returns
// its address, for documented `aimeter run --sut kserve --grpc` commands.
func newKServeGRPC(t *testing.T) string {
	t.Helper()
	k, err := serve.NewKServe(serve.KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	k.RegisterGRPC(gs)
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(func() { gs.Stop(); k.Close() })
	return l.Addr().String()
}

// kserveRewrites maps each of kserveExampleAddrs to addr.
func kserveRewrites(addr string) map[string]string {
	m := map[string]string{}
	for _, a := range kserveExampleAddrs {
		m[a] = addr
	}
	return m
}

// markdownParagraphs returns the paragraphs of md's running text, each as
// its lines: runs of non-blank lines outside fenced blocks, where a
// heading, a table row, an HTML comment and a list item's first line
// start a new one (a list item's continuation lines belong to it). A
// blockquote's lines are running text.
func markdownParagraphs(md string) [][]string {
	var out [][]string
	for _, p := range markdownParagraphLines(md) {
		out = append(out, p.lines)
	}
	return out
}

// markdownParagraphLines returns the paragraphs of markdownParagraphs with
// the line where each starts, for messages that name file:line.
func markdownParagraphLines(md string) []markdownParagraph {
	var out []markdownParagraph
	var cur markdownParagraph
	flush := func() {
		if len(cur.lines) > 0 {
			out = append(out, cur)
		}
		cur = markdownParagraph{}
	}
	listItem := regexp.MustCompile(`^\s*([-*+]|\d+\.)\s`)
	inBlock := false
	for i, line := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```"):
			flush()
			inBlock = !inBlock
		case inBlock:
		case trim == "":
			flush()
		case strings.HasPrefix(trim, "#"), strings.HasPrefix(trim, "|"), strings.HasPrefix(trim, "<!--"):
			flush() // one line of its own, never running text
		case listItem.MatchString(line):
			flush()
			cur = markdownParagraph{line: i + 1, lines: []string{line}}
		default:
			if len(cur.lines) == 0 {
				cur.line = i + 1
			}
			cur.lines = append(cur.lines, line)
		}
	}
	flush()
	return out
}

// The README keeps to its budget: at most readmeMaxLines lines, no
// paragraph (or list item) over readmeMaxParagraphLines lines, and the two
// commands (the main job and the tests, which .ci/run runs as "the
// README's test command") in its first screen.
func TestReadmeStructure(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	lines := strings.Split(strings.TrimSuffix(readme, "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, over its budget of %d: move reference detail to a page under docs/", len(lines), readmeMaxLines)
	}
	for _, p := range markdownParagraphs(readme) {
		if len(p) > readmeMaxParagraphLines {
			t.Errorf("README.md has a paragraph of %d lines, over %d (make it a list, shorten it, or move it to docs/):\n%s", len(p), readmeMaxParagraphLines, strings.Join(p, "\n"))
		}
	}
	// The first screen: what it is, install and the two commands.
	const screen = 50
	first := strings.Join(lines[:min(screen, len(lines))], "\n")
	for _, want := range []string{"## Install", "```sh\ngo run ./cmd/aimeter demo\n```", "```sh\ngo test -race -timeout 30m ./...\n```"} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md's first %d lines lack %q", screen, want)
		}
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\ngo test -race -timeout 30m ./...\n") {
		t.Errorf(".ci/run does not run the README's test command")
	}
}

// docsMaxParagraphLines is the most lines a paragraph of a docs/*.md page
// may run (issue 46: "paragraphs short enough to scan"), the README's
// budget.
const docsMaxParagraphLines = readmeMaxParagraphLines

// docsParagraphExemptions maps a paragraph that may run over
// docsMaxParagraphLines, keyed by its page, ": " and the start of its
// first line (not a line number, which moves with every edit above it),
// to why. Each row is temporary: its section is being rewritten by other
// work, and the row goes when that work lands; the test fails on a row
// that matches no long paragraph.
var docsParagraphExemptions = map[string]string{}

// docsParagraphExemption returns the key of docsParagraphExemptions that
// exempts paragraph p of page, or "".
func docsParagraphExemption(page string, p markdownParagraph) string {
	first := strings.TrimSpace(p.lines[0])
	for key := range docsParagraphExemptions {
		if prefix, ok := strings.CutPrefix(key, page+": "); ok && strings.HasPrefix(first, prefix) {
			return key
		}
	}
	return ""
}

// Every paragraph of every docs/*.md page runs at most
// docsMaxParagraphLines lines, as the README's do. A paragraph is what
// markdownParagraphs returns, for the README and docs/ alike: a run of
// prose lines, a blockquote's lines among them (a quoted paragraph is read
// as one), and each list item with its continuation lines; fenced blocks,
// headings, table rows and HTML comments are not paragraphs, so a table or
// a code block may run as long as it needs. A long paragraph is split at
// a sentence's end, or made a list or a table where its text is one.
func TestDocsParagraphsShort(t *testing.T) {
	used := map[string]bool{}
	for _, page := range docsPages(t) {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range markdownParagraphLines(string(b)) {
			if len(p.lines) <= docsMaxParagraphLines {
				continue
			}
			if key := docsParagraphExemption(page, p); key != "" {
				used[key] = true
				continue
			}
			t.Errorf("docs/%s:%d: a paragraph of %d lines, over %d (split it at a sentence's end, or make it a list or a table):\n%s",
				page, p.line, len(p.lines), docsMaxParagraphLines, strings.Join(p.lines, "\n"))
		}
	}
	for key := range docsParagraphExemptions {
		if !used[key] {
			t.Errorf("docsParagraphExemptions[%q]: no paragraph over %d lines starts so any more; remove the row", key, docsMaxParagraphLines)
		}
	}
}

// markdownParagraph is one paragraph of markdownParagraphLines: its lines
// and the 1-based line number of its first.
type markdownParagraph struct {
	line  int
	lines []string
}

func TestMarkdownParagraphs(t *testing.T) {
	md := "# Title\n\none\ntwo\n\n- item\n  more\n- next\n\n| a | b |\n| - | - |\n\n```sh\nx\ny\n```\n<!-- c -->\nthree\n\n> q1\n> q2\n"
	got := markdownParagraphs(md)
	want := [][]string{{"one", "two"}, {"- item", "  more"}, {"- next"}, {"three"}, {"> q1", "> q2"}}
	if len(got) != len(want) {
		t.Fatalf("markdownParagraphs: %q, want %q", got, want)
	}
	var starts []int
	for _, p := range markdownParagraphLines(md) {
		starts = append(starts, p.line)
	}
	if wantStarts := []int{3, 6, 8, 18, 20}; !slices.Equal(starts, wantStarts) {
		t.Errorf("markdownParagraphLines starts at lines %v, want %v", starts, wantStarts)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("paragraph %d: %q, want %q (headings, tables, code and comments are not paragraphs; each list item is one, a blockquote is one)", i, got[i], want[i])
		}
	}
}

// docsPages returns the file names of docs/*.md.
func docsPages(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	return names
}

// mdLink matches a Markdown link or image target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// markdownLinks returns the link targets of md's running text (not of its
// fenced blocks or code spans).
func markdownLinks(md string) []string {
	var out []string
	inBlock := false
	code := regexp.MustCompile("`[^`]*`")
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(code.ReplaceAllString(line, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// The docs index (docs/README.md) links every page of docs/, whatever
// pages exist when the test runs, so that each is found in one click.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	index, err := os.ReadFile(filepath.Join("..", "..", "docs", docsIndex))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range markdownLinks(string(index)) {
		target, _, _ := strings.Cut(l, "#")
		linked[filepath.Clean(target)] = true
	}
	for _, page := range docsPages(t) {
		if page != docsIndex && !linked[page] {
			t.Errorf("docs/%s links no docs/%s: every page must be found from the index", docsIndex, page)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "](docs/"+docsIndex+")") {
		t.Errorf("README.md does not link the docs index docs/%s", docsIndex)
	}
}

// headingAnchor is the anchor GitHub gives a heading: lower case, code
// marks and punctuation dropped (letters, digits, "-" and "_" kept),
// blanks made "-".
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownAnchors returns the anchors of md's headings, a repeated one
// numbered "-1", "-2", … as GitHub numbers them.
func markdownAnchors(md string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	inBlock := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		a := headingAnchor(strings.TrimLeft(line, "#"))
		if n := count[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out
}

func TestHeadingAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"ONNX models in process, and the GB/T OCR scenario (T13-1)":                  "onnx-models-in-process-and-the-gbt-ocr-scenario-t13-1",
		"Servers to test against: `aimeter serve openai` and `aimeter serve kserve`": "servers-to-test-against-aimeter-serve-openai-and-aimeter-serve-kserve",
		"Comparisons and regressions":                                                "comparisons-and-regressions",
		"The Server issuer's busy wait":                                              "the-server-issuers-busy-wait",
	} {
		if got := headingAnchor(heading); got != want {
			t.Errorf("headingAnchor(%q) = %q, want %q (GitHub's rule)", heading, got, want)
		}
	}
	if got := markdownAnchors("# A\n## A\n```\n# not a heading\n```\n## A\n"); !got["a"] || !got["a-1"] || !got["a-2"] || got["not-a-heading"] {
		t.Errorf("markdownAnchors: %v, want a, a-1 and a-2 (repeats numbered, code blocks skipped)", got)
	}
}

// Every relative link of README.md and docs/*.md names a file or
// directory that exists, and its #anchor a heading of that file.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	for _, p := range docsPages(t) {
		files = append(files, filepath.Join(root, "docs", p))
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = markdownAnchors(string(b))
		return anchors[path]
	}
	checked := 0
	for _, file := range files {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		for _, link := range markdownLinks(string(md)) {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			checked++
			target, anchor, _ := strings.Cut(link, "#")
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), filepath.FromSlash(target))
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s links %s, which does not exist", name, link)
				continue
			}
			if anchor != "" && !info.IsDir() && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s links %s: %s has no heading with anchor #%s", name, link, target, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("found only %d relative links in README.md and docs/*.md", checked)
	}
}

// A block after a "<!-- not run: … -->" line gives its commands the
// reason; the mark holds for that block only. "go run" with build flags
// is a command too.
func TestMarkdownCommandsNotRunMark(t *testing.T) {
	md := "<!-- not run: needs a GPU -->\n```sh\ngo run -tags onnx ./cmd/aimeter run --sut onnx\naimeter demo\n```\n" +
		"```sh\naimeter report x\n```\n<!-- not run: far -->\n\n```sh\naimeter scenarios\n```\n"
	var got []string
	for _, c := range markdownCommands(md) {
		got = append(got, c.key()+" / "+c.skip)
	}
	want := []string{"run --sut onnx / needs a GPU", "demo / needs a GPU", "report x / ", "scenarios / "}
	if !slices.Equal(got, want) {
		t.Errorf("markdownCommands: %q, want %q (the mark holds for the block right after it only)", got, want)
	}
}

// aimeterInvocation matches a shell line that runs aimeter somewhere in
// it: after an assignment, a pipe, "$(", "sudo", "env …" and the like.
var aimeterInvocation = regexp.MustCompile(`(^|[\s=|;&(])aimeter\s+-{0,2}[a-z]`)

// escapedCommands returns the lines of md's shell blocks that run aimeter
// but that markdownCommands does not take as commands (so that no test
// would run or check them): "OPENAI_API_KEY=… aimeter run …", "TOKEN=$(aimeter
// …)". Comments, error lines ("aimeter: …") and the lines markdownCommands
// reads are not such lines.
func escapedCommands(md string) []string {
	var out []string
	inBlock, lang, cont := false, "", false
	for _, line := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			inBlock, lang, cont = !inBlock, strings.TrimPrefix(trim, "```"), false
			continue
		}
		if !inBlock || !shellBlock(lang) {
			continue
		}
		wasCont := cont
		cont = strings.HasSuffix(trim, "\\")
		t := strings.TrimPrefix(trim, "$ ")
		switch {
		case wasCont, strings.HasPrefix(t, "#"), strings.HasPrefix(t, "aimeter"), strings.HasPrefix(t, "go run "):
			continue
		case strings.HasPrefix(t, "echo ") && strings.Contains(t, "| aimeter "):
			continue // markdownCommands feeds the echoed word to the command
		}
		if aimeterInvocation.MatchString(t) {
			out = append(out, trim)
		}
	}
	return out
}

// No aimeter command of README.md or docs/*.md hides from the tests that
// run them: a command line must start with "aimeter" (or "go run
// ./cmd/aimeter"), not follow an assignment or sit inside "$(…)".
func TestDocsEveryCommandLineIsRun(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	for _, p := range docsPages(t) {
		files = append(files, filepath.Join(root, "docs", p))
	}
	for _, file := range files {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range escapedCommands(string(md)) {
			t.Errorf("%s: %q runs aimeter, but not at the start of the line, so no test runs or checks it: write the command on a line of its own (the environment in running text)", filepath.Base(file), line)
		}
	}
}

func TestEscapedCommands(t *testing.T) {
	md := "```sh\nOPENAI_API_KEY=k aimeter run --sut openai\nTOKEN=$(aimeter server register)\naimeter run \\\n  --x\n# aimeter run in a comment\n" +
		"echo '{}' | aimeter accuracy score auc --input -\naimeter: an error line\nsudo aimeter run\n```\n```go\nx := \"aimeter run\"\n```\n"
	want := []string{"OPENAI_API_KEY=k aimeter run --sut openai", "TOKEN=$(aimeter server register)", "sudo aimeter run"}
	if got := escapedCommands(md); !slices.Equal(got, want) {
		t.Errorf("escapedCommands: %q, want %q", got, want)
	}
}
