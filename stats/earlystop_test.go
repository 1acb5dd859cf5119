package stats

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Golden data: testdata/earlystop_golden.txt, printed by testdata/es_oracle.cc
// (regenerate as described there). The format is documented in that file.

const goldenPath = "testdata/earlystop_golden.txt"

type goldenRec struct {
	line   int
	fields []string
	raw    string
}

func loadGolden(t *testing.T) []goldenRec {
	t.Helper()
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []goldenRec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		recs = append(recs, goldenRec{line: n, fields: strings.Fields(s), raw: s})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no golden records")
	}
	return recs
}

func pf(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func pi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func goldenOfKind(t *testing.T, kind string) []goldenRec {
	var out []goldenRec
	for _, r := range loadGolden(t) {
		if r.fields[0] == kind {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %q records in %s", kind, goldenPath)
	}
	return out
}

const (
	conf = EarlyStoppingConfidence
	tol  = EarlyStoppingTolerance
)

func TestGoldenSeq(t *testing.T) {
	for _, r := range goldenOfKind(t, "seq") {
		f := r.fields
		p, d, c := pf(t, f[1]), pf(t, f[2]), pf(t, f[3])
		t0, t1 := pi(t, f[4]), pi(t, f[5])
		want := f[6:]
		if int64(len(want)) != t1-t0+1 {
			t.Fatalf("line %d: malformed", r.line)
		}
		var es EarlyStopping
		for i, tt := 0, t0; tt <= t1; i, tt = i+1, tt+1 {
			if got := es.MinPassing(tt, p, d, c); got != pi(t, want[i]) {
				t.Fatalf("line %d: p=%v d=%v c=%v ascending from %d: h(%d) = %d, want %s", r.line, p, d, c, t0, tt, got, want[i])
			}
		}
	}
}

func fnv64(h uint64, v int64) uint64 {
	u := uint64(v)
	for i := 0; i < 8; i++ {
		h ^= (u >> (8 * i)) & 0xff
		h *= 1099511628211
	}
	return h
}

func TestGoldenSeqLong(t *testing.T) {
	pts := map[[2]float64]int64{} // (p, t) -> h
	for _, r := range goldenOfKind(t, "seqpt") {
		pts[[2]float64{pf(t, r.fields[1]), float64(pi(t, r.fields[2]))}] = pi(t, r.fields[3])
	}
	for _, r := range goldenOfKind(t, "seqsum") {
		f := r.fields
		p, d, c := pf(t, f[1]), pf(t, f[2]), pf(t, f[3])
		t0, t1 := pi(t, f[4]), pi(t, f[5])
		if testing.Short() && t1 > 20000 {
			t1 = 20000 // prefix only; hash and last are then not checked
		}
		var es EarlyStopping
		hash := uint64(14695981039346656037)
		var last int64
		for tt := t0; tt <= t1; tt++ {
			last = es.MinPassing(tt, p, d, c)
			hash = fnv64(hash, last)
			if want, ok := pts[[2]float64{p, float64(tt)}]; ok && want != last {
				t.Fatalf("line %d: p=%v: h(%d) = %d, want %d", r.line, p, tt, last, want)
			}
		}
		if t1 != pi(t, f[5]) {
			continue
		}
		if got := fmt.Sprintf("%016x", hash); got != f[6] || last != pi(t, f[7]) {
			t.Errorf("line %d: p=%v t=%d..%d: hash %s last %d, want %s %s", r.line, p, t0, t1, got, last, f[6], f[7])
		}
	}
}

func TestGoldenCold(t *testing.T) {
	for _, r := range goldenOfKind(t, "cold") {
		p, tt, want := pf(t, r.fields[1]), pi(t, r.fields[2]), pi(t, r.fields[3])
		if got := NewEarlyStopping().MinPassing(tt, p, tol, conf); got != want {
			t.Errorf("line %d: fresh MinPassing(%d, %v) = %d, want %d", r.line, tt, p, got, want)
		}
	}
}

func TestGoldenDesc(t *testing.T) {
	for _, r := range goldenOfKind(t, "desc") {
		f := r.fields
		p, t1, t0 := pf(t, f[1]), pi(t, f[2]), pi(t, f[3])
		var es EarlyStopping
		for i, tt := 0, t1; tt >= t0; i, tt = i+1, tt-1 {
			if got := es.MinPassing(tt, p, tol, conf); got != pi(t, f[4+i]) {
				t.Fatalf("line %d: p=%v descending: h(%d) = %d, want %s", r.line, p, tt, got, f[4+i])
			}
		}
	}
}

// lcg is the generator shared with es_oracle.cc.
type lcg uint64

func (x *lcg) draw(r uint64) int64 {
	*x = *x*6364136223846793005 + 1442695040888963407
	return int64((uint64(*x) >> 33) % r)
}

func TestGoldenRandomOrder(t *testing.T) {
	for _, r := range goldenOfKind(t, "rand") {
		f := r.fields
		p := pf(t, f[1])
		seed, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		k, rng := pi(t, f[3]), pi(t, f[4])
		x := lcg(seed)
		var es EarlyStopping
		for i := int64(0); i < k; i++ {
			tt := x.draw(uint64(rng))
			want := fmt.Sprintf("%d:%d", tt, es.MinPassing(tt, p, tol, conf))
			if want != f[5+i] {
				t.Fatalf("line %d: p=%v seed=%d query %d: got %s, want %s", r.line, p, seed, i, want, f[5+i])
			}
		}
	}
}

func synthLatencies(n int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = 1000000 + 37*int64(i)
	}
	return v
}

func TestGoldenSSMS(t *testing.T) {
	for _, r := range goldenOfKind(t, "ss") {
		f := r.fields
		p, n := pf(t, f[1]), pi(t, f[2])
		sat, x, wantT := f[3] == "1", pi(t, f[4]), pi(t, f[5])
		if testing.Short() && p == 0.9 && n > 300000 {
			continue
		}
		lat := synthLatencies(n)
		res := NewEarlyStopping().MultiStream(lat, p)
		e := res.Estimate
		if e.Satisfied != sat || res.Satisfied != sat || e.MinQueries != x || e.T != wantT || e.Queries != n {
			t.Fatalf("line %d: p=%v n=%d: got %+v, want satisfied=%v X=%d t=%d", r.line, p, n, e, sat, x, wantT)
		}
		if sat {
			if want := lat[n-wantT]; e.Estimate != want {
				t.Fatalf("line %d: estimate %d, want %d", r.line, e.Estimate, want)
			}
			if e.Discarded() != wantT-1 {
				t.Fatalf("line %d: Discarded() = %d, want %d", r.line, e.Discarded(), wantT-1)
			}
		}
	}
}

func TestGoldenText(t *testing.T) {
	for _, r := range goldenOfKind(t, "text") {
		f := r.fields
		kind, p, n, arg := f[1], pf(t, f[2]), pi(t, f[3]), pi(t, f[4])
		bar := strings.Index(r.raw, "|")
		var want []string
		for _, s := range strings.Split(r.raw[bar+1:], " |") {
			want = append(want, strings.TrimPrefix(s, " "))
		}
		var got []string
		switch kind {
		case "ss":
			got = NewEarlyStopping().SingleStream(synthLatencies(n), p).Lines
		case "ms":
			got = NewEarlyStopping().MultiStream(synthLatencies(n), p).Lines
		case "server":
			got = NewEarlyStopping().Server(n, arg, p).Lines
		default:
			t.Fatalf("line %d: unknown kind %q", r.line, kind)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("line %d: %s p=%v n=%d arg=%d:\n got %q\nwant %q", r.line, kind, p, n, arg, got, want)
		}
	}
}

// TestKnownValues pins the values quoted in loadgen-reference.md §9.
func TestKnownValues(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		t, h int64
	}{
		{0.90, 0, 44}, {0.90, 1, 63}, {0.99, 0, 459}, {0.99, 1, 661}, {0.999, 1, 6635},
		{0.90, 400, 4066}, {0.99, 400, 44481},
	} {
		if got := NewEarlyStopping().MinPassing(tc.t, tc.p, tol, conf); got != tc.h {
			t.Errorf("fresh MinPassing(%d, %v) = %d, want %d", tc.t, tc.p, got, tc.h)
		}
	}
	for _, tc := range []struct {
		p    float64
		n, t int64
	}{
		{0.90, 1024, 80}, {0.99, 1024, 3}, {0.99, 270336, 2583},
	} {
		lat := synthLatencies(tc.n)
		e := NewEarlyStopping().MultiStream(lat, tc.p).Estimate
		if e.T != tc.t || e.Estimate != lat[tc.n-tc.t] {
			t.Errorf("n=%d p=%v: t=%d estimate=%d, want t=%d estimate=%d", tc.n, tc.p, e.T, e.Estimate, tc.t, lat[tc.n-tc.t])
		}
	}
}

func TestSingleStreamStructure(t *testing.T) {
	lat := synthLatencies(1024)
	r := NewEarlyStopping().SingleStream(lat, 0.9)
	want := []string{
		" * Processed at least 64 queries (1024).",
		" * Would discard 79 highest latency queries.",
		" * Early stopping 90.0th percentile estimate: " + strconv.FormatInt(lat[944], 10),
		" * Early stopping 99.0th percentile estimate: " + strconv.FormatInt(lat[1021], 10),
	}
	if !r.Satisfied || r.Target.Estimate != lat[944] || r.P99 == nil || !r.P99.Satisfied || r.P99.Estimate != lat[1021] {
		t.Errorf("SingleStream(1024, 0.9) = %+v (P99 %+v)", r, r.P99)
	}
	if !reflect.DeepEqual(r.Lines, want) {
		t.Errorf("lines %q, want %q", r.Lines, want)
	}

	// Target satisfied, 99th not: three-line note, P99 present but unsatisfied.
	r = NewEarlyStopping().SingleStream(synthLatencies(100), 0.9)
	if !r.Satisfied || r.P99 == nil || r.P99.Satisfied || r.P99.MinQueries != 662 || len(r.Lines) != 6 {
		t.Errorf("SingleStream(100, 0.9) = %+v (P99 %+v)", r, r.P99)
	}
	if r.Lines[4] != " early stopping estimate (would need to process at" || r.Lines[5] != " least 662 total queries)." {
		t.Errorf("wrapped lines %q", r.Lines[3:])
	}

	// Target not satisfied: the 99th step is skipped entirely (reference §9:
	// p = 0.999, n = 1000).
	r = NewEarlyStopping().SingleStream(synthLatencies(1000), 0.999)
	if r.Satisfied || r.P99 != nil || r.Target.MinQueries != 6636 {
		t.Errorf("SingleStream(1000, 0.999) = %+v", r)
	}
	if want := []string{" * Only processed 1000 queries.", " * Need to process at least 6636 queries for early stopping."}; !reflect.DeepEqual(r.Lines, want) {
		t.Errorf("lines %q, want %q", r.Lines, want)
	}

	// Target 0.99: the 99th step reuses the memo and repeats the same line.
	r = NewEarlyStopping().SingleStream(synthLatencies(1024), 0.99)
	if len(r.Lines) != 4 || r.Lines[2] != r.Lines[3] {
		t.Errorf("SingleStream(1024, 0.99) lines %q", r.Lines)
	}
}

func TestServer(t *testing.T) {
	tests := []struct {
		n, over int64
		p       float64
		sat     bool
		more    int64
		why     string
	}{
		{44, 0, 0.9, true, 0, "h(0)=44 at p=0.9: 44 >= 44+0"},
		{43, 0, 0.9, false, 1, "one short of h(0)"},
		{64, 1, 0.9, true, 0, "h(1)=63: 64 >= 63+1"},
		{63, 1, 0.9, false, 1, "63 < 64"},
		{44481 + 400, 400, 0.99, true, 0, "h(400)=44481 at p=0.99, exactly enough"},
		{10000, 400, 0.99, false, 44481 + 400 - 10000, "far too few queries"},
	}
	for _, tc := range tests {
		r := NewEarlyStopping().Server(tc.n, tc.over, tc.p)
		if r.Satisfied != tc.sat || r.MoreQueriesNeeded() != tc.more {
			t.Errorf("Server(%d, %d, %v) = %+v, want satisfied=%v more=%d (%s)", tc.n, tc.over, tc.p, r, tc.sat, tc.more, tc.why)
		}
		if tc.sat && !reflect.DeepEqual(r.Lines, []string{" * Run successful."}) {
			t.Errorf("lines %q", r.Lines)
		}
		if !tc.sat && (len(r.Lines) != 5 || r.Lines[2] != " * Would need to run at least "+strconv.FormatInt(tc.more, 10)+" more queries,") {
			t.Errorf("lines %q", r.Lines)
		}
	}
}

// TestMemoOrderMatters shows why the memo is per computation: the same query
// can get a different answer after a different history (LoadGen's bracket
// may return its upper end unchecked).
func TestMemoOrderMatters(t *testing.T) {
	diff := 0
	for _, r := range goldenOfKind(t, "rand") {
		f := r.fields
		p := pf(t, f[1])
		for _, tok := range f[5:] {
			tt, h, _ := strings.Cut(tok, ":")
			if NewEarlyStopping().MinPassing(pi(t, tt), p, tol, conf) != pi(t, h) {
				diff++
			}
		}
	}
	if diff == 0 {
		t.Error("expected some history-dependent answers in the random-order golden runs")
	}
	t.Logf("%d random-order answers differ from a cold query", diff)
}

func TestMinPassingPanics(t *testing.T) {
	for _, a := range []struct{ t, p, d, c float64 }{{-1, 0.9, 0, 0.99}, {1, 1, 0, 0.99}, {1, 0.9, 0.9, 0.99}, {1, 0.9, 0, 1}, {1, 0.9, 0, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MinPassing%v did not panic", a)
				}
			}()
			NewEarlyStopping().MinPassing(int64(a.t), a.p, a.d, a.c)
		}()
	}
}
