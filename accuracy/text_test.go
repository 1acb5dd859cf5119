package accuracy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestErrorRates(t *testing.T) {
	for _, tc := range []struct {
		refs, hyps []string
		wer, cer   float64
		reason     string
	}{
		{[]string{"the cat sat"}, []string{"the cat sat"}, 0, 0, "identical"},
		{[]string{"the cat sat"}, []string{"the cat"}, 1.0 / 3, 4.0 / 11, "a deleted word (and its 4 characters, space included)"},
		{[]string{"a b", "c d e"}, []string{"a x", "c d e f"}, 2.0 / 5, 3.0 / 8, "corpus rate: edits and reference lengths summed over pairs"},
		{[]string{"abc"}, []string{""}, 1, 1, "empty hypothesis: every reference word deleted"},
		{[]string{"né"}, []string{"ne"}, 1, 0.5, "characters are code points, not bytes"},
	} {
		got, err := ErrorRates(tc.refs, tc.hyps)
		if err != nil || !near(got.WER, tc.wer) || !near(got.CER, tc.cer) {
			t.Errorf("%s: %+v, %v; want WER %v, CER %v", tc.reason, got, err, tc.wer, tc.cer)
		}
	}
	if _, err := ErrorRates([]string{" "}, []string{"x"}); err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("an empty reference: %v", err)
	}
}

func TestSQuAD(t *testing.T) {
	for _, tc := range []struct {
		answers []string
		pred    string
		em, f1  float64
		reason  string
	}{
		{[]string{"Denver Broncos"}, "denver broncos!", 100, 100, "case and punctuation are normalised away"},
		{[]string{"the Broncos"}, "Broncos", 100, 100, "articles are removed"},
		{[]string{"Denver Broncos"}, "the Denver team", 0, 50, "F1 of bags: the article goes, 1 common token of 2 each: precision and recall 1/2"},
		{[]string{"x", "Denver Broncos"}, "Broncos", 0, 200.0 / 3, "the best of the answers"},
		{[]string{"theory"}, "theory", 100, 100, "'the' inside a word is kept"},
		{[]string{"a"}, "an", 100, 0, "both normalise to empty: exact, but F1 is 0 with no tokens"},
	} {
		got, err := SQuAD([]SQuADQuestion{{ID: "q", Answers: tc.answers}}, map[string]string{"q": tc.pred})
		if err != nil || !near(got.ExactMatch, tc.em) || !near(got.F1, tc.f1) {
			t.Errorf("%s: %+v, %v; want EM %v, F1 %v", tc.reason, got, err, tc.em, tc.f1)
		}
	}
	got, _ := SQuAD([]SQuADQuestion{{ID: "a", Answers: []string{"x"}}, {ID: "b", Answers: []string{"y"}}}, map[string]string{"a": "x"})
	if got.ExactMatch != 50 || got.Unanswered != 1 {
		t.Errorf("an unanswered question: %+v, want EM 50 with one unanswered", got)
	}
}

// TestTextMatchReferences cross-checks ErrorRates with the Levenshtein
// package (distance of word lists and of strings) and SQuAD with the
// official evaluate-v1.1.py functions, restated in Python (tolerance
// 1e-9).
func TestTextMatchReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vocab := []string{"the", "a", "An", "cat", "Cat,", "sat", "on", "mat.", "théâtre", "don't", "x-ray", "(42)", "über", "THE", "and", "_id"}
	sentence := func() string {
		n := rng.IntN(8)
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	type pair struct{ Ref, Hyp string }
	var pairs []pair
	for range 300 {
		pairs = append(pairs, pair{sentence() + " end", sentence()})
	}
	const program = `
import json, sys, re, string, collections
import Levenshtein
def normalize_answer(s):
    s = s.lower()
    s = ''.join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r'\b(a|an|the)\b', ' ', s)
    return ' '.join(s.split())
def f1(p, g):
    pt, gt = normalize_answer(p).split(), normalize_answer(g).split()
    same = sum((collections.Counter(pt) & collections.Counter(gt)).values())
    if same == 0: return 0.0
    pr, rc = same / len(pt), same / len(gt)
    return 2 * pr * rc / (pr + rc)
pairs = json.load(sys.stdin)
we = sum(Levenshtein.distance(p["Ref"].split(), p["Hyp"].split()) for p in pairs)
ce = sum(Levenshtein.distance(p["Ref"], p["Hyp"]) for p in pairs)
w = sum(len(p["Ref"].split()) for p in pairs); c = sum(len(p["Ref"]) for p in pairs)
em = 100 * sum(normalize_answer(p["Hyp"]) == normalize_answer(p["Ref"]) for p in pairs) / len(pairs)
f = 100 * sum(f1(p["Hyp"], p["Ref"]) for p in pairs) / len(pairs)
print(json.dumps({"wer": we / w, "cer": ce / c, "em": em, "f1": f}))
`
	var want struct{ WER, CER, EM, F1 float64 }
	pyRef(t, program, pairs, &want)
	refs, hyps := make([]string, len(pairs)), make([]string, len(pairs))
	qs := make([]SQuADQuestion, len(pairs))
	preds := map[string]string{}
	for i, p := range pairs {
		refs[i], hyps[i] = p.Ref, p.Hyp
		id := string(rune('A'+i%26)) + strings.Repeat("x", i/26)
		qs[i] = SQuADQuestion{ID: id, Answers: []string{p.Ref}}
		preds[id] = p.Hyp
	}
	er, err := ErrorRates(refs, hyps)
	if err != nil || !near(er.WER, want.WER) || !near(er.CER, want.CER) {
		t.Errorf("ErrorRates %+v, %v; Levenshtein %v, %v", er, err, want.WER, want.CER)
	}
	sq, err := SQuAD(qs, preds)
	if err != nil || !near(sq.ExactMatch/100, want.EM/100) || !near(sq.F1/100, want.F1/100) {
		t.Errorf("SQuAD %+v, %v; official script %v, %v", sq, err, want.EM, want.F1)
	}
}
