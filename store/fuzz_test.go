package store

import (
	"math"
	"path"
	"strings"
	"testing"
)

// FuzzSafeName: a manifest name safeName accepts never leaves the bundle.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"records.parquet", "foreign/settings.json", "../x", "/etc/passwd", "a/../../b", "a//b", ".", "", `a\b`, "./a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !safeName(name) {
			return
		}
		j := path.Join("/root/bundle", name)
		if !strings.HasPrefix(j, "/root/bundle/") {
			t.Errorf("safeName(%q) but it joins to %q", name, j)
		}
	})
}

// FuzzStudentTCDF: the CDF is a probability, symmetric, and grows with t.
func FuzzStudentTCDF(f *testing.F) {
	f.Add(0.0, 1.0, 0.5)
	f.Add(2.228, 10.0, 0.1)
	f.Add(-40.0, 3.5, 1e-3)
	f.Add(1e6, 1e9, 1.0)
	f.Fuzz(func(t *testing.T, x, df, dx float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(df) || df <= 0 || df > 1e12 || math.IsNaN(dx) || math.IsInf(dx, 0) || math.Abs(x) > 1e12 {
			return
		}
		p := StudentTCDF(x, df)
		if !(p >= 0 && p <= 1) {
			t.Fatalf("F(%v; %v) = %v", x, df, p)
		}
		if q := StudentTCDF(-x, df); math.Abs(p+q-1) > 1e-9 {
			t.Errorf("F(%v) + F(%v) = %v on %v df", x, -x, p+q, df)
		}
		if dx = math.Abs(dx); dx > 0 && x+dx > x {
			if p2 := StudentTCDF(x+dx, df); p2 < p-1e-12 {
				t.Errorf("F(%v) = %v < F(%v) = %v on %v df", x+dx, p2, x, p, df)
			}
		}
	})
}
