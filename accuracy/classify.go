package accuracy

import (
	"errors"
	"fmt"
	"math"
	"slices"
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

// AUCResult is the output of the auc metric: AUC is nil, and Defined
// false, when the labels hold a single class.
type AUCResult struct {
	AUC     *float64 `json:"auc"`
	Defined bool     `json:"defined"`
}

// AUC is the area under the ROC curve of binary labels (0 or 1) ranked by
// scores, as scikit-learn's roc_auc_score: the trapezoidal area over the
// distinct thresholds, which equals the Mann–Whitney statistic with tied
// scores counted one half. It is undefined (ok false) when only one class
// is present, where scikit-learn raises an error.
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

// SegmentationResult is the output of the miou metric.
type SegmentationResult struct {
	MIoU          float64 `json:"miou"`
	PixelAccuracy float64 `json:"pixel_accuracy"`
	// IoU is each class's intersection over union; NaN classes (no pixel
	// in either map) are left out of MIoU and written as null.
	IoU []*float64 `json:"iou"`
}

// SegImage is one image of a segmentation: its class maps, flat in
// row-major order.
type SegImage struct {
	Height int   `json:"height"`
	Width  int   `json:"width"`
	GT     []int `json:"gt"`
	Pred   []int `json:"pred"`
}

// MeanIoU scores semantic segmentation over a confusion matrix of every
// image's pixels: a pixel whose ground truth is ignoreIndex (when not
// nil) is skipped; class c's IoU is TP/(TP+FP+FN); the mean leaves out
// classes whose union is zero (absent from both maps); pixel accuracy is
// the correct pixels over the counted ones. This is the confusion-matrix
// mIoU of the MMSegmentation and torchvision references.
func MeanIoU(images []SegImage, numClasses int, ignoreIndex *int) (SegmentationResult, error) {
	if numClasses < 1 {
		return SegmentationResult{}, fmt.Errorf("num_classes is %d, want at least 1", numClasses)
	}
	if len(images) == 0 {
		return SegmentationResult{}, errors.New("no images to score")
	}
	tp := make([]int64, numClasses)
	gtN := make([]int64, numClasses)
	predN := make([]int64, numClasses)
	var counted int64
	for i, im := range images {
		if im.Height < 0 || im.Width < 0 || len(im.GT) != im.Height*im.Width || len(im.Pred) != len(im.GT) {
			return SegmentationResult{}, fmt.Errorf("images[%d]: %d×%d pixels, but %d ground-truth and %d predicted values", i, im.Height, im.Width, len(im.GT), len(im.Pred))
		}
		for p, g := range im.GT {
			if ignoreIndex != nil && g == *ignoreIndex {
				continue
			}
			if g < 0 || g >= numClasses {
				return SegmentationResult{}, fmt.Errorf("images[%d].gt[%d] is %d, outside [0, %d) and not the ignore index", i, p, g, numClasses)
			}
			q := im.Pred[p]
			if q < 0 || q >= numClasses {
				return SegmentationResult{}, fmt.Errorf("images[%d].pred[%d] is %d, outside [0, %d)", i, p, q, numClasses)
			}
			counted++
			gtN[g]++
			predN[q]++
			if g == q {
				tp[g]++
			}
		}
	}
	if counted == 0 {
		return SegmentationResult{}, errors.New("every pixel is ignored: nothing to score")
	}
	r := SegmentationResult{IoU: make([]*float64, numClasses)}
	var sum, correct float64
	var classes int
	for c := range numClasses {
		correct += float64(tp[c])
		union := gtN[c] + predN[c] - tp[c]
		if union == 0 {
			continue
		}
		iou := float64(tp[c]) / float64(union)
		r.IoU[c] = &iou
		sum += iou
		classes++
	}
	r.MIoU = sum / float64(classes)
	r.PixelAccuracy = correct / float64(counted)
	return r, nil
}

// DiceResult is the output of the dice metric.
type DiceResult struct {
	MeanDice   float64   `json:"mean_dice"`   // mean of the per-volume scores
	GlobalDice float64   `json:"global_dice"` // over every voxel pooled
	PerVolume  []float64 `json:"per_volume"`
}

// Volume is one binary segmentation: its shape and its predicted and
// target masks (0 or 1), flat in row-major order.
type Volume struct {
	Shape  []int `json:"shape"`
	Pred   []int `json:"pred"`
	Target []int `json:"target"`
}

// DiceSmooth is the smoothing of MLPerf's 3D-UNet (KiTS19) reference Dice:
// (2·|P∩T| + Nr) / (|P| + |T| + Dr).
type DiceSmooth struct{ Nr, Dr float64 }

// KiTS19Smooth is the reference's smoothing: 1e-6 on both sides.
var KiTS19Smooth = DiceSmooth{Nr: 1e-6, Dr: 1e-6}

// Dice scores binary 3D segmentations: per volume 2|P∩T| / (|P|+|T|),
// 1 when both masks are empty; with smooth, the smoothed formula of
// DiceSmooth instead (which also gives 1 for two empty masks).
// GlobalDice pools every voxel of every volume.
func Dice(volumes []Volume, smooth *DiceSmooth) (DiceResult, error) {
	if len(volumes) == 0 {
		return DiceResult{}, errors.New("no volumes to score")
	}
	score := func(inter, sum float64) float64 {
		if smooth != nil {
			return (2*inter + smooth.Nr) / (sum + smooth.Dr)
		}
		if sum == 0 {
			return 1
		}
		return 2 * inter / sum
	}
	r := DiceResult{PerVolume: make([]float64, len(volumes))}
	var allInter, allSum, total float64
	for i, v := range volumes {
		n := 1
		for d, s := range v.Shape {
			if s < 0 || (s > 0 && n > math.MaxInt32/s) {
				return DiceResult{}, fmt.Errorf("volumes[%d].shape[%d] is %d", i, d, s)
			}
			n *= s
		}
		if len(v.Shape) == 0 || len(v.Pred) != n || len(v.Target) != n {
			return DiceResult{}, fmt.Errorf("volumes[%d]: shape %v has %d voxels, but %d predicted and %d target values", i, v.Shape, n, len(v.Pred), len(v.Target))
		}
		var inter, sum float64
		for j := range n {
			p, t := v.Pred[j], v.Target[j]
			if p != 0 && p != 1 {
				return DiceResult{}, fmt.Errorf("volumes[%d].pred[%d] is %d, want 0 or 1", i, j, p)
			}
			if t != 0 && t != 1 {
				return DiceResult{}, fmt.Errorf("volumes[%d].target[%d] is %d, want 0 or 1", i, j, t)
			}
			inter += float64(p & t)
			sum += float64(p + t)
		}
		r.PerVolume[i] = score(inter, sum)
		total += r.PerVolume[i]
		allInter += inter
		allSum += sum
	}
	r.MeanDice = total / float64(len(volumes))
	r.GlobalDice = score(allInter, allSum)
	return r, nil
}
