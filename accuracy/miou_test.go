package accuracy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMeanIoU(t *testing.T) {
	ignore255, ignore0 := 255, 0
	for _, tc := range []struct {
		images   []SegImage
		k        int
		ignore   *int
		miou, pa float64
		reason   string
	}{
		{[]SegImage{{1, 4, []int{0, 0, 1, 1}, []int{0, 1, 1, 1}}}, 2, nil, (0.5 + 2.0/3) / 2, 0.75,
			"class 0: 1 of union 2; class 1: 2 of union 3"},
		{[]SegImage{{1, 4, []int{0, 0, 1, 255}, []int{0, 0, 1, 0}}}, 3, &ignore255, 1, 1,
			"the ignored pixel is skipped, its prediction too; class 2 is in neither map and left out"},
		{[]SegImage{{1, 2, []int{0, 0}, []int{0, 0}}, {1, 2, []int{1, 1}, []int{0, 1}}}, 2, nil, (2.0/3 + 0.5) / 2, 0.75,
			"two images pool into one confusion matrix"},
		{[]SegImage{{2, 2, []int{0, 1, 1, 1}, []int{1, 0, 1, 1}}}, 2, &ignore0, (0 + 2.0/3) / 2, 2.0 / 3,
			"an ignore index inside the classes: class 0's ground truth is skipped, its predictions are false positives (IoU 0, kept)"},
		{[]SegImage{{1, 3, []int{0, 0, 0}, []int{0, 0, 2}}}, 3, nil, (2.0/3 + 0) / 2, 2.0 / 3,
			"a class only predicted has IoU 0 and counts in the mean"},
		{[]SegImage{{0, 5, nil, nil}, {1, 1, []int{1}, []int{1}}}, 2, nil, 1, 1,
			"an empty image adds nothing; class 0 has no union"},
		{[]SegImage{{1, 2, []int{255, 1}, []int{0, 1}}}, 2, &ignore255, 1, 1,
			"the prediction of an ignored pixel is not a false positive"},
	} {
		got, err := MeanIoU(tc.images, tc.k, tc.ignore)
		if err != nil || !near(got.MIoU, tc.miou) || !near(got.PixelAccuracy, tc.pa) {
			t.Errorf("%s: %+v, %v; want mIoU %v, pixel accuracy %v", tc.reason, got, err, tc.miou, tc.pa)
		}
	}
	for _, tc := range []struct {
		images []SegImage
		k      int
		ignore *int
		want   string
	}{
		{[]SegImage{{1, 1, []int{0}, []int{0}}, {2, 2, []int{0, 0, 0}, []int{0, 0, 0, 0}}}, 2, nil, "images[1].gt has 3 values, want height×width = 2×2 = 4"},
		{[]SegImage{{2, 2, []int{0, 0, 0, 0}, []int{0, 0, 0}}}, 2, nil, "images[0].pred has 3 values"},
		{[]SegImage{{2, 2, []int{0, 0, 0, 0}, []int{0, 0, 0, 7}}}, 2, nil, "images[0].pred[3] (row 1, column 1) is 7, outside [0, 2)"},
		{[]SegImage{{1, 2, []int{0, 255}, []int{0, 255}}}, 2, &ignore255, "images[0].pred[1] (row 0, column 1) is 255"},
		{[]SegImage{{1, 2, []int{0, 255}, []int{0, 0}}}, 2, nil, "images[0].gt[1] (row 0, column 1) is 255, outside [0, 2) and not the ignore index"},
		{[]SegImage{{1, 2, []int{0, -1}, []int{0, 0}}}, 2, nil, "images[0].gt[1] (row 0, column 1) is -1"},
		{[]SegImage{{1, 2, []int{255, 255}, []int{0, 0}}}, 2, &ignore255, "every pixel is ignored"},
		{[]SegImage{{-1, 2, nil, nil}}, 2, nil, "images[0]: height -1 × width 2"},
		{[]SegImage{{1 << 40, 1 << 40, nil, nil}}, 2, nil, "images[0]: height 1099511627776"},
		{[]SegImage{{1, 1, []int{0}, []int{0}}}, 0, nil, "num_classes is 0"},
		{nil, 2, nil, "no images"},
	} {
		if _, err := MeanIoU(tc.images, tc.k, tc.ignore); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.images, err, tc.want)
		}
	}
}

// TestMeanIoUMatchesNumpy cross-checks MeanIoU with a numpy confusion
// matrix (np.bincount(k*gt + pred) over the pixels whose ground truth is
// not the ignore index, as MMSegmentation's intersect_and_union) on random
// images, with no ignore index, 255, and an ignore index that is a class.
// Tolerance 1e-9; the per-class IoU too, and which classes are left out.
func TestMeanIoUMatchesNumpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	type tcase struct {
		K      int        `json:"k"`
		Ignore *int       `json:"ignore"`
		Images []SegImage `json:"images"`
	}
	var cases []tcase
	for i := range 30 {
		c := tcase{K: 1 + i%7}
		switch i % 3 {
		case 1:
			v := 255
			c.Ignore = &v
		case 2:
			v := rng.IntN(c.K)
			c.Ignore = &v
		}
		for range 1 + rng.IntN(4) {
			h, w := rng.IntN(8), 1+rng.IntN(8)
			im := SegImage{Height: h, Width: w, GT: []int{}, Pred: []int{}}
			for range h * w {
				g := rng.IntN(c.K)
				p := g
				if rng.IntN(3) == 0 {
					p = rng.IntN(c.K)
				}
				if c.Ignore != nil && *c.Ignore == 255 && rng.IntN(5) == 0 {
					g = 255
				}
				im.GT, im.Pred = append(im.GT, g), append(im.Pred, p)
			}
			c.Images = append(c.Images, im)
		}
		cases = append(cases, c)
	}
	const program = `
import json, sys
import numpy as np
out = []
for c in json.load(sys.stdin):
    k = c["k"]; conf = np.zeros(k * k, dtype=np.int64)
    for im in c["images"]:
        g = np.array(im["gt"], dtype=np.int64).reshape(im["height"], im["width"])
        p = np.array(im["pred"], dtype=np.int64).reshape(im["height"], im["width"])
        keep = np.ones_like(g, dtype=bool) if c["ignore"] is None else g != c["ignore"]
        conf += np.bincount(k * g[keep] + p[keep], minlength=k * k)
    conf = conf.reshape(k, k)
    tp = np.diag(conf); union = conf.sum(0) + conf.sum(1) - tp
    if conf.sum() == 0:
        out.append(None); continue
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = tp / union
    out.append({"miou": float(np.nanmean(iou)), "pa": float(tp.sum() / conf.sum()),
                "iou": [None if np.isnan(x) else float(x) for x in iou]})
print(json.dumps(out))
`
	var want []*struct {
		MIoU, PA float64
		IoU      []*float64
	}
	pyRef(t, program, cases, &want)
	for i, c := range cases {
		got, err := MeanIoU(c.Images, c.K, c.Ignore)
		if want[i] == nil {
			if err == nil || !strings.Contains(err.Error(), "every pixel is ignored") {
				t.Errorf("case %d: %+v, %v; numpy has no pixel", i, got, err)
			}
			continue
		}
		if err != nil || !near(got.MIoU, want[i].MIoU) || !near(got.PixelAccuracy, want[i].PA) {
			t.Errorf("case %d: %v %v, %v; numpy %v %v", i, got.MIoU, got.PixelAccuracy, err, want[i].MIoU, want[i].PA)
			continue
		}
		for cl, w := range want[i].IoU {
			g := got.IoU[cl]
			if (g == nil) != (w == nil) || (g != nil && math.Abs(*g-*w) > tol) {
				t.Errorf("case %d class %d: IoU %v, numpy %v", i, cl, g, w)
			}
		}
	}
}
