package accuracy

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func rect(x, y, w, h float64) [][2]float64 {
	return [][2]float64{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}}
}

func TestOCRDetection(t *testing.T) {
	care := func(p [][2]float64) OCRRegion { return OCRRegion{Points: p} }
	dc := func(p [][2]float64) OCRRegion { return OCRRegion{Points: p, DontCare: true} }
	img := func(gts, dets []OCRRegion) OCRImage { return OCRImage{gts, dets} }
	regs := func(r ...OCRRegion) []OCRRegion { return r }
	sq := care(rect(0, 0, 10, 10))
	perfect := img(regs(sq), regs(sq))
	cw := [][2]float64{{0, 0}, {0, 10}, {10, 10}, {10, 0}}
	// An L: the 10×10 square less its 5×5 top-right corner, area 75,
	// clockwise.
	ell := [][2]float64{{0, 10}, {5, 10}, {5, 5}, {10, 5}, {10, 0}, {0, 0}}
	line := [][2]float64{{0, 0}, {5, 5}, {10, 10}, {0, 0}}
	for _, tc := range []struct {
		images  []OCRImage
		p, r, h float64
		reason  string
	}{
		{[]OCRImage{perfect}, 1, 1, 1, "a perfect match"},
		{[]OCRImage{img(regs(sq), regs(care(cw)))}, 1, 1, 1, "a clockwise detection of the same square"},
		{[]OCRImage{img(regs(sq), regs(care(rect(5, 0, 10, 10))))}, 0, 0, 0, "IoU 50/150 = 1/3: below 0.5"},
		{[]OCRImage{img(regs(sq), regs(care(rect(0, 0, 10, 5))))}, 0, 0, 0, "IoU 50/100 = 0.5 exactly: not above the threshold"},
		{[]OCRImage{img(regs(sq), regs(care(rect(0, 0, 10, 5.001))))}, 1, 1, 1, "IoU 50.01/100: just above 0.5"},
		{[]OCRImage{img(regs(sq, dc(rect(50, 50, 10, 10))), regs(sq, care(rect(51, 51, 8, 8))))}, 1, 1, 1,
			"a detection inside a don't-care region is left out"},
		{[]OCRImage{img(regs(sq, dc(rect(50, 50, 10, 10))), regs(sq, care(rect(45, 50, 10, 10))))}, .5, 1, 2. / 3,
			"half of a detection in a don't-care region (0.5, not above it): a false positive"},
		{[]OCRImage{img(regs(sq, dc(rect(50, 50, 10, 10))), regs(sq, care(rect(46, 50, 10, 10))))}, 1, 1, 1,
			"60% of a detection in a don't-care region: left out"},
		{[]OCRImage{img(regs(sq, dc(rect(50, 50, 10, 10))), regs(sq, care(rect(50, 50, 10, 10))))}, 1, 1, 1,
			"a detection on a don't-care region matches nothing and counts nowhere"},
		{[]OCRImage{img(regs(sq, dc(rect(50, 50, 10, 10))), regs(sq))}, 1, 1, 1, "a missed don't-care region does not lower recall"},
		{[]OCRImage{img(regs(sq), regs(sq, sq))}, .5, 1, 2. / 3, "a duplicate detection is a false positive"},
		{[]OCRImage{img(regs(sq, care(rect(0, 4, 10, 10))), regs(care(rect(0, 2, 10, 10)), sq))}, .5, .5, .5,
			"one-to-one in order: ground truth 0 takes detection 0 (IoU 2/3), the first above the threshold, leaving detection 1 " +
				"(IoU 3/7 with ground truth 1) unmatched, where a best-IoU matching would pair both"},
		{[]OCRImage{perfect, img(nil, nil)}, 1, 1, 1, "an empty image adds nothing"},
		{[]OCRImage{img(nil, nil), img(nil, nil)}, 0, 0, 0, "only empty images: 0 over 0 is 0, hmean 0 (combine_results)"},
		{[]OCRImage{img(nil, regs(care(rect(0, 0, 1, 1))))}, 0, 0, 0, "no ground truth: recall 0 at method level, precision 0"},
		{[]OCRImage{img(regs(sq), nil)}, 0, 0, 0, "no detection: precision 0 (no cared-for detection), recall 0"},
		{[]OCRImage{perfect, img(regs(care(rect(20, 0, 5, 5)), care(rect(30, 0, 5, 5)), care(rect(40, 0, 5, 5))), regs(care(rect(100, 100, 5, 5))))},
			.5, .25, 1. / 3, "totals over images, not a mean of them: 1 match of 4 ground truths and 2 detections"},
		{[]OCRImage{img(regs(sq, care(line)), regs(sq, care(line)))}, 1, 1, 1, "zero-area polygons are skipped, as the reference skips invalid ones"},
		{[]OCRImage{img(regs(sq), regs(care([][2]float64{{0, 0}, {5, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 10}})))}, 1, 1, 1,
			"a point on an edge and a repeated point are allowed"},
		{[]OCRImage{img(regs(care(ell)), regs(sq))}, 1, 1, 1, "an L-shaped (concave) ground truth and its bounding box: IoU 75/100"},
		{[]OCRImage{img(regs(care(ell)), regs(care(rect(5, 5, 5, 5))))}, 0, 0, 0, "the box of the L's missing corner: intersection 0"},
		{[]OCRImage{img(regs(care(rect(0, 0, 10, 7))), regs(care([][2]float64{{0, 0}, {10, 0}, {5, 2}, {10, 10}, {0, 10}})))}, 0, 0, 0,
			"a concave detection (the square less the notch (10,0) (5,2) (10,10), area 75) on the bottom 10×7: intersection 70 − 22.1875, " +
				"IoU 47.8125/97.1875 ≈ 0.492, just below 0.5 (its convex hull would give 0.7)"},
		{[]OCRImage{img(regs(care(ell), dc(rect(20, 0, 10, 10))), regs(care(ell), care([][2]float64{{20, 0}, {30, 0}, {30, 10}, {25, 5}, {20, 10}})))}, 1, 1, 1,
			"a concave detection (an arrow notch, area 75) inside a don't-care region: left out"},
	} {
		got, err := OCRDetection(tc.images, 0, 0)
		if err != nil || !near(got.Precision, tc.p) || !near(got.Recall, tc.r) || !near(got.HMean, tc.h) {
			t.Errorf("%s: %+v, %v; want P %v R %v H %v", tc.reason, got, err, tc.p, tc.r, tc.h)
		}
	}
	// Other thresholds: IoU 1/3 matches above 0.3; 60% in a don't-care
	// region is kept below 0.7.
	if got, err := OCRDetection([]OCRImage{img(regs(sq), regs(care(rect(5, 0, 10, 10))))}, 0.3, 0); err != nil || got.Matched != 1 {
		t.Errorf("IoU 1/3 at threshold 0.3: %+v, %v; want a match", got, err)
	}
	if got, err := OCRDetection([]OCRImage{img(regs(sq, dc(rect(50, 50, 10, 10))), regs(sq, care(rect(46, 50, 10, 10))))}, 0, 0.7); err != nil || got.CareDet != 2 {
		t.Errorf("60%% in a don't-care region at 0.7: %+v, %v; want 2 cared-for detections", got, err)
	}
	nan := math.NaN()
	for _, tc := range []struct {
		im        OCRImage
		iou, area float64
		want      string
	}{
		{img(nil, regs(care([][2]float64{{0, 0}, {10, 10}, {10, 0}, {0, 10}}))), 0, 0, "images[0].detections[0]: the polygon crosses or touches itself"},
		{img(regs(care([][2]float64{{0, 0}, {10, 10}, {10, 0}, {0, 10}})), nil), 0, 0, "images[0].ground_truths[0]: the polygon crosses or touches itself"},
		{img(regs(care([][2]float64{{0, 10}, {6, -8}, {-10, 3}, {10, 3}, {-6, -8}})), nil), 0, 0, "ground_truths[0]: the polygon crosses or touches itself"},
		{img(regs(care(append(rect(0, 0, 1, 1), rect(0, 0, 1, 1)...))), nil), 0, 0, "ground_truths[0]: the polygon crosses or touches itself"},
		{img(regs(care([][2]float64{{0, 0}, {10, 0}, {10, 10}, {5, 0}, {0, 10}})), nil), 0, 0, "ground_truths[0]: the polygon crosses or touches itself"},
		{img(regs(care([][2]float64{{0, 0}, {10, 0}, {10, 10}, {10, 5}})), nil), 0, 0, "ground_truths[0]: the polygon folds back on itself at [10 10]"},
		{img(regs(sq, care([][2]float64{{0, 0}, {1, 1}})), nil), 0, 0, "images[0].ground_truths[1]: a polygon of 2 points"},
		{img(regs(sq), regs(care([][2]float64{{0, 0}, {nan, 1}, {1, 1}}))), 0, 0, "images[0].detections[0]: points[1] is [NaN 1]"},
		{perfect, nan, 0, "iou_threshold is NaN"},
		{perfect, 0, 1.5, "area_precision_threshold is 1.5"},
	} {
		if got, err := OCRDetection([]OCRImage{tc.im}, tc.iou, tc.area); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %+v, %v; want an error %q", tc.im, got, err, tc.want)
		}
	}
	if _, err := OCRDetection(nil, 0, 0); err == nil {
		t.Error("no images: no error")
	}
}

// TestOCRPolygonArea checks the intersection of a concave polygon with
// others against hand-worked areas.
func TestOCRPolygonArea(t *testing.T) {
	poly := func(p [][2]float64) ocrPolygon {
		t.Helper()
		q, ok, err := simplePolygon(p)
		if !ok || err != nil {
			t.Fatalf("%v: %v, %v", p, ok, err)
		}
		return q
	}
	// A U: the 30×20 box less the 10×10 notch at its top middle, area 500.
	u := poly([][2]float64{{0, 0}, {30, 0}, {30, 20}, {20, 20}, {20, 10}, {10, 10}, {10, 20}, {0, 20}})
	if u.area != 500 {
		t.Errorf("the U's area %v, want 500", u.area)
	}
	for _, tc := range []struct {
		other  [][2]float64
		want   float64
		reason string
	}{
		{rect(0, 0, 30, 20), 500, "the U in its bounding box"},
		{rect(10, 10, 10, 10), 0, "the notch"},
		{rect(5, 5, 20, 10), 150, "a bar across the notch: 200 less the notch's 50"},
		{[][2]float64{{0, 20}, {10, 20}, {10, 10}, {20, 10}, {20, 20}, {30, 20}, {30, 0}, {0, 0}}, 500, "the U with itself, clockwise"},
		{[][2]float64{{15, 0}, {15, 20}, {5, 20}, {5, 15}, {-5, 15}, {-5, 0}}, 225,
			"another concave polygon, clockwise: [0,15]² less the notch's 5×5, plus 5×5 of the U's left arm above it"},
	} {
		if got := intersectionArea(u, poly(tc.other)); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.reason, got, tc.want)
		}
	}
}

// TestOCRDetectionMatchesICDAR compares OCRDetection with the ICDAR 2015
// procedure as PaddleOCR's DetectionIoUEvaluator states it, restated in
// Python with shapely polygons (polygons that shapely deems invalid
// skipped, union by shapely), on random rotated quadrilaterals in either
// orientation, convex polygons of 5 to 8 points, concave star-shaped
// polygons and curved text bands (as Total-Text's), zero-area polygons
// and don't-care regions, at the default thresholds and at two others:
// every ground truth's and detection's area and their intersection
// within 1e-9 (relative), precision, recall and hmean within 1e-9, the
// same match count.
func TestOCRDetectionMatchesICDAR(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	quad := func(cx, cy, w, h, angle float64) [][2]float64 {
		var p [][2]float64
		for _, c := range [][2]float64{{-w / 2, -h / 2}, {w / 2, -h / 2}, {w / 2, h / 2}, {-w / 2, h / 2}} {
			s, co := math.Sin(angle), math.Cos(angle)
			p = append(p, [2]float64{cx + c[0]*co - c[1]*s, cy + c[0]*s + c[1]*co})
		}
		if rng.IntN(2) == 0 { // clockwise, as ICDAR files give them
			slices.Reverse(p)
		}
		return p
	}
	ngon := func(cx, cy, r float64) [][2]float64 { // convex: points on an ellipse
		n := 5 + rng.IntN(4)
		var p [][2]float64
		for i := range n {
			a := 2*math.Pi*float64(i)/float64(n) + rng.Float64()*0.5
			p = append(p, [2]float64{cx + r*math.Cos(a), cy + r*math.Sin(a)/2})
		}
		return p
	}
	// Concave shapes around the origin, rotated and placed by place.
	star := func(w, h float64) [][2]float64 { // n points on an ellipse, each pulled in by up to 40%
		n := 5 + rng.IntN(8)
		var p [][2]float64
		for i := range n {
			a, f := 2*math.Pi*float64(i)/float64(n), 1-0.4*rng.Float64()
			p = append(p, [2]float64{f * w / 2 * math.Cos(a), f * h / 2 * math.Sin(a)})
		}
		return p
	}
	band := func(w, h float64) [][2]float64 { // k points on an arc of radius r, k back on one of r − h, over up to 3 radians
		k, span := 3+rng.IntN(6), 0.5+2.5*rng.Float64()
		r := max(w/span, h*1.5)
		var p [][2]float64
		for i := range 2 * k {
			rr, f := r, float64(i)/float64(k-1)
			if i >= k {
				rr, f = r-h, float64(2*k-1-i)/float64(k-1)
			}
			a := math.Pi/2 + span/2 - span*f
			p = append(p, [2]float64{rr * math.Cos(a), rr*math.Sin(a) - r})
		}
		return p
	}
	place := func(shape [][2]float64, cx, cy, sx, sy, angle float64) [][2]float64 {
		s, co := math.Sin(angle), math.Cos(angle)
		var p [][2]float64
		for _, c := range shape {
			x, y := c[0]*sx, c[1]*sy
			p = append(p, [2]float64{cx + x*co - y*s, cy + x*s + y*co})
		}
		if rng.IntN(2) == 0 {
			slices.Reverse(p)
		}
		return p
	}
	var images []OCRImage
	for range 60 {
		var im OCRImage
		for range rng.IntN(6) {
			cx, cy, w, h, a := float64(rng.IntN(300)), float64(rng.IntN(300)), float64(20+rng.IntN(80)), float64(8+rng.IntN(30)), rng.Float64()-0.5
			g := quad(cx, cy, w, h, a)
			var concave [][2]float64
			switch rng.IntN(8) {
			case 0:
				g = ngon(cx, cy, w/2)
			case 1, 2:
				concave = star(w, h*2)
			case 3, 4:
				concave = band(w, h)
			}
			if concave != nil {
				g = place(concave, cx, cy, 1, 1, a)
			}
			im.GroundTruths = append(im.GroundTruths, OCRRegion{Points: g, DontCare: rng.IntN(6) == 0})
			for range rng.IntN(3) {
				j := func(s float64) float64 { return rng.NormFloat64() * s }
				if concave != nil {
					im.Detections = append(im.Detections, OCRRegion{Points: place(concave, cx+j(w/12), cy+j(h/10), 1+j(0.1), 1+j(0.1), a+j(0.03))})
					continue
				}
				d := quad(cx+j(w/12), cy+j(h/10), w*(1+j(0.1)), h*(1+j(0.1)), a+j(0.03))
				if rng.IntN(8) == 0 {
					d = ngon(cx+j(w/12), cy+j(h/10), w/2*(1+j(0.1)))
				}
				im.Detections = append(im.Detections, OCRRegion{Points: d})
			}
		}
		for range rng.IntN(2) {
			im.Detections = append(im.Detections, OCRRegion{Points: quad(float64(rng.IntN(300)), float64(rng.IntN(300)), 30, 10, 0)})
		}
		if rng.IntN(10) == 0 { // a collapsed box, skipped
			x := float64(rng.IntN(300))
			im.Detections = append(im.Detections, OCRRegion{Points: [][2]float64{{x, 5}, {x + 10, 5}, {x + 20, 5}, {x, 5}}})
		}
		images = append(images, im)
	}
	thresholds := [][2]float64{{0.5, 0.5}, {0.3, 0.7}, {0.7, 0.2}}
	const program = `
import json, sys
from shapely.geometry import Polygon
def valid(p): return p.is_valid and p.is_simple
def inter(a, b): return Polygon(a).intersection(Polygon(b)).area
out = []
inp = json.load(sys.stdin)
areas = []
for im in inp["images"]:
    gs = [Polygon(g["points"]) for g in im["ground_truths"] or []]
    ds = [Polygon(d["points"]) for d in im["detections"] or []]
    areas += [[g.area, d.area, g.intersection(d).area] for g in gs if valid(g) for d in ds if valid(d)]
for iou_c, area_c in inp["thresholds"]:
    matched = care_gt = care_det = 0
    for im in inp["images"]:
        gts, dc = [], []
        for g in im["ground_truths"] or []:
            if not valid(Polygon(g["points"])): continue
            gts.append(g["points"])
            if g["dont_care"]: dc.append(len(gts) - 1)
        dets, det_dc = [], []
        for d in im["detections"] or []:
            if not valid(Polygon(d["points"])): continue
            dets.append(d["points"])
            for i in dc:
                a = Polygon(d["points"]).area
                p = 0 if a == 0 else inter(gts[i], d["points"]) / a
                if p > area_c:
                    det_dc.append(len(dets) - 1); break
        gm = [0] * len(gts); dm = [0] * len(dets); m = 0
        for i, g in enumerate(gts):
            for j, d in enumerate(dets):
                if gm[i] == 0 and dm[j] == 0 and i not in dc and j not in det_dc:
                    iou = inter(d, g) / Polygon(d).union(Polygon(g)).area
                    if iou > iou_c:
                        gm[i] = dm[j] = 1; m += 1
        matched += m; care_gt += len(gts) - len(dc); care_det += len(dets) - len(det_dc)
    r = 0 if care_gt == 0 else matched / care_gt
    p = 0 if care_det == 0 else matched / care_det
    h = 0 if r + p == 0 else 2 * r * p / (r + p)
    out.append({"precision": p, "recall": r, "hmean": h, "matched": matched})
print(json.dumps({"results": out, "areas": areas}))
`
	var ref struct {
		Results []struct {
			Precision, Recall, HMean float64
			Matched                  int
		}
		Areas [][3]float64 // area(g), area(d), area(g ∩ d)
	}
	pyRef(t, program, map[string]any{"images": images, "thresholds": thresholds}, &ref)
	var k, concave int
	for _, im := range images {
		for _, g := range im.GroundTruths {
			pg, okg, _ := simplePolygon(g.Points)
			if len(pg.pieces) > 1 {
				concave++
			}
			for _, d := range im.Detections {
				pd, okd, _ := simplePolygon(d.Points)
				if !okg || !okd {
					continue
				}
				w := ref.Areas[k]
				k++
				if got := intersectionArea(pg, pd); math.Abs(pg.area-w[0]) > 1e-9*w[0] || math.Abs(pd.area-w[1]) > 1e-9*w[1] || math.Abs(got-w[2]) > 1e-9*max(w[0], w[1]) {
					t.Fatalf("%v and %v: areas %v, %v, intersection %v; shapely %v", g.Points, d.Points, pg.area, pd.area, got, w)
				}
			}
		}
	}
	if k != len(ref.Areas) || concave < 20 {
		t.Fatalf("%d pairs, shapely %d; %d concave ground truths", k, len(ref.Areas), concave)
	}
	for i, th := range thresholds {
		w := ref.Results[i]
		if w.Matched == 0 || w.Precision == 1 || w.Recall == 1 {
			t.Fatalf("the random images test nothing: %+v", w)
		}
		got, err := OCRDetection(images, th[0], th[1])
		if err != nil || got.Matched != w.Matched || !near(got.Precision, w.Precision) || !near(got.Recall, w.Recall) || !near(got.HMean, w.HMean) {
			t.Errorf("thresholds %v: OCRDetection %+v, %v; ICDAR with shapely %+v", th, got, err, w)
		}
	}
}

func TestOCRScoreJSON(t *testing.T) {
	out, err := ScoreJSON("ocr-det", []byte(`{"iou_threshold":0.5,"area_precision_threshold":0.5,"images":[{"ground_truths":[{"points":[[0,0],[10,0],[10,10],[0,10]],"dont_care":false},
		{"points":[[50,50],[60,50],[60,60],[50,60]],"dont_care":true}],"detections":[{"points":[[0,0],[10,0],[10,10],[0,10]]},{"points":[[50,50],[60,50],[60,60],[50,60]]},{"points":[[90,90],[95,90],[95,95]]}]}]}`))
	if r, ok := out.(OCRResult); err != nil || !ok || r.Recall != 1 || r.Precision != .5 || r.Matched != 1 || r.CareGT != 1 || r.CareDet != 2 {
		t.Errorf("ocr-det: %+v, %v; want recall 1, precision 1/2 (a don't-care detection left out, a triangle a false positive)", out, err)
	}
	for _, tc := range []struct{ input, want string }{
		{`{"images":[{"detections":[{"points":[[0,0]]}]}]}`, "images[0].detections[0]: a polygon of 1 points"},
		{`{"images":[{},{"ground_truths":[{"points":[[0,0],[1,0],[1,1,1]]}]}]}`, "images[1].ground_truths[0].points[2] has 3 values, want 2"},
		{`{"images":[{"detections":[{"points":[[0,0],[1,0],[1]]}]}]}`, "images[0].detections[0].points[2] has 1 values, want 2"},
		{`{"iou_threshold":-0.1,"images":[{}]}`, "iou_threshold is -0.1"},
	} {
		if out, err := ScoreJSON("ocr-det", []byte(tc.input)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v, %v; want an error %q", tc.input, out, err, tc.want)
		}
	}
}
