package accuracy

import (
	"errors"
	"fmt"
	"strings"
)

// ROUGEResult is the mean F-measure of ROUGE-1, ROUGE-2 and ROUGE-L over
// the pairs, on a 0–1 scale.
type ROUGEResult struct {
	ROUGE1 float64 `json:"rouge1"`
	ROUGE2 float64 `json:"rouge2"`
	ROUGEL float64 `json:"rougeL"`
	Pairs  int     `json:"pairs"`
}

// rougeTokens is rouge-score's default tokenizer (tokenize.tokenize):
// lower case as Python's str.lower (pyLower: İ becomes i and a combining
// dot, which splits the word), every run of characters other than a–z and
// 0–9 a space, split; with stem, tokens longer than three characters
// stemmed with NLTK's PorterStemmer() in its default NLTK_EXTENSIONS mode
// (porterStem), which is what rouge-score builds; empty tokens dropped.
func rougeTokens(text string, stem bool) []string {
	text = pyLower(text)
	fields := strings.FieldsFunc(text, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	if stem {
		for i, f := range fields {
			if len(f) > 3 {
				fields[i] = porterStem(f)
			}
		}
	}
	return fields
}

// fmeasure is rouge-score's: 2PR/(P+R), 0 when both are 0.
func fmeasure(p, r float64) float64 {
	if p+r > 0 {
		return 2 * p * r / (p + r)
	}
	return 0
}

// rougeN is the F-measure of the n-gram overlap of prediction with target.
func rougeN(target, prediction []string, n int) float64 {
	count := func(toks []string) (map[string]int, int) {
		m := map[string]int{}
		total := 0
		for i := 0; i+n <= len(toks); i++ {
			m[strings.Join(toks[i:i+n], " ")]++
			total++
		}
		return m, total
	}
	tm, tn := count(target)
	pm, pn := count(prediction)
	inter := 0
	for g, c := range tm {
		inter += min(c, pm[g])
	}
	p := float64(inter) / float64(max(pn, 1))
	r := float64(inter) / float64(max(tn, 1))
	return fmeasure(p, r)
}

// rougeL is the F-measure of the longest common subsequence.
func rougeL(target, prediction []string) float64 {
	if len(target) == 0 || len(prediction) == 0 {
		return 0
	}
	prev := make([]int, len(prediction)+1)
	cur := make([]int, len(prediction)+1)
	for i := 1; i <= len(target); i++ {
		for j := 1; j <= len(prediction); j++ {
			if target[i-1] == prediction[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	lcs := float64(prev[len(prediction)])
	return fmeasure(lcs/float64(len(prediction)), lcs/float64(len(target)))
}

// ROUGE scores predictions against references as Google's rouge-score
// 0.1.2 RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer): per pair
// the F-measure of unigram and bigram overlap (counts clipped; precision
// over the prediction's n-grams, recall over the reference's, each count
// taken as at least 1) and of the longest common subsequence (rougeL, not
// rougeLsum; 0 when either side has no token), then the mean over the
// pairs, as MLPerf's summarization accuracy scripts average them, on a 0–1
// scale. Tokens are rouge-score's (rougeTokens); the stemmer is NLTK's
// default mode, PorterNLTK, not ORIGINAL_ALGORITHM. Mismatched lengths and
// an empty input are errors.
func ROUGE(references, predictions []string, useStemmer bool) (ROUGEResult, error) {
	if len(references) != len(predictions) {
		return ROUGEResult{}, fmt.Errorf("%d references for %d predictions", len(references), len(predictions))
	}
	if len(references) == 0 {
		return ROUGEResult{}, errors.New("no pairs to score")
	}
	var r ROUGEResult
	for i := range references {
		t, p := rougeTokens(references[i], useStemmer), rougeTokens(predictions[i], useStemmer)
		r.ROUGE1 += rougeN(t, p, 1)
		r.ROUGE2 += rougeN(t, p, 2)
		r.ROUGEL += rougeL(t, p)
	}
	n := float64(len(references))
	r.ROUGE1, r.ROUGE2, r.ROUGEL, r.Pairs = r.ROUGE1/n, r.ROUGE2/n, r.ROUGEL/n, len(references)
	return r, nil
}
