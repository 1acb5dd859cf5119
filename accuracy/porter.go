package accuracy

import "strings"

// PorterMode selects a variant of NLTK's PorterStemmer (nltk.stem.porter,
// NLTK 3.9).
type PorterMode int

const (
	// PorterNLTK is NLTK's default mode, NLTK_EXTENSIONS, the one
	// Google's rouge-score 0.1.2 uses (tokenizers.DefaultTokenizer builds
	// porter.PorterStemmer() with no mode): a table of irregular forms,
	// words of up to two letters kept, -ies and -ied of four letters
	// keeping "ie", y → i only after a consonant that is not the whole
	// stem, -bli → -ble instead of -abli → -able, -alli tried first,
	// -fulli and -logi, and *o also true of a two-letter vowel-consonant
	// stem.
	PorterNLTK PorterMode = iota
	// PorterOriginal is NLTK's ORIGINAL_ALGORITHM mode: Porter's 1980
	// algorithm as published, every word (even of one or two letters)
	// through steps 1a to 5b, y → i when the stem has a vowel.
	PorterOriginal
)

// porterIrregular is NLTK_EXTENSIONS' table of irregular forms: a word in
// it stems to its value.
var porterIrregular = map[string]string{
	"sky": "sky", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "news": "news",
	"innings": "inning", "inning": "inning", "outings": "outing", "outing": "outing",
	"cannings": "canning", "canning": "canning", "howe": "howe",
	"proceed": "proceed", "exceed": "exceed", "succeed": "succeed",
}

// PorterStem stems word as NLTK 3.9's PorterStemmer(mode).stem(word): the
// word is lower-cased (as Python's str.lower, but for a word-final Σ,
// which Go lowers to σ, not ς), then Porter's steps 1a, 1b, 1c, 2, 3, 4,
// 5a and 5b run on its code points, with NLTK's rules for the mode. In
// PorterNLTK mode the irregular forms and the two-letter rule are tested
// on word as given, before lower-casing, as NLTK does.
func PorterStem(word string, mode PorterMode) string {
	lower := pyLower(word)
	if mode == PorterNLTK {
		if s, ok := porterIrregular[word]; ok {
			return s
		}
		if len([]rune(word)) <= 2 {
			return lower
		}
	}
	p := porter{mode: mode}
	w := []rune(lower)
	w = p.step1a(w)
	w = p.step1b(w)
	w = p.step1c(w)
	w = p.step2(w)
	w = p.step3(w)
	w = p.step4(w)
	w = p.step5a(w)
	w = p.step5b(w)
	return string(w)
}

// porterStem is PorterStem in rouge-score's mode, PorterNLTK.
func porterStem(word string) string { return PorterStem(word, PorterNLTK) }

type porter struct{ mode PorterMode }

func isConsonant(w []rune, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(w, i-1)
	}
	return true
}

// measure is m of [C](VC){m}[V]: the number of vowel-consonant pairs.
func measure(w []rune) int {
	m := 0
	for i := 0; i+1 < len(w); i++ {
		if !isConsonant(w, i) && isConsonant(w, i+1) {
			m++
		}
	}
	return m
}

func containsVowel(w []rune) bool {
	for i := range w {
		if !isConsonant(w, i) {
			return true
		}
	}
	return false
}

// endsDoubleConsonant is *d.
func endsDoubleConsonant(w []rune) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && isConsonant(w, n-1)
}

// endsCVC is *o: consonant-vowel-consonant, the last not w, x or y; or
// (NLTK_EXTENSIONS only) a whole two-letter vowel-consonant stem.
func (p porter) endsCVC(w []rune) bool {
	n := len(w)
	if n >= 3 && isConsonant(w, n-3) && !isConsonant(w, n-2) && isConsonant(w, n-1) && !strings.ContainsRune("wxy", w[n-1]) {
		return true
	}
	return p.mode == PorterNLTK && n == 2 && !isConsonant(w, 0) && isConsonant(w, 1)
}

func hasSuffix(w []rune, suffix string) bool {
	if len(suffix) > len(w) {
		return false
	}
	return string(w[len(w)-len(suffix):]) == suffix
}

// replace returns w less n code points, plus repl, in a new slice.
func replace(w []rune, n int, repl string) []rune {
	return append(append([]rune(nil), w[:len(w)-n]...), []rune(repl)...)
}

// porterRule replaces suffix (ASCII) by repl when cond (nil: always)
// holds of the stem; suffix "*d" is a double consonant.
type porterRule struct {
	suffix, repl string
	cond         func(stem []rune) bool
}

// applyRules applies the first rule whose suffix the word ends with: its
// replacement if its condition holds, else nothing (no later rule is
// tried), as NLTK's _apply_rule_list.
func applyRules(w []rune, rules []porterRule) []rune {
	for _, r := range rules {
		n := len(r.suffix)
		if r.suffix == "*d" {
			if !endsDoubleConsonant(w) {
				continue
			}
			n = 2
		} else if !hasSuffix(w, r.suffix) {
			continue
		}
		if r.cond == nil || r.cond(w[:len(w)-n]) {
			return replace(w, n, r.repl)
		}
		return w
	}
	return w
}

func mGT0(stem []rune) bool { return measure(stem) > 0 }
func mGT1(stem []rune) bool { return measure(stem) > 1 }

func (p porter) step1a(w []rune) []rune {
	if p.mode == PorterNLTK && len(w) == 4 && hasSuffix(w, "ies") {
		return replace(w, 3, "ie")
	}
	return applyRules(w, []porterRule{{"sses", "ss", nil}, {"ies", "i", nil}, {"ss", "ss", nil}, {"s", "", nil}})
}

func (p porter) step1b(w []rune) []rune {
	if p.mode == PorterNLTK && hasSuffix(w, "ied") {
		if len(w) == 4 {
			return replace(w, 3, "ie")
		}
		return replace(w, 3, "i")
	}
	if hasSuffix(w, "eed") {
		if measure(w[:len(w)-3]) > 0 {
			return replace(w, 3, "ee")
		}
		return w
	}
	var inter []rune
	ok := false
	for _, suf := range []string{"ed", "ing"} {
		if hasSuffix(w, suf) {
			inter = w[:len(w)-len(suf)]
			if containsVowel(inter) {
				ok = true
				break
			}
		}
	}
	if !ok {
		return w
	}
	// inter has a vowel, so a last letter.
	last := inter[len(inter)-1]
	return applyRules(inter, []porterRule{
		{"at", "ate", nil}, {"bl", "ble", nil}, {"iz", "ize", nil},
		{"*d", string(last), func([]rune) bool { return last != 'l' && last != 's' && last != 'z' }},
		{"", "e", func(stem []rune) bool { return measure(stem) == 1 && p.endsCVC(stem) }},
	})
}

func (p porter) step1c(w []rune) []rune {
	cond := containsVowel
	if p.mode == PorterNLTK {
		cond = func(stem []rune) bool { return len(stem) > 1 && isConsonant(stem, len(stem)-1) }
	}
	return applyRules(w, []porterRule{{"y", "i", cond}})
}

func (p porter) step2(w []rune) []rune {
	if p.mode == PorterNLTK && hasSuffix(w, "alli") && measure(w[:len(w)-4]) > 0 {
		return p.step2(replace(w, 4, "al"))
	}
	bli := porterRule{"bli", "ble", mGT0}
	if p.mode == PorterOriginal {
		bli = porterRule{"abli", "able", mGT0}
	}
	rules := []porterRule{
		{"ational", "ate", mGT0}, {"tional", "tion", mGT0}, {"enci", "ence", mGT0}, {"anci", "ance", mGT0},
		{"izer", "ize", mGT0}, bli, {"alli", "al", mGT0}, {"entli", "ent", mGT0},
		{"eli", "e", mGT0}, {"ousli", "ous", mGT0}, {"ization", "ize", mGT0}, {"ation", "ate", mGT0},
		{"ator", "ate", mGT0}, {"alism", "al", mGT0}, {"iveness", "ive", mGT0}, {"fulness", "ful", mGT0},
		{"ousness", "ous", mGT0}, {"aliti", "al", mGT0}, {"iviti", "ive", mGT0}, {"biliti", "ble", mGT0},
	}
	if p.mode == PorterNLTK {
		// NLTK's -logi rule tests the measure of the word less "ogi"
		// (the "l" kept with the stem), unlike the others.
		rules = append(rules, porterRule{"fulli", "ful", mGT0},
			porterRule{"logi", "log", func([]rune) bool { return measure(w[:len(w)-3]) > 0 }})
	}
	return applyRules(w, rules)
}

func (p porter) step3(w []rune) []rune {
	return applyRules(w, []porterRule{
		{"icate", "ic", mGT0}, {"ative", "", mGT0}, {"alize", "al", mGT0}, {"iciti", "ic", mGT0},
		{"ical", "ic", mGT0}, {"ful", "", mGT0}, {"ness", "", mGT0},
	})
}

func (p porter) step4(w []rune) []rune {
	return applyRules(w, []porterRule{
		{"al", "", mGT1}, {"ance", "", mGT1}, {"ence", "", mGT1}, {"er", "", mGT1}, {"ic", "", mGT1},
		{"able", "", mGT1}, {"ible", "", mGT1}, {"ant", "", mGT1}, {"ement", "", mGT1}, {"ment", "", mGT1},
		{"ent", "", mGT1},
		{"ion", "", func(stem []rune) bool {
			return measure(stem) > 1 && (stem[len(stem)-1] == 's' || stem[len(stem)-1] == 't')
		}},
		{"ou", "", mGT1}, {"ism", "", mGT1}, {"ate", "", mGT1}, {"iti", "", mGT1}, {"ous", "", mGT1},
		{"ive", "", mGT1}, {"ize", "", mGT1},
	})
}

// step5a tries both of its rules (m > 1, then m = 1 and not *o), unlike
// the other steps' rule lists.
func (p porter) step5a(w []rune) []rune {
	if hasSuffix(w, "e") {
		stem := w[:len(w)-1]
		if m := measure(stem); m > 1 || (m == 1 && !p.endsCVC(stem)) {
			return replace(w, 1, "")
		}
	}
	return w
}

// step5b's measure is of the word less its last l, as NLTK's.
func (p porter) step5b(w []rune) []rune {
	return applyRules(w, []porterRule{{"ll", "l", func([]rune) bool { return measure(w[:len(w)-1]) > 1 }}})
}
