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
		{[]string{"a b", "c d e"}, []string{"a x", "c d e f"}, 2.0 / 5, 3.0 / 8, "corpus rate: edits and reference lengths summed over pairs, not a mean of rates"},
		{[]string{"abc"}, []string{""}, 1, 1, "empty hypothesis: every reference word deleted"},
		{[]string{"a"}, []string{"b c d"}, 3, 5, "insertions can take the rate above 1"},
		{[]string{"né"}, []string{"ne"}, 1, 0.5, "characters are code points, not bytes"},
		{[]string{"kitten sitting"}, []string{"sitting kitten"}, 1, 6.0 / 14, "two word substitutions; 6 character edits"},
		{[]string{"a\tb\x1cc"}, []string{"a b c"}, 0, 2.0 / 5, "tab and U+001C split words as Python's str.split(); as characters they differ from spaces"},
		{[]string{" a  b "}, []string{"a b"}, 0, 3.0 / 6, "runs of spaces split once; characters are not stripped"},
		{[]string{"", "x y"}, []string{"z", "x y"}, 0.5, 1.0 / 3, "an empty reference in a corpus: its hypothesis is insertions"},
	} {
		got, err := ErrorRates(tc.refs, tc.hyps)
		if err != nil || !near(got.WER, tc.wer) || !near(got.CER, tc.cer) {
			t.Errorf("%s: %+v, %v; want WER %v, CER %v", tc.reason, got, err, tc.wer, tc.cer)
		}
	}
	for _, tc := range []struct {
		refs, hyps []string
		want       string
	}{
		{[]string{" \t"}, []string{"x"}, "references: no words in any reference"},
		{nil, nil, "references: no words"},
		{[]string{"a"}, []string{"a", "b"}, "1 references for 2 hypotheses"},
	} {
		if _, err := ErrorRates(tc.refs, tc.hyps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q / %q: %v, want an error saying %q", tc.refs, tc.hyps, err, tc.want)
		}
	}
}

// TestErrorRatesMatchLevenshtein cross-checks ErrorRates with the
// Levenshtein package: the sum of Levenshtein.distance(ref.split(),
// hyp.split()) over the sum of len(ref.split()), and the same over the
// strings, on random sentences with Unicode, tabs, newlines, U+001C and
// no-break spaces between words. The edit counts are compared exactly.
func TestErrorRatesMatchLevenshtein(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	vocab := []string{"the", "a", "cat", "Cat", "sat", "on", "mat", "théâtre", "日本語", "x", "ß", "🙂", "don't"}
	seps := []string{" ", " ", " ", "  ", "\t", "\n", "\x1c", "\u00a0", "\u3000"}
	sentence := func() string {
		var b strings.Builder
		for range rng.IntN(9) {
			b.WriteString(vocab[rng.IntN(len(vocab))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		return b.String()
	}
	type pair struct{ Ref, Hyp string }
	var pairs []pair
	for range 400 {
		pairs = append(pairs, pair{sentence() + "end", sentence()})
	}
	const program = `
import json, sys
import Levenshtein
pairs = json.load(sys.stdin)
print(json.dumps([[Levenshtein.distance(p["Ref"].split(), p["Hyp"].split()), len(p["Ref"].split()),
                   Levenshtein.distance(p["Ref"], p["Hyp"]), len(p["Ref"])] for p in pairs]))
`
	var want [][4]int // word edits, reference words, character edits, reference characters
	pyRef(t, program, pairs, &want)
	refs, hyps := make([]string, len(pairs)), make([]string, len(pairs))
	var sum [4]int
	for i, p := range pairs {
		refs[i], hyps[i] = p.Ref, p.Hyp
		one, err := ErrorRates([]string{p.Ref}, []string{p.Hyp})
		w := want[i]
		if w[1] == 0 {
			t.Fatalf("pair %d: the reference should hold a word", i)
		}
		if err != nil || one.Words != w[1] || one.Chars != w[3] ||
			one.WER != float64(w[0])/float64(w[1]) || one.CER != float64(w[2])/float64(w[3]) {
			t.Errorf("pair %d %q / %q: %+v, %v; Levenshtein %v", i, p.Ref, p.Hyp, one, err, w)
		}
		for j := range sum {
			sum[j] += w[j]
		}
	}
	got, err := ErrorRates(refs, hyps)
	if err != nil || got.Words != sum[1] || got.Chars != sum[3] ||
		got.WER != float64(sum[0])/float64(sum[1]) || got.CER != float64(sum[2])/float64(sum[3]) {
		t.Errorf("ErrorRates %+v, %v; Levenshtein sums %v", got, err, sum)
	}
}
