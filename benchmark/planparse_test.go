package benchmark

import (
	"strings"
	"testing"
	"time"
)

func TestParseWarmup(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Warmup
	}{
		{"100", Warmup{Requests: 100}},
		{"10s", Warmup{Duration: 10 * time.Second}},
		{"1m30s", Warmup{Duration: 90 * time.Second}},
	} {
		got, err := ParseWarmup(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseWarmup(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "0s", "-5s", "-1", "ten", "1.5"} {
		if w, err := ParseWarmup(bad); err == nil || !strings.HasPrefix(err.Error(), `"`+bad+`": want`) {
			t.Errorf("ParseWarmup(%q) = %+v, %v; want an error that begins with the value", bad, w, err)
		}
	}
}

func TestParseTrainWorkload(t *testing.T) {
	w, err := ParseTrainWorkload("T1-1=1200:0.5:300")
	if err != nil || w.Name != "T1-1" || w.Baseline != 1200 || w.Weight != 0.5 || w.Throughput != 300 {
		t.Fatalf("got %+v, %v", w, err)
	}
	for _, bad := range []string{"T1-1", "=1", "x=", "x=1:2:3:4", "x=NaN", "x=0", "x=1:1.5", "x=-1", "x=1:inf"} {
		if w, err := ParseTrainWorkload(bad); err == nil {
			t.Errorf("ParseTrainWorkload(%q) = %+v, want an error", bad, w)
		}
	}
}

// FuzzParseTrainWorkload: whatever parses has a name, a baseline > 0, a
// weight in [0, 1] and a throughput ≥ 0.
func FuzzParseTrainWorkload(f *testing.F) {
	for _, s := range []string{"T1-1=1200", "T1-1=1200:0.5", "a=1:0.2:300", "=1", "x=", "x=1:2:3:4", "x=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseTrainWorkload(s)
		if err != nil {
			return
		}
		if w.Name == "" || !(w.Baseline > 0) || w.Weight < 0 || w.Weight > 1 || w.Throughput < 0 {
			t.Fatalf("%q parsed to an unusable workload %+v", s, w)
		}
	})
}

func TestParseTurns(t *testing.T) {
	for _, c := range []struct {
		in     string
		lo, hi int
	}{{"3", 3, 3}, {"2:6", 2, 6}, {"4:4", 4, 4}} {
		lo, hi, err := ParseTurns(c.in)
		if err != nil || lo != c.lo || hi != c.hi {
			t.Errorf("ParseTurns(%q) = %d, %d, %v; want %d, %d", c.in, lo, hi, err, c.lo, c.hi)
		}
	}
	for _, in := range []string{"", "0", "5:2", "2:", "x", "1:2:3"} {
		if _, _, err := ParseTurns(in); err == nil || !strings.Contains(err.Error(), "MIN:MAX") {
			t.Errorf("ParseTurns(%q) = %v; want a refusal", in, err)
		}
	}
}
