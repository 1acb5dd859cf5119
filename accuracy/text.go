package accuracy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrorRateResult is the output of the wer metric.
type ErrorRateResult struct {
	WER   float64 `json:"wer"`   // word edits over reference words
	CER   float64 `json:"cer"`   // character edits over reference characters
	Words int     `json:"words"` // reference words
	Chars int     `json:"chars"` // reference characters
}

// ErrorRates computes the corpus word and character error rates of
// hypotheses against references, as jiwer and MLPerf's RNN-T scoring do:
// the Levenshtein distances (insertions, deletions and substitutions of
// cost 1) summed over every pair, over the total length of the
// references. Words are the whitespace-separated fields of a string;
// characters are its Unicode code points, spaces included (as
// Levenshtein.distance of the two strings). An empty total reference is
// an error: the rate would be undefined.
func ErrorRates(references, hypotheses []string) (ErrorRateResult, error) {
	if len(references) != len(hypotheses) {
		return ErrorRateResult{}, fmt.Errorf("%d references for %d hypotheses", len(references), len(hypotheses))
	}
	var r ErrorRateResult
	var wordEdits, charEdits int
	for i := range references {
		rw, hw := strings.Fields(references[i]), strings.Fields(hypotheses[i])
		wordEdits += levenshtein(rw, hw)
		rc, hc := []rune(references[i]), []rune(hypotheses[i])
		charEdits += levenshtein(rc, hc)
		r.Words += len(rw)
		r.Chars += len(rc)
	}
	if r.Words == 0 || r.Chars == 0 {
		return r, errors.New("the references hold no words: the error rate is undefined")
	}
	r.WER = float64(wordEdits) / float64(r.Words)
	r.CER = float64(charEdits) / float64(r.Chars)
	return r, nil
}

// levenshtein is the edit distance of a and b, in O(len(b)) memory.
func levenshtein[T comparable](a, b []T) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SQuADResult is the output of the squad metric, on a 0–100 scale.
type SQuADResult struct {
	ExactMatch float64 `json:"exact_match"`
	F1         float64 `json:"f1"`
	Questions  int     `json:"questions"`
	Unanswered int     `json:"unanswered"`
}

// SQuADQuestion is one question of the ground truth with its accepted
// answers.
type SQuADQuestion struct {
	ID      string   `json:"id"`
	Answers []string `json:"answers"`
}

// SQuAD scores predictions (question id → answer text) as the official
// SQuAD v1.1 evaluate-v1.1.py: both texts normalised (lower case, ASCII
// punctuation removed, the articles a/an/the removed as whole words,
// whitespace collapsed); exact match and the F1 of the bags of normalised
// tokens, each the best over the question's answers; both averaged over
// every question and multiplied by 100. A question without a prediction
// scores 0 on both (the script prints a notice and counts it).
func SQuAD(questions []SQuADQuestion, predictions map[string]string) (SQuADResult, error) {
	if len(questions) == 0 {
		return SQuADResult{}, errors.New("no questions to score")
	}
	var r SQuADResult
	var em, f1 float64
	for i, q := range questions {
		if len(q.Answers) == 0 {
			return r, fmt.Errorf("questions[%d] (id %q) has no answers", i, q.ID)
		}
		pred, ok := predictions[q.ID]
		if !ok {
			r.Unanswered++
			continue
		}
		p := normalizeSQuAD(pred)
		var bestEM, bestF1 float64
		for _, a := range q.Answers {
			g := normalizeSQuAD(a)
			if p == g {
				bestEM = 1
			}
			bestF1 = max(bestF1, tokenF1(strings.Fields(p), strings.Fields(g)))
		}
		em += bestEM
		f1 += bestF1
	}
	r.Questions = len(questions)
	r.ExactMatch = 100 * em / float64(len(questions))
	r.F1 = 100 * f1 / float64(len(questions))
	return r, nil
}

// normalizeSQuAD is the official script's normalize_answer: lower case,
// remove string.punctuation, remove the articles (regex \b(a|an|the)\b on
// Unicode word characters), collapse whitespace.
func normalizeSQuAD(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			return -1
		}
		return r
	}, s)
	s = removeArticles(s)
	return strings.Join(strings.Fields(s), " ")
}

// removeArticles replaces every whole word a, an or the by a space, where
// a word is a maximal run of Unicode letters, numbers and underscores (as
// Python's \b on a str).
func removeArticles(s string) string {
	word := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if !word(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && word(rs[j]) {
			j++
		}
		switch w := string(rs[i:j]); w {
		case "a", "an", "the":
			b.WriteByte(' ')
		default:
			b.WriteString(w)
		}
		i = j
	}
	return b.String()
}

// tokenF1 is the F1 of the token bags of a prediction and an answer.
func tokenF1(pred, gold []string) float64 {
	counts := make(map[string]int, len(gold))
	for _, t := range gold {
		counts[t]++
	}
	same := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	p := float64(same) / float64(len(pred))
	r := float64(same) / float64(len(gold))
	return 2 * p * r / (p + r)
}
