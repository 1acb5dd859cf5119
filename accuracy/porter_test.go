package accuracy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPorterStem(t *testing.T) {
	const nltk, orig = PorterNLTK, PorterOriginal
	for _, tc := range []struct {
		mode          PorterMode
		in, want, why string
	}{
		{orig, "caresses", "caress", "1a: sses → ss"},
		{orig, "ponies", "poni", "1a: ies → i"},
		{orig, "ties", "ti", "1a: ies → i, even of four letters"},
		{nltk, "ties", "tie", "NLTK: a four-letter -ies keeps ie"},
		{orig, "agreed", "agre", "1b: eed → ee (m > 0), then 5a drops the e (m = 1, agr not *o)"},
		{orig, "feed", "feed", "1b: eed needs m > 0 of f; ed is not tried after"},
		{orig, "hopping", "hop", "1b: a double consonant is undoubled"},
		{orig, "falling", "fall", "1b: but not l, s or z"},
		{orig, "filing", "file", "1b: m = 1 and *o puts the e back"},
		{orig, "happy", "happi", "1c: y → i, the stem has a vowel"},
		{orig, "sky", "sky", "1c: no vowel in sk"},
		{orig, "enjoy", "enjoi", "1c: original: the stem has a vowel"},
		{nltk, "enjoy", "enjoy", "1c: NLTK: only after a consonant"},
		{orig, "fly", "fly", "1c: original: no vowel in fl"},
		{nltk, "fly", "fli", "1c: NLTK: after a consonant not the whole stem"},
		{orig, "relational", "relat", "2: ational → ate, 4: ate goes (m = 2)"},
		{orig, "conditional", "condit", "2: tional → tion, 4: ion after t goes"},
		{orig, "rational", "ration", "2: tional → tion, 4: m of ration is 1"},
		{orig, "conformabli", "conform", "2: original abli → able, 4: able goes"},
		{orig, "beautifulli", "beautifulli", "2: original has no fulli rule"},
		{nltk, "beautifulli", "beauti", "2: NLTK fulli → ful, 3: ful goes; 4: m of beauti is 2 but no rule fits"},
		{orig, "archaeology", "archaeologi", "1c: y → i; 2: original has no logi rule"},
		{nltk, "archaeology", "archaeolog", "2: NLTK logi → log"},
		{orig, "triplicate", "triplic", "3: icate → ic; 4: m of tripl is 1"},
		{orig, "hopefulness", "hope", "2: fulness → ful, 3: ful goes"},
		{orig, "adoption", "adopt", "4: ion after t, m > 1"},
		{orig, "probate", "probat", "5a: m > 1 drops e"},
		{orig, "rate", "rate", "5a: m = 1 and *o keeps e"},
		{orig, "cease", "ceas", "5a: m = 1 and not *o drops e"},
		{orig, "controll", "control", "5b: ll → l, m > 1"},
		{orig, "roll", "roll", "5b: m of rol is 1"},
		{orig, "dying", "dy", "1b: ing goes; no irregular forms in the original"},
		{nltk, "dying", "die", "NLTK's irregular forms"},
		{orig, "as", "a", "original: two letters go through 1a"},
		{nltk, "as", "as", "NLTK: two letters are kept"},
		{nltk, "Sky", "ski", "NLTK tests the irregular forms before lower-casing"},
		{nltk, "CARESSES", "caress", "lower-cased first"},
		{nltk, "naïvely", "naïv", "code points, not bytes: 2 drops eli → e, then 5a the e (m of naïv is 1, ïv not *o)"},
		{orig, "1234", "1234", "digits are consonants: m = 0"},
	} {
		if got := PorterStem(tc.in, tc.mode); got != tc.want {
			t.Errorf("%s (mode %d): %q → %q, want %q", tc.why, tc.mode, tc.in, got, tc.want)
		}
	}
}

// porterWords is the tricky words of Porter's paper and of NLTK's rule
// changes, then n words generated from a fixed seed: random letters
// (vowels, y and the consonants of the conditions), an optional digit or
// capital, and a suffix of the rules.
func porterWords(n int) []string {
	words := strings.Fields(`generously agreed feed sky skies dying lying tying happy relational conditional rational valenci
hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism
decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti electrical
hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment
dependent adoption homologou communism activate angulariti homologous effective bowdlerize probate rate cease controll roll
flies dies tied spied cried hopping tanned falling hissing fizzed failing filing conflated troubled sized motoring sing
plastered bled caresses ponies ties caress cats analogi fulli beautifulli archaeology innings outings news proceeding
exceeded succeeding skating generalization running happiness emotional traditionally ideally yes ows abys eyes eying
syzygy toy trees ivy oaten orrery privately troubles abc ab xyzzy quickly probabilities enjoy fly as is a s y e i
Sky Skies DYING İnning naïvely café résumé 1234 a1ing 3ies 42ed`)
	rng := rand.New(rand.NewPCG(3, 4))
	const letters = "abcdeilmnorstuvwxyz"
	suffixes := []string{"", "s", "es", "ies", "sses", "ss", "ed", "eed", "ied", "ing", "at", "bl", "iz", "y",
		"ational", "tional", "enci", "anci", "izer", "bli", "abli", "alli", "entli", "eli", "ousli", "ization",
		"ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "fulli", "logi",
		"icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence", "er", "ic", "able",
		"ible", "ant", "ement", "ment", "ent", "sion", "tion", "ion", "ou", "ism", "ate", "iti", "ous", "ive",
		"ize", "e", "ll", "lling"}
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(7) {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		switch rng.IntN(20) {
		case 0:
			b.WriteByte(byte('0' + rng.IntN(10)))
		case 1:
			s := b.String()
			b.Reset()
			b.WriteString(strings.ToUpper(s[:1]) + s[1:])
		}
		b.WriteString(suffixes[rng.IntN(len(suffixes))])
		words = append(words, b.String())
	}
	return words
}

// TestPorterMatchesNLTK stems the tricky words and 5,000 generated ones
// with PorterStem and with NLTK's PorterStemmer in both modes: every stem
// must be equal.
func TestPorterMatchesNLTK(t *testing.T) {
	words := porterWords(5000)
	const program = `
import json, sys
from nltk.stem.porter import PorterStemmer
words = json.load(sys.stdin)
out = {}
for mode in ["NLTK_EXTENSIONS", "ORIGINAL_ALGORITHM"]:
    s = PorterStemmer(mode=mode)
    out[mode] = [s.stem(w) for w in words]
print(json.dumps(out))
`
	var want map[string][]string
	pyRef(t, program, words, &want)
	for _, m := range []struct {
		mode PorterMode
		name string
	}{{PorterNLTK, "NLTK_EXTENSIONS"}, {PorterOriginal, "ORIGINAL_ALGORITHM"}} {
		if len(want[m.name]) != len(words) {
			t.Fatalf("%s: %d stems for %d words", m.name, len(want[m.name]), len(words))
		}
		bad := 0
		for i, w := range words {
			if got := PorterStem(w, m.mode); got != want[m.name][i] {
				if bad++; bad <= 20 {
					t.Errorf("%s: %q → %q, NLTK %q", m.name, w, got, want[m.name][i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d words stem differently", m.name, bad, len(words))
		}
	}
}

func ExamplePorterStem() {
	for _, w := range []string{"generalizations", "enjoy", "dying"} {
		fmt.Println(PorterStem(w, PorterNLTK), PorterStem(w, PorterOriginal))
	}
	// Output:
	// gener gener
	// enjoy enjoi
	// die dy
}
