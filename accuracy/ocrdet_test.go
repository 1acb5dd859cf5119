package accuracy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func rect(x, y, w, h float64) [][2]float64 {
	return [][2]float64{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}}
}

func TestOCRDetection(t *testing.T) {
	for _, tc := range []struct {
		im      OCRImage
		p, r, h float64
		reason  string
	}{
		{OCRImage{[]OCRRegion{{Points: rect(0, 0, 10, 10)}}, []OCRRegion{{Points: rect(0, 0, 10, 10)}}}, 1, 1, 1, "a perfect match"},
		{OCRImage{[]OCRRegion{{Points: rect(0, 0, 10, 10)}}, []OCRRegion{{Points: rect(5, 0, 10, 10)}}}, 0, 0, 0, "IoU 50/150 = 1/3: below 0.5"},
		{OCRImage{[]OCRRegion{{Points: rect(0, 0, 10, 10)}}, []OCRRegion{{Points: rect(2, 0, 10, 10)}}}, 1, 1, 1, "IoU 80/120 = 2/3: a match"},
		{OCRImage{[]OCRRegion{{Points: rect(0, 0, 10, 10)}, {Points: rect(50, 50, 10, 10), DontCare: true}},
			[]OCRRegion{{Points: rect(0, 0, 10, 10)}, {Points: rect(51, 51, 8, 8)}}}, 1, 1, 1, "a detection inside a don't-care region is left out"},
		{OCRImage{[]OCRRegion{{Points: rect(0, 0, 10, 10)}}, []OCRRegion{{Points: rect(0, 0, 10, 10)}, {Points: rect(0, 0, 10, 10)}}}, 0.5, 1, 2.0 / 3, "a duplicate detection is a false positive"},
		{OCRImage{nil, []OCRRegion{{Points: rect(0, 0, 1, 1)}}}, 0, 0, 0, "no ground truth: recall 0 at method level, precision 0"},
	} {
		got, err := OCRDetection([]OCRImage{tc.im}, 0, 0)
		if err != nil || !near(got.Precision, tc.p) || !near(got.Recall, tc.r) || !near(got.HMean, tc.h) {
			t.Errorf("%s: %+v, %v; want P %v R %v H %v", tc.reason, got, err, tc.p, tc.r, tc.h)
		}
	}
	bad := OCRImage{Detections: []OCRRegion{{Points: [][2]float64{{0, 0}, {10, 0}, {5, 2}, {10, 10}, {0, 10}}}}}
	if _, err := OCRDetection([]OCRImage{bad}, 0, 0); err == nil || !strings.Contains(err.Error(), "images[0].detections[0]: the polygon is not convex") {
		t.Errorf("a concave polygon: %v", err)
	}
	two := OCRImage{GroundTruths: []OCRRegion{{Points: [][2]float64{{0, 0}, {1, 1}}}}}
	if _, err := OCRDetection([]OCRImage{two}, 0, 0); err == nil || !strings.Contains(err.Error(), "images[0].ground_truths[0]: a polygon of 2 points") {
		t.Errorf("a two-point polygon: %v", err)
	}
}

// TestOCRDetectionMatchesICDAR compares OCRDetection with the ICDAR 2015
// procedure restated in Python with shapely polygons (as PaddleOCR's
// evaluator computes them), on random rotated quadrilaterals with
// don't-care regions: precision, recall and hmean within 1e-9.
func TestOCRDetectionMatchesICDAR(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	quad := func(cx, cy, w, h, angle float64) [][2]float64 {
		var p [][2]float64
		for _, c := range [][2]float64{{-w / 2, -h / 2}, {w / 2, -h / 2}, {w / 2, h / 2}, {-w / 2, h / 2}} {
			s, co := math.Sin(angle), math.Cos(angle)
			p = append(p, [2]float64{cx + c[0]*co - c[1]*s, cy + c[0]*s + c[1]*co})
		}
		return p
	}
	var images []OCRImage
	for range 40 {
		var im OCRImage
		for range rng.IntN(6) {
			cx, cy, w, h, a := float64(rng.IntN(300)), float64(rng.IntN(300)), float64(20+rng.IntN(80)), float64(8+rng.IntN(30)), rng.Float64()-0.5
			im.GroundTruths = append(im.GroundTruths, OCRRegion{Points: quad(cx, cy, w, h, a), DontCare: rng.IntN(6) == 0})
			for range rng.IntN(3) {
				j := func(s float64) float64 { return rng.NormFloat64() * s }
				im.Detections = append(im.Detections, OCRRegion{Points: quad(cx+j(w/6), cy+j(h/4), w*(1+j(0.2)), h*(1+j(0.2)), a+j(0.1))})
			}
		}
		for range rng.IntN(2) {
			im.Detections = append(im.Detections, OCRRegion{Points: quad(float64(rng.IntN(300)), float64(rng.IntN(300)), 30, 10, 0)})
		}
		images = append(images, im)
	}
	const program = `
import json, sys
from shapely.geometry import Polygon
def inter(a, b): return a.intersection(b).area
matched = care_gt = care_det = 0
for im in json.load(sys.stdin):
    gts = [Polygon(g["points"]) for g in im["ground_truths"] or []]
    dc = [i for i, g in enumerate(im["ground_truths"] or []) if g["dont_care"]]
    dets = [Polygon(d["points"]) for d in im["detections"] or []]
    det_dc = []
    for j, d in enumerate(dets):
        for i in dc:
            a = d.area
            p = 0 if a == 0 else inter(gts[i], d) / a
            if p > 0.5:
                det_dc.append(j); break
    gm = [0] * len(gts); dm = [0] * len(dets); m = 0
    for i, g in enumerate(gts):
        for j, d in enumerate(dets):
            if gm[i] == 0 and dm[j] == 0 and i not in dc and j not in det_dc:
                it = inter(d, g); u = d.area + g.area - it
                iou = it / u if u > 0 else 0
                if iou > 0.5:
                    gm[i] = dm[j] = 1; m += 1
    matched += m; care_gt += len(gts) - len(dc); care_det += len(dets) - len(det_dc)
r = 0 if care_gt == 0 else matched / care_gt
p = 0 if care_det == 0 else matched / care_det
h = 0 if r + p == 0 else 2 * r * p / (r + p)
print(json.dumps({"precision": p, "recall": r, "hmean": h, "matched": matched}))
`
	var want struct {
		Precision, Recall, HMean float64
		Matched                  int
	}
	pyRef(t, program, images, &want)
	if want.Matched == 0 || want.Precision == 1 || want.Recall == 1 {
		t.Fatalf("the random images test nothing: %+v", want)
	}
	got, err := OCRDetection(images, 0, 0)
	if err != nil || got.Matched != want.Matched || !near(got.Precision, want.Precision) || !near(got.Recall, want.Recall) || !near(got.HMean, want.HMean) {
		t.Errorf("OCRDetection %+v, %v; ICDAR with shapely %+v", got, err, want)
	}
}

func TestOCRScoreJSON(t *testing.T) {
	out, err := ScoreJSON("ocr-det", []byte(`{"iou_threshold":0.5,"area_precision_threshold":0.5,"images":[{"ground_truths":[{"points":[[0,0],[10,0],[10,10],[0,10]],"dont_care":false}],"detections":[{"points":[[0,0],[10,0],[10,10],[0,10]]}]}]}`))
	if r, ok := out.(OCRResult); err != nil || !ok || r.HMean != 1 {
		t.Errorf("ocr-det: %+v, %v", out, err)
	}
	if _, err := ScoreJSON("ocr-det", []byte(`{"images":[{"detections":[{"points":[[0,0]]}]}]}`)); err == nil || !strings.Contains(err.Error(), "images[0].detections[0]") {
		t.Errorf("a one-point polygon: %v", err)
	}
}
