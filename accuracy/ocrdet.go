package accuracy

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// OCRRegion is a text region: a polygon of [x, y] points; a ground
// truth marked DontCare ("###" in ICDAR files) is neither required nor
// counted.
type OCRRegion struct {
	Points   [][2]float64 `json:"points"`
	DontCare bool         `json:"dont_care"`
}

// OCRImage is one image's ground truths and detections.
type OCRImage struct {
	GroundTruths []OCRRegion `json:"ground_truths"`
	Detections   []OCRRegion `json:"detections"`
}

// OCRResult is the method-level result of the ICDAR 2015 evaluation, on a
// 0–1 scale.
type OCRResult struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	HMean     float64 `json:"hmean"`
	Matched   int     `json:"matched"`
	CareGT    int     `json:"care_ground_truths"`
	CareDet   int     `json:"care_detections"`
}

// OCRDetection evaluates text detection as the ICDAR 2015 Robust Reading
// Challenge 4.1 script (and PaddleOCR's DetectionIoUEvaluator, its
// restatement): a detection whose intersection with a don't-care ground
// truth exceeds areaPrecision (0.5 when 0) of its own area is left out;
// then ground truths and detections are matched one to one in order (the
// first free detection of each free ground truth, neither don't-care) at
// IoU above iouThreshold (0.5 when 0); recall is the matches over the
// cared-for ground truths, precision over the cared-for detections, both
// totals over every image (not a mean of images), 0 when the denominator
// is 0, and hmean 2PR/(P+R), 0 when P+R is 0 (the reference's
// combine_results). IoU is the intersection over areaA + areaB −
// intersection, the ICDAR script's union.
//
// Polygons are given by 3 or more points in either orientation and must
// be convex (rectangles and the ordinary quadrilaterals of ICDAR 2015
// are), where intersections are computed exactly by clipping (Sutherland–
// Hodgman, up to float rounding); a concave, self-crossing or
// twice-winding polygon is an error, whereas the reference would evaluate
// a concave one or skip a self-crossing one. A zero-area polygon (its
// points on one line) is skipped, neither ground truth nor detection, as
// the reference skips polygons that shapely deems invalid. Fewer than 3
// points or a non-finite coordinate is an error naming the image and the
// entry, as is a threshold outside [0, 1].
func OCRDetection(images []OCRImage, iouThreshold, areaPrecision float64) (OCRResult, error) {
	if iouThreshold == 0 {
		iouThreshold = 0.5
	}
	if areaPrecision == 0 {
		areaPrecision = 0.5
	}
	if len(images) == 0 {
		return OCRResult{}, errors.New("no images to score")
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"iou_threshold", iouThreshold}, {"area_precision_threshold", areaPrecision}} {
		if !(x.v >= 0 && x.v <= 1) {
			return OCRResult{}, fmt.Errorf("%s is %v, want a number in [0, 1] (0: 0.5)", x.name, x.v)
		}
	}
	var r OCRResult
	for i, im := range images {
		// The image's valid polygons, in order, as the reference's gtPols
		// and detPols: a zero-area polygon is skipped.
		var gts [][][2]float64
		var gtDontCare []bool
		for j, g := range im.GroundTruths {
			p, ok, err := convexPolygon(g.Points)
			if err != nil {
				return OCRResult{}, fmt.Errorf("images[%d].ground_truths[%d]: %w", i, j, err)
			}
			if ok {
				gts = append(gts, p)
				gtDontCare = append(gtDontCare, g.DontCare)
			}
		}
		var dets [][][2]float64
		var detDontCare []bool
		for j, d := range im.Detections {
			p, ok, err := convexPolygon(d.Points)
			if err != nil {
				return OCRResult{}, fmt.Errorf("images[%d].detections[%d]: %w", i, j, err)
			}
			if !ok {
				continue
			}
			dc := false
			area := polyArea(p)
			for k, g := range gts {
				if gtDontCare[k] && polyArea(clipConvex(g, p))/area > areaPrecision {
					dc = true
					break
				}
			}
			dets = append(dets, p)
			detDontCare = append(detDontCare, dc)
		}
		gtMatched := make([]bool, len(gts))
		detMatched := make([]bool, len(dets))
		for g := range gts {
			for d := range dets {
				if gtMatched[g] || detMatched[d] || gtDontCare[g] || detDontCare[d] {
					continue
				}
				if polyIoU(dets[d], gts[g]) > iouThreshold {
					gtMatched[g], detMatched[d] = true, true
					r.Matched++
				}
			}
		}
		for _, dc := range gtDontCare {
			if !dc {
				r.CareGT++
			}
		}
		for _, dc := range detDontCare {
			if !dc {
				r.CareDet++
			}
		}
	}
	if r.CareGT > 0 {
		r.Recall = float64(r.Matched) / float64(r.CareGT)
	}
	if r.CareDet > 0 {
		r.Precision = float64(r.Matched) / float64(r.CareDet)
	}
	if r.Recall+r.Precision > 0 {
		r.HMean = 2 * r.Recall * r.Precision / (r.Recall + r.Precision)
	}
	return r, nil
}

// polyIoU is the intersection over union of two convex polygons; 0 when
// the union is empty.
func polyIoU(a, b [][2]float64) float64 {
	inter := polyArea(clipConvex(a, b))
	union := polyArea(a) + polyArea(b) - inter
	if union <= 0 {
		return 0
	}
	return inter / union
}

// polyArea is the absolute shoelace area.
func polyArea(p [][2]float64) float64 {
	var s float64
	for i := range p {
		j := (i + 1) % len(p)
		s += p[i][0]*p[j][1] - p[j][0]*p[i][1]
	}
	return math.Abs(s) / 2
}

// convexPolygon checks a region's points (3 or more, finite) and returns
// the polygon counter-clockwise without repeated consecutive points, or
// ok false when every point lies on one line (zero area), a polygon
// that shapely deems invalid and the reference skips. A polygon that is
// not convex, crosses itself or winds more than once is an error.
func convexPolygon(points [][2]float64) (poly [][2]float64, ok bool, err error) {
	if len(points) < 3 {
		return nil, false, fmt.Errorf("a polygon of %d points, want 3 or more", len(points))
	}
	for k, p := range points {
		for _, x := range p {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, false, fmt.Errorf("points[%d] is %v, want finite coordinates", k, p)
			}
		}
	}
	for _, p := range points {
		if len(poly) == 0 || p != poly[len(poly)-1] {
			poly = append(poly, p)
		}
	}
	for len(poly) > 1 && poly[0] == poly[len(poly)-1] {
		poly = poly[:len(poly)-1]
	}
	collinear := true
	for _, p := range poly[min(2, len(poly)):] {
		a, b := poly[0], poly[1]
		if (b[0]-a[0])*(p[1]-a[1])-(b[1]-a[1])*(p[0]-a[0]) != 0 {
			collinear = false
		}
	}
	if len(poly) < 3 || collinear {
		return nil, false, nil
	}
	notConvex := errors.New("the polygon is not a simple convex one (only convex polygons are supported)")
	var twice float64 // twice the signed area
	for i := range poly {
		j := (i + 1) % len(poly)
		twice += poly[i][0]*poly[j][1] - poly[j][0]*poly[i][1]
	}
	if twice == 0 { // a figure of eight
		return nil, false, notConvex
	}
	if twice < 0 {
		slices.Reverse(poly)
	}
	n := len(poly)
	var turning float64
	for i := range n {
		a, b, c := poly[i], poly[(i+1)%n], poly[(i+2)%n]
		e := [2]float64{b[0] - a[0], b[1] - a[1]}
		// Every vertex on the left of (or on) every edge, up to rounding.
		for _, p := range poly {
			d := [2]float64{p[0] - a[0], p[1] - a[1]}
			if e[0]*d[1]-e[1]*d[0] < -1e-12*math.Hypot(e[0], e[1])*math.Hypot(d[0], d[1]) {
				return nil, false, notConvex
			}
		}
		f := [2]float64{c[0] - b[0], c[1] - b[1]}
		turning += math.Atan2(e[0]*f[1]-e[1]*f[0], e[0]*f[0]+e[1]*f[1])
	}
	if math.Abs(turning-2*math.Pi) > 1 { // winds once: 2π, not 4π or more
		return nil, false, notConvex
	}
	return poly, true, nil
}

// clipConvex is the intersection of convex counter-clockwise polygons
// subject and clip (Sutherland–Hodgman).
func clipConvex(subject, clip [][2]float64) [][2]float64 {
	out := subject
	for i := range clip {
		if len(out) == 0 {
			break
		}
		a, b := clip[i], clip[(i+1)%len(clip)]
		side := func(p [2]float64) float64 { return (b[0]-a[0])*(p[1]-a[1]) - (b[1]-a[1])*(p[0]-a[0]) }
		in := out
		out = nil
		for j := range in {
			p, q := in[j], in[(j+1)%len(in)]
			sp, sq := side(p), side(q)
			if sp >= 0 {
				out = append(out, p)
			}
			if (sp >= 0) != (sq >= 0) {
				t := sp / (sp - sq)
				out = append(out, [2]float64{p[0] + t*(q[0]-p[0]), p[1] + t*(q[1]-p[1])})
			}
		}
	}
	return out
}

// ocrInput is the ocr-det metric's JSON input: points as [x, y] arrays,
// checked here because a JSON array decodes into [2]float64 silently
// padded or cut.
type ocrInput struct {
	IoUThreshold           float64 `json:"iou_threshold"`
	AreaPrecisionThreshold float64 `json:"area_precision_threshold"`
	Images                 []struct {
		GroundTruths []ocrJSRegion `json:"ground_truths"`
		Detections   []ocrJSRegion `json:"detections"`
	} `json:"images"`
}

type ocrJSRegion struct {
	Points   [][]float64 `json:"points"`
	DontCare bool        `json:"dont_care"`
}

// ocrImages checks and converts the JSON images.
func (in ocrInput) ocrImages() ([]OCRImage, error) {
	regions := func(i int, field string, rs []ocrJSRegion) ([]OCRRegion, error) {
		out := make([]OCRRegion, len(rs))
		for j, r := range rs {
			out[j].DontCare = r.DontCare
			out[j].Points = make([][2]float64, len(r.Points))
			for k, p := range r.Points {
				if len(p) != 2 {
					return nil, fmt.Errorf("images[%d].%s[%d].points[%d] has %d values, want 2 (x, y)", i, field, j, k, len(p))
				}
				out[j].Points[k] = [2]float64(p)
			}
		}
		return out, nil
	}
	out := make([]OCRImage, len(in.Images))
	for i, im := range in.Images {
		var err error
		if out[i].GroundTruths, err = regions(i, "ground_truths", im.GroundTruths); err != nil {
			return nil, err
		}
		if out[i].Detections, err = regions(i, "detections", im.Detections); err != nil {
			return nil, err
		}
	}
	return out, nil
}
