package accuracy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		scores []float64
		labels []int
		want   float64
		ok     bool
		reason string
	}{
		{[]float64{0.1, 0.4, 0.35, 0.8}, []int{0, 0, 1, 1}, 0.75, true, "scikit-learn's documented example"},
		{[]float64{1, 2, 3}, []int{0, 1, 1}, 1, true, "perfect ranking"},
		{[]float64{3, 2, 1}, []int{0, 1, 1}, 0, true, "reversed ranking"},
		{[]float64{1, 1, 1, 1}, []int{0, 1, 0, 1}, 0.5, true, "every score tied: ties count one half"},
		{[]float64{1, 2, 2, 3}, []int{0, 0, 1, 1}, 0.875, true, "one tied pair across classes: 3.5 of 4 pairs"},
		{[]float64{2, 2, 1, 3}, []int{0, 0, 1, 1}, 0.5, true, "ties within a class do not count: 2 of 4 pairs"},
		{[]float64{5, -1}, []int{1, 0}, 1, true, "one of each class"},
		{[]float64{0, math.Copysign(0, -1)}, []int{1, 0}, 0.5, true, "-0 and +0 are the same threshold, as in numpy"},
		{[]float64{1, 2}, []int{1, 1}, 0, false, "positives only: undefined (scikit-learn raises)"},
		{[]float64{1}, []int{0}, 0, false, "one negative: undefined"},
	} {
		got, ok, err := AUC(tc.scores, tc.labels)
		if err != nil || ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %v, %v, %v; want %v, %v", tc.reason, got, ok, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		scores []float64
		labels []int
		want   string
	}{
		{[]float64{1, 2}, []int{0, 2}, "labels[1] is 2, want 0 or 1"},
		{[]float64{1, 2}, []int{-1, 1}, "labels[0] is -1"},
		{[]float64{1, math.NaN()}, []int{0, 1}, "scores[1] is NaN"},
		{[]float64{math.Inf(1), 0}, []int{0, 1}, "scores[0] is +Inf"},
		{[]float64{1}, []int{0, 1}, "1 scores for 2 labels"},
		{nil, nil, "no samples"},
	} {
		if _, _, err := AUC(tc.scores, tc.labels); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %v, want an error saying %q", tc.scores, tc.labels, err, tc.want)
		}
	}
}

// TestAUCMatchesScikitLearn cross-checks AUC with sklearn.metrics
// roc_auc_score on random inputs: scores quantised to a few values (many
// ties across and within classes), continuous scores, imbalanced and tiny
// sets, and one-class sets, where scikit-learn 1.7 warns and returns NaN
// (earlier versions raise) and AUC is undefined. Tolerance 1e-9 (sklearn integrates fpr/tpr by trapezoids,
// AUC counts pairs: the same number up to rounding).
func TestAUCMatchesScikitLearn(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 2))
	type tcase struct {
		Scores []float64 `json:"scores"`
		Labels []int     `json:"labels"`
	}
	var cases []tcase
	for i := range 40 {
		n := []int{1, 2, 3, 10, 200, 1000}[i%6]
		levels := []int{2, 3, 10, 0}[i%4] // 0: continuous
		pPos := []float64{0.5, 0.1, 0.9, 0.5, 1, 0.5, 0}[i%7]
		var c tcase
		for range n {
			s := rng.Float64()
			if levels > 0 {
				s = float64(rng.IntN(levels)) / float64(levels)
			}
			y := 0
			if rng.Float64() < pPos {
				y = 1
			}
			c.Scores, c.Labels = append(c.Scores, s), append(c.Labels, y)
		}
		cases = append(cases, c)
	}
	const program = `
import json, math, sys, warnings
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import roc_auc_score
out = []
for c in json.load(sys.stdin):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        auc = float(roc_auc_score(c["labels"], c["scores"]))
    out.append(None if math.isnan(auc) else auc)
print(json.dumps(out))
`
	var want []*float64
	pyRef(t, program, cases, &want)
	undefined := 0
	for i, c := range cases {
		got, ok, err := AUC(c.Scores, c.Labels)
		switch {
		case err != nil:
			t.Errorf("case %d: %v", i, err)
		case ok != (want[i] != nil):
			t.Errorf("case %d (%d samples): defined %v, scikit-learn %v", i, len(c.Labels), ok, want[i])
		case ok && math.Abs(got-*want[i]) > tol:
			t.Errorf("case %d (%d samples): %v, scikit-learn %v", i, len(c.Labels), got, *want[i])
		}
		if !ok {
			undefined++
		}
	}
	if undefined == 0 || undefined == len(cases) {
		t.Errorf("%d of %d cases undefined: the inputs should cover both", undefined, len(cases))
	}
}
