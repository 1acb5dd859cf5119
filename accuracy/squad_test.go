package accuracy

import (
	"testing"
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
	} {
		got, err := SQuAD([]SQuADQuestion{{ID: "q", Answers: tc.answers}}, map[string]string{"q": tc.pred})
		if err != nil || !near(got.ExactMatch, tc.em) || !near(got.F1, tc.f1) {
			t.Errorf("%s: %+v, %v; want EM %v, F1 %v", tc.reason, got, err, tc.em, tc.f1)
		}
	}
	got, _ := SQuAD([]SQuADQuestion{{ID: "a", Answers: []string{"x"}}, {ID: "b", Answers: []string{"y"}}}, map[string]string{"a": "x"})
	if got.ExactMatch != 50 || got.Unanswered != 1 {
		t.Errorf("an unanswered question: %+v, want EM 50 with one unanswered", got)
	}
}
