// Package ocr generates a text-detection data set in the spirit of GB/T
// 45087 section 7.4.4 (generated data): images of words drawn from a word
// list, rendered with a real TrueType font at random positions, sizes and
// rotations on a noisy background, with each word's box as the ground
// truth. The set is a pure function of its options and seed: the same
// options give the same images and boxes on every machine that has the same
// font and word list files.
//
// It is the data set of the GB/T scenario T13-1 (OCR text detection with
// DBNet, alias ocr-dbnet); the Debian packages fonts-dejavu-core and
// wamerican provide the default font and words (scripts/setup-onnx.sh
// installs them).
package ocr

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"aimeter/loadgen"
)

// Default files, from the Debian packages fonts-dejavu-core and wamerican.
const (
	DefaultFont  = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
	DefaultWords = "/usr/share/dict/words"
)

// SetupHint is the command that installs the default font and word list.
const SetupHint = "scripts/setup-onnx.sh (or apt-get install fonts-dejavu-core wamerican)"

// Quad is a text box: four [x, y] corners in pixels, clockwise on screen
// from the top left of the text as it reads.
type Quad = [4][2]float32

// Options choose the generated set. The zero value of every field has a
// useful default.
type Options struct {
	// Images is the number of images; 0 means 64.
	Images int
	// Width and Height are each image's size in pixels; 0 means 320 each.
	Width, Height int
	// MinWords and MaxWords bound the words of one image; 0 means 2 and 5.
	MinWords, MaxWords int
	// MinSize and MaxSize bound the font size in pixels (the em height);
	// 0 means 16 and 36.
	MinSize, MaxSize int
	// MaxRotation is the largest rotation of a word, in degrees either
	// way; 0 means 15, and a negative value means none.
	MaxRotation float64
	// Seed seeds the layout, colours and noise; 0 is a seed like any
	// other.
	Seed uint64
	// Font is a TrueType or OpenType font file; "" means DefaultFont.
	Font string
	// Words is a word list, one word a line; "" means DefaultWords. Words
	// of 3 to 12 ASCII letters are used, others skipped.
	Words string
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Images, 64)
	def(&o.Width, 320)
	def(&o.Height, 320)
	def(&o.MinWords, 2)
	def(&o.MaxWords, 5)
	def(&o.MinSize, 16)
	def(&o.MaxSize, 36)
	if o.MaxRotation == 0 {
		o.MaxRotation = 15
	} else if o.MaxRotation < 0 {
		o.MaxRotation = 0
	}
	if o.Font == "" {
		o.Font = DefaultFont
	}
	if o.Words == "" {
		o.Words = DefaultWords
	}
	return o
}

// Validate reports the first option out of range, naming the field.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Images < 0 || o.Images > 1<<20:
		return fmt.Errorf("ocr: Images %d: want 1 to %d", o.Images, 1<<20)
	case o.Width < 64 || o.Height < 64 || o.Width > 4096 || o.Height > 4096:
		return fmt.Errorf("ocr: Width×Height %d×%d: want 64 to 4096 each", o.Width, o.Height)
	case o.MinWords < 1 || o.MaxWords < o.MinWords || o.MaxWords > 64:
		return fmt.Errorf("ocr: MinWords %d, MaxWords %d: want 1 ≤ MinWords ≤ MaxWords ≤ 64", o.MinWords, o.MaxWords)
	case o.MinSize < 6 || o.MaxSize < o.MinSize || o.MaxSize > min(o.Width, o.Height)/2:
		return fmt.Errorf("ocr: MinSize %d, MaxSize %d: want 6 ≤ MinSize ≤ MaxSize ≤ half the smaller image side", o.MinSize, o.MaxSize)
	case math.IsNaN(o.MaxRotation) || o.MaxRotation > 90:
		return fmt.Errorf("ocr: MaxRotation %v: want at most 90 degrees", o.MaxRotation)
	}
	return nil
}

// Word is one word of an image: its text, font size, rotation and box.
type Word struct {
	Text string
	// Size is the font size in pixels.
	Size int
	// Angle is the rotation in radians, counter-clockwise on screen.
	Angle float64
	// Box is the ground truth: the tight box of the word's glyphs, one
	// pixel wider on every side, rotated with the word.
	Box Quad
	// cx, cy are the box's centre; ox, oy the pen position of the text in
	// the unrotated word image, relative to its top-left corner; w, h the
	// unrotated box's size.
	cx, cy, ox, oy float64
	w, h           int
}

// Page is the layout of one image.
type Page struct {
	Words []Word
	// Background and Ink are the colours of the page and the text.
	Background, Ink color.RGBA
	seed            uint64
}

// Set is a generated data set: the layout of every image, from which each
// image is rendered on demand.
type Set struct {
	opts  Options
	pages []Page
	font  *opentype.Font

	mu    sync.Mutex
	faces map[int]font.Face
}

// Generate lays out the set. It reads the font and the word list, chooses
// every word and its place, and measures the boxes; rendering is left to
// Render, so a large set costs little until its images are used.
func Generate(opts Options) (*Set, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	ttf, err := os.ReadFile(o.Font)
	if err != nil {
		return nil, fmt.Errorf("ocr: the font: %w; install it with %s", err, SetupHint)
	}
	f, err := opentype.Parse(ttf)
	if err != nil {
		return nil, fmt.Errorf("ocr: the font %s: %w", o.Font, err)
	}
	words, err := readWords(o.Words)
	if err != nil {
		return nil, err
	}
	s := &Set{opts: o, font: f, faces: map[int]font.Face{}}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6f63722d64626e65)) // "ocr-dbne"
	s.pages = make([]Page, o.Images)
	for i := range s.pages {
		s.pages[i] = s.layout(rng, words)
	}
	return s, nil
}

// readWords reads a word list and keeps the words of 3 to 12 ASCII letters.
func readWords(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ocr: the word list: %w; install it with %s", err, SetupHint)
	}
	defer fh.Close()
	var words []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		w := strings.TrimSpace(sc.Text())
		if len(w) < 3 || len(w) > 12 || strings.IndexFunc(w, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) >= 0 {
			continue
		}
		words = append(words, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ocr: reading the word list %s: %w", path, err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("ocr: the word list %s has no word of 3 to 12 ASCII letters", path)
	}
	return words, nil
}

// face returns the font face of a pixel size. Faces are cached and not
// safe for concurrent use: the caller holds s.mu.
func (s *Set) face(size int) font.Face {
	if f, ok := s.faces[size]; ok {
		return f
	}
	f, err := opentype.NewFace(s.font, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		// NewFace fails only on a non-positive size or DPI, excluded by
		// Validate.
		panic(err)
	}
	s.faces[size] = f
	return f
}

// layout chooses the words of one page and places them without overlap.
func (s *Set) layout(rng *rand.Rand, words []string) Page {
	o := s.opts
	p := Page{seed: rng.Uint64()}
	bg := uint8(190 + rng.IntN(60))
	p.Background = color.RGBA{bg, uint8(min(255, int(bg)+rng.IntN(20))), uint8(max(0, int(bg)-rng.IntN(20))), 255}
	ink := uint8(rng.IntN(70))
	p.Ink = color.RGBA{ink, ink, uint8(min(255, int(ink)+rng.IntN(40))), 255}
	want := o.MinWords + rng.IntN(o.MaxWords-o.MinWords+1)
	var taken []image.Rectangle
	s.mu.Lock()
	defer s.mu.Unlock()
	for tries := 0; len(p.Words) < want && tries < 40*want; tries++ {
		text := words[rng.IntN(len(words))]
		size := o.MinSize + rng.IntN(o.MaxSize-o.MinSize+1)
		angle := (rng.Float64()*2 - 1) * o.MaxRotation * math.Pi / 180
		b, _ := font.BoundString(s.face(size), text)
		w := (b.Max.X - b.Min.X).Ceil() + 2
		h := (b.Max.Y - b.Min.Y).Ceil() + 2
		cos, sin := math.Cos(angle), math.Sin(angle)
		// Half extents of the rotated box's axis-aligned bounds.
		hx := (math.Abs(float64(w)*cos) + math.Abs(float64(h)*sin)) / 2
		hy := (math.Abs(float64(w)*sin) + math.Abs(float64(h)*cos)) / 2
		margin := 4.0
		if 2*(hx+margin) >= float64(o.Width) || 2*(hy+margin) >= float64(o.Height) {
			continue
		}
		cx := hx + margin + rng.Float64()*(float64(o.Width)-2*(hx+margin))
		cy := hy + margin + rng.Float64()*(float64(o.Height)-2*(hy+margin))
		// Keep words apart by a third of the text height, so that
		// neighbouring words are not one region.
		gap := int(math.Ceil(float64(h) / 3))
		r := image.Rect(int(cx-hx)-gap, int(cy-hy)-gap, int(math.Ceil(cx+hx))+gap, int(math.Ceil(cy+hy))+gap)
		clash := false
		for _, t := range taken {
			if r.Overlaps(t) {
				clash = true
				break
			}
		}
		if clash {
			continue
		}
		taken = append(taken, r)
		wd := Word{Text: text, Size: size, Angle: angle, cx: cx, cy: cy, w: w, h: h,
			ox: 1 - fixedFloat(b.Min.X), oy: 1 - fixedFloat(b.Min.Y)}
		// Corners of the unrotated box around the centre, rotated
		// counter-clockwise on screen (y grows downwards).
		for k, c := range [4][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
			dx, dy := c[0]*float64(w)/2, c[1]*float64(h)/2
			wd.Box[k] = [2]float32{float32(cx + dx*cos + dy*sin), float32(cy - dx*sin + dy*cos)}
		}
		p.Words = append(p.Words, wd)
	}
	return p
}

func fixedFloat(v fixed.Int26_6) float64 { return float64(v) / 64 }

// Len returns the number of images.
func (s *Set) Len() int { return len(s.pages) }

// Width returns the width of every image, in pixels.
func (s *Set) Width() int { return s.opts.Width }

// Height returns the height of every image, in pixels.
func (s *Set) Height() int { return s.opts.Height }

// Name names the set after its options, for logs and reports.
func (s *Set) Name() string {
	o := s.opts
	return fmt.Sprintf("ocr-generated-%dx%d-n%d-seed%d", o.Width, o.Height, len(s.pages), o.Seed)
}

// Page returns the layout of image i.
func (s *Set) Page(i int) Page { return s.pages[i] }

// Boxes returns the ground-truth boxes of image i, one per word.
func (s *Set) Boxes(i int) []Quad {
	out := make([]Quad, len(s.pages[i].Words))
	for k, w := range s.pages[i].Words {
		out[k] = w.Box
	}
	return out
}

// Render draws image i: its background with a little noise, then each
// word, rotated about its centre, anti-aliased.
func (s *Set) Render(i int) *image.RGBA {
	p := s.pages[i]
	o := s.opts
	img := image.NewRGBA(image.Rect(0, 0, o.Width, o.Height))
	rng := rand.New(rand.NewPCG(p.seed, uint64(i)))
	for k := 0; k < len(img.Pix); k += 4 {
		n := rng.IntN(17) - 8
		img.Pix[k+0] = clamp8(int(p.Background.R) + n)
		img.Pix[k+1] = clamp8(int(p.Background.G) + n)
		img.Pix[k+2] = clamp8(int(p.Background.B) + n)
		img.Pix[k+3] = 255
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range p.Words {
		s.drawWord(img, w, p.Ink)
	}
	return img
}

// drawWord renders the word unrotated into an alpha mask, then maps every
// pixel of its rotated bounds back into the mask (bilinear) and blends
// the ink by the coverage.
func (s *Set) drawWord(img *image.RGBA, w Word, ink color.RGBA) {
	mask := image.NewAlpha(image.Rect(0, 0, w.w, w.h))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: s.face(w.Size),
		Dot: fixed.Point26_6{X: fixed.Int26_6(w.ox * 64), Y: fixed.Int26_6(w.oy * 64)}}
	d.DrawString(w.Text)
	cos, sin := math.Cos(w.Angle), math.Sin(w.Angle)
	minX, minY, maxX, maxY := float64(img.Bounds().Dx()), float64(img.Bounds().Dy()), 0.0, 0.0
	for _, c := range w.Box {
		minX, minY = math.Min(minX, float64(c[0])), math.Min(minY, float64(c[1]))
		maxX, maxY = math.Max(maxX, float64(c[0])), math.Max(maxY, float64(c[1]))
	}
	b := img.Bounds()
	for y := max(b.Min.Y, int(minY)-1); y < min(b.Max.Y, int(maxY)+2); y++ {
		for x := max(b.Min.X, int(minX)-1); x < min(b.Max.X, int(maxX)+2); x++ {
			// Inverse rotation of the pixel centre into the mask.
			dx, dy := float64(x)+0.5-w.cx, float64(y)+0.5-w.cy
			u := dx*cos - dy*sin + float64(w.w)/2 - 0.5
			v := dx*sin + dy*cos + float64(w.h)/2 - 0.5
			a := bilinear(mask, u, v)
			if a == 0 {
				continue
			}
			k := img.PixOffset(x, y)
			img.Pix[k+0] = blend(img.Pix[k+0], ink.R, a)
			img.Pix[k+1] = blend(img.Pix[k+1], ink.G, a)
			img.Pix[k+2] = blend(img.Pix[k+2], ink.B, a)
		}
	}
}

func bilinear(m *image.Alpha, u, v float64) float64 {
	x0, y0 := int(math.Floor(u)), int(math.Floor(v))
	fx, fy := u-float64(x0), v-float64(y0)
	at := func(x, y int) float64 {
		if x < 0 || y < 0 || x >= m.Rect.Dx() || y >= m.Rect.Dy() {
			return 0
		}
		return float64(m.Pix[y*m.Stride+x]) / 255
	}
	return (at(x0, y0)*(1-fx)+at(x0+1, y0)*fx)*(1-fy) + (at(x0, y0+1)*(1-fx)+at(x0+1, y0+1)*fx)*fy
}

func blend(dst, src uint8, a float64) uint8 {
	return uint8(math.Round(float64(dst)*(1-a) + float64(src)*a))
}

func clamp8(v int) uint8 { return uint8(min(255, max(0, v))) }

// QSL serves a Set as a loadgen sample library: LoadSamples renders the
// images of a loadable set, Image returns them to the SUT.
type QSL struct {
	set  *Set
	perf uint64

	mu     sync.RWMutex
	images []*image.RGBA
	loaded []uint32
}

var _ loadgen.QSL = (*QSL)(nil)

// NewQSL returns a QSL over set reporting performanceSampleCount (0 means
// the whole set, capped at 256 images).
func NewQSL(set *Set, performanceSampleCount uint64) *QSL {
	if performanceSampleCount == 0 || performanceSampleCount > uint64(set.Len()) {
		performanceSampleCount = min(uint64(set.Len()), 256)
	}
	return &QSL{set: set, perf: performanceSampleCount, images: make([]*image.RGBA, set.Len()), loaded: make([]uint32, set.Len())}
}

// Name returns the set's name.
func (q *QSL) Name() string { return q.set.Name() }

// TotalSampleCount returns the number of images.
func (q *QSL) TotalSampleCount() uint64 { return uint64(q.set.Len()) }

// PerformanceSampleCount returns the count given to NewQSL.
func (q *QSL) PerformanceSampleCount() uint64 { return q.perf }

// Set returns the generated set.
func (q *QSL) Set() *Set { return q.set }

// LoadSamples renders the listed images.
func (q *QSL) LoadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, i := range indices {
		if i >= uint64(q.set.Len()) {
			return fmt.Errorf("sample index %d is outside %s (%d images)", i, q.set.Name(), q.set.Len())
		}
		if q.loaded[i] == 0 {
			q.images[i] = q.set.Render(int(i))
		}
		q.loaded[i]++
	}
	return nil
}

// UnloadSamples releases the listed images.
func (q *QSL) UnloadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, i := range indices {
		if i >= uint64(q.set.Len()) || q.loaded[i] == 0 {
			return fmt.Errorf("unloading sample %d of %s, which is not loaded", i, q.set.Name())
		}
		q.loaded[i]--
		if q.loaded[i] == 0 {
			q.images[i] = nil
		}
	}
	return nil
}

// Image returns loaded image i; ok is false when it is not loaded.
func (q *QSL) Image(i uint64) (img *image.RGBA, ok bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if i >= uint64(len(q.images)) || q.images[i] == nil {
		return nil, false
	}
	return q.images[i], true
}

// EncodeQuads writes boxes as a response: 8 little-endian float32 per box
// (x0 y0 x1 y1 x2 y2 x3 y3), appended to dst.
func EncodeQuads(dst []byte, boxes []Quad) []byte {
	for _, b := range boxes {
		for _, c := range b {
			for _, v := range c {
				u := math.Float32bits(v)
				dst = append(dst, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
			}
		}
	}
	return dst
}

// ErrQuadLength is returned by DecodeQuads for data that is not a whole
// number of boxes.
var ErrQuadLength = errors.New("ocr: a detection response is a multiple of 32 bytes (8 float32 per box)")

// DecodeQuads reads a response written by EncodeQuads. A length that is
// not a multiple of 32 bytes, or a coordinate that is not finite, is an
// error.
func DecodeQuads(data []byte) ([]Quad, error) {
	if len(data)%32 != 0 {
		return nil, fmt.Errorf("%w; got %d bytes", ErrQuadLength, len(data))
	}
	out := make([]Quad, len(data)/32)
	for k := range out {
		for c := 0; c < 4; c++ {
			for j := 0; j < 2; j++ {
				off := 32*k + 8*c + 4*j
				u := uint32(data[off]) | uint32(data[off+1])<<8 | uint32(data[off+2])<<16 | uint32(data[off+3])<<24
				v := math.Float32frombits(u)
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return nil, fmt.Errorf("ocr: box %d, corner %d: coordinate %v is not finite", k, c, v)
				}
				out[k][c][j] = v
			}
		}
	}
	return out, nil
}
