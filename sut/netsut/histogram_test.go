package netsut

import (
	"testing"
	"time"
)

// TestHistogram: percentiles within the bucket precision (+12.5 %), the
// exact count and maximum, and an empty histogram's zero summary.
func TestHistogram(t *testing.T) {
	var h Histogram
	for v := range int64(1000) {
		h.Record(v * 1000) // 0 to 999 µs
	}
	d := h.Summary()
	if d.Count != 1000 || d.Max != 999_000*time.Nanosecond {
		t.Errorf("%+v", d)
	}
	for _, c := range []struct{ got, want time.Duration }{{d.P50, 499 * time.Microsecond}, {d.P99, 989 * time.Microsecond}} {
		if c.got < c.want || float64(c.got) > float64(c.want)*1.13 {
			t.Errorf("percentile %v, want %v to +12.5%%", c.got, c.want)
		}
	}
	for v := int64(0); v < 1<<20; v = v*3 + 1 {
		if top := bucketTop(bucketOf(v)); top < v || (v > 8 && float64(top) > float64(v)*1.13) {
			t.Errorf("value %d: bucket top %d", v, top)
		}
	}
	var empty Histogram
	if d := empty.Summary(); d.Count != 0 || d.P99 != 0 {
		t.Errorf("empty: %+v", d)
	}
}
