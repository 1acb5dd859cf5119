package accuracy

import (
	"math"
	"strings"
	"testing"
)

// tol is the tolerance of the cross-checks on 0–1 scales: the Go and
// Python sums may add in different orders.
const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func TestTopK(t *testing.T) {
	for _, tc := range []struct {
		scores     [][]float64
		labels     []int
		top1, top5 float64
		reason     string
	}{
		{[][]float64{{0.1, 0.9}, {0.8, 0.2}}, []int{1, 1}, 0.5, 1, "one right, one second of two: top-5 holds every class"},
		{[][]float64{{0.5, 0.5, 0.1}}, []int{1}, 0, 1, "a tie ranks the lower class first: label 1 is second"},
		{[][]float64{{0.5, 0.5, 0.1}}, []int{0}, 1, 1, "a tie ranks the lower class first: label 0 is first"},
		{[][]float64{{6, 5, 4, 3, 2, 1}}, []int{5}, 0, 0, "sixth of six is outside the top five"},
		{[][]float64{{6, 5, 4, 3, 2, 1}}, []int{4}, 0, 1, "fifth of six is inside"},
		{[][]float64{{1, 1, 1, 1, 1, 1}}, []int{5}, 0, 0, "all tied: the last class ranks last"},
	} {
		got, err := TopK(tc.scores, tc.labels, len(tc.scores[0]))
		if err != nil || got.Top1 != tc.top1 || got.Top5 != tc.top5 || got.N != len(tc.labels) {
			t.Errorf("%s: %+v, %v; want top1 %v top5 %v", tc.reason, got, err, tc.top1, tc.top5)
		}
	}
	for _, tc := range []struct {
		scores [][]float64
		labels []int
		want   string
	}{
		{[][]float64{{1, 2}}, []int{1, 0}, "1 rows of scores for 2 labels"},
		{[][]float64{{1, 2}, {1}}, []int{0, 0}, "scores[1] has 1 values"},
		{[][]float64{{1, 2}}, []int{2}, "labels[0] is 2"},
		{[][]float64{{1, math.NaN()}}, []int{0}, "scores[0][1] is NaN"},
		{nil, nil, "no samples"},
	} {
		if _, err := TopK(tc.scores, tc.labels, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %v, want an error saying %q", tc.scores, tc.labels, err, tc.want)
		}
	}
}
