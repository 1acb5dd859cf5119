package ocr

import (
	"bytes"
	"crypto/sha256"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// need skips a test when the Debian font or word list is missing (CI
// installs both with scripts/setup-onnx.sh before the tests).
func need(t testing.TB) {
	t.Helper()
	for _, f := range []string{DefaultFont, DefaultWords} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s is missing: run %s", f, SetupHint)
		}
	}
}

func digest(s *Set) [32]byte {
	h := sha256.New()
	for i := range s.Len() {
		h.Write(s.Render(i).Pix)
		for _, w := range s.Page(i).Words {
			h.Write([]byte(w.Text))
		}
		h.Write(EncodeQuads(nil, s.Boxes(i)))
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// The set is a function of its options: the same seed gives the same
// words, boxes and pixels; another seed another set.
func TestGenerateIsDeterministic(t *testing.T) {
	need(t)
	a, err := Generate(Options{Images: 4, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(Options{Images: 4, Seed: 7})
	c, _ := Generate(Options{Images: 4, Seed: 8})
	if digest(a) != digest(b) {
		t.Error("two sets of seed 7 differ")
	}
	if digest(a) == digest(c) {
		t.Error("seeds 7 and 8 gave the same set")
	}
	if a.Name() != "ocr-generated-320x320-n4-seed7" {
		t.Errorf("Name %q", a.Name())
	}
}

// Every word lies inside its image, words keep apart, each image has
// MinWords to MaxWords words, and the ink is inside the boxes: a pixel far
// from every box is background.
func TestLayout(t *testing.T) {
	need(t)
	o := Options{Images: 8, Width: 256, Height: 192, MinWords: 2, MaxWords: 4, Seed: 3}
	s, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Len() {
		p := s.Page(i)
		if n := len(p.Words); n < 2 || n > 4 {
			t.Errorf("image %d: %d words, want 2 to 4", i, n)
		}
		var rects []image.Rectangle
		for _, w := range p.Words {
			if len(w.Text) < 3 {
				t.Errorf("image %d: word %q shorter than 3 letters", i, w.Text)
			}
			r := image.Rectangle{Min: image.Pt(math.MaxInt, math.MaxInt)}
			for _, c := range w.Box {
				if c[0] < 0 || c[1] < 0 || c[0] > 256 || c[1] > 192 {
					t.Errorf("image %d: word %q has corner %v outside the image", i, w.Text, c)
				}
				r.Min.X, r.Min.Y = min(r.Min.X, int(c[0])), min(r.Min.Y, int(c[1]))
				r.Max.X, r.Max.Y = max(r.Max.X, int(c[0])), max(r.Max.Y, int(c[1]))
			}
			for _, q := range rects {
				if q.Overlaps(r) {
					t.Errorf("image %d: word %q overlaps another", i, w.Text)
				}
			}
			rects = append(rects, r)
		}
		img := s.Render(i)
		if img.Bounds() != image.Rect(0, 0, 256, 192) {
			t.Fatalf("image %d: bounds %v", i, img.Bounds())
		}
		dark := 0
		for y := range 192 {
			for x := range 256 {
				in := false
				for _, r := range rects {
					if image.Pt(x, y).In(r.Inset(-2)) {
						in = true
					}
				}
				k := img.PixOffset(x, y)
				if !in && int(img.Pix[k]) < int(p.Background.R)-40 {
					t.Fatalf("image %d: ink at (%d, %d), outside every word box", i, x, y)
				}
				if in && int(img.Pix[k]) < int(p.Background.R)-60 {
					dark++
				}
			}
		}
		if dark == 0 {
			t.Errorf("image %d: no text drawn", i)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		why  string
		o    Options
		want string // in the error; "" = valid
	}{
		{"the zero value is the default set", Options{}, ""},
		{"negative images", Options{Images: -1}, "Images"},
		{"an image too small for any word", Options{Width: 32}, "Width"},
		{"fewer most words than least", Options{MinWords: 5, MaxWords: 2}, "MaxWords"},
		{"a font larger than half the image", Options{Width: 100, Height: 100, MaxSize: 60}, "MaxSize"},
		{"a rotation beyond a right angle", Options{MaxRotation: 120}, "MaxRotation"},
		{"no rotation", Options{MaxRotation: -1}, ""},
	}
	for _, tc := range tests {
		err := tc.o.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.why, err, tc.want)
		}
	}
}

// A missing font or word list fails early, naming the file and the setup
// command.
func TestMissingFilesNameTheSetup(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{{Font: filepath.Join(dir, "none.ttf")}, {Words: filepath.Join(dir, "none.txt")}} {
		if o.Font == "" {
			need(t)
		}
		_, err := Generate(o)
		if err == nil || !strings.Contains(err.Error(), "setup-onnx.sh") || !strings.Contains(err.Error(), "none.") {
			t.Errorf("Generate(%+v) = %v, want an error naming the file and scripts/setup-onnx.sh", o, err)
		}
	}
	empty := filepath.Join(dir, "words")
	os.WriteFile(empty, []byte("a\nit's\nxy\n"), 0o644)
	need(t)
	if _, err := Generate(Options{Words: empty}); err == nil || !strings.Contains(err.Error(), "no word") {
		t.Errorf("a list without usable words: %v", err)
	}
}

func TestQSL(t *testing.T) {
	need(t)
	s, err := Generate(Options{Images: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := NewQSL(s, 0)
	if q.TotalSampleCount() != 3 || q.PerformanceSampleCount() != 3 {
		t.Errorf("counts %d, %d", q.TotalSampleCount(), q.PerformanceSampleCount())
	}
	if _, ok := q.Image(1); ok {
		t.Error("image 1 served before it was loaded")
	}
	if err := q.LoadSamples([]uint64{1, 1}); err != nil {
		t.Fatal(err)
	}
	img, ok := q.Image(1)
	if !ok || !bytes.Equal(img.Pix, s.Render(1).Pix) {
		t.Error("the loaded image is not the rendered one")
	}
	if err := q.UnloadSamples([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Image(1); !ok {
		t.Error("a sample loaded twice and unloaded once is gone")
	}
	q.UnloadSamples([]uint64{1})
	if err := q.UnloadSamples([]uint64{1}); err == nil {
		t.Error("unloading an unloaded sample is no error")
	}
	if err := q.LoadSamples([]uint64{3}); err == nil {
		t.Error("loading index 3 of 3 images is no error")
	}
}

func TestQuadsRoundTrip(t *testing.T) {
	boxes := []Quad{{{1, 2}, {3, 4}, {5, 6}, {7, 8}}, {{-1.5, 0}, {1e6, 0}, {0, 0.25}, {9, 9}}}
	data := EncodeQuads([]byte("x"), boxes)[1:]
	got, err := DecodeQuads(data)
	if err != nil || len(got) != 2 || got[0] != boxes[0] || got[1] != boxes[1] {
		t.Errorf("DecodeQuads(EncodeQuads) = %v, %v", got, err)
	}
	if got, err := DecodeQuads(nil); err != nil || len(got) != 0 {
		t.Errorf("no boxes: %v, %v", got, err)
	}
	if _, err := DecodeQuads(data[:31]); err == nil {
		t.Error("31 bytes decoded")
	}
	nan := EncodeQuads(nil, []Quad{{{float32(math.NaN()), 0}}})
	if _, err := DecodeQuads(nan); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("a NaN coordinate: %v", err)
	}
}

// DecodeQuads never panics, and what it accepts encodes back to the same
// bytes.
func FuzzDecodeQuads(f *testing.F) {
	f.Add([]byte{})
	f.Add(EncodeQuads(nil, []Quad{{{1, 2}, {3, 4}, {5, 6}, {7, 8}}}))
	f.Add(make([]byte, 33))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeQuads(data)
		if err != nil {
			return
		}
		if back := EncodeQuads(nil, q); !bytes.Equal(back, data) {
			// -0 and 0 or NaN payloads could differ; only finite values
			// are accepted, and their bits round-trip.
			t.Errorf("round trip changed %x to %x", data, back)
		}
	})
}

// TestGenerateExample: Generate lays out a seeded set of word images;
// Render draws one at the set's size and Boxes gives its ground truth, a
// box per word (at least MinWords, 2). It skips, saying why, on a machine
// without the font or the word list.
func TestGenerateExample(t *testing.T) {
	need(t)
	set, err := Generate(Options{Images: 8, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	img := set.Render(0)
	if set.Name() != "ocr-generated-320x320-n8-seed42" || img.Bounds().Dx() != 320 || img.Bounds().Dy() != 320 || len(set.Boxes(0)) < 2 {
		t.Errorf("%s: image %v, %d boxes; want ocr-generated-320x320-n8-seed42, 320x320, at least 2", set.Name(), img.Bounds(), len(set.Boxes(0)))
	}
}
