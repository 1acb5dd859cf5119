package sweep

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestRoundHalfEven(t *testing.T) {
	for _, c := range []struct {
		x      float64
		want   int
		reason string
	}{
		{0.5, 0, "a tie goes to the even neighbour 0, not up to 1"},
		{1.5, 2, "a tie goes to the even neighbour 2"},
		{2.5, 2, "a tie goes down to even 2 (half-up would give 3)"},
		{3.5, 4, "a tie goes up to even 4"},
		{204.5, 204, "the tie nearest Cmin=1, Cmax=2904's boundary would go down"},
		{204.50012979243024, 205, "Cmin=1, Cmax=2904: 1 + 2^(2I) is just above the half, so it rounds up"},
		{12.50031505123023, 13, "Cmin=1, Cmax=40: 1 + 2^(2I) just above a half"},
		{2.4999999999, 2, "just below a half rounds down"},
		{-0.5, 0, "a negative tie goes to even 0"},
		{7.341325705384996, 7, "Example B's low boundary, 1 + 2^2.665"},
	} {
		if got := RoundHalfEven(c.x); got != c.want {
			t.Errorf("RoundHalfEven(%v) = %d, want %d: %s", c.x, got, c.want, c.reason)
		}
	}
}

// TestComputeRegionsWorked checks the rules' worked examples and edge
// cases, each worked by hand (the log and power to 4 digits, then the
// rounding).
func TestComputeRegionsWorked(t *testing.T) {
	for _, c := range []struct {
		cmin, cmax          int
		low, med, high, mar Range
		reason              string
	}{
		{32, 8192, Range{33, 52}, Range{53, 437}, Range{438, 8192}, Range{8193, 9012},
			"Example A: I = log2(8160)/3 = 4.331; 32 + 20.13 → 52; 32 + 405.3 → 437; ceil(9011.2) = 9012"},
		{1, 256, Range{2, 7}, Range{8, 41}, Range{42, 256}, Range{257, 282},
			"Example B: I = log2(255)/3 = 2.665; 1 + 6.34 → 7; 1 + 40.21 → 41; ceil(281.6) = 282"},
		{16, 1024, Range{17, 26}, Range{27, 117}, Range{118, 1024}, Range{1025, 1127},
			"Example C: 16 + 2^6.652 = 16 + 100.53 = 116.53 → 117 (the rules' prose says 100.4 → 116; the reference code gives 117)"},
		{1, 40, Range{2, 4}, Range{5, 13}, Range{14, 40}, Range{41, 44},
			"39^(2/3) = 11.5003: 12.5003 is above the half and rounds up to 13, not to even 12"},
		{32, 33, Range{33, 33}, Range{34, 33}, Range{34, 33}, Range{34, 37},
			"Cmax − Cmin = 1: I = 0, both boundaries are 33, medium and high collapse (zero width)"},
		{32, 64, Range{33, 35}, Range{36, 42}, Range{43, 64}, Range{65, 71},
			"I = 5/3: 32 + 3.175 → 35; 32 + 10.08 → 42; ceil(70.4) = 71"},
		{1, 100, Range{2, 6}, Range{7, 22}, Range{23, 100}, Range{101, 111},
			"1.10·100 is 110.00000000000001 in float64, so the reference's ceil gives 111, not 110"},
	} {
		r, err := ComputeRegions(c.cmin, c.cmax)
		if err != nil {
			t.Fatalf("%d..%d: %v", c.cmin, c.cmax, err)
		}
		if r.UltraLow != (Range{1, c.cmin}) || r.Low != c.low || r.Medium != c.med || r.High != c.high || r.Margin != c.mar {
			t.Errorf("ComputeRegions(%d, %d) = %+v, want low %v med %v high %v margin %v: %s", c.cmin, c.cmax, r, c.low, c.med, c.high, c.mar, c.reason)
		}
	}
}

func TestComputeRegionsRefuses(t *testing.T) {
	for _, c := range []struct {
		cmin, cmax int
		want       string
		reason     string
	}{
		{0, 100, "minimum concurrency 0", "Cmin must be at least 1"},
		{33, 100, "minimum concurrency 33", "Cmin must lie in the ultra-low region 1–32"},
		{1, 32, "maximum concurrency 32", "Cmax must be above 32 (the reference asserts it)"},
	} {
		_, err := ComputeRegions(c.cmin, c.cmax)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ComputeRegions(%d, %d) = %v, want an error naming %q: %s", c.cmin, c.cmax, err, c.want, c.reason)
		}
	}
}

// TestComputeRegionsMatchesPython compares every Cmax from 33 to 4096, for
// Cmin 1, 16 and 32, with the boundaries CPython's reference algorithm gave
// (testdata/regions_python.txt, made by the script in its header): the
// same float64 log2, pow and round-half-to-even.
func TestComputeRegionsMatchesPython(t *testing.T) {
	f, err := os.Open("testdata/regions_python.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		var v []int
		for _, s := range strings.Fields(sc.Text()) {
			x, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			v = append(v, x)
		}
		if len(v) != 8 {
			t.Fatalf("line %d: %d fields, want 8", line, len(v))
		}
		for i, cmin := range []int{1, 16, 32} {
			r, err := ComputeRegions(cmin, v[0])
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			if r.Low.End != v[1+2*i] || r.Medium.End != v[2+2*i] || r.Margin.End != v[7] {
				t.Errorf("Cmin %d, Cmax %d: ends %d, %d, margin %d; Python: %d, %d, %d", cmin, v[0], r.Low.End, r.Medium.End, r.Margin.End, v[1+2*i], v[2+2*i], v[7])
			}
			n++
		}
	}
	if n != 3*4064 {
		t.Errorf("%d cases compared, want %d", n, 3*4064)
	}
}

func TestClassify(t *testing.T) {
	r, _ := ComputeRegions(1, 256)
	for _, c := range []struct {
		c      int
		want   string
		reason string
	}{
		{1, RegionUltraLow, "Cmin itself is the low-latency point"},
		{2, RegionLow, "Cmin + 1 starts the low region"},
		{7, RegionLow, "round(1 + 6.34) ends it"},
		{8, RegionMedium, "the medium region starts after"},
		{41, RegionMedium, "round(1 + 40.21) ends it"},
		{42, RegionHigh, "high starts after"},
		{256, RegionHigh, "Cmax is in high"},
		{282, RegionMargin, "ceil(1.1 × 256) = 282 is the margin's top"},
		{283, "", "above the margin is out of range"},
		{0, "", "below 1 is out of range"},
	} {
		if got := r.Classify(c.c); got != c.want {
			t.Errorf("Classify(%d) = %q, want %q: %s", c.c, got, c.want, c.reason)
		}
	}
	// A collapsed region's value belongs to the region below it.
	r, _ = ComputeRegions(32, 33)
	if got := r.Classify(33); got != RegionLow {
		t.Errorf("Cmin 32, Cmax 33: Classify(33) = %q, want the low region (medium and high are empty)", got)
	}
}

func TestAutoPoints(t *testing.T) {
	for _, c := range []struct {
		cmin, cmax, n int
		want          []int
		reason        string
	}{
		{1, 256, 7, []int{1, 4, 7, 18, 41, 104, 256},
			"Cmin; the region tops 7, 41, 256; the geometric middles round(√(2·7)) = 4, round(√(8·41)) = 18, round(√(42·256)) = 104"},
		{1, 256, 8, []int{1, 4, 7, 16, 18, 41, 104, 256},
			"the eighth is the log-2 middle of 1…256: 2^4 = 16"},
		{32, 8192, 7, []int{32, 41, 52, 152, 437, 1894, 8192},
			"Example A's regions: √(33·52) = 41.4 → 41, √(53·437) = 152.2 → 152, √(438·8192) = 1894.2 → 1894"},
		{32, 33, 7, []int{32, 33},
			"medium and high collapse: only Cmin and the low region's 33 exist"},
	} {
		got, r, err := AutoPoints(c.cmin, c.cmax, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("AutoPoints(%d, %d, %d) = %v, want %v: %s", c.cmin, c.cmax, c.n, got, c.want, c.reason)
		}
		if m := r.Coverage(got); m != nil {
			t.Errorf("AutoPoints(%d, %d, %d) = %v leaves %v uncovered", c.cmin, c.cmax, c.n, got, m)
		}
	}
	for _, n := range []int{6, 32} {
		if _, _, err := AutoPoints(1, 256, n); err == nil || !strings.Contains(err.Error(), "point count") {
			t.Errorf("AutoPoints with %d points: %v, want a point-count error", n, err)
		}
	}
	// Every size from 7 to 31 on a wide range gives exactly n points.
	for n := MinPoints; n < MaxPoints; n++ {
		got, _, err := AutoPoints(1, 4096, n)
		if err != nil || len(got) != n || !slices.IsSorted(got) {
			t.Errorf("AutoPoints(1, 4096, %d) = %v, %v", n, got, err)
		}
	}
}

func TestCoverage(t *testing.T) {
	r, _ := ComputeRegions(1, 256)
	for _, c := range []struct {
		pts    []int
		want   []string
		reason string
	}{
		{[]int{1, 4, 16, 32, 64, 128, 256}, nil, "the rules' minimum 7-point example for Example B"},
		{[]int{1, 16, 64}, []string{RegionLow}, "nothing in 2–7"},
		{[]int{4, 16, 64}, []string{RegionUltraLow}, "nothing at or below Cmin"},
		{[]int{1, 4, 16, 300}, []string{RegionHigh}, "300 is beyond the margin, not in high"},
	} {
		if got := r.Coverage(c.pts); !slices.Equal(got, c.want) {
			t.Errorf("Coverage(%v) = %v, want %v: %s", c.pts, got, c.want, c.reason)
		}
	}
}

func TestParsePoints(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   []uint64
		err    string
		reason string
	}{
		{"1,2,4,8", []uint64{1, 2, 4, 8}, "", "a plain list"},
		{" 8 , 1 ", []uint64{8, 1}, "", "spaces are allowed and the order is kept (the summary sorts)"},
		{"1,x", nil, `item 2 "x"`, "a word"},
		{"0", nil, `item 1 "0"`, "concurrency 0 runs nothing"},
		{"1048577", nil, "from 1 to 1048576", "above loadgen.MaxConcurrency"},
		{"2,2", nil, "listed twice", "a point twice"},
		{"", nil, `item 1 ""`, "an empty list"},
		{strings.Repeat("1,", 0) + "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33", nil, "33 points", "more than 32"},
	} {
		got, err := ParsePoints(c.in)
		if c.err == "" {
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("ParsePoints(%q) = %v, %v; want %v: %s", c.in, got, err, c.want, c.reason)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParsePoints(%q) error %v, want %q: %s", c.in, err, c.err, c.reason)
		}
	}
}

func FuzzParsePoints(f *testing.F) {
	for _, s := range []string{"1,2,4", "0", "1,1", " 3 ", "-1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		pts, err := ParsePoints(in)
		if err != nil {
			return
		}
		if len(pts) == 0 || len(pts) > MaxPoints {
			t.Fatalf("ParsePoints(%q) = %v", in, pts)
		}
		seen := map[uint64]bool{}
		for _, c := range pts {
			if c == 0 || seen[c] {
				t.Fatalf("ParsePoints(%q) = %v: a zero or repeated point", in, pts)
			}
			seen[c] = true
		}
	})
}
