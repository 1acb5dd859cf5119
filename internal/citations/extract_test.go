package citations

import (
	"reflect"
	"strings"
	"testing"
)

// Citations that must not resolve are spelled here with a string
// concatenation ("GB-" + "9.9"), so that the walk of the module in
// TestEveryCitationIsIndexed does not find them in this file.

func TestExtract(t *testing.T) {
	tests := []struct {
		line string
		want []citation
		why  string
	}{
		{"see GB-7.3-f, then", []citation{{id: "GB-7.3-f"}}, "a trailing comma is punctuation, not part of the ID"},
		{"(IN-43)", []citation{{id: "IN-43"}}, "a closing parenthesis ends a note number"},
		{"the unit of GB-7.6.2-unit.", []citation{{id: "GB-7.6.2-unit"}}, "a sentence's full stop is not part of the item"},
		{`HasPrefix(s, "GB-7.4.")`, []citation{{id: "GB-7.4"}}, "a dot with no digit after it ends the clause number"},
		{"Table 16 (GB-7.6.2-*).", []citation{{id: "GB-7.6.2-", prefix: true}}, "a -* suffix names a family"},
		{`Sprintf("GB-7.4.5-T11-%d", r)`, []citation{{id: "GB-7.4.5-T11-", prefix: true}}, "a literal ending in a dash is completed by code"},
		{`"GB-7.4.2-T10-mode"+string(r)`, []citation{{id: "GB-7.4.2-T10-" + "mode", prefix: true}}, "a literal continued with + is completed by code"},
		{`(GB-7.4.1-d/e, GB-7.6.2-TOUT)`, []citation{{id: "GB-7.4.1-d"}, {id: "GB-7.6.2-TOUT"}}, "two IDs on a line are both found; a slash ends an ID"},
		{"not GB-conformant", nil, "prose with GB- before a lower-case word is not an ID"},
		{"XGB-7.3-a", nil, "GB- inside a longer word is not a citation"},
		{"registered (GB-A-b)", []citation{{id: "GB-A-b"}}, "annex IDs start with the annex letter"},
		{"LoadGen §2.2/§4/§5 uses", []citation{{id: lrPrefix + "2.2"}, {id: lrPrefix + "4"}, {id: lrPrefix + "5"}}, "each section sign is one LoadGen reference citation"},
		{"loadgen-reference.md §9), not", []citation{{id: lrPrefix + "9"}}, "the file-name style resolves to the same section"},
		{"IN-nn notes", nil, "the placeholder IN-nn is not a note number"},
		{"plain text", nil, "no citation at all"},
	}
	for _, tc := range tests {
		if got := extract(tc.line); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("extract(%q) = %+v, want %+v (%s)", tc.line, got, tc.want, tc.why)
		}
	}
}

func TestParseIndex(t *testing.T) {
	tests := []struct {
		text        string
		wantIDs     []string
		wantProblem string
		why         string
	}{
		{"| `GB-7.3-a` | says a | `gbt` |", []string{"GB-7.3-a"}, "", "a well-formed row defines its ID"},
		{"| `loadgen-reference §10.2` | detail | `mlperflog` |", []string{lrPrefix + "10.2"}, "", "LoadGen sections are defined with the loadgen-reference prefix"},
		{"| ID | What | Where |\n| --- | --- | --- |", nil, "", "header and rule lines are not rows"},
		{"| `IN-" + "7` | x | y |", nil, "malformed ID", "note numbers have two digits"},
		{"| `GB-" + "7.3-` | x | y |", nil, "malformed ID", "a family prefix cannot be defined"},
		{"| `GB-x` | x | y |", nil, "malformed ID", "a GB ID needs a clause number or annex letter"},
		{"| `IN-01` | a | b |\n| `IN-01` | c | d |", []string{"IN-01"}, "defined twice", "an ID is defined once"},
		{"| `IN-01` | a |", nil, "needs exactly", "a row without a location column is incomplete"},
		{"| `IN-01` |  | b |", nil, "needs exactly", "an empty description is incomplete"},
		{"| `IN-01` `IN-04` | a | b |", nil, "malformed ID", "one row defines one ID"},
	}
	for _, tc := range tests {
		defined, problems := parseIndex(tc.text)
		var got []string
		for id := range defined {
			got = append(got, id)
		}
		if len(got) != len(tc.wantIDs) || (len(got) == 1 && got[0] != tc.wantIDs[0]) {
			t.Errorf("parseIndex(%q) defines %v, want %v (%s)", tc.text, got, tc.wantIDs, tc.why)
		}
		joined := strings.Join(problems, "\n")
		if tc.wantProblem == "" && joined != "" || tc.wantProblem != "" && !strings.Contains(joined, tc.wantProblem) {
			t.Errorf("parseIndex(%q) problems %q, want one containing %q (%s)", tc.text, joined, tc.wantProblem, tc.why)
		}
	}
}

func TestResolves(t *testing.T) {
	defined := map[string]bool{"GB-7.6.2-TI": true, "IN-63": true}
	tests := []struct {
		c    citation
		want bool
		why  string
	}{
		{citation{id: "GB-7.6.2-TI"}, true, "an exact ID resolves"},
		{citation{id: "GB-7.6.2-TIT"}, false, "an exact ID does not resolve by prefix"},
		{citation{id: "GB-7.6.2-", prefix: true}, true, "a family resolves when one member is defined"},
		{citation{id: "GB-7.6.3-", prefix: true}, false, "a family with no defined member does not resolve"},
		{citation{id: "IN-" + "64"}, false, "an undefined note does not resolve"},
	}
	for _, tc := range tests {
		if got := resolves(tc.c, defined); got != tc.want {
			t.Errorf("resolves(%+v) = %v, want %v (%s)", tc.c, got, tc.want, tc.why)
		}
	}
}

// FuzzExtract checks that every exact citation extracted from arbitrary text
// is a well-formed ID, and every family a prefix of one.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"GB-7.3-f,", "(IN-43)", "GB-7.6.2-*", `"GB-7.4.5-T11-%d"`, "§2.2/§4", "GB-A-b", "GB-conformant"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, c := range extract(line) {
			if c.prefix {
				if !gbID.MatchString(strings.TrimSuffix(c.id, "-")) {
					t.Errorf("extract(%q): family %q is not the prefix of a GB ID", line, c.id)
				}
				continue
			}
			if !gbID.MatchString(c.id) && !inCite.MatchString(c.id) && !lrID.MatchString(c.id) {
				t.Errorf("extract(%q): %q is not a well-formed citation", line, c.id)
			}
		}
	})
}
