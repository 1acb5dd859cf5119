package accuracy

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestTokenize13a(t *testing.T) {
	for _, tc := range []struct{ in, want, reason string }{
		{"Hello, world!", "Hello , world !", "comma and bang split off"},
		{"3.14 and 1,000", "3.14 and 1,000", "a period or comma between digits stays"},
		{"end. Next", "end . Next", "a sentence period splits"},
		{"5-10 x-ray", "5 - 10 x-ray", "a dash after a digit splits, inside a word it stays"},
		{"&quot;quoted&quot; &amp; <skipped>", "\" quoted \" &", "entities unescaped, <skipped> dropped"},
		{"it's (a) test\n", "it's ( a ) test", "parentheses split, the apostrophe (outside 13a's classes) stays; trailing newline stripped"},
	} {
		if got := strings.Join(tokenize13a(tc.in), " "); got != tc.want {
			t.Errorf("%s: %q → %q, want %q", tc.reason, tc.in, got, tc.want)
		}
	}
}

func TestBLEU(t *testing.T) {
	r, err := BLEU([]string{"the cat sat on the mat"}, [][]string{{"the cat sat on the mat"}})
	if err != nil || !near(r.Score/100, 1) {
		t.Errorf("identical: %+v, %v; want 100 (exp(log 100), as sacreBLEU)", r, err)
	}
	r, _ = BLEU([]string{"a b c d"}, [][]string{{"e f g h"}})
	if r.Score != 0 {
		t.Errorf("no overlap: %v, want 0 (sacreBLEU's early return)", r.Score)
	}
	// Every unigram matches, no bigram: exp smoothing halves the missing
	// orders' precisions one after another: 100/(2·2), 100/(4·1), and
	// order 4 has no n-gram at all (precision 0 → log floor).
	r, _ = BLEU([]string{"b a c"}, [][]string{{"a b c"}})
	if r.Precisions != [4]float64{100, 25, 25, 0} || r.Score != 0 {
		t.Errorf("smoothing: %+v", r)
	}
	// Brevity: 4 tokens against a reference of 6.
	r, _ = BLEU([]string{"the cat sat on"}, [][]string{{"the cat sat on the mat"}})
	if want := math.Exp(1 - 6.0/4); math.Abs(r.BP-want) > 1e-15 || !near(r.Score/100, want) {
		t.Errorf("brevity penalty %v, score %v; want %v and 100·that", r.BP, r.Score, want)
	}
	// A 13a token may hold a NUL: the unigram "a\x00b" of the reference
	// is no bigram "a b" of the hypothesis.
	r, _ = BLEU([]string{"a b"}, [][]string{{"a\x00b"}})
	if r.Counts != [4]int{} || r.Score != 0 {
		t.Errorf("a NUL inside a token: %+v, want no match", r)
	}
	// The closest reference length, a tie taking the shorter: 3 tokens
	// between references of 2 and 4.
	r, _ = BLEU([]string{"a b c"}, [][]string{{"a b c d", "a b"}})
	if r.RefLen != 2 {
		t.Errorf("closest reference length %d, want 2 (the shorter of a tie)", r.RefLen)
	}
	for _, tc := range []struct {
		hyps []string
		refs [][]string
		want string
	}{
		{[]string{"a"}, nil, "1 hypotheses for 0 lists"},
		{[]string{"a"}, [][]string{{}}, "references[0] is empty"},
		{[]string{"a", "b", "c"}, [][]string{{"a"}, {"b"}, {"c", "d"}}, "references[2] has 2 references, references[0] 1"},
		{nil, nil, "no hypotheses"},
	} {
		if _, err := BLEU(tc.hyps, tc.refs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v/%v: %v, want %q", tc.hyps, tc.refs, err, tc.want)
		}
	}
}

// TestBLEUMatchesSacreBLEU compares BLEU with sacrebleu.corpus_bleu on
// random corpora with punctuation, numbers, capitals, hyphens, quotes and
// entities, newlines, NUL and Unicode spaces, and one to three references
// per hypothesis (transposed into sacreBLEU's streams): scores within 1e-9
// on the 0–100 scale, counts and lengths exact.
func TestBLEUMatchesSacreBLEU(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	vocab := []string{"the", "The", "cat", "sat", "on", "mat", "mat.", "3.5", "1,000", "5-7", "x-ray", "\"hi\"", "it's", "(a)",
		"&amp;", "&quot;", "&lt;b&gt;", "dog,", "ran!", "é", "end.", "--", "a/b", "$5", "well-known", "1.", ".5", "U.S.",
		"line-\nbreak", "two\nlines", "<skipped>", "a\x00b", "nbsp\u00a0space", "ideo\u3000space", "tab\t", "«q»", "10-20%"}
	sentence := func() string {
		w := make([]string, rng.IntN(13)) // sometimes empty
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	type corpus struct {
		Hyps []string   `json:"hyps"`
		Refs [][]string `json:"refs"`
	}
	var cases []corpus
	for range 20 {
		var c corpus
		nrefs := 1 + rng.IntN(3)
		for range 1 + rng.IntN(30) {
			c.Hyps = append(c.Hyps, sentence())
			refs := make([]string, nrefs)
			for i := range refs {
				refs[i] = sentence()
			}
			c.Refs = append(c.Refs, refs)
		}
		cases = append(cases, c)
	}
	const program = `
import json, sys
import sacrebleu
out = []
for c in json.load(sys.stdin):
    streams = [list(s) for s in zip(*c["refs"])]
    s = sacrebleu.corpus_bleu(c["hyps"], streams)
    out.append({"bleu": s.score, "counts": s.counts, "totals": s.totals, "precisions": s.precisions, "bp": s.bp,
                "sys_len": s.sys_len, "ref_len": s.ref_len})
print(json.dumps(out))
`
	var want []struct {
		BLEU       float64   `json:"bleu"`
		Counts     []int     `json:"counts"`
		Precisions []float64 `json:"precisions"`
		BP         float64   `json:"bp"`
		Totals     []int     `json:"totals"`
		SysLen     int       `json:"sys_len"`
		RefLen     int       `json:"ref_len"`
	}
	pyRef(t, program, cases, &want)
	for i, c := range cases {
		got, err := BLEU(c.Hyps, c.Refs)
		precOK := len(want[i].Precisions) == 4
		for n := range want[i].Precisions {
			precOK = precOK && math.Abs(got.Precisions[n]-want[i].Precisions[n]) <= 1e-9
		}
		if err != nil || math.Abs(got.Score-want[i].BLEU) > 1e-9 || !slices.Equal(got.Counts[:], want[i].Counts) || !precOK ||
			math.Abs(got.BP-want[i].BP) > 1e-12 ||
			!slices.Equal(got.Totals[:], want[i].Totals) || got.SysLen != want[i].SysLen || got.RefLen != want[i].RefLen {
			t.Errorf("corpus %d: %+v, %v; sacreBLEU %+v", i, got, err, want[i])
		}
	}
}

// TestTokenize13aCodePoints runs every character of the Basic
// Multilingual Plane and every 64th above it through tokenize13a and
// sacreBLEU's own preprocessing (BLEU()._preprocess_segment: rstrip, then
// the 13a tokenizer) between letters, digits, periods, commas and dashes,
// so that each of the tokenizer's classes and Python's idea of white space
// (split, rstrip) is met by every such character; and each character below
// U+3100 (where every Python white space is) at the end of a line, for
// rstrip. The tokens must be equal. (Above the BMP, every character is
// alike to 13a: neither ASCII nor white space; all of them take sacreBLEU
// some 13 seconds.)
func TestTokenize13aCodePoints(t *testing.T) {
	var lines []string
	var b strings.Builder
	for c := rune(0); c <= 0x10ffff; c++ {
		if c >= 0xd800 && c < 0xe000 || c > 0xffff && c%64 != 0 {
			continue // surrogates have no UTF-8 form
		}
		s := string(c)
		b.WriteString("a" + s + "b" + s + "1" + s + "." + s + "x," + s + "2-" + s + " ")
		if b.Len() > 1<<16 {
			lines = append(lines, b.String())
			b.Reset()
		}
		if c < 0x3100 {
			lines = append(lines, "a."+s, "1-"+s)
		}
	}
	lines = append(lines, b.String())
	const program = `
import json, sys
from sacrebleu.metrics.bleu import BLEU
b = BLEU()
print(json.dumps([b._preprocess_segment(l) for l in json.load(sys.stdin)]))
`
	var want []string
	pyRef(t, program, lines, &want)
	if len(want) != len(lines) {
		t.Fatalf("%d lines tokenized for %d", len(want), len(lines))
	}
	bad := 0
	for i, l := range lines {
		if got := strings.Join(tokenize13a(l), " "); got != want[i] {
			if bad++; bad <= 10 {
				g, w := []rune(got), []rune(want[i])
				k := 0
				for k < len(g) && k < len(w) && g[k] == w[k] {
					k++
				}
				t.Errorf("line %d: first difference at code point %d: %+q, sacreBLEU %+q", i, k, string(g[k:min(k+20, len(g))]), string(w[k:min(k+20, len(w))]))
			}
		}
	}
}

// TestScoreJSONBLEU runs bleu through ScoreJSON, as `aimeter accuracy
// score bleu` does: the output's fields, and errors for bad inputs.
func TestScoreJSONBLEU(t *testing.T) {
	out, err := ScoreJSON("bleu", []byte(`{"hypotheses":["the cat sat on the mat","a dog"],"references":[["the cat sat on the mat","a cat"],["a dog","the dog"]]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(out)
	// Identical to a reference each: every n-gram matches (orders 3 and 4
	// only in the first), the closest lengths are the hypotheses' own.
	const want = `{"bleu":100.00000000000004,"counts":[8,6,4,3],"totals":[8,6,4,3],"precisions":[100,100,100,100],"bp":1,"sys_len":8,"ref_len":8}`
	if string(got) != want {
		t.Errorf("bleu: %s, want %s", got, want)
	}
	for _, tc := range []struct{ input, want string }{
		{`{"hypotheses":["a"],"references":[["a"],["b"]]}`, "1 hypotheses for 2 lists of references"},
		{`{"hypotheses":["a","b"],"references":[["a"],["b","c"]]}`, "references[1] has 2 references, references[0] 1"},
		{`{"hypotheses":["a","b"],"references":[["a"],[]]}`, "references[1] is empty"},
		{`{"hypotheses":[],"references":[]}`, "no hypotheses"},
		{`{"hypotheses":"a"}`, "input: "},
	} {
		if out, err := ScoreJSON("bleu", []byte(tc.input)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", tc.input, out, err, tc.want)
		}
	}
}
