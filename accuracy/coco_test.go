package accuracy

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCOCOMapHandWorked(t *testing.T) {
	box := func(img, cat int64, x, y, w, h, s float64) COCOBox {
		return COCOBox{ImageID: img, CategoryID: cat, BBox: [4]float64{x, y, w, h}, Score: s}
	}
	area := func(b COCOBox, a float64) COCOBox { b.Area = &a; return b }
	crowd := func(b COCOBox) COCOBox { b.IsCrowd = 1; return b }
	gt := []COCOBox{box(1, 1, 0, 0, 10, 10, 0), box(1, 1, 20, 20, 10, 10, 0)}
	tp1, tp2 := box(1, 1, 0, 0, 10, 10, .9), box(1, 1, 20, 20, 10, 10, .8)
	one := []COCOBox{box(1, 1, 0, 0, 10, 10, 0)}
	for _, tc := range []struct {
		gts, dets []COCOBox
		cats      []int64
		params    COCOParams
		want      [4]float64 // map, ap50, ap75, ar100
		reason    string
	}{
		{gt, []COCOBox{tp1, tp2}, []int64{1}, COCOParams{}, [4]float64{1, 1, 1, 1}, "perfect detections"},
		{gt, []COCOBox{tp1, tp2}, []int64{1, 2}, COCOParams{}, [4]float64{1, 1, 1, 1}, "a category without ground truth is left out, not averaged in as -1 or 0"},
		{gt, []COCOBox{tp1, tp2, box(1, 2, 0, 0, 10, 10, .99)}, []int64{1, 2}, COCOParams{}, [4]float64{1, 1, 1, 1},
			"a category with detections but no ground truth is left out too"},
		{nil, []COCOBox{tp1}, []int64{1, 2}, COCOParams{}, [4]float64{-1, -1, -1, -1}, "no ground truth at all: -1, as COCOeval's summarize"},
		{gt, []COCOBox{box(1, 1, 50, 50, 10, 10, .95), tp1, tp2}, []int64{1}, COCOParams{}, [4]float64{2. / 3, 2. / 3, 2. / 3, 1},
			"a false positive on top: precision 0, 1/2, 2/3, made monotone from the right: 2/3 at every recall"},
		{gt, []COCOBox{tp1, tp2, box(1, 1, 50, 50, 10, 10, .1)}, []int64{1}, COCOParams{}, [4]float64{1, 1, 1, 1},
			"a false positive at the bottom comes after full recall"},
		{gt, []COCOBox{tp1, box(1, 1, 0, 0, 10, 10, .85), tp2}, []int64{1}, COCOParams{}, [4]float64{253. / 303, 253. / 303, 253. / 303, 1},
			"a duplicate is a false positive: precision 1 up to recall .5 (51 points), 2/3 for the 50 above"},
		{gt, []COCOBox{tp1}, []int64{1}, COCOParams{}, [4]float64{51. / 101, 51. / 101, 51. / 101, .5},
			"fewer detections than ground truths: recall .5, precision 1 at 51 of 101 recall points"},
		{gt, nil, []int64{1}, COCOParams{}, [4]float64{0, 0, 0, 0}, "no detection: 0, not -1"},
		{gt, []COCOBox{tp1, tp2}, []int64{1}, COCOParams{MaxDets: 1}, [4]float64{51. / 101, 51. / 101, 51. / 101, .5},
			"max_dets 1 keeps the better-scored detection of the image and category"},
		{one, []COCOBox{box(1, 1, 30, 30, 5, 5, .5), box(1, 1, 0, 0, 10, 10, .5)}, []int64{1}, COCOParams{}, [4]float64{.5, .5, .5, 1},
			"tied scores keep the input order (mergesort): the false positive first, precision 1/2 at recall 1"},
		{one, []COCOBox{box(1, 1, 0, 0, 10, 10, .5), box(1, 1, 30, 30, 5, 5, .5)}, []int64{1}, COCOParams{}, [4]float64{1, 1, 1, 1},
			"the same tie in the other order: the true positive first"},
		{one, []COCOBox{box(1, 1, 0, 0, 10, 8, .5)}, []int64{1}, COCOParams{}, [4]float64{.7, 1, 1, .7},
			"IoU .8 matches at the thresholds .5 to .8 (an IoU equal to the threshold matches): 7 of 10"},
		{[]COCOBox{one[0], crowd(box(1, 1, 40, 40, 50, 50, 0))}, []COCOBox{box(1, 1, 45, 45, 10, 10, .99), box(1, 1, 0, 0, 10, 10, .5)}, []int64{1},
			COCOParams{}, [4]float64{1, 1, 1, 1}, "a detection inside a crowd region (IoU over the detection's own area: 1) is neither true nor false"},
		{[]COCOBox{crowd(box(1, 1, 0, 0, 100, 100, 0)), box(1, 1, 0, 0, 10, 12, 0)}, []COCOBox{box(1, 1, 0, 0, 10, 10, .9)}, []int64{1},
			COCOParams{}, [4]float64{.7, 1, 1, .7}, "a crowd region (IoU 1) listed first is still tried last: the detection matches the real ground truth " +
				"(IoU 5/6) at thresholds .5 to .8, the crowd region above"},
		{[]COCOBox{crowd(box(1, 1, 0, 0, 100, 100, 0))}, []COCOBox{box(1, 1, 0, 0, 10, 10, .9)}, []int64{1},
			COCOParams{}, [4]float64{-1, -1, -1, -1}, "only a crowd region: no ground truth counts"},
		{[]COCOBox{one[0], area(box(1, 1, 50, 50, 10, 10, 0), 1e11)}, []COCOBox{box(1, 1, 50, 50, 10, 10, .9), box(1, 1, 0, 0, 10, 10, .5)}, []int64{1},
			COCOParams{}, [4]float64{1, 1, 1, 1}, "a detection matched to an ignored ground truth (given area above 1e5²) is ignored, not a false positive"},
		{[]COCOBox{one[0], area(box(1, 1, 50, 50, 10, 10, 0), 1e11)}, []COCOBox{box(1, 1, 0, 0, 10, 10, .9)}, []int64{1},
			COCOParams{}, [4]float64{1, 1, 1, 1}, "a ground truth whose given area is above 1e5² does not count towards recall"},
		{gt, []COCOBox{tp1, box(1, 1, 20, 20, 100, 100, .95)}, []int64{1}, COCOParams{AreaRangeAll: []float64{0, 1000}}, [4]float64{51. / 101, 51. / 101, 51. / 101, .5},
			"an unmatched detection outside the area range is ignored, not a false positive"},
		{gt, []COCOBox{tp1, box(1, 1, 20, 20, 10, 8, .8)}, []int64{1}, COCOParams{IoUThresholds: []float64{.5, .9}}, [4]float64{76. / 101, 1, -1, .75},
			"IoU thresholds .5 and .9 (AP 1 and 51/101; no .75: ap75 -1, as summarize finds no threshold)"},
	} {
		got, err := COCOMap([]int64{1}, tc.cats, tc.gts, tc.dets, tc.params)
		want := COCOResult{tc.want[0], tc.want[1], tc.want[2], tc.want[3]}
		if err != nil || !near(got.MAP, want.MAP) || !near(got.AP50, want.AP50) || !near(got.AP75, want.AP75) || !near(got.AR100, want.AR100) {
			t.Errorf("%s: %+v, %v; want %+v", tc.reason, got, err, want)
		}
	}
	nan := math.NaN()
	for _, tc := range []struct {
		gts, dets []COCOBox
		params    COCOParams
		want      string
	}{
		{gt, []COCOBox{box(2, 1, 0, 0, 1, 1, .5)}, COCOParams{}, "detections[0]: image_id 2 is not among the images"},
		{gt, []COCOBox{tp1, box(1, 9, 0, 0, 1, 1, .5)}, COCOParams{}, "detections[1]: category_id 9 is not among the categories"},
		{[]COCOBox{box(1, 3, 0, 0, 1, 1, 0)}, nil, COCOParams{}, "ground_truths[0]: category_id 3 is not among the categories"},
		{[]COCOBox{box(1, 1, 0, 0, -1, 1, 0)}, nil, COCOParams{}, "ground_truths[0].bbox has a negative width"},
		{gt, []COCOBox{tp1, box(1, 1, 0, 0, 1, -2, .5)}, COCOParams{}, "detections[1].bbox has a negative width or height"},
		{gt, []COCOBox{tp1, box(1, 1, 0, 0, 1, 1, nan)}, COCOParams{}, "detections[1].score is NaN"},
		{gt, []COCOBox{box(1, 1, nan, 0, 1, 1, .5)}, COCOParams{}, "detections[0].bbox[0] is NaN"},
		{[]COCOBox{area(box(1, 1, 0, 0, 1, 1, 0), nan)}, nil, COCOParams{}, "ground_truths[0].area is NaN"},
		{gt, nil, COCOParams{IoUThresholds: []float64{.5, 1.5}}, "params.iou_thresholds[1] is 1.5"},
		{gt, nil, COCOParams{MaxDets: -1}, "params.max_dets is -1"},
	} {
		if got, err := COCOMap([]int64{1}, []int64{1}, tc.gts, tc.dets, tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %+v, %v; want an error %q", tc.gts, tc.dets, got, err, tc.want)
		}
	}
}

// TestCOCOMapMatchesPycocotools compares COCOMap with pycocotools'
// COCOeval (bbox) on random scenes: several images and categories,
// jittered and duplicated boxes, crowd regions, given areas other than
// width × height, tied scores, and on a third of the scenes other
// parameters (IoU and recall thresholds, max_dets below the detections
// of an image, an area range that ignores some boxes), and two crowded
// scenes of 160 detections in one image and category; stats[0], [1], [2]
// and [8] within 1e-9.
func TestCOCOMapMatchesPycocotools(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type scene struct {
		Images []int64    `json:"images"`
		Cats   []int64    `json:"cats"`
		GTs    []COCOBox  `json:"gts"`
		Dets   []COCOBox  `json:"dets"`
		Params COCOParams `json:"params"`
	}
	var scenes []scene
	for n := range 36 {
		var s scene
		if n%3 == 2 {
			s.Params = COCOParams{
				IoUThresholds:    [][]float64{{.5, .75}, {.3, .5, .6, .75, .9}, linspace(.5, .95, 10)}[rng.IntN(3)],
				RecallThresholds: linspace(0, 1, 2+rng.IntN(20)),
				MaxDets:          1 + rng.IntN(3),
				AreaRangeAll:     []float64{float64(rng.IntN(800)), float64(2000 + rng.IntN(8000))},
			}
		}
		for i := range 1 + rng.IntN(5) {
			s.Images = append(s.Images, int64(10+i*3))
		}
		for c := range 1 + rng.IntN(4) {
			s.Cats = append(s.Cats, int64(c+1))
		}
		for _, img := range s.Images {
			for range rng.IntN(6) {
				cat := s.Cats[rng.IntN(len(s.Cats))]
				x, y := float64(rng.IntN(200))+rng.Float64(), float64(rng.IntN(200))
				w, h := float64(5+rng.IntN(120)), float64(5+rng.IntN(120))+rng.Float64()
				g := COCOBox{ImageID: img, CategoryID: cat, BBox: [4]float64{x, y, w, h}}
				if rng.IntN(8) == 0 {
					g.IsCrowd = 1
				}
				if rng.IntN(3) == 0 {
					a := w * h * (0.5 + rng.Float64()/2) // a segmentation's area
					g.Area = &a
				}
				s.GTs = append(s.GTs, g)
				for range rng.IntN(4) {
					j := func() float64 { return rng.NormFloat64() * w / 8 }
					s.Dets = append(s.Dets, COCOBox{ImageID: img, CategoryID: cat,
						BBox:  [4]float64{x + j(), y + j(), max(1, w+j()), max(1, h+j())},
						Score: float64(rng.IntN(20)) / 20})
				}
			}
			for range rng.IntN(3) { // false positives
				s.Dets = append(s.Dets, COCOBox{ImageID: img, CategoryID: s.Cats[rng.IntN(len(s.Cats))],
					BBox: [4]float64{float64(rng.IntN(300)), float64(rng.IntN(300)), 20, 30}, Score: float64(rng.IntN(20)) / 20})
			}
		}
		scenes = append(scenes, s)
	}
	// Crowded scenes: more than 100 detections of one category in one
	// image (the default max_dets keeps the first 100 by score, stable),
	// most of them tied, the others spread over a second image.
	for range 2 {
		s := scene{Images: []int64{1, 2}, Cats: []int64{1, 2}}
		for range 40 {
			x, y, w, h := float64(rng.IntN(400)), float64(rng.IntN(400)), float64(5+rng.IntN(60)), float64(5+rng.IntN(60))
			s.GTs = append(s.GTs, COCOBox{ImageID: 1, CategoryID: 1, BBox: [4]float64{x, y, w, h}})
			for range 4 {
				j := func() float64 { return rng.NormFloat64() * w / 6 }
				s.Dets = append(s.Dets, COCOBox{ImageID: 1, CategoryID: 1, BBox: [4]float64{x + j(), y + j(), max(1, w+j()), max(1, h+j())},
					Score: float64(rng.IntN(5)) / 5})
			}
		}
		for range 10 {
			s.GTs = append(s.GTs, COCOBox{ImageID: 2, CategoryID: 2, BBox: [4]float64{float64(rng.IntN(100)), float64(rng.IntN(100)), 30, 20}})
			s.Dets = append(s.Dets, COCOBox{ImageID: 2, CategoryID: 1, BBox: [4]float64{float64(rng.IntN(100)), float64(rng.IntN(100)), 30, 20}, Score: .6})
		}
		scenes = append(scenes, s)
	}
	const program = `
import json, sys, contextlib
import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
out = []
for s in json.load(sys.stdin):
    with contextlib.redirect_stdout(sys.stderr):
        gt = COCO()
        gt.dataset = {"info": {}, "licenses": [], "images": [{"id": i} for i in s["images"]], "categories": [{"id": c} for c in s["cats"]],
                      "annotations": [{"id": k + 1, "image_id": g["image_id"], "category_id": g["category_id"], "bbox": g["bbox"],
                                       "iscrowd": g["iscrowd"], "area": g.get("area", g["bbox"][2] * g["bbox"][3])}
                                      for k, g in enumerate(s["gts"] or [])]}
        gt.createIndex()
        if s["dets"]:
            dt = gt.loadRes([{"image_id": d["image_id"], "category_id": d["category_id"], "bbox": d["bbox"], "score": d["score"]} for d in s["dets"]])
        else:
            dt = COCO(); dt.dataset = {"images": gt.dataset["images"], "categories": gt.dataset["categories"], "annotations": []}; dt.createIndex()
        e = COCOeval(gt, dt, "bbox")
        p = s["params"]
        if p["iou_thresholds"]: e.params.iouThrs = np.array(p["iou_thresholds"])
        if p["recall_thresholds"]: e.params.recThrs = np.array(p["recall_thresholds"])
        if p["max_dets"]: e.params.maxDets = [p["max_dets"]] * 3  # evaluate sorts maxDets and uses the last
        if p["area_range_all"]: e.params.areaRng[0] = p["area_range_all"]
        e.evaluate(); e.accumulate(); e.summarize()
    m = e.stats[0]
    if p["max_dets"]:  # summarize's stats[0] reads maxDets=100 whatever the parameters: take it from the precision array
        v = e.eval["precision"][:, :, :, 0, -1]
        m = v[v > -1].mean() if (v > -1).any() else -1
    out.append([float(m), float(e.stats[1]), float(e.stats[2]), float(e.stats[8])])
print(json.dumps(out))
`
	var want [][4]float64
	pyRef(t, program, scenes, &want)
	for i, s := range scenes {
		got, err := COCOMap(s.Images, s.Cats, s.GTs, s.Dets, s.Params)
		if err != nil || !near(got.MAP, want[i][0]) || !near(got.AP50, want[i][1]) || !near(got.AP75, want[i][2]) || !near(got.AR100, want[i][3]) {
			t.Errorf("scene %d: %+v, %v; pycocotools %v", i, got, err, want[i])
		}
	}
}

func TestCOCOScoreJSON(t *testing.T) {
	out, err := ScoreJSON("coco-map", []byte(`{"images":[1],"categories":[1],"ground_truths":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10]}],"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10],"score":0.9}]}`))
	if r, ok := out.(COCOResult); err != nil || !ok || r.MAP != 1 || r.AP50 != 1 || r.AP75 != 1 || r.AR100 != 1 {
		t.Errorf("coco-map: %+v, %v", out, err)
	}
	// A ground truth's given area outside a custom "all" range ignores it.
	out, err = ScoreJSON("coco-map", []byte(`{"images":[1],"categories":[1],"ground_truths":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10],"area":5000}],
		"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10],"score":0.9}],"params":{"area_range_all":[0,1000]}}`))
	if r, ok := out.(COCOResult); err != nil || !ok || r.MAP != -1 {
		t.Errorf("coco-map with area 5000 outside [0, 1000]: %+v, %v; want -1", out, err)
	}
	const gt = `"images":[1],"categories":[1],"ground_truths":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10]}]`
	for _, tc := range []struct{ input, want string }{
		{`{` + gt + `,"detections":[],"params":{"area_range_all":[1]}}`, "area_range_all has 1 values"},
		{`{` + gt + `,"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10],"score":0.9},{"image_id":1,"category_id":1,"bbox":[0,0,10],"score":0.9}]}`,
			"detections[1].bbox has 3 values, want 4"},
		{`{` + gt + `,"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10]}]}`, "detections[0] has no score"},
		{`{` + gt + `,"detections":[{"category_id":1,"bbox":[0,0,10,10],"score":1}]}`, "detections[0] has no image_id"},
		{`{"images":[1],"categories":[1],"ground_truths":[{"image_id":1,"bbox":[0,0,10,10]}],"detections":[]}`, "ground_truths[0] has no category_id"},
		{`{` + gt + `,"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,-10,10],"score":0.9}]}`, "detections[0].bbox has a negative width or height"},
		{`{` + gt + `,"detections":[{"image_id":7,"category_id":1,"bbox":[0,0,10,10],"score":0.9}]}`, "detections[0]: image_id 7 is not among the images"},
	} {
		if out, err := ScoreJSON("coco-map", []byte(tc.input)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v, %v; want an error %q", tc.input, out, err, tc.want)
		}
	}
}

// TestLinspaceMatchesNumpy checks linspace bit for bit against
// np.linspace, the IoU and recall thresholds of COCOeval among them (a
// fused multiply-add, which Go emits on arm64 or GOAMD64=v3 unless the
// product is converted, makes the threshold 0.8 0.7999999999999999).
func TestLinspaceMatchesNumpy(t *testing.T) {
	cases := [][3]float64{{.5, .95, 10}, {0, 1, 101}, {.3, .9, 7}, {0, 1, 21}, {.05, .95, 19}}
	var want [][]float64
	pyRef(t, `
import json, sys
import numpy as np
print(json.dumps([[float(x) for x in np.linspace(a, b, int(n))] for a, b, n in json.load(sys.stdin)]))
`, cases, &want)
	for k, c := range cases {
		if got := linspace(c[0], c[1], int(c[2])); !slices.Equal(got, want[k]) {
			t.Errorf("linspace(%v, %v, %v) = %v, numpy %v", c[0], c[1], c[2], got, want[k])
		}
	}
}
