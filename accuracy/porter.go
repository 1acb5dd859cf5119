package accuracy

import "strings"

// porterIrregular is the table of irregular forms of NLTK's PorterStemmer
// (NLTK_EXTENSIONS mode): a word in it stems to its value.
var porterIrregular = map[string]string{
	"sky": "sky", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "news": "news",
	"innings": "inning", "inning": "inning", "outings": "outing", "outing": "outing",
	"cannings": "canning", "canning": "canning", "howe": "howe",
	"proceed": "proceed", "exceed": "exceed", "succeed": "succeed",
}

// porterStem stems a lower-case ASCII word as NLTK 3.9's PorterStemmer in
// its default NLTK_EXTENSIONS mode, which Google's rouge-score uses: the
// irregular forms above, words of up to two letters kept, then Porter's
// steps 1a to 5b with NLTK's changes (-ies and -ied of four letters keep
// "ie"; y → i only after a consonant that is not the whole stem; -bli →
// -ble; -alli, -fulli and -logi; *o also true of a two-letter vowel-
// consonant stem).
func porterStem(word string) string {
	if s, ok := porterIrregular[word]; ok {
		return s
	}
	if len(word) <= 2 {
		return word
	}
	w := []byte(word)
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	w = step2(w)
	w = step3(w)
	w = step4(w)
	w = step5a(w)
	w = step5b(w)
	return string(w)
}

func isConsonant(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(w, i-1)
	}
	return true
}

// measure is m of [C](VC){m}[V]: the number of vowel-consonant changes.
func measure(w []byte) int {
	m := 0
	for i := 0; i+1 < len(w); i++ {
		if !isConsonant(w, i) && isConsonant(w, i+1) {
			m++
		}
	}
	return m
}

func containsVowel(w []byte) bool {
	for i := range w {
		if !isConsonant(w, i) {
			return true
		}
	}
	return false
}

func endsDoubleConsonant(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && isConsonant(w, n-1)
}

// endsCVC is *o: consonant-vowel-consonant, the last not w, x or y; or
// (NLTK) a whole two-letter vowel-consonant stem.
func endsCVC(w []byte) bool {
	n := len(w)
	if n >= 3 && isConsonant(w, n-3) && !isConsonant(w, n-2) && isConsonant(w, n-1) && !strings.ContainsRune("wxy", rune(w[n-1])) {
		return true
	}
	return n == 2 && !isConsonant(w, 0) && isConsonant(w, 1)
}

// porterRule replaces suffix by repl when cond (nil: always) holds of the
// stem; suffix "*d" is a double consonant.
type porterRule struct {
	suffix, repl string
	cond         func(stem []byte) bool
}

// applyRules applies the first rule whose suffix the word ends with: its
// replacement if its condition holds, else nothing (no later rule is
// tried), as NLTK's _apply_rule_list.
func applyRules(w []byte, rules []porterRule) []byte {
	for _, r := range rules {
		if r.suffix == "*d" {
			if endsDoubleConsonant(w) {
				stem := w[:len(w)-2]
				if r.cond == nil || r.cond(stem) {
					return append(append([]byte(nil), stem...), r.repl...)
				}
				return w
			}
			continue
		}
		if strings.HasSuffix(string(w), r.suffix) {
			stem := w[:len(w)-len(r.suffix)]
			if r.cond == nil || r.cond(stem) {
				return append(append([]byte(nil), stem...), r.repl...)
			}
			return w
		}
	}
	return w
}

func mGT0(stem []byte) bool { return measure(stem) > 0 }
func mGT1(stem []byte) bool { return measure(stem) > 1 }

func step1a(w []byte) []byte {
	if len(w) == 4 && strings.HasSuffix(string(w), "ies") {
		return []byte(string(w[:1]) + "ie")
	}
	return applyRules(w, []porterRule{{"sses", "ss", nil}, {"ies", "i", nil}, {"ss", "ss", nil}, {"s", "", nil}})
}

func step1b(w []byte) []byte {
	s := string(w)
	if strings.HasSuffix(s, "ied") {
		if len(w) == 4 {
			return []byte(s[:1] + "ie")
		}
		return []byte(s[:len(s)-3] + "i")
	}
	if strings.HasSuffix(s, "eed") {
		stem := w[:len(w)-3]
		if measure(stem) > 0 {
			return []byte(string(stem) + "ee")
		}
		return w
	}
	var inter []byte
	ok := false
	for _, suf := range []string{"ed", "ing"} {
		if strings.HasSuffix(s, suf) {
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
	last := ""
	if len(inter) > 0 {
		last = string(inter[len(inter)-1:])
	}
	return applyRules(inter, []porterRule{
		{"at", "ate", nil}, {"bl", "ble", nil}, {"iz", "ize", nil},
		{"*d", last, func([]byte) bool { return last != "l" && last != "s" && last != "z" }},
		{"", "e", func(stem []byte) bool { return measure(stem) == 1 && endsCVC(stem) }},
	})
}

func step1c(w []byte) []byte {
	return applyRules(w, []porterRule{{"y", "i", func(stem []byte) bool { return len(stem) > 1 && isConsonant(stem, len(stem)-1) }}})
}

var step2Rules = []porterRule{
	{"ational", "ate", mGT0}, {"tional", "tion", mGT0}, {"enci", "ence", mGT0}, {"anci", "ance", mGT0},
	{"izer", "ize", mGT0}, {"bli", "ble", mGT0}, {"alli", "al", mGT0}, {"entli", "ent", mGT0},
	{"eli", "e", mGT0}, {"ousli", "ous", mGT0}, {"ization", "ize", mGT0}, {"ation", "ate", mGT0},
	{"ator", "ate", mGT0}, {"alism", "al", mGT0}, {"iveness", "ive", mGT0}, {"fulness", "ful", mGT0},
	{"ousness", "ous", mGT0}, {"aliti", "al", mGT0}, {"iviti", "ive", mGT0}, {"biliti", "ble", mGT0},
	{"fulli", "ful", mGT0},
}

func step2(w []byte) []byte {
	s := string(w)
	if strings.HasSuffix(s, "alli") && measure(w[:len(w)-4]) > 0 {
		return step2([]byte(s[:len(s)-4] + "al"))
	}
	// NLTK's -logi rule tests the measure of the word less "ogi" (the
	// "l" kept), unlike the others.
	rules := append(step2Rules[:len(step2Rules):len(step2Rules)], porterRule{"logi", "log", func([]byte) bool { return len(w) >= 3 && measure(w[:len(w)-3]) > 0 }})
	return applyRules(w, rules)
}

func step3(w []byte) []byte {
	return applyRules(w, []porterRule{
		{"icate", "ic", mGT0}, {"ative", "", mGT0}, {"alize", "al", mGT0}, {"iciti", "ic", mGT0},
		{"ical", "ic", mGT0}, {"ful", "", mGT0}, {"ness", "", mGT0},
	})
}

func step4(w []byte) []byte {
	return applyRules(w, []porterRule{
		{"al", "", mGT1}, {"ance", "", mGT1}, {"ence", "", mGT1}, {"er", "", mGT1}, {"ic", "", mGT1},
		{"able", "", mGT1}, {"ible", "", mGT1}, {"ant", "", mGT1}, {"ement", "", mGT1}, {"ment", "", mGT1},
		{"ent", "", mGT1},
		{"ion", "", func(stem []byte) bool {
			return measure(stem) > 1 && len(stem) > 0 && (stem[len(stem)-1] == 's' || stem[len(stem)-1] == 't')
		}},
		{"ou", "", mGT1}, {"ism", "", mGT1}, {"ate", "", mGT1}, {"iti", "", mGT1}, {"ous", "", mGT1},
		{"ive", "", mGT1}, {"ize", "", mGT1},
	})
}

func step5a(w []byte) []byte {
	if len(w) > 0 && w[len(w)-1] == 'e' {
		stem := w[:len(w)-1]
		if m := measure(stem); m > 1 || (m == 1 && !endsCVC(stem)) {
			return stem
		}
	}
	return w
}

func step5b(w []byte) []byte {
	return applyRules(w, []porterRule{{"ll", "l", func([]byte) bool { return measure(w[:len(w)-1]) > 1 }}})
}
