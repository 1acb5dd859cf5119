package telemetry

import "testing"

// An hour of three devices read at 10 Hz (108,000 readings): Summarize
// stays linear in the readings (the cluster's peak looks each instant up
// by binary search).
func BenchmarkSummarizeHourAt10Hz(b *testing.B) {
	const period = sec / 10
	var rs []Reading
	for t := int64(0); t <= 3600*sec; t += period {
		rs = append(rs, pw(t, "a", "cpu", 250), pw(t, "a", "gpu0", 150), ctr(t, "package-0", float64(t)/1e9*90))
	}
	l := &Log{PeriodNs: period, Readings: rs}
	b.ReportAllocs()
	for b.Loop() {
		s := Summarize(l, Window{0, 3600 * sec})
		if s.PeakW == nil || *s.PeakW < 489 || *s.PeakW > 491 {
			b.Fatalf("peak %v, want 490 W", val(s.PeakW))
		}
	}
}
