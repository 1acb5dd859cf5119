package accuracy

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// BLEUResult is sacreBLEU's BLEUScore: Score on a 0–100 scale, the
// matching and total n-gram counts (orders 1 to 4), the precisions, the
// brevity penalty and the corpus lengths.
type BLEUResult struct {
	Score      float64    `json:"bleu"`
	Counts     [4]int     `json:"counts"`
	Totals     [4]int     `json:"totals"`
	Precisions [4]float64 `json:"precisions"`
	BP         float64    `json:"bp"`
	SysLen     int        `json:"sys_len"`
	RefLen     int        `json:"ref_len"`
}

// The regular expressions of sacreBLEU's 13a tokenizer (mteval-v13a),
// applied in order.
var bleu13a = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Punctuation and symbols: {|}~ [\]^_` space to & ( to + : to @ and /.
	{regexp.MustCompile(`([\{-\~\[-\x60 -\&\(-\+\:-\@\/])`), " ${1} "},
	// Period and comma unless preceded by a digit.
	{regexp.MustCompile(`([^0-9])([\.,])`), "${1} ${2} "},
	// Period and comma unless followed by a digit.
	{regexp.MustCompile(`([\.,])([^0-9])`), " ${1} ${2}"},
	// A dash preceded by a digit.
	{regexp.MustCompile(`([0-9])(-)`), "${1} ${2} "},
}

// tokenize13a is sacreBLEU's default tokenizer: the language-independent
// part (drop "<skipped>", join "-\n", newlines to spaces, unescape
// &quot; &amp; &lt; &gt;), the four substitutions of bleu13a on the line
// padded with a space each side, then single spaces between tokens.
// Trailing whitespace is removed first, as sacreBLEU's preprocessing does.
func tokenize13a(line string) []string {
	line = strings.TrimRightFunc(line, isPySpace)
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	if strings.Contains(line, "&") {
		line = strings.ReplaceAll(line, "&quot;", `"`)
		line = strings.ReplaceAll(line, "&amp;", "&")
		line = strings.ReplaceAll(line, "&lt;", "<")
		line = strings.ReplaceAll(line, "&gt;", ">")
	}
	line = " " + line + " "
	for _, r := range bleu13a {
		line = r.re.ReplaceAllString(line, r.repl)
	}
	return strings.FieldsFunc(line, isPySpace)
}

// isPySpace is Python's str.isspace for one character, which str.split()
// and str.rstrip() use: Unicode White_Space plus the separators
// U+001C–U+001F.
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// ngram is an n-gram of orders 1 to 4: n tokens, the rest empty. (A key
// of tokens joined by a separator would not do: a 13a token may hold any
// character that is not white space, NUL included.)
type ngram struct {
	n    int
	toks [4]string
}

// ngramCounts counts the n-grams of orders 1 to 4 of tokens.
func ngramCounts(tokens []string) map[ngram]int {
	m := make(map[ngram]int, 4*len(tokens))
	for n := 1; n <= 4; n++ {
		for i := 0; i+n <= len(tokens); i++ {
			g := ngram{n: n}
			copy(g.toks[:], tokens[i:i+n])
			m[g]++
		}
	}
	return m
}

// BLEU is sacreBLEU 2.5.1's corpus_bleu(hypotheses, streams) with its
// defaults: 13a tokenization (tokenize13a), case kept, n-grams up to 4,
// "exp" smoothing (a zero match count at order n takes 100 / (2^k · total)
// with k the number of zero orders so far; an order without n-grams ends
// the precisions, its log floored at -9999999999 as sacreBLEU's my_log),
// no effective order, and the brevity penalty over the summed lengths with
// each hypothesis's closest reference length (a tie taking the shorter).
// A corpus without a single match scores 0, as sacreBLEU returns early
// then.
//
// references[i] are the references of hypotheses[i]; sacreBLEU takes them
// transposed, as reference streams (stream j holding every hypothesis's
// j-th reference), so every hypothesis must have the same number of
// references: a different number is an error naming the entry, as are
// mismatched lengths and an empty corpus. No partial score is returned
// with an error.
func BLEU(hypotheses []string, references [][]string) (BLEUResult, error) {
	if len(hypotheses) != len(references) {
		return BLEUResult{}, fmt.Errorf("%d hypotheses for %d lists of references", len(hypotheses), len(references))
	}
	if len(hypotheses) == 0 {
		return BLEUResult{}, errors.New("no hypotheses to score")
	}
	for i, refs := range references {
		if len(refs) == 0 {
			return BLEUResult{}, fmt.Errorf("references[%d] is empty: every hypothesis needs a reference", i)
		}
		if len(refs) != len(references[0]) {
			return BLEUResult{}, fmt.Errorf("references[%d] has %d references, references[0] %d: every hypothesis needs the same number (sacreBLEU's reference streams)", i, len(refs), len(references[0]))
		}
	}
	var r BLEUResult
	for i, hyp := range hypotheses {
		refMax := map[ngram]int{}
		closestDiff, closestLen := -1, -1
		ht := tokenize13a(hyp)
		for _, ref := range references[i] {
			rt := tokenize13a(ref)
			for g, c := range ngramCounts(rt) {
				refMax[g] = max(refMax[g], c)
			}
			diff := len(ht) - len(rt)
			if diff < 0 {
				diff = -diff
			}
			if closestDiff == -1 || diff < closestDiff {
				closestDiff, closestLen = diff, len(rt)
			} else if diff == closestDiff && len(rt) < closestLen {
				closestLen = len(rt)
			}
		}
		r.SysLen += len(ht)
		r.RefLen += closestLen
		for g, c := range ngramCounts(ht) {
			r.Totals[g.n-1] += c
			r.Counts[g.n-1] += min(c, refMax[g])
		}
	}
	r.BP = 1
	if r.SysLen < r.RefLen {
		r.BP = 0
		if r.SysLen > 0 {
			r.BP = math.Exp(1 - float64(r.RefLen)/float64(r.SysLen))
		}
	}
	if r.Counts == [4]int{} {
		return r, nil
	}
	smooth := 1.0
	var logSum float64
	for n := range 4 {
		if r.Totals[n] == 0 {
			break
		}
		if r.Counts[n] == 0 {
			smooth *= 2
			r.Precisions[n] = 100 / (smooth * float64(r.Totals[n]))
		} else {
			r.Precisions[n] = 100 * float64(r.Counts[n]) / float64(r.Totals[n])
		}
	}
	for _, p := range r.Precisions {
		if p == 0 {
			logSum += -9999999999 // sacreBLEU's my_log(0)
		} else {
			logSum += math.Log(p)
		}
	}
	r.Score = r.BP * math.Exp(logSum/4)
	return r, nil
}
