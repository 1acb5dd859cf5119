package tokenize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Lengths is a distribution of text lengths (in tokens, or words without
// a tokenizer), as AIPerf and GuideLLM draw their synthetic prompts' input
// lengths: a fixed length, uniform over a range, normal (rounded and
// kept within [1, MaxTextTokens]) or a weighted histogram read from a
// file. The zero value is not valid; use ParseLengths or FixedLength.
type Lengths struct {
	kind string // "fixed", "uniform", "normal", "hist"
	a, b float64
	// hist is the histogram of kind "hist"; a pointer keeps Lengths
	// comparable with ==.
	hist *histogram
}

// histogram is a weighted list of lengths: a draw picks length i with
// probability weight i / total.
type histogram struct {
	path    string    // the file, as named after "hist:"
	lengths []int     // in file order
	cum     []float64 // cum[i] is the sum of the weights of rows 0 to i
	last    int       // the last row of positive weight
}

// HistogramPrefix starts a length distribution read from a file:
// "hist:FILE".
const HistogramPrefix = "hist:"

// HistogramFile is the file a "hist:FILE" spec names, and whether spec is
// one: the caller can record the file's digest before reading it.
func HistogramFile(spec string) (string, bool) {
	return strings.CutPrefix(spec, HistogramPrefix)
}

// FixedLength is the distribution of the one length n.
func FixedLength(n int) Lengths { return Lengths{kind: "fixed", a: float64(n)} }

// ParseLengths reads a distribution: "N" (a fixed length), "uniform:MIN:MAX"
// (whole lengths from MIN to MAX, both included), "normal:MEAN:SD" or
// "hist:FILE" (a histogram file, ReadHistogram). Lengths are 1 to
// MaxTextTokens; the error names the part, or the file and line, that is
// wrong.
func ParseLengths(spec string) (Lengths, error) {
	if path, ok := HistogramFile(spec); ok {
		if path == "" {
			return Lengths{}, fmt.Errorf("lengths %q: want hist:FILE", spec)
		}
		f, err := os.Open(path)
		if err != nil {
			return Lengths{}, fmt.Errorf("lengths %q: %w", spec, err)
		}
		defer f.Close()
		return ReadHistogram(path, f)
	}
	parts := strings.Split(spec, ":")
	num := func(i int, whole bool) (float64, error) {
		var v float64
		var err error
		if whole {
			var n int
			n, err = strconv.Atoi(parts[i])
			v = float64(n)
		} else {
			v, err = strconv.ParseFloat(parts[i], 64)
		}
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("lengths %q: %q is not a number", spec, parts[i])
		}
		return v, nil
	}
	inRange := func(v float64, what string) error {
		if v < 1 || v > MaxTextTokens {
			return fmt.Errorf("lengths %q: %s %g: want 1 to %d", spec, what, v, MaxTextTokens)
		}
		return nil
	}
	switch {
	case len(parts) == 1:
		n, err := num(0, true)
		if err != nil {
			return Lengths{}, err
		}
		return FixedLength(int(n)), inRange(n, "length")
	case len(parts) == 3 && parts[0] == "uniform":
		lo, err := num(1, true)
		if err != nil {
			return Lengths{}, err
		}
		hi, err := num(2, true)
		if err != nil {
			return Lengths{}, err
		}
		if err := inRange(lo, "minimum"); err != nil {
			return Lengths{}, err
		}
		if err := inRange(hi, "maximum"); err != nil {
			return Lengths{}, err
		}
		if hi < lo {
			return Lengths{}, fmt.Errorf("lengths %q: maximum %g below the minimum %g", spec, hi, lo)
		}
		return Lengths{kind: "uniform", a: lo, b: hi}, nil
	case len(parts) == 3 && parts[0] == "normal":
		mean, err := num(1, false)
		if err != nil {
			return Lengths{}, err
		}
		sd, err := num(2, false)
		if err != nil {
			return Lengths{}, err
		}
		if err := inRange(mean, "mean"); err != nil {
			return Lengths{}, err
		}
		if sd < 0 || sd > MaxTextTokens {
			return Lengths{}, fmt.Errorf("lengths %q: standard deviation %g: want 0 to %d", spec, sd, MaxTextTokens)
		}
		return Lengths{kind: "normal", a: mean, b: sd}, nil
	}
	return Lengths{}, fmt.Errorf("lengths %q: want N, uniform:MIN:MAX, normal:MEAN:SD or hist:FILE", spec)
}

// ReadHistogram reads a histogram of lengths from r, which name names in
// errors and in String ("hist:NAME"). The format is CSV text, one
// "LENGTH,WEIGHT" row a line: LENGTH a whole number from 1 to
// MaxTextTokens, each at most once; WEIGHT a finite number ≥ 0 (a count,
// a percentage or a probability: only the ratios matter), not all zero.
// Blank lines and lines starting with "#" are skipped, spaces around a
// field are ignored, and the first row may be the header "length,weight".
// A draw picks each length with probability its weight over the sum of
// the weights. The error names the file and the line.
func ReadHistogram(name string, r io.Reader) (Lengths, error) {
	h := &histogram{path: name}
	seen := map[int]int{} // length → its line
	total := 0.0
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4096)
	line, rows := 0, 0
	bad := func(format string, args ...any) (Lengths, error) {
		return Lengths{}, fmt.Errorf("lengths file %s line %d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a byte-order mark some spreadsheets write
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		rows++
		lenField, weightField, ok := strings.Cut(text, ",")
		if !ok || strings.Contains(weightField, ",") {
			return bad("%q: want LENGTH,WEIGHT", text)
		}
		lenField, weightField = strings.TrimSpace(lenField), strings.TrimSpace(weightField)
		if rows == 1 && strings.EqualFold(lenField, "length") && strings.EqualFold(weightField, "weight") {
			continue
		}
		n, err := strconv.Atoi(lenField)
		if err != nil {
			return bad("length %q is not a whole number", lenField)
		}
		if n < 1 || n > MaxTextTokens {
			return bad("length %d: want 1 to %d", n, MaxTextTokens)
		}
		w, err := strconv.ParseFloat(weightField, 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
			return bad("weight %q is not a number", weightField)
		}
		if w < 0 {
			return bad("weight %g is negative", w)
		}
		if first, dup := seen[n]; dup {
			return bad("length %d again (first on line %d)", n, first)
		}
		seen[n] = line
		before := total
		total += w
		if math.IsInf(total, 0) {
			return bad("the weights add up to more than %g", math.MaxFloat64)
		}
		if total > before { // a weight too small to change the sum is never drawn
			h.last = len(h.lengths)
		}
		h.lengths = append(h.lengths, n)
		h.cum = append(h.cum, total)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Lengths{}, fmt.Errorf("lengths file %s line %d: longer than 4096 bytes", name, line+1)
		}
		return Lengths{}, fmt.Errorf("lengths file %s: %w", name, err)
	}
	if len(h.lengths) == 0 {
		return Lengths{}, fmt.Errorf("lengths file %s: no LENGTH,WEIGHT rows", name)
	}
	if total == 0 {
		return Lengths{}, fmt.Errorf("lengths file %s: every weight is 0", name)
	}
	return Lengths{kind: "hist", hist: h}, nil
}

// Draw returns a length drawn with rng.
func (l Lengths) Draw(rng *rand.Rand) int {
	switch l.kind {
	case "uniform":
		return int(l.a) + rng.IntN(int(l.b-l.a)+1)
	case "normal":
		v := math.Round(l.a + l.b*rng.NormFloat64())
		return int(min(max(v, 1), MaxTextTokens))
	case "hist":
		// One uniform draw u in [0, total) picks the first row whose
		// running sum of weights exceeds u: row i takes the share
		// weight i / total of [0, total), and a row of weight 0 none.
		h := l.hist
		u := rng.Float64() * h.cum[len(h.cum)-1]
		i := sort.Search(len(h.cum), func(i int) bool { return h.cum[i] > u })
		if i > h.last { // u rounded up to the total
			i = h.last
		}
		return h.lengths[i]
	}
	return int(l.a)
}

// IsZero reports whether l is the zero value (no distribution).
func (l Lengths) IsZero() bool { return l == Lengths{} }

// IsFixed reports whether every draw is the same length.
func (l Lengths) IsFixed() bool {
	if l.kind == "hist" {
		return positiveRows(l.hist) == 1
	}
	return l.kind == "fixed" || l.kind == ""
}

// positiveRows is the number of rows of h that a draw can pick.
func positiveRows(h *histogram) int {
	n, prev := 0, 0.0
	for _, c := range h.cum {
		if c > prev {
			n++
		}
		prev = c
	}
	return n
}

// String is the distribution as ParseLengths reads it.
func (l Lengths) String() string {
	switch l.kind {
	case "uniform":
		return fmt.Sprintf("uniform:%d:%d", int(l.a), int(l.b))
	case "normal":
		return "normal:" + strconv.FormatFloat(l.a, 'g', -1, 64) + ":" + strconv.FormatFloat(l.b, 'g', -1, 64)
	case "hist":
		return HistogramPrefix + l.hist.path
	}
	return strconv.Itoa(int(l.a))
}
