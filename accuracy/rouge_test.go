package accuracy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPorterStem(t *testing.T) {
	for _, tc := range []struct{ in, want, reason string }{
		{"caresses", "caress", "1a: sses"},
		{"ponies", "poni", "1a: ies"},
		{"ties", "tie", "NLTK: a four-letter -ies keeps ie"},
		{"agreed", "agre", "1b: eed → ee, then 5a drops the e"},
		{"feed", "feed", "1b: eed needs m > 0"},
		{"hopping", "hop", "1b: a double consonant is undoubled"},
		{"falling", "fall", "1b: but not l, s or z"},
		{"filing", "file", "1b: m = 1 and *o puts the e back"},
		{"happy", "happi", "1c: y → i after a consonant"},
		{"enjoy", "enjoy", "1c: not after a vowel"},
		{"relational", "relat", "2: ational → ate, 4: ate goes"},
		{"dying", "die", "NLTK's irregular forms"},
		{"generously", "gener", "several steps"},
		{"as", "as", "two letters are kept"},
	} {
		if got := porterStem(tc.in); got != tc.want {
			t.Errorf("%s: %q → %q, want %q", tc.reason, tc.in, got, tc.want)
		}
	}
}

// TestPorterMatchesNLTK stems a word list with porterStem and with NLTK's
// PorterStemmer() (NLTK_EXTENSIONS, the mode rouge-score uses): every
// stem must be equal.
func TestPorterMatchesNLTK(t *testing.T) {
	words := strings.Fields(`generously agreed feed sky skies dying lying happy relational conditional rational valenci
hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism
decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti electrical
hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment
dependent adoption homologou communism activate angulariti homologous effective bowdlerize probate rate cease controll roll
flies dies tied spied cried hopping tanned falling hissing fizzed failing filing conflated troubled sized motoring sing
plastered bled caresses ponies ties caress cats analogi fulli beautifulli archaeology innings outings news proceeding
exceeded succeeding skating generalization running happiness emotional traditionally ideally yes ows abys eyes eying
syzygy toy trees ivy oaten orrery privately troubles abc ab xyzzy quickly probabilities`)
	rng := rand.New(rand.NewPCG(3, 4))
	letters := "abcdeilmnorstuyz"
	suffixes := []string{"", "s", "es", "ies", "ed", "ied", "ing", "ational", "tional", "ness", "ful", "ly", "alli", "logi", "ement", "ion", "ize", "ate", "ll", "e", "y", "bli", "fulli"}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(7) {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		words = append(words, b.String()+suffixes[rng.IntN(len(suffixes))])
	}
	const program = `
import json, sys
from nltk.stem import porter
s = porter.PorterStemmer()
print(json.dumps([s.stem(w) for w in json.load(sys.stdin)]))
`
	var want []string
	pyRef(t, program, words, &want)
	bad := 0
	for i, w := range words {
		if got := porterStem(w); got != want[i] {
			if bad++; bad <= 20 {
				t.Errorf("%q: %q, NLTK %q", w, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d words stem differently", bad, len(words))
	}
}

func TestROUGE(t *testing.T) {
	r, err := ROUGE([]string{"The cat sat on the mat."}, []string{"the cat sat on the mat"}, false)
	if err != nil || r.ROUGE1 != 1 || r.ROUGE2 != 1 || r.ROUGEL != 1 {
		t.Errorf("identical but for case and punctuation: %+v, %v; want 1", r, err)
	}
	r, _ = ROUGE([]string{"a b c d"}, []string{"e f"}, false)
	if r.ROUGE1 != 0 || r.ROUGEL != 0 {
		t.Errorf("no overlap: %+v", r)
	}
	r, _ = ROUGE([]string{"the cats are running"}, []string{"the cat is running"}, true)
	// Stemmed: the cat ar run / the cat is run: 3 of 4 unigrams.
	if !near(r.ROUGE1, 0.75) {
		t.Errorf("with the stemmer: ROUGE-1 %v, want 0.75", r.ROUGE1)
	}
	r, _ = ROUGE([]string{"x"}, []string{""}, true)
	if r.ROUGE1 != 0 || r.ROUGEL != 0 {
		t.Errorf("an empty prediction: %+v", r)
	}
	if _, err := ROUGE([]string{"a"}, nil, true); err == nil || !strings.Contains(err.Error(), "1 references for 0 predictions") {
		t.Errorf("mismatched lengths: %v", err)
	}
}

// TestROUGEMatchesRougeScore compares ROUGE with rouge_score's RougeScorer
// on random texts, with and without the stemmer: means within 1e-12.
func TestROUGEMatchesRougeScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	vocab := strings.Fields("The cats running runs ran happily happiness generalization general-purpose 42 3.5 x-ray it's \"quoted\" (paren) national nationally agreed agreement the a of and dying flies Flying e-mail U.S. co-operate")
	text := func() string {
		w := make([]string, rng.IntN(15))
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
	for i := range 10 {
		c := pair{Stem: i%2 == 0}
		for range 20 {
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
