package accuracy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

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
