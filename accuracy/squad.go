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
// SQuAD v1.1 evaluate-v1.1.py under Python 3: both texts normalised as
// normalizeSQuAD (lower case, ASCII punctuation removed, the articles
// a/an/the removed as whole words, whitespace collapsed); exact match
// (normalised texts equal) and the F1 of the bags of normalised tokens,
// each the best over the question's answers; both summed over every
// question in order, times 100, over the number of questions. Edge
// conventions are the script's: a question without a prediction scores 0
// on both (the script prints a notice and counts it); texts that both
// normalise to nothing match exactly but have F1 0 (no common token);
// predictions for ids not among the questions are ignored; a repeated
// question counts each time. A question without answers is an error (the
// script fails on max() of nothing).
func SQuAD(questions []SQuADQuestion, predictions map[string]string) (SQuADResult, error) {
	if len(questions) == 0 {
		return SQuADResult{}, errors.New("no questions to score")
	}
	var r SQuADResult
	var em, f1 float64
	for i, q := range questions {
		if len(q.Answers) == 0 {
			return SQuADResult{}, fmt.Errorf("questions[%d].answers: none for id %q, want at least one", i, q.ID)
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
			bestF1 = max(bestF1, tokenF1(pyFields(p), pyFields(g)))
		}
		em += bestEM
		f1 += bestF1
	}
	r.Questions = len(questions)
	r.ExactMatch = 100 * em / float64(len(questions))
	r.F1 = 100 * f1 / float64(len(questions))
	return r, nil
}

// normalizeSQuAD is the official script's normalize_answer on a Python 3
// str: lower case (Python's str.lower, see pyLower), remove the 32
// characters of string.punctuation, replace each article a, an or the
// (regex \b(a|an|the)\b on Unicode word characters) by a space, and join
// the str.split() fields with single spaces.
func normalizeSQuAD(s string) string {
	s = pyLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			return -1
		}
		return r
	}, s)
	s = removeArticles(s)
	return strings.Join(pyFields(s), " ")
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

// pyLower is Python 3's str.lower, which applies the full lower-case
// mappings of Unicode: it differs from unicode.ToLower on two code points
// only (checked over every code point in the tests). İ (U+0130) becomes
// "i̇" (i and U+0307), and a capital sigma becomes the final ς when it
// ends a word, the Final_Sigma condition as Python tests it: the nearest
// character before it that is not case-ignorable is cased, and the
// nearest after it that is not case-ignorable, if any, is not.
func pyLower(s string) string {
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case '\u0130':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(rs, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the capital sigma rs[i] ends a word, as
// Python's lower() decides.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && caseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !cased(rs[j])
}

// cased is Unicode's Cased property: Lu, Ll, Lt, Other_Lowercase and
// Other_Uppercase.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk
// and the characters whose Word_Break is MidLetter, MidNumLet or
// Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00b7', '\u0387', '\u055f', '\u05f4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
