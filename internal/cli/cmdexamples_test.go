package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// This file holds what the tests that run documented commands share:
// TestReadmeCommandsRun (README.md), TestHelpExamplesRun (the --help
// examples) and TestDocsCommandsRun (docs/*.md). Each keeps a table of
// cmdAdjust keyed by the exact command, and fails on a key no command
// matches any more (checkStaleKeys).

// cmdAdjust says how a test runs one documented command: flags appended to
// shorten it (later flags win, so they override the command's own), the
// whole command replaced where it names a placeholder (with why), commands
// run first to make what it reads, the exit codes that count as success,
// or why it is skipped (naming the test that covers it).
type cmdAdjust struct {
	extra []string
	args  []string // replaces the command's arguments when not nil
	why   string   // why args replaces the command's
	// before are commands run first, to make what the command reads; each
	// may exit 0 or 3 (valid3).
	before [][]string
	codes  []int  // nil = exit 0 only
	skip   string // reason; empty = run it
	// want are what the doc shows the command printing: each must be in
	// its standard output or error (TestDocsCommandsRun checks that the
	// doc still shows it).
	want []string
}

// valid3 accepts an INVALID result: a performance run on a shared, busy
// machine may miss its latency bound; that is a result, not a broken
// example. Usage errors (2) and failures (1) still fail the test.
var valid3 = []int{ExitOK, ExitInvalid}

// gate is what a results compare --fail-on-regression example may exit
// with: ok, a regression, or no baseline (the series of the run it judges
// depends on what the test recorded before).
var gate = []int{ExitOK, ExitFailure, ExitRegression, ExitNoBaseline}

// exampleURLs are the servers the examples name (the simulator's address
// in the help texts and the docs); a test points them at an `aimeter
// serve openai` simulator of its own.
var exampleURLs = []string{"http://localhost:8000", "http://127.0.0.1:8000", "http://127.0.0.1:8080"}

// docCommand is one aimeter command of a Markdown file: its arguments,
// what an `echo '…' |` before it gives it on standard input, and why it
// is not run when its block is marked so (notRunMark).
type docCommand struct {
	args  []string
	stdin string // "" = no input
	// skip is the reason of a "<!-- not run: REASON -->" line before the
	// command's block; "" = the block is not marked.
	skip string
}

// notRunMark starts an HTML comment, on the line before a fenced block,
// that marks the block's commands as not run in tests, with the reason
// after it: "<!-- not run: needs an NVIDIA GPU; TestX runs it with a
// stand-in -->". The commands are still checked (commandProblems): their
// subcommands and flags exist. Use it for blocks that need hardware or a
// special build, which a table row would only repeat.
const notRunMark = "<!-- not run:"

// key is how the adjustment tables name the command: its arguments
// joined by blanks.
func (c docCommand) key() string { return strings.Join(c.args, " ") }

// shellBlock says whether a fenced block of this info string holds shell
// commands: ```sh, ```bash, ```shell, ```console or a bare ```. Other
// languages (go, python, sql, json) hold code, not commands.
func shellBlock(lang string) bool {
	switch strings.ToLower(strings.Fields(lang + " x")[0]) {
	case "x", "sh", "bash", "shell", "console":
		return true
	}
	return false
}

// markdownCommands extracts the aimeter commands of a Markdown text's
// shell blocks (shellBlock): lines that start with "aimeter " or "go run
// ./cmd/aimeter " (or "go run" with build flags, "go run -tags onnx
// ./cmd/aimeter "), with or without a "$ " prompt, or with an "echo '…' |"
// before them that feeds their standard input; "\"-continued lines are
// joined and "# …" comments dropped. Any other line of a block (output,
// another program, "aimeter: …" error lines) is not a command. A block
// after a notRunMark line gives its commands that line's reason as skip.
// It returns the commands in order, each distinct command once.
func markdownCommands(md string) []docCommand {
	var out []docCommand
	seen := map[string]bool{}
	inBlock, lang, skip, mark := false, "", "", ""
	var cont string
	for _, line := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			inBlock, lang, cont = !inBlock, strings.TrimPrefix(trim, "```"), ""
			skip, mark = mark, ""
			continue
		}
		if !inBlock {
			// A mark holds for the next block only, and only from the line
			// right before it.
			mark = ""
			if r, ok := strings.CutPrefix(trim, notRunMark); ok {
				mark = strings.TrimSpace(strings.TrimSuffix(r, "-->"))
			}
			continue
		}
		if !shellBlock(lang) {
			continue
		}
		if cont != "" {
			trim = cont + " " + trim
			cont = ""
		}
		if strings.HasSuffix(trim, "\\") {
			cont = strings.TrimSpace(strings.TrimSuffix(trim, "\\"))
			continue
		}
		trim = strings.TrimPrefix(trim, "$ ")
		c := docCommand{skip: skip}
		if rest, ok := strings.CutPrefix(trim, "echo "); ok {
			i := strings.LastIndex(rest, "| aimeter ")
			if i < 0 {
				continue // not piped into aimeter
			}
			words := shellWords(rest[:i])
			if len(words) != 1 {
				continue // not one echoed word
			}
			c.stdin = words[0] + "\n"
			trim = rest[i+2:]
		}
		var rest string
		if r, ok := strings.CutPrefix(trim, "go run "); ok {
			// Build flags before the package: "go run -tags onnx ./cmd/aimeter …".
			if _, after, found := strings.Cut(r, "./cmd/aimeter"); found && (after == "" || after[0] == ' ') {
				trim = "go run ./cmd/aimeter" + after
			}
		}
		switch {
		case strings.HasPrefix(trim, "go run ./cmd/aimeter "):
			rest = strings.TrimPrefix(trim, "go run ./cmd/aimeter ")
		case strings.HasPrefix(trim, "aimeter "):
			rest = strings.TrimPrefix(trim, "aimeter ")
		case trim == "aimeter", trim == "go run ./cmd/aimeter":
		default:
			continue
		}
		c.args = shellWords(rest)
		if !seen[c.key()] {
			seen[c.key()] = true
			out = append(out, c)
		}
	}
	return out
}

// readmeCommands returns the arguments of markdownCommands(md), for tests
// that read a doc's commands without running them.
func readmeCommands(md string) [][]string {
	var out [][]string
	for _, c := range markdownCommands(md) {
		out = append(out, c.args)
	}
	return out
}

// shellWords splits a command line as sh does for the docs' simple
// commands: blanks separate words, double or single quotes group them, and
// an unquoted " #" starts a comment.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	prev := ' '
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == '#' && prev == ' ':
			if inWord {
				words = append(words, cur.String())
			}
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
		prev = r
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// cmdEnv is where a test runs documented commands.
type cmdEnv struct {
	what string // what the commands are, for messages: "README command"
	dir  string // the working directory; "$PWD" in an argument is it
	// store is the results store the commands share; "" gives each
	// command a store of its own.
	store string
	// url replaces each argument that is one of exampleURLs; "" leaves
	// them as written.
	url string
	// rewrites replaces each argument that is one of its keys by its
	// value (a documented server address → the test's); nil: none.
	rewrites map[string]string
}

// run runs one documented command c as adj says (the caller has handled
// adj.skip), and reports whether it exited with one of adj's codes (an
// error of t when not).
func (e cmdEnv) run(t *testing.T, c docCommand, adj cmdAdjust) bool {
	t.Helper()
	main := func(args []string, stdin string) (*twin, int) {
		tw := newTwin(t, args...)
		tw.wd = e.dir
		if e.store != "" {
			tw.st.Store = e.store
		}
		if stdin != "" {
			tw.st.Stdin = strings.NewReader(stdin)
		}
		return tw, tw.main()
	}
	// rewrite points the example URLs at e.url and $PWD at e.dir.
	rewrite := func(args []string) []string {
		args = slices.Clone(args)
		for i, a := range args {
			if e.url != "" && slices.Contains(exampleURLs, a) {
				args[i] = e.url
			}
			if to, ok := e.rewrites[a]; ok {
				args[i] = to
			}
			args[i] = strings.ReplaceAll(args[i], "$PWD", e.dir)
		}
		return args
	}
	for _, b := range adj.before {
		if tw, code := main(rewrite(b), ""); !slices.Contains(valid3, code) {
			tw.mu.Lock()
			t.Errorf("before %s `aimeter %s`: `aimeter %s`: exit %d\n%s", e.what, c.key(), strings.Join(b, " "), code, tw.stderr.String())
			tw.mu.Unlock()
		}
	}
	run := c.args
	if adj.args != nil {
		run = adj.args
	}
	run = append(rewrite(run), adj.extra...)
	start := time.Now()
	tw, code := main(run, c.stdin)
	codes := adj.codes
	if codes == nil {
		codes = []int{ExitOK}
	}
	if !slices.Contains(codes, code) {
		tw.mu.Lock()
		t.Errorf("%s `aimeter %s` (run as %q): want exit %v, got %d\n--- stdout:\n%s--- stderr:\n%s", e.what, c.key(), run, codes, code, tw.stdout.String(), tw.stderr.String())
		tw.mu.Unlock()
		return false
	}
	for _, w := range adj.want {
		if out := tw.stdout.String() + tw.stderr.String(); !strings.Contains(out, w) {
			t.Errorf("%s `aimeter %s` (run as %q): the doc shows it printing %q, which it did not\n--- stdout:\n%s--- stderr:\n%s", e.what, c.key(), run, w, tw.stdout.String(), tw.stderr.String())
			return false
		}
	}
	t.Logf("aimeter %s: exit %d in %v", strings.Join(run, " "), code, time.Since(start).Round(time.Millisecond))
	return true
}

// checkStaleKeys fails t for each key of table that no command matched
// (used[key] false or missing), so that a table follows what it adjusts.
func checkStaleKeys(t *testing.T, table map[string]cmdAdjust, used map[string]bool, what string) {
	t.Helper()
	keys := make([]string, 0, len(table))
	for key := range table {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if !used[key] {
			t.Errorf("the table has %q, which is no longer a %s", key, what)
		}
	}
}

// exampleFiles writes into dir a copy of examples/ and the files the
// examples name (a Mooncake trace, a CSV trace, a ShareGPT file, a BLEU
// input, an Endpoints submission file), the same for the help examples
// and the docs.
func exampleFiles(t *testing.T, dir string) {
	t.Helper()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(filepath.Join("..", "..", "workload", "trace", "testdata", "mooncake_sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"trace.jsonl":  string(trace),
		"hyps.json":    `{"references":[["the cat sat on the mat"]],"hypotheses":["the cat sat on a mat"]}`,
		"requests.csv": "t_ms,input_tokens,output_tokens,session\n0,30,4,alice\n10,20,2,\n25,12,3,alice\n",
		"ShareGPT_V3.json": `[{"id":"a","conversations":[{"from":"human","value":"hello there"},{"from":"gpt","value":"hi, how can I help"},{"from":"human","value":"tell me more"},{"from":"gpt","value":"about what"}]},
{"id":"b","conversations":[{"from":"human","value":"what is a load generator"},{"from":"gpt","value":"a program that sends requests"}]}]`,
	}
	sub, err := os.ReadFile(endpointsSubmission)
	if err != nil {
		t.Fatal(err)
	}
	files["submission.yaml"] = string(sub)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// commandProblems says what is wrong with the aimeter command of words
// without running it: a subcommand that does not exist, or a flag the
// subcommand does not have. Where a word after the subcommand names a
// sibling of it (a table's "list\\|show ID\\|compare …"), the flags
// after it are the sibling's.
func commandProblems(root *cobra.Command, words []string) []string {
	cmd, rest, err := root.Find(words)
	if err != nil || cmd == root {
		return []string{"no such command"}
	}
	var out []string
	for _, w := range rest {
		if w == "--" {
			break // what follows is another program's command line
		}
		if p := cmd.Parent(); p != nil && p != root {
			if sib, _, err := p.Find([]string{w}); err == nil && sib != p && sib.Name() == w {
				cmd = sib
				continue
			}
		}
		name, ok := strings.CutPrefix(w, "--")
		if !ok || name == "" {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if cmd.InitDefaultHelpFlag(); cmd.Flag(name) == nil {
			out = append(out, cmd.CommandPath()+" has no flag --"+name)
		}
	}
	return out
}

// skip logs why a documented command is not run and still checks, with
// commandProblems against root, that its subcommand and flags exist.
func (e cmdEnv) skip(t *testing.T, root *cobra.Command, c docCommand, reason string) {
	t.Helper()
	t.Logf("skipped `aimeter %s`: %s", c.key(), reason)
	for _, p := range commandProblems(root, c.args) {
		t.Errorf("%s `aimeter %s` (skipped: %s): %s", e.what, c.key(), reason, p)
	}
}
