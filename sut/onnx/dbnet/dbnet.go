// Package dbnet is the pre- and post-processing of a DB (differentiable
// binarization) text detector, as PaddleOCR's PP-OCR detection models
// expect them: Preprocess resizes an image to multiples of 32 and
// normalises it into a CHW float32 tensor; Boxes binarises the model's
// probability map, finds the text regions, scores them and expands them
// into boxes on the original image (PaddleOCR's DBPostProcess). It is pure
// Go, so that it is tested without ONNX Runtime; package sut/onnx runs the
// model between the two.
package dbnet

import (
	"fmt"
	"image"
	"math"
	"sort"
)

// Options are PaddleOCR's detection settings. The zero value of each field
// means PaddleOCR's default.
type Options struct {
	// LimitSideLen is the longest side after resizing; an image whose
	// longest side is larger is scaled down. 0 means 960.
	LimitSideLen int
	// Thresh binarises the probability map; 0 means 0.3.
	Thresh float32
	// BoxThresh is the least mean probability inside a region kept as a
	// box; 0 means 0.6.
	BoxThresh float32
	// UnclipRatio expands each box by area × ratio / perimeter on every
	// side; 0 means 1.5.
	UnclipRatio float64
	// MinSize is the least short side of a box, in map pixels; 0 means 3.
	MinSize float64
	// MaxCandidates bounds the regions considered; 0 means 1000.
	MaxCandidates int
}

func (o Options) withDefaults() Options {
	if o.LimitSideLen == 0 {
		o.LimitSideLen = 960
	}
	if o.Thresh == 0 {
		o.Thresh = 0.3
	}
	if o.BoxThresh == 0 {
		o.BoxThresh = 0.6
	}
	if o.UnclipRatio == 0 {
		o.UnclipRatio = 1.5
	}
	if o.MinSize == 0 {
		o.MinSize = 3
	}
	if o.MaxCandidates == 0 {
		o.MaxCandidates = 1000
	}
	return o
}

// Quad is a box: four [x, y] corners.
type Quad = [4][2]float32

// InputSize returns the tensor size of an image of w×h pixels: both sides
// scaled by one factor so that the longer is at most limit (0: 960), then
// rounded to a multiple of 32 (at least 32).
func InputSize(w, h int, o Options) (tw, th int) {
	o = o.withDefaults()
	ratio := 1.0
	if m := max(w, h); m > o.LimitSideLen {
		ratio = float64(o.LimitSideLen) / float64(m)
	}
	round := func(v int) int {
		r := int(math.Round(float64(v)*ratio/32)) * 32
		return max(r, 32)
	}
	return round(w), round(h)
}

// Mean and Std are the ImageNet normalisation of PaddleOCR's detector, in
// its channel order (BGR: OpenCV reads images so).
var (
	Mean = [3]float32{0.485, 0.456, 0.406}
	Std  = [3]float32{0.229, 0.224, 0.225}
)

// Preprocess writes img, resized (bilinear) to tw×th, as a normalised
// 3×th×tw tensor in BGR channel order into dst, which must hold 3·tw·th
// values.
func Preprocess(img *image.RGBA, tw, th int, dst []float32) error {
	if len(dst) != 3*tw*th {
		return fmt.Errorf("dbnet: the input tensor holds %d values, want 3×%d×%d", len(dst), th, tw)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w == 0 || h == 0 {
		return fmt.Errorf("dbnet: empty image")
	}
	var scale, shift [3]float32
	for c := range 3 {
		scale[c] = 1 / (255 * Std[c])
		shift[c] = -Mean[c] / Std[c]
	}
	plane := tw * th
	// BGR: tensor channel c is the image's channel 2-c.
	if w == tw && h == th {
		for y := range th {
			row := img.Pix[(y)*img.Stride:]
			for x := range tw {
				p := row[4*x : 4*x+3]
				k := y*tw + x
				dst[k] = float32(p[2])*scale[0] + shift[0]
				dst[plane+k] = float32(p[1])*scale[1] + shift[1]
				dst[2*plane+k] = float32(p[0])*scale[2] + shift[2]
			}
		}
		return nil
	}
	sx, sy := float64(w)/float64(tw), float64(h)/float64(th)
	for y := range th {
		fy := (float64(y)+0.5)*sy - 0.5
		y0 := int(math.Floor(fy))
		wy := float32(fy - float64(y0))
		y0c, y1c := clampInt(y0, 0, h-1), clampInt(y0+1, 0, h-1)
		for x := range tw {
			fx := (float64(x)+0.5)*sx - 0.5
			x0 := int(math.Floor(fx))
			wx := float32(fx - float64(x0))
			x0c, x1c := clampInt(x0, 0, w-1), clampInt(x0+1, 0, w-1)
			k := y*tw + x
			for c := range 3 {
				at := func(xx, yy int) float32 { return float32(img.Pix[yy*img.Stride+4*xx+2-c]) }
				v := (at(x0c, y0c)*(1-wx)+at(x1c, y0c)*wx)*(1-wy) + (at(x0c, y1c)*(1-wx)+at(x1c, y1c)*wx)*wy
				dst[c*plane+k] = v*scale[c] + shift[c]
			}
		}
	}
	return nil
}

func clampInt(v, lo, hi int) int { return min(hi, max(lo, v)) }

// Boxes finds the text boxes in a probability map of mw×mh values (the
// model's output for one image, row-major) and returns them in the
// coordinates of the original w×h image, each clockwise from its top-left
// corner, ordered top to bottom, then left to right. It follows PaddleOCR's
// DBPostProcess (box_type "quad", score_mode "fast"): binarise at Thresh;
// take each 8-connected region (the regions of OpenCV's outer contours);
// its minimum-area rectangle; drop it if its short side is under MinSize
// or its mean probability under BoxThresh; expand it by area × UnclipRatio
// / perimeter on every side (the minimum-area rectangle of pyclipper's
// rounded offset of a rectangle); drop it if its short side is then under
// MinSize + 2; scale it to the image.
func Boxes(prob []float32, mw, mh, w, h int, o Options) ([]Quad, error) {
	if len(prob) != mw*mh {
		return nil, fmt.Errorf("dbnet: the probability map holds %d values, want %d×%d", len(prob), mh, mw)
	}
	o = o.withDefaults()
	n := mw * mh
	label := make([]int32, n)
	for i, p := range prob {
		if p > o.Thresh {
			label[i] = -1 // foreground, not yet labelled
		}
	}
	var boxes []Quad
	stack := make([]int32, 0, 256)
	var pts [][2]float64
	regions := 0
	for start := range n {
		if label[start] != -1 {
			continue
		}
		regions++
		if regions > o.MaxCandidates {
			break
		}
		// Flood fill one 8-connected region, keeping its boundary pixels
		// (those with a background 4-neighbour), whose hull is the hull
		// of the region.
		pts = pts[:0]
		label[start] = int32(regions)
		stack = append(stack[:0], int32(start))
		for len(stack) > 0 {
			p := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			x, y := p%mw, p/mw
			edge := false
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if dx == 0 && dy == 0 {
						continue
					}
					xx, yy := x+dx, y+dy
					if xx < 0 || yy < 0 || xx >= mw || yy >= mh {
						if dx == 0 || dy == 0 {
							edge = true
						}
						continue
					}
					q := yy*mw + xx
					if label[q] == 0 && (dx == 0 || dy == 0) {
						edge = true
					}
					if label[q] == -1 {
						label[q] = int32(regions)
						stack = append(stack, int32(q))
					}
				}
			}
			if edge {
				pts = append(pts, [2]float64{float64(x), float64(y)})
			}
		}
		rect, short := minAreaRect(pts)
		if short < o.MinSize {
			continue
		}
		if boxScore(prob, mw, mh, rect) < o.BoxThresh {
			continue
		}
		rect, short = unclip(rect, o.UnclipRatio)
		if short < o.MinSize+2 {
			continue
		}
		var q Quad
		for k, c := range rect {
			q[k] = [2]float32{
				float32(math.Min(math.Max(math.Round(c[0]*float64(w)/float64(mw)), 0), float64(w))),
				float32(math.Min(math.Max(math.Round(c[1]*float64(h)/float64(mh)), 0), float64(h))),
			}
		}
		boxes = append(boxes, q)
	}
	sort.SliceStable(boxes, func(i, j int) bool {
		a, b := boxes[i][0], boxes[j][0]
		if math.Abs(float64(a[1]-b[1])) >= 10 {
			return a[1] < b[1]
		}
		return a[0] < b[0]
	})
	return boxes, nil
}

// rect is a rectangle's four corners.
type rect = [4][2]float64

// minAreaRect returns the minimum-area rectangle around points (rotating
// calipers over their convex hull), its corners ordered clockwise on
// screen from the top-left as PaddleOCR's get_mini_boxes orders them, and
// its shorter side. A region of one pixel is a rectangle of side 0.
func minAreaRect(points [][2]float64) (rect, float64) {
	hull := convexHull(points)
	if len(hull) == 0 {
		return rect{}, 0
	}
	if len(hull) < 3 {
		a, b := hull[0], hull[len(hull)-1]
		return orderCorners(rect{a, b, b, a}), 0
	}
	best := math.Inf(1)
	var out rect
	var short float64
	for i := range hull {
		p, q := hull[i], hull[(i+1)%len(hull)]
		ex, ey := q[0]-p[0], q[1]-p[1]
		l := math.Hypot(ex, ey)
		if l == 0 {
			continue
		}
		ux, uy := ex/l, ey/l // along the edge
		vx, vy := -uy, ux    // across it
		minU, maxU, minV, maxV := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, r := range hull {
			u := (r[0]-p[0])*ux + (r[1]-p[1])*uy
			v := (r[0]-p[0])*vx + (r[1]-p[1])*vy
			minU, maxU = math.Min(minU, u), math.Max(maxU, u)
			minV, maxV = math.Min(minV, v), math.Max(maxV, v)
		}
		if a := (maxU - minU) * (maxV - minV); a < best-1e-9 {
			best = a
			corner := func(u, v float64) [2]float64 {
				return [2]float64{p[0] + u*ux + v*vx, p[1] + u*uy + v*vy}
			}
			out = rect{corner(minU, minV), corner(maxU, minV), corner(maxU, maxV), corner(minU, maxV)}
			short = math.Min(maxU-minU, maxV-minV)
		}
	}
	return orderCorners(out), short
}

// orderCorners orders a rectangle's corners as get_mini_boxes does: sorted
// by x, the left pair gives the top-left and bottom-left (by y), the right
// pair the top-right and bottom-right; returned top-left, top-right,
// bottom-right, bottom-left.
func orderCorners(r rect) rect {
	pts := r
	sort.SliceStable(pts[:], func(i, j int) bool { return pts[i][0] < pts[j][0] })
	tl, bl := pts[0], pts[1]
	if pts[1][1] < pts[0][1] {
		tl, bl = pts[1], pts[0]
	}
	tr, br := pts[2], pts[3]
	if pts[3][1] < pts[2][1] {
		tr, br = pts[3], pts[2]
	}
	return rect{tl, tr, br, bl}
}

// convexHull returns the convex hull of points (Andrew's monotone chain),
// counter-clockwise, without collinear points.
func convexHull(points [][2]float64) [][2]float64 {
	p := append([][2]float64(nil), points...)
	sort.Slice(p, func(i, j int) bool {
		if p[i][0] != p[j][0] {
			return p[i][0] < p[j][0]
		}
		return p[i][1] < p[j][1]
	})
	if len(p) < 3 {
		return p
	}
	cross := func(o, a, b [2]float64) float64 {
		return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0])
	}
	hull := make([][2]float64, 0, 2*len(p))
	for _, q := range p {
		for len(hull) >= 2 && cross(hull[len(hull)-2], hull[len(hull)-1], q) <= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, q)
	}
	lower := len(hull) + 1
	for i := len(p) - 2; i >= 0; i-- {
		q := p[i]
		for len(hull) >= lower && cross(hull[len(hull)-2], hull[len(hull)-1], q) <= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, q)
	}
	return hull[:len(hull)-1]
}

// boxScore is the mean probability of the map pixels whose centres lie in
// the rectangle (PaddleOCR's box_score_fast, which fills the polygon over
// its bounding box and takes the mean there).
func boxScore(prob []float32, mw, mh int, r rect) float32 {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range r {
		minX, minY = math.Min(minX, c[0]), math.Min(minY, c[1])
		maxX, maxY = math.Max(maxX, c[0]), math.Max(maxY, c[1])
	}
	x0, x1 := clampInt(int(math.Floor(minX)), 0, mw-1), clampInt(int(math.Ceil(maxX)), 0, mw-1)
	y0, y1 := clampInt(int(math.Floor(minY)), 0, mh-1), clampInt(int(math.Ceil(maxY)), 0, mh-1)
	edges := convexEdges(r)
	var sum float64
	var count int
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			if edges.inside(float64(x), float64(y)) {
				sum += float64(prob[y*mw+x])
				count++
			}
		}
	}
	if count == 0 {
		return 0
	}
	return float32(sum / float64(count))
}

// edges are a convex quadrilateral's sides: a start point and the unit
// direction of each (a zero direction for a side of length 0).
type edges [4][4]float64

func convexEdges(r rect) edges {
	var e edges
	for i := range r {
		a, b := r[i], r[(i+1)%4]
		dx, dy := unit(a, b)
		e[i] = [4]float64{a[0], a[1], dx, dy}
	}
	return e
}

// inside reports whether (x, y) lies inside or on the convex polygon, given
// in either orientation; half a pixel of slack keeps the boundary pixels.
func (e *edges) inside(x, y float64) bool {
	pos, neg := false, false
	for _, s := range e {
		d := s[2]*(y-s[1]) - s[3]*(x-s[0]) // signed distance from the side
		if d > 0.5 {
			pos = true
		} else if d < -0.5 {
			neg = true
		}
		if pos && neg {
			return false
		}
	}
	return true
}

// unclip expands a rectangle on every side by its area × ratio /
// perimeter, and returns it with its new short side.
func unclip(r rect, ratio float64) (rect, float64) {
	w := math.Hypot(r[1][0]-r[0][0], r[1][1]-r[0][1])
	h := math.Hypot(r[3][0]-r[0][0], r[3][1]-r[0][1])
	if w+h == 0 {
		return r, 0
	}
	d := w * h * ratio / (2 * (w + h))
	var out rect
	for k, c := range r {
		// Move each corner outwards along both sides that meet there.
		ax, ay := unit(r[(k+1)%4], r[k]) // away from the next corner
		bx, by := unit(r[(k+3)%4], r[k]) // away from the previous one
		out[k] = [2]float64{c[0] + d*(ax+bx), c[1] + d*(ay+by)}
	}
	return orderCorners(out), math.Min(w, h) + 2*d
}

// unit returns the unit vector from a to b; zero when they coincide.
func unit(a, b [2]float64) (float64, float64) {
	dx, dy := b[0]-a[0], b[1]-a[1]
	l := math.Hypot(dx, dy)
	if l == 0 {
		return 0, 0
	}
	return dx / l, dy / l
}
