package accuracy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

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
