package accuracy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

func TestSQuAD(t *testing.T) {
	for _, tc := range []struct {
		answers []string
		pred    string
		em, f1  float64
		reason  string
	}{
		{[]string{"Denver Broncos"}, "denver broncos!", 100, 100, "case and punctuation are normalised away"},
		{[]string{"the Broncos"}, "Broncos", 100, 100, "articles are removed"},
		{[]string{"Denver Broncos"}, "the Denver team", 0, 50, "F1 of bags: the article goes, 1 common token of 2 each: precision and recall 1/2"},
		{[]string{"x", "Denver Broncos"}, "Broncos", 0, 200.0 / 3, "the best of the answers"},
		{[]string{"theory"}, "theory", 100, 100, "'the' inside a word is kept"},
		{[]string{"a"}, "an", 100, 0, "both normalise to empty: exact, but F1 is 0 with no tokens"},
		{[]string{"rock-n-roll"}, "rocknroll", 100, 100, "a hyphen is removed, not a space"},
		{[]string{"the-end"}, "theend", 100, 100, "punctuation goes before articles: 'the-end' is one word"},
		{[]string{"A.B.C."}, "abc", 100, 100, "dots removed, then abc is no article"},
		{[]string{"“quoted”"}, "quoted", 0, 0, "curly quotes are not in string.punctuation: kept, so the token differs"},
		{[]string{"l'an"}, "l an", 0, 0, "the apostrophe goes, joining one token 'lan'; in 'l an' the article goes: 'l'"},
		{[]string{"the the a"}, "", 100, 0, "only articles: empty like an empty prediction"},
		{[]string{"Paris Paris"}, "Paris", 0, 200.0 / 3, "bags count repeats: 1 of 2"},
		{[]string{"ΟΔΟΣ"}, "οδος", 100, 100, "Python's lower: a final capital sigma becomes ς"},
		{[]string{"ΟΔΟΣ"}, "οδοσ", 0, 0, "so σ at the end does not match"},
		{[]string{"İstanbul"}, "istanbul", 0, 0, "Python's lower gives i and U+0307 for İ"},
		{[]string{"a\x1cb"}, "a b", 100, 100, "U+001C is no word character, so the article before it goes, and whitespace to str.split: both give 'b'"},
		{[]string{"a\u0301b"}, "b", 0, 0, "a combining accent is no word character either, but it is not whitespace: 'a' goes, leaving one token '\u0301b'"},
	} {
		got, err := SQuAD([]SQuADQuestion{{ID: "q", Answers: tc.answers}}, map[string]string{"q": tc.pred})
		if err != nil || !near(got.ExactMatch/100, tc.em/100) || !near(got.F1/100, tc.f1/100) {
			t.Errorf("%s: %+v, %v; want EM %v, F1 %v", tc.reason, got, err, tc.em, tc.f1)
		}
	}
	got, err := SQuAD([]SQuADQuestion{{ID: "a", Answers: []string{"x"}}, {ID: "b", Answers: []string{"y"}}}, map[string]string{"a": "x", "c": "y"})
	if err != nil || got.ExactMatch != 50 || got.F1 != 50 || got.Unanswered != 1 || got.Questions != 2 {
		t.Errorf("an unanswered question and a prediction for no question: %+v, %v; want EM and F1 50, one unanswered", got, err)
	}
	for _, tc := range []struct {
		qs   []SQuADQuestion
		want string
	}{
		{[]SQuADQuestion{{ID: "a", Answers: []string{"x"}}, {ID: "b"}}, `questions[1].answers: none for id "b"`},
		{nil, "no questions"},
	} {
		if got, err := SQuAD(tc.qs, map[string]string{"a": "x"}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %+v, %v; want an error saying %q", tc.qs, got, err, tc.want)
		}
	}
}

// TestPythonStrMatchesPython checks, over every code point that Python's
// Unicode database assigns, the three places where normalizeSQuAD and
// ErrorRates restate Python's str: pyLower against str.lower (each
// character alone, and a capital sigma before and after it, which probes
// the Final_Sigma condition: case-ignorable and cased characters), the
// word characters of removeArticles against re's \w, and pyFields'
// whitespace against str.split(). Exact.
func TestPythonStrMatchesPython(t *testing.T) {
	const program = `
import json, re, sys, unicodedata
w = re.compile(r"\w")
out = {"unicode": unicodedata.unidata_version, "unassigned": [], "word": [], "space": [], "lower": {}, "before": [], "after": []}
def ranges(cps):
    r = []
    for c in cps:
        if r and r[-1][1] == c - 1: r[-1][1] = c
        else: r.append([c, c])
    return r
una, word, space, before, after = [], [], [], [], []
for c in range(0x110000):
    ch = chr(c)
    if unicodedata.category(ch) == "Cn":
        una.append(c); continue
    if w.match(ch): word.append(c)
    if ch.isspace(): space.append(c)
    if ch.lower() != ch: out["lower"][c] = ch.lower()
    if ("A" + ch + "Σ").lower().endswith("ς"): before.append(c)
    if ("AΣ" + ch).lower()[1] == "ς": after.append(c)
for k, v in [("unassigned", una), ("word", word), ("space", space), ("before", before), ("after", after)]:
    out[k] = ranges(v)
json.dump(out, sys.stdout)
`
	var py struct {
		Unicode                                string
		Unassigned, Word, Space, Before, After [][2]rune
		Lower                                  map[string]string
	}
	pyRef(t, program, nil, &py)
	in := func(rs [][2]rune) func(rune) bool {
		set := map[rune]bool{}
		for _, r := range rs {
			for c := r[0]; c <= r[1]; c++ {
				set[c] = true
			}
		}
		return func(c rune) bool { return set[c] }
	}
	unassigned, word, space, before, after := in(py.Unassigned), in(py.Word), in(py.Space), in(py.Before), in(py.After)
	lower := map[rune]string{}
	for k, v := range py.Lower {
		var c rune
		fmt.Sscan(k, &c)
		lower[c] = v
	}
	if len(lower) < 1000 {
		t.Fatalf("only %d lower-case mappings from Python", len(lower))
	}
	bad := 0
	for c := rune(0); c <= unicode.MaxRune && bad < 20; c++ {
		if unassigned(c) || (c >= 0xd800 && c <= 0xdfff) {
			continue // surrogates cannot be in a Go string
		}
		ch := string(c)
		want, ok := lower[c]
		if !ok {
			want = ch
		}
		var diffs []string
		if got := pyLower(ch); got != want {
			diffs = append(diffs, fmt.Sprintf("lower %q, Python %q", got, want))
		}
		if got := strings.HasSuffix(pyLower("A"+ch+"Σ"), "ς"); got != before(c) {
			diffs = append(diffs, fmt.Sprintf("final sigma after it %v, Python %v", got, before(c)))
		}
		if got := []rune(pyLower("AΣ" + ch))[1] == 'ς'; got != after(c) {
			diffs = append(diffs, fmt.Sprintf("final sigma before it %v, Python %v", got, after(c)))
		}
		if got := removeArticles("a"+ch) == " "+ch; got == word(c) {
			diffs = append(diffs, fmt.Sprintf("word character %v, Python %v", !got, word(c)))
		}
		if got := len(pyFields(ch)) == 0; got != space(c) {
			diffs = append(diffs, fmt.Sprintf("space %v, Python %v", got, space(c)))
		}
		if diffs != nil {
			bad++
			t.Errorf("%U (Python's Unicode %s): %s", c, py.Unicode, strings.Join(diffs, "; "))
		}
	}
}

// TestSQuADMatchesOfficial cross-checks SQuAD with the official
// evaluate-v1.1.py scoring, restated in Python (normalize_answer,
// f1_score, exact_match_score, metric_max_over_ground_truths and the loop
// of evaluate, unanswered questions counted 0), on random questions with
// one to three answers, missing and extra predictions, punctuation,
// articles, Unicode case (Σ, İ) and separators. Tolerance 1e-9 on the
// 0–1 scale.
func TestSQuADMatchesOfficial(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	vocab := []string{"the", "a", "An", "THE", "cat", "Cat,", "sat", "on", "mat.", "théâtre", "don't", "x-ray", "(42)",
		"über", "and", "_id", "ΟΔΟΣ", "οδος", "ΣΑ", "İzmir", "izmir", "“q”", "a.b", "the-end", "l'an", "日本"}
	seps := []string{" ", " ", " ", "\t", "\x1c", "\u00a0", ", "}
	text := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(vocab[rng.IntN(len(vocab))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		return b.String()
	}
	type question struct {
		ID      string   `json:"id"`
		Answers []string `json:"answers"`
	}
	var in struct {
		Questions   []question        `json:"questions"`
		Predictions map[string]string `json:"predictions"`
	}
	in.Predictions = map[string]string{}
	for i := range 500 {
		q := question{ID: fmt.Sprintf("q%d", i)}
		for range 1 + rng.IntN(3) {
			q.Answers = append(q.Answers, text())
		}
		in.Questions = append(in.Questions, q)
		switch rng.IntN(10) {
		case 0: // unanswered
		case 1:
			in.Predictions[q.ID] = q.Answers[rng.IntN(len(q.Answers))]
		default:
			in.Predictions[q.ID] = text()
		}
		if rng.IntN(20) == 0 {
			in.Predictions[fmt.Sprintf("extra%d", i)] = text()
		}
	}
	const program = `
import collections, json, re, string, sys
def normalize_answer(s):
    def remove_articles(text): return re.sub(r'\b(a|an|the)\b', ' ', text)
    def white_space_fix(text): return ' '.join(text.split())
    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)
    return white_space_fix(remove_articles(remove_punc(s.lower())))
def f1_score(prediction, ground_truth):
    p, g = normalize_answer(prediction).split(), normalize_answer(ground_truth).split()
    common = collections.Counter(p) & collections.Counter(g)
    num_same = sum(common.values())
    if num_same == 0: return 0
    precision = 1.0 * num_same / len(p); recall = 1.0 * num_same / len(g)
    return (2 * precision * recall) / (precision + recall)
def exact_match_score(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)
def best(fn, prediction, ground_truths):
    return max(fn(prediction, gt) for gt in ground_truths)
d = json.load(sys.stdin)
f1 = exact_match = total = 0
for qa in d["questions"]:
    total += 1
    if qa["id"] not in d["predictions"]: continue
    pred = d["predictions"][qa["id"]]
    exact_match += best(exact_match_score, pred, qa["answers"])
    f1 += best(f1_score, pred, qa["answers"])
print(json.dumps({"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}))
`
	var want SQuADResult
	pyRef(t, program, in, &want)
	qs := make([]SQuADQuestion, len(in.Questions))
	for i, q := range in.Questions {
		qs[i] = SQuADQuestion(q)
	}
	got, err := SQuAD(qs, in.Predictions)
	if err != nil || !near(got.ExactMatch/100, want.ExactMatch/100) || !near(got.F1/100, want.F1/100) {
		t.Errorf("SQuAD %+v, %v; official %v, %v", got, err, want.ExactMatch, want.F1)
	}
	if want.ExactMatch < 5 || want.F1 <= want.ExactMatch {
		t.Errorf("official EM %v, F1 %v: the inputs should have exact and partial matches", want.ExactMatch, want.F1)
	}
}
