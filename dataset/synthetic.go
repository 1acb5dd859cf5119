package dataset

import (
	"fmt"
	"math"
	"strings"
)

// SyntheticVersion identifies the generator, stored with the data set as
// GB/T 45087 asks for generated data (note IN-54).
const SyntheticVersion = "aimeter-synthetic-shapes/1"

// SyntheticClasses are the class nouns (keywords) of the synthetic set.
var SyntheticClasses = []string{
	"ring", "pillar", "beam", "cross", "slash",
	"frame", "wedge", "dots", "disc", "stairs",
}

var syntheticWords = []string{
	"bright", "faint", "small", "large", "centred", "shifted",
	"glowing", "noisy", "sharp", "soft", "drawn", "floating",
}

// Synthetic generates n labelled 28×28 images from seed, following the
// steps of GB/T 45087 clause 7.4.3 for one modality (GB-7.4.3-a…f): for each
// sample it draws keywords (a class noun and M = 2 other words, GB-7.4.4.1-a),
// builds a caption of L = 6 > M words from them (GB-7.4.4.1-b), and renders
// the image from the caption with a procedural generator instead of an
// image-generation model (GB-7.4.4.2-a); the class noun is the label
// (GB-7.4.4.2-b). The same seed always gives the same set.
func Synthetic(n int, seed uint64) *Images {
	const rows, cols = 28, 28
	s := &Images{
		Name:     fmt.Sprintf("synthetic-shapes-seed%d", seed),
		Rows:     rows,
		Cols:     cols,
		Pixels:   make([]uint8, n*rows*cols),
		Labels:   make([]uint8, n),
		Classes:  SyntheticClasses,
		Captions: make([]string, n),
	}
	rng := splitmix(seed)
	for i := 0; i < n; i++ {
		label := uint8(rng.intn(len(SyntheticClasses)))
		w1, w2 := syntheticWords[rng.intn(len(syntheticWords))], syntheticWords[rng.intn(len(syntheticWords))]
		s.Captions[i] = strings.Join([]string{"a", w1, w2, SyntheticClasses[label], "shape", "drawn"}, " ")
		s.Labels[i] = label
		renderShape(s.Image(i), rows, cols, int(label), &rng)
	}
	return s
}

// renderShape draws class k with random placement, scale, intensity and noise.
func renderShape(img []uint8, rows, cols, k int, rng *splitmix) {
	cx := 13.5 + rng.uniform(-3, 3)
	cy := 13.5 + rng.uniform(-3, 3)
	scale := rng.uniform(0.75, 1.2)
	level := rng.uniform(0.6, 1)
	for y := 0; y < rows; y++ {
		for x := 0; x < cols; x++ {
			u, v := (float64(x)-cx)/scale, (float64(y)-cy)/scale
			var on bool
			r := math.Hypot(u, v)
			switch k {
			case 0: // ring
				on = r > 6 && r < 9
			case 1: // pillar
				on = math.Abs(u) < 2.5 && math.Abs(v) < 10
			case 2: // beam
				on = math.Abs(v) < 2.5 && math.Abs(u) < 10
			case 3: // cross
				on = (math.Abs(u) < 2 || math.Abs(v) < 2) && math.Abs(u) < 9 && math.Abs(v) < 9
			case 4: // slash
				on = math.Abs(u-v) < 2.5 && math.Abs(u) < 9
			case 5: // frame
				m := math.Max(math.Abs(u), math.Abs(v))
				on = m > 6 && m < 9
			case 6: // wedge
				on = v > -8 && v < 8 && math.Abs(u) < (v+8)/2
			case 7: // dots
				on = math.Hypot(math.Mod(math.Abs(u)+3, 6)-3, math.Mod(math.Abs(v)+3, 6)-3) < 1.6 && math.Abs(u) < 10 && math.Abs(v) < 10
			case 8: // disc
				on = r < 6
			case 9: // stairs
				on = u > -9 && u < 9 && v < 9 && v > math.Floor((u+9)/4.5)*4.5-9 && v < math.Floor((u+9)/4.5)*4.5-4.5
			}
			val := rng.uniform(0, 0.15)
			if on {
				val += level
			}
			img[y*cols+x] = uint8(math.Round(255 * math.Min(1, val)))
		}
	}
}

// splitmix is SplitMix64, a small seeded generator that is the same on every
// platform.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix) intn(n int) int { return int(s.next() % uint64(n)) }

func (s *splitmix) uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*float64(s.next()>>11)/(1<<53)
}
