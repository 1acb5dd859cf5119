package accuracy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDice(t *testing.T) {
	for _, tc := range []struct {
		v      Volume
		plain  float64
		smooth float64
		reason string
	}{
		{Volume{[]int{2, 2}, []int{1, 1, 0, 0}, []int{1, 0, 0, 0}}, 2.0 / 3, (2 + 1e-6) / (3 + 1e-6), "one voxel shared of 2+1"},
		{Volume{[]int{1, 3}, []int{0, 0, 0}, []int{0, 0, 0}}, 1, 1, "both empty: 1 (smoothed: 1e-6/1e-6)"},
		{Volume{[]int{1, 2}, []int{1, 0}, []int{0, 1}}, 0, 1e-6 / (2 + 1e-6), "disjoint: 0 (smoothed: a little above)"},
		{Volume{[]int{2}, []int{1, 0}, []int{0, 0}}, 0, 1e-6 / (1 + 1e-6), "prediction only: 0"},
		{Volume{[]int{2}, []int{0, 0}, []int{0, 1}}, 0, 1e-6 / (1 + 1e-6), "target only: 0"},
		{Volume{[]int{2, 1, 2}, []int{1, 1, 1, 1}, []int{1, 1, 1, 1}}, 1, 1, "identical full masks, three dimensions"},
		{Volume{[]int{0, 3}, []int{}, []int{}}, 1, 1, "no voxels: both empty"},
	} {
		got, err := Dice([]Volume{tc.v}, nil)
		if err != nil || !near(got.PerVolume[0], tc.plain) || !near(got.MeanDice, tc.plain) || !near(got.GlobalDice, tc.plain) {
			t.Errorf("%s: %+v, %v; want %v", tc.reason, got, err, tc.plain)
		}
		got, err = Dice([]Volume{tc.v}, &KiTS19Smooth)
		if err != nil || !near(got.PerVolume[0], tc.smooth) || !near(got.GlobalDice, tc.smooth) {
			t.Errorf("%s, smoothed: %+v, %v; want %v", tc.reason, got, err, tc.smooth)
		}
	}
	vols := []Volume{
		{[]int{2, 2}, []int{1, 1, 0, 0}, []int{1, 0, 0, 0}}, // 2·1/3
		{[]int{1, 3}, []int{0, 0, 0}, []int{0, 0, 0}},       // both empty: 1
		{[]int{1, 2}, []int{1, 0}, []int{0, 1}},             // no overlap: 0
	}
	got, err := Dice(vols, nil)
	if err != nil || !near(got.MeanDice, (2.0/3+1+0)/3) || !near(got.GlobalDice, 2.0/5) {
		t.Errorf("Dice = %+v, %v; want mean (2/3+1+0)/3 (an empty pair counts 1) and global 2·1/(3+2) (pooled)", got, err)
	}
	for _, tc := range []struct {
		vols []Volume
		want string
	}{
		{[]Volume{{[]int{1}, []int{0}, []int{0}}, {[]int{2, 2}, []int{1, 1, 0}, []int{1, 0, 0, 0}}}, "volumes[1].pred has 3 values, want the product of shape [2 2] = 4"},
		{[]Volume{{[]int{2, 2}, []int{1, 1, 0, 0}, []int{1, 0, 0, 0, 0}}}, "volumes[0].target has 5 values"},
		{[]Volume{{[]int{1, 1}, []int{2}, []int{1}}}, "volumes[0].pred[0] is 2, want 0 or 1"},
		{[]Volume{{[]int{1, 2}, []int{0, 1}, []int{0, -1}}}, "volumes[0].target[1] is -1, want 0 or 1"},
		{[]Volume{{nil, nil, nil}}, "volumes[0].shape is empty"},
		{[]Volume{{[]int{2, -1}, nil, nil}}, "volumes[0].shape[1] is -1"},
		{[]Volume{{[]int{1 << 20, 1 << 20}, nil, nil}}, "volumes[0].shape[1] is 1048576"},
		{nil, "no volumes"},
	} {
		if _, err := Dice(tc.vols, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.vols, err, tc.want)
		}
	}
}

// TestDiceMatchesReferences cross-checks Dice with numpy on random 3D
// masks: the plain formula, and the smoothed one against a restatement of
// get_dice_score of MLPerf's 3d-unet-kits19/accuracy_kits.py (one-hot
// with np.eye, background channel dropped, sums over the spatial axes,
// smooth_nr = smooth_dr = 1e-6) for a two-class (background, foreground)
// volume. Tolerance 1e-9; sparse and empty masks included.
func TestDiceMatchesReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 4))
	var cases [][]Volume
	for i := range 20 {
		var vols []Volume
		for range 1 + rng.IntN(4) {
			v := Volume{Shape: []int{1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(4)}}
			density := []int{0, 1, 2, 5}[i%4] // 0: empty masks
			for range v.Shape[0] * v.Shape[1] * v.Shape[2] {
				p, q := 0, 0
				if density > 0 && rng.IntN(density) == 0 {
					p = 1
				}
				if density > 0 && rng.IntN(density) == 0 {
					q = 1
				}
				v.Pred, v.Target = append(v.Pred, p), append(v.Target, q)
			}
			vols = append(vols, v)
		}
		cases = append(cases, vols)
	}
	const program = `
import json, sys
import numpy as np
def kits_dice(prediction, target):
    # accuracy_kits.get_dice_score for one case, restated for 2 classes
    smooth_nr = 1e-6; smooth_dr = 1e-6
    onehot = lambda a: np.transpose(np.eye(2)[a.reshape(-1)].reshape(list(a.shape) + [2]), (0, 4, 1, 2, 3)).astype(np.float64)
    p = onehot(prediction[None])[:, 1:]; t = onehot(target[None])[:, 1:]
    inter = np.sum(t * p, axis=(2, 3, 4)); ts = np.sum(t, axis=(2, 3, 4)); ps = np.sum(p, axis=(2, 3, 4))
    return float(((2.0 * inter + smooth_nr) / (ts + ps + smooth_dr))[0][0])
out = []
for vols in json.load(sys.stdin):
    plain, smooth = [], []; inter = 0; tot = 0
    for v in vols:
        p = np.array(v["pred"]).reshape(v["shape"]); t = np.array(v["target"]).reshape(v["shape"])
        i = int((p & t).sum()); s = int(p.sum() + t.sum())
        plain.append(1.0 if s == 0 else 2 * i / s); smooth.append(kits_dice(p, t)); inter += i; tot += s
    out.append({"mean": float(np.mean(plain)), "global": 1.0 if tot == 0 else 2 * inter / tot,
                "smooth_mean": float(np.mean(smooth)), "smooth_global": (2 * inter + 1e-6) / (tot + 1e-6), "smooth": smooth})
print(json.dumps(out))
`
	var want []struct {
		Mean, Global float64
		SmoothMean   float64 `json:"smooth_mean"`
		SmoothGlobal float64 `json:"smooth_global"`
		Smooth       []float64
	}
	pyRef(t, program, cases, &want)
	for i, vols := range cases {
		d, err := Dice(vols, nil)
		if err != nil || !near(d.MeanDice, want[i].Mean) || !near(d.GlobalDice, want[i].Global) {
			t.Errorf("case %d: %+v, %v; numpy mean %v global %v", i, d, err, want[i].Mean, want[i].Global)
		}
		s, err := Dice(vols, &KiTS19Smooth)
		if err != nil || !near(s.MeanDice, want[i].SmoothMean) || !near(s.GlobalDice, want[i].SmoothGlobal) {
			t.Errorf("case %d smoothed: %+v, %v; accuracy_kits mean %v global %v", i, s, err, want[i].SmoothMean, want[i].SmoothGlobal)
			continue
		}
		for j, w := range want[i].Smooth {
			if !near(s.PerVolume[j], w) {
				t.Errorf("case %d volume %d smoothed: %v; accuracy_kits %v", i, j, s.PerVolume[j], w)
			}
		}
	}
}
