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
// be simple, convex (the quadrilaterals of ICDAR 2015) or concave (the
// curved text polygons of Total-Text or CTW1500): intersections are
// computed exactly up to float rounding, by clipping (Sutherland–Hodgman)
// for two convex polygons, else as the signed sum over the fan triangles
// of the concave ones. A self-crossing or twice-winding polygon, or one
// whose edges touch away from their shared points, is an error, whereas
// the reference would skip it as shapely-invalid. A zero-area polygon (its
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
		var gts []ocrPolygon
		var gtDontCare []bool
		for j, g := range im.GroundTruths {
			p, ok, err := simplePolygon(g.Points)
			if err != nil {
				return OCRResult{}, fmt.Errorf("images[%d].ground_truths[%d]: %w", i, j, err)
			}
			if ok {
				gts = append(gts, p)
				gtDontCare = append(gtDontCare, g.DontCare)
			}
		}
		var dets []ocrPolygon
		var detDontCare []bool
		for j, d := range im.Detections {
			p, ok, err := simplePolygon(d.Points)
			if err != nil {
				return OCRResult{}, fmt.Errorf("images[%d].detections[%d]: %w", i, j, err)
			}
			if !ok {
				continue
			}
			dc := false
			for k, g := range gts {
				if gtDontCare[k] && intersectionArea(g, p)/p.area > areaPrecision {
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
				if ocrIoU(dets[d], gts[g]) > iouThreshold {
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

// ocrPolygon is a checked simple polygon of positive area: its area and
// its convex pieces with their signs (the polygon itself when convex,
// else its fan triangles from its first point), whose signed indicator
// functions sum to the polygon's.
type ocrPolygon struct {
	area   float64
	pieces []signedPiece
}

type signedPiece struct {
	sign float64
	pts  [][2]float64 // convex, counter-clockwise
}

// orient2d is the z component of (b − a) × (c − a): positive when a, b,
// c turn counter-clockwise.
func orient2d(a, b, c [2]float64) float64 {
	return float64((b[0]-a[0])*(c[1]-a[1])) - float64((b[1]-a[1])*(c[0]-a[0]))
}

// simplePolygon checks a region's points (3 or more, finite) and returns
// the polygon without repeated consecutive points, or ok false when every
// point lies on one line (zero area), a polygon that shapely deems
// invalid and the reference skips. A polygon with an edge folding back
// over the previous one, or with two edges that meet anywhere but at
// their shared point (a self-crossing or twice-winding polygon), is an
// error.
func simplePolygon(points [][2]float64) (poly ocrPolygon, ok bool, err error) {
	if len(points) < 3 {
		return poly, false, fmt.Errorf("a polygon of %d points, want 3 or more", len(points))
	}
	for k, p := range points {
		for _, x := range p {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return poly, false, fmt.Errorf("points[%d] is %v, want finite coordinates", k, p)
			}
		}
	}
	var pts [][2]float64
	for _, p := range points {
		if len(pts) == 0 || p != pts[len(pts)-1] {
			pts = append(pts, p)
		}
	}
	for len(pts) > 1 && pts[0] == pts[len(pts)-1] {
		pts = pts[:len(pts)-1]
	}
	collinear := true
	for _, p := range pts[min(2, len(pts)):] {
		if orient2d(pts[0], pts[1], p) != 0 {
			collinear = false
			break
		}
	}
	if len(pts) < 3 || collinear {
		return poly, false, nil
	}
	n := len(pts)
	for a := range n {
		o, p, q := pts[(a+n-1)%n], pts[a], pts[(a+1)%n]
		if orient2d(o, p, q) == 0 && float64((o[0]-p[0])*(q[0]-p[0]))+float64((o[1]-p[1])*(q[1]-p[1])) > 0 {
			return poly, false, fmt.Errorf("the polygon folds back on itself at %v (only simple polygons are supported)", p)
		}
	}
	for a := range n {
		for b := a + 2; b < n; b++ {
			if a == 0 && b == n-1 {
				continue // adjacent through the closing edge
			}
			if segmentsMeet(pts[a], pts[(a+1)%n], pts[b], pts[(b+1)%n]) {
				return poly, false, errors.New("the polygon crosses or touches itself (only simple polygons are supported)")
			}
		}
	}
	var twice float64 // twice the signed area
	for k := range pts {
		twice += orient2d([2]float64{}, pts[k], pts[(k+1)%n])
	}
	if twice < 0 {
		slices.Reverse(pts)
	}
	poly.area = math.Abs(twice) / 2
	convex := true
	for k := range pts {
		if orient2d(pts[k], pts[(k+1)%n], pts[(k+2)%n]) < 0 {
			convex = false
			break
		}
	}
	if convex {
		poly.pieces = []signedPiece{{1, pts}}
		return poly, true, nil
	}
	for k := 1; k+1 < n; k++ {
		t := [][2]float64{pts[0], pts[k], pts[k+1]}
		switch c := orient2d(t[0], t[1], t[2]); {
		case c > 0:
			poly.pieces = append(poly.pieces, signedPiece{1, t})
		case c < 0:
			t[1], t[2] = t[2], t[1]
			poly.pieces = append(poly.pieces, signedPiece{-1, t})
		}
	}
	return poly, true, nil
}

// segmentsMeet reports whether the closed segments pq and rs share a
// point.
func segmentsMeet(p, q, r, s [2]float64) bool {
	d1, d2 := orient2d(r, s, p), orient2d(r, s, q)
	d3, d4 := orient2d(p, q, r), orient2d(p, q, s)
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		return true
	}
	on := func(a, b, c [2]float64) bool { // c on segment ab, given collinear
		return min(a[0], b[0]) <= c[0] && c[0] <= max(a[0], b[0]) && min(a[1], b[1]) <= c[1] && c[1] <= max(a[1], b[1])
	}
	return (d1 == 0 && on(r, s, p)) || (d2 == 0 && on(r, s, q)) || (d3 == 0 && on(p, q, r)) || (d4 == 0 && on(p, q, s))
}

// intersectionArea is the area of a ∩ b: the signed sum, over pairs of
// their convex pieces, of the pieces' clipped areas.
func intersectionArea(a, b ocrPolygon) float64 {
	var s float64
	for _, pa := range a.pieces {
		for _, pb := range b.pieces {
			s += float64(pa.sign * pb.sign * polyArea(clipConvex(pa.pts, pb.pts)))
		}
	}
	return max(s, 0)
}

// ocrIoU is the script's IoU of a detection and a ground truth: the
// intersection over area(d) + area(g) − intersection, 0 when that is 0.
func ocrIoU(d, g ocrPolygon) float64 {
	inter := intersectionArea(d, g)
	union := d.area + g.area - inter
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
		s += float64(p[i][0]*p[j][1]) - float64(p[j][0]*p[i][1])
	}
	return math.Abs(s) / 2
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
		in := out
		out = nil
		for j := range in {
			p, q := in[j], in[(j+1)%len(in)]
			sp, sq := orient2d(a, b, p), orient2d(a, b, q)
			if sp >= 0 {
				out = append(out, p)
			}
			if (sp >= 0) != (sq >= 0) {
				t := sp / (sp - sq)
				out = append(out, [2]float64{p[0] + float64(t*(q[0]-p[0])), p[1] + float64(t*(q[1]-p[1]))})
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
