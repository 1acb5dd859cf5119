package metrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"aimeter/derived/metrics/metricstest"
	"aimeter/loadgen"
)

const ms = int64(time.Millisecond)

// handResult is metricstest.HandResult, worked by hand below.
func handResult() *loadgen.Result { return metricstest.HandResult() }

func TestMeasureHandWorked(t *testing.T) {
	p, err := MeasureResult(handResult(), SLO{})
	if err != nil {
		t.Fatal(err)
	}
	// 8 successes, 1 failure, 1 lost; tokens 10+10+10+11+20+1+5+9 = 76 over
	// 2 s: system_tps 38, request rate 4/s. TTFT sorted: 50 50 100 100 100
	// 200 300 800, p90 at index trunc(8·0.9) = 7: 800 ms. TPOT (7 with ≥ 2
	// tokens) sorted: 0 50 50 50 100 100 100, index trunc(6.3) = 6: 100 ms,
	// so tps_per_user = 10. E2E sorted: 200 500 600 800 900 1000 1000 1200,
	// index 7: 1200 ms.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"issued", float64(p.Issued), 10}, {"completed", float64(p.Completed), 8},
		{"errors", float64(p.Errors), 1}, {"lost", float64(p.Lost), 1},
		{"output tokens", float64(p.OutputTokens), 76}, {"elapsed", p.ElapsedS, 2},
		{"system_tps", p.SystemTPS, 38}, {"request rate", p.RequestRate, 4},
		{"ttft p90", p.TTFTP90Ms, 800}, {"tpot p90", p.TPOTP90Ms, 100},
		{"tps_per_user", p.TPSPerUser, 10}, {"e2e p90", p.E2EP90Ms, 1200},
		{"concurrency", float64(p.Concurrency), 4},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p.Goodput != nil {
		t.Errorf("goodput %+v without an SLO", p.Goodput)
	}
}

func TestGoodputHandWorked(t *testing.T) {
	for _, c := range []struct {
		slo    SLO
		met    uint64
		tokens int64
		reason string
	}{
		{SLO{TTFT: 100 * time.Millisecond}, 5, 60,
			"TTFT ≤ 100 ms: requests 0, 1, 3, 4, 7 (10+10+11+20+9 = 60 tokens); 2 (300), 5 (200), 6 (800) miss; the failure and the lost never meet"},
		{SLO{TPOT: 50 * time.Millisecond}, 5, 47,
			"TPOT ≤ 50 ms: 1, 3, 4 (50 each), 5 (one token: no TPOT to miss), 6 (0): 10+11+20+1+5 = 47"},
		{SLO{E2E: time.Second}, 7, 66,
			"E2E ≤ 1 s: 0 and 4 (1000 ms, on the bound: met), 1, 3, 5, 6, 7; only 2 (1200) misses: 10+10+11+20+1+5+9 = 66"},
		{SLO{TTFT: 100 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: time.Second}, 3, 41,
			"all three: 1, 3, 4 (10+11+20 = 41)"},
		{SLO{TTFT: time.Millisecond}, 0, 0, "an SLO no request meets: goodput 0"},
	} {
		p, err := MeasureResult(handResult(), c.slo)
		if err != nil {
			t.Fatal(err)
		}
		g := p.Goodput
		if g == nil || g.Met != c.met || math.Abs(g.TokensPerS-float64(c.tokens)/2) > 1e-9 ||
			math.Abs(g.RequestsPerS-float64(c.met)/2) > 1e-9 || math.Abs(g.Fraction-float64(c.met)/10) > 1e-9 {
			t.Errorf("SLO %v: goodput %+v, want %d met (%d tokens) of 10 over 2 s: %s", c.slo, g, c.met, c.tokens, c.reason)
		}
	}
}

func TestMeasureNoPass(t *testing.T) {
	res := &loadgen.Result{Passes: []loadgen.PassInfo{{Kind: loadgen.PassAccuracy, Reported: true}}}
	if _, err := MeasureResult(res, SLO{}); err != ErrNoPass {
		t.Errorf("an accuracy-only run: %v, want ErrNoPass", err)
	}
	if _, err := Measure(nil, SLO{}); err != ErrNoPass {
		t.Errorf("a nil bundle: %v, want ErrNoPass", err)
	}
}

func TestParseSLO(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   SLO
		err    string
		reason string
	}{
		{"ttft=200ms,tpot=50ms,e2e=5s", SLO{200 * time.Millisecond, 50 * time.Millisecond, 5 * time.Second}, "", "all three bounds"},
		{"tpot=20ms", SLO{TPOT: 20 * time.Millisecond}, "", "any subset"},
		{" TTFT = 1s , e2e=2s", SLO{TTFT: time.Second, E2E: 2 * time.Second}, "", "names are case-insensitive and spaces are allowed"},
		{"", SLO{}, "empty", "no bound at all is refused"},
		{"ttft", SLO{}, `item 1 "ttft": want NAME=DURATION`, "a name without a value"},
		{"ttft=200", SLO{}, `item 1 "ttft=200"`, "a duration needs its unit"},
		{"ttft=200ms,ttft=1s", SLO{}, "ttft given twice", "a bound twice"},
		{"tpot=0s", SLO{}, "must be > 0", "a zero bound"},
		{"itl=5ms", SLO{}, `unknown bound "itl"`, "an unknown name"},
		{"ttft=1s,,", SLO{}, "item 2", "an empty item is named by its place"},
	} {
		got, err := ParseSLO(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseSLO(%q) = %+v, %v; want %+v: %s", c.in, got, err, c.want, c.reason)
			}
			if back, err := ParseSLO(got.String()); err != nil || back != got {
				t.Errorf("ParseSLO(%q).String() = %q does not read back: %v", c.in, got.String(), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseSLO(%q) error %v, want one containing %q: %s", c.in, err, c.err, c.reason)
		}
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft=200ms,tpot=50ms,e2e=5s", "tpot=1s", "", "x=1", "ttft=-1s", "e2e=1h,ttft=1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSLO(in)
		if err != nil {
			return
		}
		if s.IsZero() || s.TTFT < 0 || s.TPOT < 0 || s.E2E < 0 {
			t.Fatalf("ParseSLO(%q) = %+v without an error", in, s)
		}
		back, err := ParseSLO(s.String())
		if err != nil || back != s {
			t.Fatalf("ParseSLO(%q) = %+v; its String %q reads back as %+v, %v", in, s, s.String(), back, err)
		}
	})
}
