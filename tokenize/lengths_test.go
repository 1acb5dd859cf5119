package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestParseLengths reads each form, draws from it and refuses bad specs
// with an error naming the part.
func TestParseLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		spec   string
		lo, hi int
		meanLo float64
		meanHi float64
		fixed  bool
		why    string
	}{
		{"128", 128, 128, 128, 128, true, "a fixed length"},
		{"uniform:10:20", 10, 20, 14, 16, false, "both ends included, mean 15"},
		{"normal:100:10", 50, 150, 98, 102, false, "5 SD either side: 2,000 draws stay within"},
		{"normal:2:50", 1, 300, 1, 40, false, "clamped at 1 below"},
	} {
		l, err := ParseLengths(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if l.String() != c.spec || l.IsFixed() != c.fixed {
			t.Errorf("%s: String %q, fixed %v", c.spec, l.String(), l.IsFixed())
		}
		sum := 0
		for range 2000 {
			n := l.Draw(rng)
			if n < c.lo || n > c.hi {
				t.Fatalf("%s: drew %d, outside [%d, %d] (%s)", c.spec, n, c.lo, c.hi, c.why)
			}
			sum += n
		}
		if m := float64(sum) / 2000; m < c.meanLo || m > c.meanHi {
			t.Errorf("%s: mean %g, want %g to %g (%s)", c.spec, m, c.meanLo, c.meanHi, c.why)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{"", `"" is not a number`},
		{"0", "length 0"},
		{"uniform:5", "want N, uniform:MIN:MAX, normal:MEAN:SD or hist:FILE"},
		{"uniform:20:10", "maximum 10 below the minimum 20"},
		{"uniform:1.5:3", `"1.5" is not a number`},
		{"normal:100:-1", "standard deviation -1"},
		{"normal:NaN:1", `"NaN" is not a number`},
		{"zipf:1:2", "want N, uniform:MIN:MAX, normal:MEAN:SD or hist:FILE"},
		{"hist:", "want hist:FILE"},
		{"hist:testdata/no-such-file.csv", "no such file"},
	} {
		if _, err := ParseLengths(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseLengths(%q) = %v, want an error with %q", c.spec, err, c.want)
		}
	}
}

// FuzzParseLengths: any spec parses to a distribution whose draws are in
// range and whose String parses back the same, or is an error.
func FuzzParseLengths(f *testing.F) {
	for _, s := range []string{"128", "uniform:1:4", "normal:10:3", "normal:1e6:1e6", "uniform:x:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if _, ok := HistogramFile(spec); ok {
			return // reads a file: FuzzReadHistogram covers the reader
		}
		l, err := ParseLengths(spec)
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for range 10 {
			if n := l.Draw(rng); n < 1 || n > MaxTextTokens {
				t.Fatalf("%q drew %d", spec, n)
			}
		}
		back, err := ParseLengths(l.String())
		if err != nil || back != l {
			t.Fatalf("%q → %q → %+v, %v", spec, l.String(), back, err)
		}
	})
}
