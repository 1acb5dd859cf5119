package tokenize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadHistogram reads good files and refuses bad ones naming the file
// and the line.
func TestReadHistogram(t *testing.T) {
	for _, c := range []struct {
		text    string
		lengths []int
		why     string
	}{
		{"128,70\n512,20\n2048,10\n", []int{128, 512, 2048}, "plain rows"},
		{"length,weight\n128,1\n", []int{128}, "a header row"},
		{"\ufeffLength , Weight\r\n# from the trace of 2026-11\n\n 64 , 0.25 \r\n96,0.75", []int{64, 96}, "byte-order mark, header in capitals, comments, blank lines, spaces, CRLF and no final newline"},
		{"1,0\n4194304,1e-3\n", []int{1, MaxTextTokens}, "both ends of the range; a zero weight is allowed"},
	} {
		l, err := ReadHistogram("h.csv", strings.NewReader(c.text))
		if err != nil {
			t.Errorf("%s: %v", c.why, err)
			continue
		}
		if fmt.Sprint(l.hist.lengths) != fmt.Sprint(c.lengths) || l.String() != "hist:h.csv" {
			t.Errorf("%s: lengths %v, String %q; want %v, hist:h.csv", c.why, l.hist.lengths, l.String(), c.lengths)
		}
	}
	for _, c := range []struct{ text, want, why string }{
		{"", "lengths file h.csv: no LENGTH,WEIGHT rows", "an empty file"},
		{"# only a comment\n\n", "no LENGTH,WEIGHT rows", "comments only"},
		{"length,weight\n", "no LENGTH,WEIGHT rows", "a header only"},
		{"128,0\n256,0\n", "every weight is 0", "nothing to draw"},
		{"128,1\nabc,2\n", `line 2: length "abc" is not a whole number`, "a word for a length"},
		{"12.5,1\n", `line 1: length "12.5" is not a whole number`, "a fraction for a length"},
		{"0,1\n", "line 1: length 0: want 1 to 4194304", "below the range"},
		{"4194305,1\n", "line 1: length 4194305: want 1 to 4194304", "above the range"},
		{"-3,1\n", "line 1: length -3: want 1 to", "a negative length"},
		{"128,x\n", `line 1: weight "x" is not a number`, "a word for a weight"},
		{"128,NaN\n", `line 1: weight "NaN" is not a number`, "NaN"},
		{"128,Inf\n", `line 1: weight "Inf" is not a number`, "infinity"},
		{"128,1\n256,-0.5\n", "line 2: weight -0.5 is negative", "a negative weight"},
		{"128\n", `line 1: "128": want LENGTH,WEIGHT`, "no weight"},
		{"128,1,2\n", `line 1: "128,1,2": want LENGTH,WEIGHT`, "three fields"},
		{"128,1\n\n# c\n128,2\n", "line 4: length 128 again (first on line 1)", "a length twice"},
		{"1,1.7e308\n2,1.7e308\n", "line 2: the weights add up to more than", "an overflowing sum"},
		{"128,1\nlength,weight\n", `line 2: length "length" is not a whole number`, "a header after the first row"},
		{"1," + strings.Repeat("0", 5000) + "\n", "line 1: longer than 4096 bytes", "an overlong line"},
	} {
		_, err := ReadHistogram("h.csv", strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "lengths file h.csv") {
			t.Errorf("%s: %v, want an error naming h.csv with %q", c.why, err, c.want)
		}
	}
}

// TestParseLengthsHistogramFile reads "hist:FILE" from disk: String gives
// the spec back and every draw is a length of the file.
func TestParseLengthsHistogramFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lengths.csv")
	if err := os.WriteFile(path, []byte("length,weight\n100,3\n200,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := "hist:" + path
	l, err := ParseLengths(spec)
	if err != nil {
		t.Fatal(err)
	}
	if l.String() != spec || l.IsFixed() || l.IsZero() {
		t.Errorf("String %q, fixed %v, zero %v; want %q, not fixed, not zero", l.String(), l.IsFixed(), l.IsZero(), spec)
	}
	if got, ok := HistogramFile(spec); !ok || got != path {
		t.Errorf("HistogramFile(%q) = %q, %v", spec, got, ok)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if n := l.Draw(rng); n != 100 && n != 200 {
			t.Fatalf("drew %d, not a length of the file", n)
		}
	}
	one, err := ReadHistogram("one.csv", strings.NewReader("7,0\n8,5\n9,0\n"))
	if err != nil || !one.IsFixed() || one.Draw(rng) != 8 {
		t.Errorf("one positive weight: fixed %v, draw %d, %v; want fixed, 8", one.IsFixed(), one.Draw(rng), err)
	}
}

// grid is a source whose Float64 values are 0, 1/n, 2/n, …, (n-1)/n in
// turn (n a power of 2): Rand.Float64 keeps the low 53 bits of Uint64 and
// divides by 2^53.
type grid struct{ k, n uint64 }

func (g *grid) Uint64() uint64 {
	v := g.k * (1 << 53 / g.n)
	g.k = (g.k + 1) % g.n
	return v
}

// TestHistogramDrawExact draws once at each point of an even grid over
// [0, 1): each length takes exactly its share of the draws, worked by
// hand from the weights.
func TestHistogramDrawExact(t *testing.T) {
	for _, c := range []struct {
		text string
		want map[int]int // length → draws of 1024
		why  string
	}{
		{"10,1\n20,2\n30,1\n", map[int]int{10: 256, 20: 512, 30: 256}, "weights 1:2:1 take 1/4, 1/2, 1/4"},
		{"5,0.5\n6,0\n7,1.5\n", map[int]int{5: 256, 7: 768}, "weight 0 is never drawn; 0.5:1.5 is 1/4, 3/4"},
		{"1,70\n2,20\n3,10\n", map[int]int{1: 717, 2: 205, 3: 102}, "70:20:10 of 1024: u=k×100/1024 < 70 for k ≤ 716, < 90 for k ≤ 921"},
		{"9,0\n8,3\n", map[int]int{8: 1024}, "a leading zero weight"},
	} {
		l, err := ReadHistogram("h.csv", strings.NewReader(c.text))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(&grid{n: 1024})
		got := map[int]int{}
		for range 1024 {
			got[l.Draw(rng)]++
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: drew %v, want %v", c.why, got, c.want)
		}
	}
	// The largest Float64 times the total can round up to the total
	// itself; the draw is then the last length that can be drawn, not
	// past the end.
	l, err := ReadHistogram("h.csv", strings.NewReader("3,1\n4,0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := l.Draw(rand.New(&grid{k: 1024 - 1, n: 1024})); n != 3 {
		t.Errorf("the top of the grid drew %d, want 3", n)
	}
}

// TestHistogramDrawSeeded draws 100,000 lengths with a seeded PCG: each
// length's count is within 6 standard deviations of its expected count.
// The generator is seeded, so the counts are the same on every run: the
// bound cannot flake, and a draw that ignored the weights (uniform over
// the rows: 25,000 each) would miss it by over 40 standard deviations.
func TestHistogramDrawSeeded(t *testing.T) {
	l, err := ReadHistogram("h.csv", strings.NewReader("16,40\n32,30\n64,20\n128,10\n"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(29, 45087))
	const n = 100000
	got := map[int]int{}
	for range n {
		got[l.Draw(rng)]++
	}
	for length, p := range map[int]float64{16: 0.4, 32: 0.3, 64: 0.2, 128: 0.1} {
		want, sd := n*p, math.Sqrt(n*p*(1-p))
		if d := math.Abs(float64(got[length]) - want); d > 6*sd {
			t.Errorf("length %d drawn %d times, want %g ± %.0f (6 SD)", length, got[length], want, 6*sd)
		}
	}
	if len(got) != 4 {
		t.Errorf("drew %v: lengths not in the file", got)
	}
}

// FuzzReadHistogram: any text reads to a histogram whose draws are
// lengths of the file in range, or is an error naming the file.
func FuzzReadHistogram(f *testing.F) {
	for _, s := range []string{"128,1\n", "length,weight\n1,0\n2,3\n", "# c\n\n5, 0.5\r\n", "1,1e308\n2,1e308\n", "x,1", "1,-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		l, err := ReadHistogram("f.csv", strings.NewReader(text))
		if err != nil {
			if !strings.Contains(err.Error(), "lengths file f.csv") {
				t.Fatalf("%q: error %v does not name the file", text, err)
			}
			return
		}
		in := map[int]bool{}
		for _, n := range l.hist.lengths {
			in[n] = true
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for range 20 {
			if n := l.Draw(rng); n < 1 || n > MaxTextTokens || !in[n] {
				t.Fatalf("%q drew %d", text, n)
			}
		}
		if l.String() != "hist:f.csv" {
			t.Fatalf("%q: String %q", text, l.String())
		}
	})
}
