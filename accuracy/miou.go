package accuracy

import (
	"errors"
	"fmt"
	"math"
)

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
// mIoU of the MMSegmentation and torchvision references (numpy's
// np.bincount(num_classes*gt + pred) over the kept pixels). Every
// predicted value must be a class in [0, numClasses), ignored pixels
// included; a ground-truth value must be a class or the ignore index (an
// ignore index inside [0, numClasses) makes that class's ground truth
// ignored while its predictions still count as false positives, as in
// those references). An input whose every pixel is ignored is an error.
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
		if im.Height < 0 || im.Width < 0 || (im.Width > 0 && im.Height > math.MaxInt32/im.Width) {
			return SegmentationResult{}, fmt.Errorf("images[%d]: height %d × width %d is not a valid size", i, im.Height, im.Width)
		}
		n := im.Height * im.Width
		if len(im.GT) != n {
			return SegmentationResult{}, fmt.Errorf("images[%d].gt has %d values, want height×width = %d×%d = %d", i, len(im.GT), im.Height, im.Width, n)
		}
		if len(im.Pred) != n {
			return SegmentationResult{}, fmt.Errorf("images[%d].pred has %d values, want height×width = %d×%d = %d", i, len(im.Pred), im.Height, im.Width, n)
		}
		for p, g := range im.GT {
			q := im.Pred[p]
			if q < 0 || q >= numClasses {
				return SegmentationResult{}, fmt.Errorf("images[%d].pred[%d] (row %d, column %d) is %d, outside [0, %d)", i, p, p/im.Width, p%im.Width, q, numClasses)
			}
			if ignoreIndex != nil && g == *ignoreIndex {
				continue
			}
			if g < 0 || g >= numClasses {
				return SegmentationResult{}, fmt.Errorf("images[%d].gt[%d] (row %d, column %d) is %d, outside [0, %d) and not the ignore index", i, p, p/im.Width, p%im.Width, g, numClasses)
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
