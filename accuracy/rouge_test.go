package accuracy

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestROUGE(t *testing.T) {
	for _, tc := range []struct {
		refs, preds []string
		stem        bool
		r1, r2, rl  float64
		why         string
	}{
		{[]string{"The cat sat on the mat."}, []string{"the cat sat on the mat"}, false, 1, 1, 1,
			"identical but for case and punctuation"},
		{[]string{"a b c d"}, []string{"e f"}, false, 0, 0, 0, "no overlap"},
		{[]string{"the cats are running"}, []string{"the cat is running"}, true, 0.75, 1.0 / 3, 0.75,
			"stemmed: the cat are run / the cat is run (are, of 3 letters, unstemmed): 3 of 4 unigrams, 1 of 3 bigrams, LCS 3"},
		{[]string{"the cats are running"}, []string{"the cat is running"}, false, 0.5, 0, 0.5,
			"unstemmed: the and running, no bigram, LCS 2"},
		{[]string{"x"}, []string{""}, true, 0, 0, 0, "an empty prediction"},
		{[]string{""}, []string{""}, true, 0, 0, 0, "both empty: 0 (P = R = 0 over counts of at least 1), not 1"},
		{[]string{"a b c d e"}, []string{"a c e x"}, false, 2.0 / 3, 0, 2.0 / 3,
			"P 3/4, R 3/5: F 2/3; no bigram in common; LCS a c e"},
		{[]string{"the the the"}, []string{"the"}, false, 0.5, 0, 0.5,
			"counts clipped: 1 of 3; no bigram in the prediction"},
		{[]string{"a b", "a b"}, []string{"a b", "c d"}, false, 0.5, 0.5, 0.5, "the mean over the pairs"},
		{[]string{"3.5 x-ray"}, []string{"3 5 x ray"}, false, 1, 1, 1, "digits kept, other characters split"},
		{[]string{"\u0130x"}, []string{"i x"}, false, 1, 1, 1,
			"Python lower-cases İ to i and a combining dot, which splits the word"},
		{[]string{"\u212a"}, []string{"k"}, false, 1, 0, 1, "the Kelvin sign lower-cases to k"},
		{[]string{"Skies"}, []string{"sky"}, true, 1, 0, 1, "lower-cased before the stemmer's irregular forms"},
	} {
		r, err := ROUGE(tc.refs, tc.preds, tc.stem)
		if err != nil || !near(r.ROUGE1, tc.r1) || !near(r.ROUGE2, tc.r2) || !near(r.ROUGEL, tc.rl) || r.Pairs != len(tc.refs) {
			t.Errorf("%s: %+v, %v; want %v %v %v", tc.why, r, err, tc.r1, tc.r2, tc.rl)
		}
	}
	for _, tc := range []struct {
		refs, preds []string
		want        string
	}{
		{[]string{"a"}, nil, "1 references for 0 predictions"},
		{nil, nil, "no pairs"},
	} {
		if _, err := ROUGE(tc.refs, tc.preds, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v/%v: %v, want an error saying %q", tc.refs, tc.preds, err, tc.want)
		}
	}
}

// TestROUGEMatchesRougeScore compares ROUGE with rouge_score's RougeScorer
// on random texts, with and without the stemmer, from a vocabulary of
// punctuation, numbers, capitals, hyphens, quotes, non-ASCII letters and
// the words of the Porter stemmer's test: means within 1e-12.
func TestROUGEMatchesRougeScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	vocab := strings.Fields("The cats running runs ran happily happiness generalization general-purpose 42 3.5 x-ray it's \"quoted\" (paren) national nationally agreed agreement the a of and dying flies Flying e-mail U.S. co-operate \u0130stanbul \u212aelvin naïve café Skies 1234 ab3cd")
	vocab = append(vocab, porterWords(300)...)
	text := func() string {
		w := make([]string, rng.IntN(40))
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	type pair struct {
		Refs, Preds []string
		Stem        bool
	}
	var cases []pair
	for i := range 20 {
		c := pair{Stem: i%2 == 0}
		for range 30 {
			c.Refs, c.Preds = append(c.Refs, text()), append(c.Preds, text())
		}
		cases = append(cases, c)
	}
	const program = `
import json, sys
from rouge_score import rouge_scorer
out = []
for c in json.load(sys.stdin):
    s = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=c["Stem"])
    sc = [s.score(r, p) for r, p in zip(c["Refs"], c["Preds"])]
    out.append({k: sum(x[k].fmeasure for x in sc) / len(sc) for k in ["rouge1", "rouge2", "rougeL"]})
print(json.dumps(out))
`
	var want []struct {
		R1 float64 `json:"rouge1"`
		R2 float64 `json:"rouge2"`
		RL float64 `json:"rougeL"`
	}
	pyRef(t, program, cases, &want)
	for i, c := range cases {
		got, err := ROUGE(c.Refs, c.Preds, c.Stem)
		if err != nil || math.Abs(got.ROUGE1-want[i].R1) > 1e-12 || math.Abs(got.ROUGE2-want[i].R2) > 1e-12 || math.Abs(got.ROUGEL-want[i].RL) > 1e-12 {
			t.Errorf("case %d (stemmer %v): %+v, %v; rouge-score %+v", i, c.Stem, got, err, want[i])
		}
	}
}

// TestROUGETokensCodePoints tokenizes every Unicode scalar value between
// letters with rougeTokens and rouge-score's tokenize (no stemmer): the
// tokens must be equal. This checks Go's lower-casing against Python's on
// every character (only İ and the Kelvin sign lower-case to ASCII).
func TestROUGETokensCodePoints(t *testing.T) {
	var b strings.Builder
	for c := rune(0x80); c <= 0x10ffff; c++ {
		if c >= 0xd800 && c < 0xe000 {
			continue // surrogates have no UTF-8 form
		}
		b.WriteString("a" + string(c) + "b ")
	}
	text := b.String()
	const program = `
import json, sys
from rouge_score import tokenize
print(json.dumps(" ".join(tokenize.tokenize(json.load(sys.stdin), None))))
`
	var want string
	pyRef(t, program, text, &want)
	if got := strings.Join(rougeTokens(text, false), " "); got != want {
		g, w := strings.Fields(got), strings.Fields(want)
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("token %d: %q, rouge-score %q", i, g[i], w[i])
			}
		}
		t.Fatalf("%d tokens, rouge-score %d", len(g), len(w))
	}
}

// TestScoreJSONROUGE runs rouge through ScoreJSON, as `aimeter accuracy
// score rouge` does: use_stemmer true by default, and errors for bad
// inputs.
func TestScoreJSONROUGE(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{`{"references":["the cats are running"],"predictions":["the cat is running"]}`,
			`{"rouge1":0.75,"rouge2":0.3333333333333333,"rougeL":0.75,"pairs":1}`},
		{`{"references":["the cats are running"],"predictions":["the cat is running"],"use_stemmer":false}`,
			`{"rouge1":0.5,"rouge2":0,"rougeL":0.5,"pairs":1}`},
	} {
		out, err := ScoreJSON("rouge", []byte(tc.input))
		if err != nil {
			t.Errorf("%s: %v", tc.input, err)
			continue
		}
		if got, _ := json.Marshal(out); string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.input, got, tc.want)
		}
	}
	for _, tc := range []struct{ input, want string }{
		{`{"references":["a","b"],"predictions":["a"]}`, "2 references for 1 predictions"},
		{`{"references":[],"predictions":[]}`, "no pairs"},
		{`{"references":["a"],"predictions":[1]}`, "input: "},
	} {
		if out, err := ScoreJSON("rouge", []byte(tc.input)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", tc.input, out, err, tc.want)
		}
	}
}
