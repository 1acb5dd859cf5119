package accuracy

import (
	"errors"
	"fmt"
	"slices"
)

// AUCResult is the output of the auc metric: AUC is nil, and Defined
// false, when the labels hold a single class.
type AUCResult struct {
	AUC     *float64 `json:"auc"`
	Defined bool     `json:"defined"`
}

// AUC is the area under the ROC curve of binary labels (0 or 1) ranked by
// scores, as scikit-learn's roc_auc_score: the trapezoidal area over the
// distinct thresholds, which equals the Mann–Whitney statistic with tied
// scores counted one half. Scores are compared as floats (-0 equals +0).
// It is undefined (ok false) when only one class is present, where
// scikit-learn 1.7 warns (UndefinedMetricWarning) and returns NaN, and
// earlier versions raise a ValueError.
func AUC(scores []float64, labels []int) (auc float64, ok bool, err error) {
	if len(scores) != len(labels) {
		return 0, false, fmt.Errorf("%d scores for %d labels", len(scores), len(labels))
	}
	if len(scores) == 0 {
		return 0, false, errors.New("no samples to score")
	}
	idx := make([]int, len(scores))
	var pos, neg float64
	for i, s := range scores {
		if err := checkFinite("scores", i, s); err != nil {
			return 0, false, err
		}
		switch labels[i] {
		case 0:
			neg++
		case 1:
			pos++
		default:
			return 0, false, fmt.Errorf("labels[%d] is %d, want 0 or 1", i, labels[i])
		}
		idx[i] = i
	}
	if pos == 0 || neg == 0 {
		return 0, false, nil
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	// Sum of the (average, 1-based) ranks of the positives.
	var rankSum float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
			j++
		}
		avg := float64(i+1+j) / 2
		for _, k := range idx[i:j] {
			if labels[k] == 1 {
				rankSum += avg
			}
		}
		i = j
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg), true, nil
}
