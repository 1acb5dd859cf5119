package accuracy

import (
	"errors"
	"fmt"
	"math"
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
// cared-for ground truths, precision over the cared-for detections (0
// when there are none), hmean their harmonic mean, all over every image.
// Polygons must be convex (rectangles and ordinary quadrilaterals are);
// intersections are computed exactly by clipping.
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
	var r OCRResult
	for i, im := range images {
		gts := make([][][2]float64, len(im.GroundTruths))
		for j, g := range im.GroundTruths {
			p, err := convexCCW(g.Points)
			if err != nil {
				return OCRResult{}, fmt.Errorf("images[%d].ground_truths[%d]: %w", i, j, err)
			}
			gts[j] = p
		}
		dets := make([][][2]float64, len(im.Detections))
		detDontCare := make([]bool, len(im.Detections))
		for j, d := range im.Detections {
			p, err := convexCCW(d.Points)
			if err != nil {
				return OCRResult{}, fmt.Errorf("images[%d].detections[%d]: %w", i, j, err)
			}
			dets[j] = p
			area := polyArea(p)
			for k, g := range im.GroundTruths {
				if !g.DontCare {
					continue
				}
				prec := 0.0
				if area > 0 {
					prec = polyArea(clipConvex(p, gts[k])) / area
				}
				if prec > areaPrecision {
					detDontCare[j] = true
					break
				}
			}
		}
		gtMatched := make([]bool, len(gts))
		detMatched := make([]bool, len(dets))
		matched := 0
		for g := range gts {
			for d := range dets {
				if gtMatched[g] || detMatched[d] || im.GroundTruths[g].DontCare || detDontCare[d] {
					continue
				}
				if polyIoU(dets[d], gts[g]) > iouThreshold {
					gtMatched[g], detMatched[d] = true, true
					matched++
				}
			}
		}
		for _, g := range im.GroundTruths {
			if !g.DontCare {
				r.CareGT++
			}
		}
		for _, dc := range detDontCare {
			if !dc {
				r.CareDet++
			}
		}
		r.Matched += matched
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

// convexCCW checks that points form a convex polygon of 3 or more finite
// points and returns it counter-clockwise.
func convexCCW(points [][2]float64) ([][2]float64, error) {
	if len(points) < 3 {
		return nil, fmt.Errorf("a polygon of %d points, want 3 or more", len(points))
	}
	for k, p := range points {
		for _, x := range p {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("points[%d] is %v, want finite coordinates", k, p)
			}
		}
	}
	n := len(points)
	sign := 0
	for i := range n {
		a, b, c := points[i], points[(i+1)%n], points[(i+2)%n]
		cross := (b[0]-a[0])*(c[1]-b[1]) - (b[1]-a[1])*(c[0]-b[0])
		switch {
		case cross > 0:
			if sign < 0 {
				return nil, errors.New("the polygon is not convex (only convex polygons are supported)")
			}
			sign = 1
		case cross < 0:
			if sign > 0 {
				return nil, errors.New("the polygon is not convex (only convex polygons are supported)")
			}
			sign = -1
		}
	}
	out := append([][2]float64(nil), points...)
	if sign < 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
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
