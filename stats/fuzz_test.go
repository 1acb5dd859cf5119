package stats

import (
	"testing"
)

// FuzzIntervalUnion compares IntervalUnion with a unit-cell count over a small
// coordinate range. Each interval takes two bytes: a start in [-128, 127] and
// a signed length (negative lengths give empty intervals).
func FuzzIntervalUnion(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 5, 5, 2})
	f.Add([]byte{10, 20, 5, 3, 0x80, 0x7f, 200, 250})
	f.Fuzz(func(t *testing.T, data []byte) {
		var starts, ends []int64
		for i := 0; i+1 < len(data); i += 2 {
			s := int64(int8(data[i]))
			starts = append(starts, s)
			ends = append(ends, s+int64(int8(data[i+1])))
		}
		const lo, hi = -256, 256
		var covered [hi - lo]bool
		for i := range starts {
			for x := starts[i]; x < ends[i]; x++ {
				covered[x-lo] = true
			}
		}
		var want int64
		for _, c := range covered {
			if c {
				want++
			}
		}
		if got := IntervalUnion(starts, ends); got != want {
			t.Fatalf("IntervalUnion(%v, %v) = %d, brute force %d", starts, ends, got, want)
		}
	})
}

// FuzzMinPassingMonotone checks that h(t) strictly increases with t, both for
// ascending queries on one fresh EarlyStopping (the SingleStream order) and
// for cold queries (a fresh value each, the Server pattern).
func FuzzMinPassingMonotone(f *testing.F) {
	f.Add(uint16(0), uint8(50))
	f.Add(uint16(65535), uint8(20))
	f.Add(uint16(40000), uint8(200))
	f.Fuzz(func(t *testing.T, pRaw uint16, tMax uint8) {
		// p in [0.5, 0.999], the range LoadGen is used with.
		p := 0.5 + float64(float64(pRaw)/65535*0.499)
		var es EarlyStopping
		prev, prevCold := int64(-1), int64(-1)
		for tt := int64(0); tt <= int64(tMax); tt++ {
			h := es.MinPassing(tt, p, EarlyStoppingTolerance, EarlyStoppingConfidence)
			if h <= prev {
				t.Fatalf("p=%v: ascending h(%d) = %d <= h(%d) = %d", p, tt, h, tt-1, prev)
			}
			prev = h
			if tt%7 == 0 || tt < 4 {
				hc := NewEarlyStopping().MinPassing(tt, p, EarlyStoppingTolerance, EarlyStoppingConfidence)
				if hc <= prevCold {
					t.Fatalf("p=%v: cold h(%d) = %d <= earlier cold %d", p, tt, hc, prevCold)
				}
				prevCold = hc
			}
		}
	})
}
