package dbnet

import (
	"image"
	"math"
	"strings"
	"testing"
)

func TestInputSize(t *testing.T) {
	tests := []struct {
		why          string
		w, h, limit  int
		wantW, wantH int
	}{
		{"multiples of 32 stay", 320, 320, 0, 320, 320},
		{"rounded to the nearest multiple of 32", 330, 300, 0, 320, 288},
		{"a long side over the limit scales both", 1920, 960, 960, 960, 480},
		{"never below 32", 10, 500, 0, 32, 512},
	}
	for _, tc := range tests {
		w, h := InputSize(tc.w, tc.h, Options{LimitSideLen: tc.limit})
		if w != tc.wantW || h != tc.wantH {
			t.Errorf("%s: InputSize(%d, %d) = %d×%d, want %d×%d", tc.why, tc.w, tc.h, w, h, tc.wantW, tc.wantH)
		}
	}
}

// A pixel's value is normalised per channel, in BGR order, with
// PaddleOCR's mean and standard deviation; resizing a flat image keeps it
// flat.
func TestPreprocess(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 32))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 255, 128, 0, 255
	}
	want := [3]float32{(0 - 0.485) / 0.229, (128.0/255 - 0.456) / 0.224, (1 - 0.406) / 0.225} // B, G, R
	for _, size := range [][2]int{{64, 32}, {32, 64}} {
		dst := make([]float32, 3*size[0]*size[1])
		if err := Preprocess(img, size[0], size[1], dst); err != nil {
			t.Fatal(err)
		}
		plane := size[0] * size[1]
		for c := range 3 {
			for _, k := range []int{0, plane / 2, plane - 1} {
				if d := dst[c*plane+k] - want[c]; d > 1e-5 || d < -1e-5 {
					t.Errorf("%v: channel %d value %d = %v, want %v", size, c, k, dst[c*plane+k], want[c])
				}
			}
		}
	}
	if err := Preprocess(img, 64, 32, make([]float32, 10)); err == nil || !strings.Contains(err.Error(), "3×32×64") {
		t.Errorf("a short tensor: %v", err)
	}
}

// fillRect paints the pixels of map m (w wide) whose centres lie in the
// rectangle of centre (cx, cy), size bw×bh, rotated by angle radians.
func fillRect(m []float32, w int, cx, cy, bw, bh, angle float64, v float32) {
	cos, sin := math.Cos(angle), math.Sin(angle)
	for i := range m {
		x, y := float64(i%w)-cx, float64(i/w)-cy
		u, s := x*cos+y*sin, -x*sin+y*cos
		if math.Abs(u) <= bw/2 && math.Abs(s) <= bh/2 {
			m[i] = v
		}
	}
}

func side(a, b [2]float32) float64 { return math.Hypot(float64(b[0]-a[0]), float64(b[1]-a[1])) }

// Regions of high probability become boxes expanded by the unclip
// distance, scaled to the image; faint, tiny or low-scoring regions are
// dropped.
func TestBoxes(t *testing.T) {
	const w, h = 200, 100
	m := make([]float32, w*h)
	fillRect(m, w, 50, 30, 61, 15, 0, 0.9)                // a word, axis-aligned
	fillRect(m, w, 140, 60, 81, 21, 20*math.Pi/180, 0.95) // a word rotated 20°
	fillRect(m, w, 20, 85, 2, 2, 0, 0.99)                 // a speck under MinSize
	fillRect(m, w, 170, 15, 30, 10, 0, 0.5)               // above Thresh, under BoxThresh
	boxes, err := Boxes(m, w, h, 2*w, 2*h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != 2 {
		t.Fatalf("got %d boxes %v, want 2", len(boxes), boxes)
	}
	for k, want := range []struct{ cx, cy, bw, bh float64 }{{50, 30, 61, 15}, {140, 60, 81, 21}} {
		b := boxes[k]
		// Pixel centres span one less than the painted size; unclip adds
		// 2d with d = area·1.5/perimeter; the image is twice the map.
		pw, ph := want.bw-1, want.bh-1
		d := pw * ph * 1.5 / (2 * (pw + ph))
		ew, eh := 2*(pw+2*d), 2*(ph+2*d)
		gw, gh := side(b[0], b[1]), side(b[1], b[2])
		if math.Abs(gw-ew) > 5 || math.Abs(gh-eh) > 5 { // 2.5 map pixels: a rotated rectangle's raster
			t.Errorf("box %d: %.1f×%.1f, want about %.1f×%.1f", k, gw, gh, ew, eh)
		}
		cx := float64(b[0][0]+b[1][0]+b[2][0]+b[3][0]) / 4
		cy := float64(b[0][1]+b[1][1]+b[2][1]+b[3][1]) / 4
		if math.Abs(cx-2*want.cx) > 2 || math.Abs(cy-2*want.cy) > 2 {
			t.Errorf("box %d: centre (%.1f, %.1f), want (%.0f, %.0f)", k, cx, cy, 2*want.cx, 2*want.cy)
		}
		if b[0][0] > b[1][0] || b[0][1] > b[3][1] {
			t.Errorf("box %d: corners %v not ordered top-left, top-right, bottom-right, bottom-left", k, b)
		}
	}
	if _, err := Boxes(m, w, h+1, w, h, Options{}); err == nil {
		t.Error("a map of the wrong size is no error")
	}
	if b, _ := Boxes(make([]float32, w*h), w, h, w, h, Options{}); len(b) != 0 {
		t.Errorf("an empty map gave %v", b)
	}
}

// minAreaRect finds the rectangle of points on a rotated rectangle's
// outline: the same sides, whatever the rotation.
func TestMinAreaRect(t *testing.T) {
	for _, deg := range []float64{0, 10, 33, 45, 80, 90, 135} {
		a := deg * math.Pi / 180
		var pts [][2]float64
		for i := 0; i <= 40; i++ {
			for _, s := range []float64{-5, 5} {
				u := -20 + float64(i)
				pts = append(pts, [2]float64{u*math.Cos(a) - s*math.Sin(a), u*math.Sin(a) + s*math.Cos(a)})
			}
		}
		r, short := minAreaRect(pts)
		long := math.Max(math.Hypot(r[1][0]-r[0][0], r[1][1]-r[0][1]), math.Hypot(r[3][0]-r[0][0], r[3][1]-r[0][1]))
		if math.Abs(short-10) > 1e-6 || math.Abs(long-40) > 1e-6 {
			t.Errorf("%v°: sides %v and %v, want 10 and 40", deg, short, long)
		}
	}
	if _, short := minAreaRect([][2]float64{{3, 3}}); short != 0 {
		t.Errorf("one point: short side %v", short)
	}
}

// Boxes never panics on any map, and returns boxes inside the image.
func FuzzBoxes(f *testing.F) {
	f.Add([]byte{0, 255, 255, 0, 255, 255, 0, 0, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, width uint8) {
		w := int(width%16) + 1
		h := len(data) / w
		if h == 0 {
			return
		}
		m := make([]float32, w*h)
		for i := range m {
			m[i] = float32(data[i]) / 255
		}
		boxes, err := Boxes(m, w, h, 3*w, 3*h, Options{MinSize: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range boxes {
			for _, c := range b {
				if c[0] < 0 || c[1] < 0 || c[0] > float32(3*w) || c[1] > float32(3*h) {
					t.Fatalf("corner %v outside the %d×%d image", c, 3*w, 3*h)
				}
			}
		}
	})
}
