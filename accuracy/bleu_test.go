package accuracy

import (
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
		{nil, nil, "no hypotheses"},
	} {
		if _, err := BLEU(tc.hyps, tc.refs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v/%v: %v, want %q", tc.hyps, tc.refs, err, tc.want)
		}
	}
}

// TestBLEUMatchesSacreBLEU compares BLEU with sacrebleu.corpus_bleu on
// random corpora with punctuation, numbers, capitals, hyphens, quotes and
// entities, and a varying number of references (None-padded streams):
// scores within 1e-9 on the 0–100 scale, counts and lengths exact.
func TestBLEUMatchesSacreBLEU(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	vocab := []string{"the", "The", "cat", "sat", "on", "mat", "mat.", "3.5", "1,000", "5-7", "x-ray", "\"hi\"", "it's", "(a)", "&amp;", "&quot;", "dog,", "ran!", "é", "end.", "--", "a/b", "$5", "well-known"}
	sentence := func() string {
		w := make([]string, 1+rng.IntN(12))
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
		for range 1 + rng.IntN(30) {
			c.Hyps = append(c.Hyps, sentence())
			refs := make([]string, 1+rng.IntN(3))
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
    n = max(len(r) for r in c["refs"])
    streams = [[r[i] if i < len(r) else None for r in c["refs"]] for i in range(n)]
    s = sacrebleu.corpus_bleu(c["hyps"], streams)
    out.append({"bleu": s.score, "counts": s.counts, "totals": s.totals, "sys_len": s.sys_len, "ref_len": s.ref_len})
print(json.dumps(out))
`
	var want []struct {
		BLEU   float64 `json:"bleu"`
		Counts []int   `json:"counts"`
		Totals []int   `json:"totals"`
		SysLen int     `json:"sys_len"`
		RefLen int     `json:"ref_len"`
	}
	pyRef(t, program, cases, &want)
	for i, c := range cases {
		got, err := BLEU(c.Hyps, c.Refs)
		if err != nil || math.Abs(got.Score-want[i].BLEU) > 1e-9 || !slices.Equal(got.Counts[:], want[i].Counts) ||
			!slices.Equal(got.Totals[:], want[i].Totals) || got.SysLen != want[i].SysLen || got.RefLen != want[i].RefLen {
			t.Errorf("corpus %d: %+v, %v; sacreBLEU %+v", i, got, err, want[i])
		}
	}
}
