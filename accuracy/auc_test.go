package accuracy

import (
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
		{[]float64{1, 2}, []int{1, 1}, 0, false, "one class only: undefined"},
	} {
		got, ok, err := AUC(tc.scores, tc.labels)
		if err != nil || ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %v, %v, %v; want %v, %v", tc.reason, got, ok, err, tc.want, tc.ok)
		}
	}
	if _, _, err := AUC([]float64{1, 2}, []int{0, 2}); err == nil || !strings.Contains(err.Error(), "labels[1] is 2") {
		t.Errorf("a label of 2: %v", err)
	}
}
