package tester

import (
	"math"
	"strings"
	"testing"

	"aimeter/store"
)

// TestFormatMetric: times in the unit that suits them (as the report
// writes them), other figures plainly, never in e-notation.
func TestFormatMetric(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		v    any
		unit string
		want string
		why  string
	}{
		{1234567.0, "ns", "1.235 ms", "a p99 in ns: milliseconds, four significant digits"},
		{850000.0, "ns", "850.0 µs", "under a millisecond: microseconds"},
		{60.0, "ns", "60 ns", "under a microsecond: nanoseconds, whole"},
		{2.5e9, "ns", "2.500 s", "seconds"},
		{3.6e12, "ns", "3,600 s", "an hour: whole seconds, grouped, not e-notation"},
		{1234567.4, "ns", "1.235 ms", "a fractional mean rounds to the nanosecond"},
		{f(7054321), "ns", "7.054 ms", "a pointer, as the compare table has"},
		{(*float64)(nil), "ns", "-", "a run that lacks the metric"},
		{1500.0, "ms", "1.500 s", "a time stored in ms"},
		{0.25, "s", "250.0 ms", "a time stored in s"},
		{12.5, "us", "12.50 µs", "a time stored in us"},
		{1878.5213, "samples/s", "1878.52", "a rate: six significant digits"},
		{2.2e6, "samples", "2200000", "a count: whole, not 2.2e+06"},
		{1234567.891, "", "1234568", "a large fraction: rounded to six significant digits, no e-notation"},
		{0.0421, "", "0.0421", "a small fraction"},
		{0.0, "", "0", "zero"},
		{-3.5, "", "-3.5", "negative"},
		{math.NaN(), "ns", "n/a", "NaN"},
		{math.Inf(1), "", "n/a", "infinity"},
	}
	for _, c := range cases {
		got := formatMetric(c.v, c.unit)
		if got != c.want {
			t.Errorf("%s: formatMetric(%v, %q) = %q, want %q", c.why, c.v, c.unit, got, c.want)
		}
		if isTimeUnit(c.unit) && strings.ContainsAny(got, "eE") {
			t.Errorf("%s: %q is in e-notation", c.why, got)
		}
	}
}

// TestSeriesWarnings: the newest run is judged against the others, as
// aimeter results compare does, and each run of another series is named
// with what differs.
func TestSeriesWarnings(t *testing.T) {
	run := func(id int64, sys, cfg, work string) store.Run {
		return store.Run{ID: id, SystemKey: sys, ConfigKey: cfg, WorkloadKey: work, SeriesKey: sys + cfg + work}
	}
	cases := []struct {
		runs []store.Run
		want []string
		why  string
	}{
		{[]store.Run{run(1, "a", "c", "w"), run(2, "a", "c", "w")}, nil, "one series"},
		{[]store.Run{run(2, "a", "c", "w"), run(1, "b", "c", "w")}, []string{"Different systems: run 1 (series bcw) and run 2 (series acw) differ in system;"}, "another system, the newest given first"},
		{[]store.Run{run(1, "a", "c", "w"), run(3, "a", "d", "v"), run(2, "a", "d", "v")}, []string{"Run 1 (series acw) and run 3 (series adv) differ in SUT configuration and workload;"}, "one system, two settings; run 2 is run 3's series"},
		{[]store.Run{run(1, "a", "c", "w"), run(2, "b", "d", "v")}, []string{"differ in system, SUT configuration and workload;"}, "everything differs"},
		{[]store.Run{{ID: 1, SeriesKey: "x"}, {ID: 2, SeriesKey: "y"}}, []string{"Run 1 (series x) and run 2 (series y) differ in series;"}, "series keys differ by something the three keys do not show"},
	}
	for _, c := range cases {
		got := seriesWarnings(c.runs)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d warnings", c.why, got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: %q lacks %q", c.why, got[i], c.want[i])
			}
		}
	}
}
