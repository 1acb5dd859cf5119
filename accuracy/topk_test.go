package accuracy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTopK(t *testing.T) {
	for _, tc := range []struct {
		scores     [][]float64
		labels     []int
		top1, top5 float64
		reason     string
	}{
		{[][]float64{{0.1, 0.9}, {0.8, 0.2}}, []int{1, 1}, 0.5, 1, "one right, one second of two: top-5 holds every class when K < 5"},
		{[][]float64{{0.5, 0.5, 0.1}}, []int{1}, 0, 1, "a tie ranks the lower class first: label 1 is second"},
		{[][]float64{{0.5, 0.5, 0.1}}, []int{0}, 1, 1, "a tie ranks the lower class first: label 0 is first"},
		{[][]float64{{6, 5, 4, 3, 2, 1}}, []int{5}, 0, 0, "sixth of six is outside the top five"},
		{[][]float64{{6, 5, 4, 3, 2, 1}}, []int{4}, 0, 1, "fifth of six is inside"},
		{[][]float64{{1, 1, 1, 1, 1, 1}}, []int{5}, 0, 0, "all tied: the last class ranks last"},
		{[][]float64{{1, 1, 1, 1, 1, 1}}, []int{4}, 0, 1, "all tied: the fifth class ranks fifth"},
		{[][]float64{{0, 2, 2, 2, 2, 2, 2}}, []int{6}, 0, 0, "a tie of six above the label's class pushes the last of them out"},
		{[][]float64{{-1, -3, -2}}, []int{0}, 1, 1, "negative scores: the largest still ranks first"},
		{[][]float64{{math.MaxFloat64, -math.MaxFloat64}}, []int{1}, 0, 1, "extreme finite scores are allowed"},
		{[][]float64{{7}}, []int{0}, 1, 1, "one class: always first"},
		{[][]float64{{0, 1}, {1, 0}, {1, 0}, {0, 1}}, []int{0, 0, 0, 0}, 0.5, 1, "fractions over N"},
	} {
		got, err := TopK(tc.scores, tc.labels, len(tc.scores[0]))
		if err != nil || got.Top1 != tc.top1 || got.Top5 != tc.top5 || got.N != len(tc.labels) {
			t.Errorf("%s: %+v, %v; want top1 %v top5 %v", tc.reason, got, err, tc.top1, tc.top5)
		}
	}
	for _, tc := range []struct {
		scores [][]float64
		labels []int
		k      int
		want   string
	}{
		{[][]float64{{1, 2}}, []int{1, 0}, 2, "1 rows of scores for 2 labels"},
		{[][]float64{{1, 2}, {1}}, []int{0, 0}, 2, "scores[1] has 1 values, want num_classes = 2"},
		{[][]float64{{1, 2}}, []int{2}, 2, "labels[0] is 2, outside [0, 2)"},
		{[][]float64{{1, 2}}, []int{-1}, 2, "labels[0] is -1"},
		{[][]float64{{1, 2}, {1, math.NaN()}}, []int{0, 0}, 2, "scores[1][1] is NaN"},
		{[][]float64{{math.Inf(-1), 0}}, []int{0}, 2, "scores[0][0] is -Inf"},
		{[][]float64{{1, 2}}, []int{0}, 0, "num_classes is 0"},
		{nil, nil, 2, "no samples"},
	} {
		if _, err := TopK(tc.scores, tc.labels, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %v, want an error saying %q", tc.scores, tc.labels, err, tc.want)
		}
	}
}

// TestTopKMatchesNumpy cross-checks TopK with the ranks of numpy's
// np.argsort(-s, kind="stable") on random scores quantised to four values
// (many ties), for 1 to 12 classes (fewer and more than five). The counts
// of hits are compared exactly.
func TestTopKMatchesNumpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	type tcase struct {
		Scores [][]float64 `json:"scores"`
		Labels []int       `json:"labels"`
	}
	var cases []tcase
	for k := 1; k <= 12; k++ {
		var c tcase
		for range 150 {
			row := make([]float64, k)
			for j := range row {
				row[j] = float64(rng.IntN(4)) / 4
				if k > 8 {
					row[j] = rng.NormFloat64() // and some without ties
				}
			}
			c.Scores = append(c.Scores, row)
			c.Labels = append(c.Labels, rng.IntN(k))
		}
		cases = append(cases, c)
	}
	const program = `
import json, sys
import numpy as np
out = []
for c in json.load(sys.stdin):
    s = np.array(c["scores"], dtype=np.float64); y = np.array(c["labels"])
    order = np.argsort(-s, axis=1, kind="stable")
    out.append({"top1": int(np.sum(order[:, 0] == y)),
                "top5": int(sum(y[i] in order[i, :5] for i in range(len(y))))})
print(json.dumps(out))
`
	var want []struct{ Top1, Top5 int }
	pyRef(t, program, cases, &want)
	for i, c := range cases {
		got, err := TopK(c.Scores, c.Labels, len(c.Scores[0]))
		n := float64(len(c.Labels))
		if err != nil || got.Top1 != float64(want[i].Top1)/n || got.Top5 != float64(want[i].Top5)/n || got.N != len(c.Labels) {
			t.Errorf("%d classes: %+v, %v; numpy counts top-1 %d, top-5 %d of %v", len(c.Scores[0]), got, err, want[i].Top1, want[i].Top5, n)
		}
	}
}
