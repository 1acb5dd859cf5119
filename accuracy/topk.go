package accuracy

import (
	"errors"
	"fmt"
)

// TopKResult is the output of the topk metric.
type TopKResult struct {
	Top1 float64 `json:"top1"` // fraction of samples whose label ranks first
	Top5 float64 `json:"top5"` // fraction whose label ranks among the first five
	N    int     `json:"n"`    // samples scored
}

// TopK scores classification outputs: scores[i] holds the numClasses
// scores of sample i and labels[i] its true class. A label's rank is its
// position when the classes are sorted by descending score with ties in
// ascending class order, as numpy's np.argsort(-s, kind='stable'); top-1
// and top-5 count labels ranked below 1 and below 5 (every class when
// there are fewer than five).
func TopK(scores [][]float64, labels []int, numClasses int) (TopKResult, error) {
	if numClasses < 1 {
		return TopKResult{}, fmt.Errorf("num_classes is %d, want at least 1", numClasses)
	}
	if len(scores) != len(labels) {
		return TopKResult{}, fmt.Errorf("%d rows of scores for %d labels", len(scores), len(labels))
	}
	if len(labels) == 0 {
		return TopKResult{}, errors.New("no samples to score")
	}
	var top1, top5 int
	for i, s := range scores {
		if len(s) != numClasses {
			return TopKResult{}, fmt.Errorf("scores[%d] has %d values, want num_classes = %d", i, len(s), numClasses)
		}
		l := labels[i]
		if l < 0 || l >= numClasses {
			return TopKResult{}, fmt.Errorf("labels[%d] is %d, outside [0, %d)", i, l, numClasses)
		}
		for j, x := range s {
			if err := checkFinite(fmt.Sprintf("scores[%d]", i), j, x); err != nil {
				return TopKResult{}, err
			}
		}
		rank := 0
		for j, x := range s {
			if x > s[l] || (x == s[l] && j < l) {
				rank++
			}
		}
		if rank == 0 {
			top1++
		}
		if rank < 5 {
			top5++
		}
	}
	n := float64(len(labels))
	return TopKResult{Top1: float64(top1) / n, Top5: float64(top5) / n, N: len(labels)}, nil
}
