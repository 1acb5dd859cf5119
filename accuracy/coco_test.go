package accuracy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCOCOMapHandWorked(t *testing.T) {
	box := func(img, cat int64, x, y, w, h, s float64) COCOBox {
		return COCOBox{ImageID: img, CategoryID: cat, BBox: [4]float64{x, y, w, h}, Score: s}
	}
	gt := []COCOBox{box(1, 1, 0, 0, 10, 10, 0), box(1, 1, 20, 20, 10, 10, 0)}
	for _, tc := range []struct {
		dets   []COCOBox
		cats   []int64
		mAP    float64
		reason string
	}{
		{[]COCOBox{box(1, 1, 0, 0, 10, 10, .9), box(1, 1, 20, 20, 10, 10, .8)}, []int64{1}, 1, "perfect detections"},
		{[]COCOBox{box(1, 1, 0, 0, 10, 10, .9), box(1, 1, 20, 20, 10, 10, .8)}, []int64{1, 2}, 1, "a category without ground truth is left out"},
		{[]COCOBox{box(1, 1, 50, 50, 10, 10, .95), box(1, 1, 0, 0, 10, 10, .9), box(1, 1, 20, 20, 10, 10, .8)}, []int64{1}, 2.0 / 3,
			"a false positive on top: precision 1/2 then 2/3, made monotone: 2/3 at every recall"},
		{[]COCOBox{box(1, 1, 0, 0, 10, 10, .9)}, []int64{1}, 51.0 / 101, "half the ground truth found: 51 recall points of 101 at precision 1"},
		{nil, []int64{1}, 0, "no detection: 0, not -1"},
	} {
		got, err := COCOMap([]int64{1}, tc.cats, gt, tc.dets, COCOParams{})
		if err != nil || !near(got.MAP, tc.mAP) {
			t.Errorf("%s: %+v, %v; want mAP %v", tc.reason, got, err, tc.mAP)
		}
	}
	// A crowd ground truth: a detection on it is neither true nor false.
	crowd := []COCOBox{box(1, 1, 0, 0, 10, 10, 0), {ImageID: 1, CategoryID: 1, BBox: [4]float64{40, 40, 50, 50}, IsCrowd: 1}}
	got, _ := COCOMap([]int64{1}, []int64{1}, crowd, []COCOBox{box(1, 1, 45, 45, 10, 10, .99), box(1, 1, 0, 0, 10, 10, .5)}, COCOParams{})
	if !near(got.MAP, 1) {
		t.Errorf("a detection inside a crowd region: mAP %v, want 1 (ignored)", got.MAP)
	}
	for _, tc := range []struct {
		gts, dets []COCOBox
		want      string
	}{
		{gt, []COCOBox{box(2, 1, 0, 0, 1, 1, .5)}, "detections[0]: image_id 2 is not among the images"},
		{gt, []COCOBox{box(1, 9, 0, 0, 1, 1, .5)}, "detections[0]: category_id 9"},
		{[]COCOBox{box(1, 1, 0, 0, -1, 1, 0)}, nil, "ground_truths[0].bbox has a negative width"},
	} {
		if _, err := COCOMap([]int64{1}, []int64{1}, tc.gts, tc.dets, COCOParams{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %v, want %q", tc.gts, tc.dets, err, tc.want)
		}
	}
}

// TestCOCOMapMatchesPycocotools compares COCOMap with pycocotools'
// COCOeval (bbox) on random scenes: several images and categories,
// jittered and duplicated boxes, crowd regions, tied scores; stats[0],
// [1], [2] and [8] within 1e-9.
func TestCOCOMapMatchesPycocotools(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type scene struct {
		Images []int64   `json:"images"`
		Cats   []int64   `json:"cats"`
		GTs    []COCOBox `json:"gts"`
		Dets   []COCOBox `json:"dets"`
	}
	var scenes []scene
	for range 8 {
		var s scene
		for i := range 1 + rng.IntN(5) {
			s.Images = append(s.Images, int64(10+i*3))
		}
		for c := range 1 + rng.IntN(4) {
			s.Cats = append(s.Cats, int64(c+1))
		}
		for _, img := range s.Images {
			for range rng.IntN(6) {
				cat := s.Cats[rng.IntN(len(s.Cats))]
				x, y := float64(rng.IntN(200)), float64(rng.IntN(200))
				w, h := float64(5+rng.IntN(120)), float64(5+rng.IntN(120))
				g := COCOBox{ImageID: img, CategoryID: cat, BBox: [4]float64{x, y, w, h}}
				if rng.IntN(8) == 0 {
					g.IsCrowd = 1
				}
				g.Area = w * h
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
	const program = `
import json, sys, contextlib
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
out = []
for s in json.load(sys.stdin):
    with contextlib.redirect_stdout(sys.stderr):
        gt = COCO()
        gt.dataset = {"info": {}, "licenses": [], "images": [{"id": i} for i in s["images"]], "categories": [{"id": c} for c in s["cats"]],
                      "annotations": [{"id": k + 1, "image_id": g["image_id"], "category_id": g["category_id"], "bbox": g["bbox"],
                                       "iscrowd": g["iscrowd"], "area": g["area"]} for k, g in enumerate(s["gts"])]}
        gt.createIndex()
        if s["dets"]:
            dt = gt.loadRes([{"image_id": d["image_id"], "category_id": d["category_id"], "bbox": d["bbox"], "score": d["score"]} for d in s["dets"]])
        else:
            dt = COCO(); dt.dataset = {"images": gt.dataset["images"], "categories": gt.dataset["categories"], "annotations": []}; dt.createIndex()
        e = COCOeval(gt, dt, "bbox"); e.evaluate(); e.accumulate(); e.summarize()
    out.append([float(e.stats[0]), float(e.stats[1]), float(e.stats[2]), float(e.stats[8])])
print(json.dumps(out))
`
	var want [][4]float64
	pyRef(t, program, scenes, &want)
	for i, s := range scenes {
		got, err := COCOMap(s.Images, s.Cats, s.GTs, s.Dets, COCOParams{})
		if err != nil || !near(got.MAP, want[i][0]) || !near(got.AP50, want[i][1]) || !near(got.AP75, want[i][2]) || !near(got.AR100, want[i][3]) {
			t.Errorf("scene %d: %+v, %v; pycocotools %v", i, got, err, want[i])
		}
	}
}

func TestCOCOScoreJSON(t *testing.T) {
	out, err := ScoreJSON("coco-map", []byte(`{"images":[1],"categories":[1],"ground_truths":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10]}],"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10],"score":0.9}]}`))
	if r, ok := out.(COCOResult); err != nil || !ok || r.MAP != 1 || r.AR100 != 1 {
		t.Errorf("coco-map: %+v, %v", out, err)
	}
	if _, err := ScoreJSON("coco-map", []byte(`{"images":[1],"categories":[1],"ground_truths":[],"detections":[{"image_id":1,"category_id":1,"bbox":[0,0,10,10],"score":0.9}],"params":{"area_range_all":[1]}}`)); err == nil || !strings.Contains(err.Error(), "area_range_all has 1 values") {
		t.Errorf("a bad area range: %v", err)
	}
}
