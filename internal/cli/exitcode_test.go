package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exitConstants returns the values of the package's Exit* constants, read
// from its source (ExitRefused lives beside submit, the others in
// exitcode.go), sorted.
func exitConstants(t *testing.T) []int {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Exit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.INT {
						t.Fatalf("%s: %s is not an integer literal", name, n.Name)
					}
					v, _ := strconv.Atoi(lit.Value)
					codes = append(codes, v)
				}
			}
		}
	}
	slices.Sort(codes)
	return codes
}

// TestExitCodeTables: the exit codes of the root command's help and of
// docs/exit-codes.md's table (the README's until issue 46) are exactly the package's Exit* constants, and the
// help of results and results compare and docs/store.md give the codes of
// the compare gate. (6 and 7 were missing from one table or another
// before.)
func TestExitCodeTables(t *testing.T) {
	want := exitConstants(t)
	if !slices.Contains(want, ExitNoBaseline) || !slices.Contains(want, ExitRefused) || len(slices.Compact(slices.Clone(want))) != len(want) {
		t.Fatalf("exit constants %v: want each code once, %d and %d among them", want, ExitRefused, ExitNoBaseline)
	}
	codesIn := func(text string, re *regexp.Regexp) []int {
		var out []int
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			v, _ := strconv.Atoi(m[1])
			out = append(out, v)
		}
		slices.Sort(out)
		return out
	}

	root := helpText("aimeter")
	para, _, _ := strings.Cut(root[strings.Index(root, "Exit codes:"):], "\nUnder ")
	// "0 VALID (or success), 1 failure, …": a number that starts an item.
	if got := codesIn(para, regexp.MustCompile(`[:,]\s+(\d+) `)); !slices.Equal(got, want) {
		t.Errorf("the root help lists exit codes %v, the package has %v:\n%s", got, want, para)
	}

	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "exit-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(page), "\nExit codes:\n")
	table, _, _ = strings.Cut(table, "\n\n"+"Under ")
	if got := codesIn(table, regexp.MustCompile(`(?m)^\| (\d+) \|`)); !slices.Equal(got, want) {
		t.Errorf("docs/exit-codes.md's exit-code table lists %v, the package has %v", got, want)
	}

	store, err := os.ReadFile(filepath.Join("..", "..", "docs", "store.md"))
	if err != nil {
		t.Fatal(err)
	}
	gate := []string{strconv.Itoa(ExitRegression), strconv.Itoa(ExitNoBaseline)}
	for name, text := range map[string]string{
		"help of results":         helpText("results"),
		"help of results compare": helpText("results_compare"),
	} {
		_, codes, _ := strings.Cut(text, "Exit codes:")
		for _, c := range gate {
			if !strings.Contains(codes, " "+c+" ") {
				t.Errorf("the %s gives no exit code %s:\n%s", name, c, codes)
			}
		}
	}
	for _, c := range gate {
		if !strings.Contains(string(store), "\n| "+c+" | ") {
			t.Errorf("docs/store.md's table of the compare gate lacks exit code %s", c)
		}
	}
}
