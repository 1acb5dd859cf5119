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
// references. Words are the fields of a string split at runs of
// whitespace as Python's str.split() (Unicode White_Space and the ASCII
// separators U+001C–U+001F), so word distances equal
// Levenshtein.distance(ref.split(), hyp.split()); characters are the
// string's Unicode code points, spaces included and nothing stripped or
// collapsed, so character distances equal Levenshtein.distance(ref, hyp).
// An empty total reference (no word, or no character) is an error: the
// rate would be undefined.
func ErrorRates(references, hypotheses []string) (ErrorRateResult, error) {
	if len(references) != len(hypotheses) {
		return ErrorRateResult{}, fmt.Errorf("%d references for %d hypotheses", len(references), len(hypotheses))
	}
	var r ErrorRateResult
	var wordEdits, charEdits int
	for i := range references {
		rw, hw := pyFields(references[i]), pyFields(hypotheses[i])
		wordEdits += Levenshtein(rw, hw)
		rc, hc := []rune(references[i]), []rune(hypotheses[i])
		charEdits += Levenshtein(rc, hc)
		r.Words += len(rw)
		r.Chars += len(rc)
	}
	if r.Words == 0 {
		return ErrorRateResult{}, errors.New("references: no words in any reference, the error rate is undefined")
	}
	r.WER = float64(wordEdits) / float64(r.Words)
	r.CER = float64(charEdits) / float64(r.Chars)
	return r, nil
}

// Levenshtein is the edit distance of a and b (insertions, deletions and
// substitutions of cost 1), in O(len(b)) memory.
func Levenshtein[T comparable](a, b []T) int {
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

// pyFields splits s at runs of whitespace as Python's str.split() with no
// argument: Go's unicode.IsSpace plus the information separators U+001C to
// U+001F, which Python also counts as whitespace.
func pyFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}
