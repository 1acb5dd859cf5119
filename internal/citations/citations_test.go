package citations

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// indexPath is the index, relative to the module root.
const indexPath = "docs/requirements.md"

// lrPrefix is how the index writes a LoadGen reference section.
const lrPrefix = "loadgen-reference §"

var (
	// gbCite finds a GB/T 45087 requirement ID in prose or code: a numeric
	// clause or an annex letter, then dash-separated items, optionally
	// ending in "-" or "-*" (a family). Trailing punctuation such as "." or
	// ")" is not part of the match.
	gbCite = regexp.MustCompile(`GB-(?:[0-9]+(?:\.[0-9]+)*|[A-E](?:\.[0-9]+)*)(?:-[0-9A-Za-z]+)*(?:-\*|-)?`)
	// gbID is a complete, well-formed GB ID as the index must define it.
	gbID = regexp.MustCompile(`^GB-(?:[0-9]+(?:\.[0-9]+)*|[A-E](?:\.[0-9]+)*)(?:-[0-9A-Za-z]+)*$`)
	// inCite finds an implementer's note number.
	inCite = regexp.MustCompile(`\bIN-[0-9]+\b`)
	// inID is a well-formed note ID as the index must define it.
	inID = regexp.MustCompile(`^IN-[0-9]{2}$`)
	// lrCite finds a section sign and section number; every such citation
	// in the module refers to the LoadGen behaviour reference.
	lrCite = regexp.MustCompile(`§\s?([0-9]+(?:\.[0-9]+)*)`)
	// lrID is a well-formed LoadGen reference section as the index writes it.
	lrID = regexp.MustCompile(`^loadgen-reference §[0-9]+(?:\.[0-9]+)*$`)
	// concat matches what follows a string literal that code completes.
	concat = regexp.MustCompile(`^"\s*\+`)
)

// citation is one reference found in a file.
type citation struct {
	// id is the normalised ID, or the prefix of a family.
	id string
	// prefix is true when id names a family of IDs rather than one ID.
	prefix bool
}

// extract returns the citations in one line of text, in order.
func extract(line string) []citation {
	var out []citation
	for _, m := range gbCite.FindAllStringIndex(line, -1) {
		if m[0] > 0 && isWordByte(line[m[0]-1]) {
			continue // part of a longer word, such as "XGB-1"
		}
		id := line[m[0]:m[1]]
		switch {
		case strings.HasSuffix(id, "-*"):
			out = append(out, citation{id: strings.TrimSuffix(id, "*"), prefix: true})
		case strings.HasSuffix(id, "-"):
			out = append(out, citation{id: id, prefix: true})
		case concat.MatchString(line[m[1]:]):
			out = append(out, citation{id: id, prefix: true})
		default:
			out = append(out, citation{id: id})
		}
	}
	for _, id := range inCite.FindAllString(line, -1) {
		out = append(out, citation{id: id})
	}
	for _, m := range lrCite.FindAllStringSubmatch(line, -1) {
		out = append(out, citation{id: lrPrefix + m[1]})
	}
	return out
}

// isWordByte reports whether b can be part of an identifier.
func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// wellFormed reports whether id is an ID that the index may define.
func wellFormed(id string) bool {
	return gbID.MatchString(id) || inID.MatchString(id) || lrID.MatchString(id)
}

// parseIndex reads the index rows: every line that starts a table row with
// a code span. It returns the defined IDs and a description of every
// malformed or duplicated row.
func parseIndex(text string) (defined map[string]bool, problems []string) {
	defined = make(map[string]bool)
	for n, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		id := strings.TrimSpace(cells[0])
		where := fmt.Sprintf("%s:%d", indexPath, n+1)
		if len(id) < 3 || !strings.HasPrefix(id, "`") || !strings.HasSuffix(id, "`") {
			problems = append(problems, fmt.Sprintf("%s: first cell %q is not one code span", where, id))
			continue
		}
		id = id[1 : len(id)-1]
		switch {
		case !wellFormed(id):
			problems = append(problems, fmt.Sprintf("%s: malformed ID %q", where, id))
		case defined[id]:
			problems = append(problems, fmt.Sprintf("%s: %s defined twice", where, id))
		case len(cells) != 3 || strings.TrimSpace(cells[1]) == "" || strings.TrimSpace(cells[2]) == "":
			problems = append(problems, fmt.Sprintf("%s: %s needs exactly a description and a location", where, id))
		default:
			defined[id] = true
		}
	}
	return defined, problems
}

// resolves reports whether the index defines c.
func resolves(c citation, defined map[string]bool) bool {
	if !c.prefix {
		return defined[c.id]
	}
	for id := range defined {
		if strings.HasPrefix(id, c.id) {
			return true
		}
	}
	return false
}

// moduleRoot finds the directory holding go.mod, from the working directory
// up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("go.mod in %s: %v", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// TestEveryCitationIsIndexed walks the module and fails for each citation
// that docs/requirements.md does not define, and for each malformed index row.
func TestEveryCitationIsIndexed(t *testing.T) {
	root := moduleRoot(t)
	index, err := os.ReadFile(filepath.Join(root, indexPath))
	if err != nil {
		t.Fatalf("reading the index: %v", err)
	}
	defined, problems := parseIndex(string(index))
	for _, p := range problems {
		t.Error(p)
	}
	if len(defined) == 0 {
		t.Fatalf("%s defines no IDs", indexPath)
	}

	missing := make(map[string][]string) // ID → "file:line" where cited
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".md" {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == indexPath {
			return nil
		}
		files++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
		for n := 1; sc.Scan(); n++ {
			for _, c := range extract(sc.Text()) {
				if !resolves(c, defined) {
					key := c.id
					if c.prefix {
						key += "*"
					}
					missing[key] = append(missing[key], fmt.Sprintf("%s:%d", rel, n))
				}
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	if files == 0 {
		t.Fatal("found no .go or .md files to check")
	}
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Errorf("%s is cited but not defined in %s; cited at %s", id, indexPath, strings.Join(missing[id], ", "))
	}
}
