package accuracy

import (
	"errors"
	"fmt"
	"math"
)

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

// DiceSmooth is the smoothing of MLPerf's 3D-UNet (KiTS19) reference Dice,
// get_dice_score of vision/medical_imaging/3d-unet-kits19/accuracy_kits.py
// in mlcommons/inference: (2·|P∩T| + Nr) / (|P| + |T| + Dr), per class
// (kidney, tumour) of each case.
type DiceSmooth struct{ Nr, Dr float64 }

// KiTS19Smooth is the reference's smoothing: smooth_nr = 1e-6 and
// smooth_dr = 1e-6.
var KiTS19Smooth = DiceSmooth{Nr: 1e-6, Dr: 1e-6}

// Dice scores binary segmentations (any number of dimensions): per volume
// 2|P∩T| / (|P|+|T|), 1 when both masks are empty; MeanDice is the mean
// of those over the volumes and GlobalDice the same formula over every
// voxel of every volume pooled. With smooth (the dice metric's input
// "smoothed": true selects KiTS19Smooth), every score is the smoothed
// formula of DiceSmooth instead, as the KiTS19 reference computes one
// class: nearly 1 for two empty masks (exactly 1 with Nr = Dr) and a
// little above 0 for disjoint ones. Pred and target values must be 0 or
// 1 and number the product of the shape.
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
		if len(v.Shape) == 0 {
			return DiceResult{}, fmt.Errorf("volumes[%d].shape is empty, want the size of each dimension", i)
		}
		n := 1
		for d, s := range v.Shape {
			if s < 0 || (s > 0 && n > math.MaxInt32/s) {
				return DiceResult{}, fmt.Errorf("volumes[%d].shape[%d] is %d, want a size in [0, 2^31) with a product below 2^31", i, d, s)
			}
			n *= s
		}
		if len(v.Pred) != n {
			return DiceResult{}, fmt.Errorf("volumes[%d].pred has %d values, want the product of shape %v = %d", i, len(v.Pred), v.Shape, n)
		}
		if len(v.Target) != n {
			return DiceResult{}, fmt.Errorf("volumes[%d].target has %d values, want the product of shape %v = %d", i, len(v.Target), v.Shape, n)
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
