package report

import (
	"math"
	"strconv"
	"strings"
)

// The report's one set of number formatters. Every number a reader sees in
// report.html goes through one of them: significant digits instead of a
// float's full expansion, thousands separated by commas, and a unit chosen
// for the magnitude (ns, µs, ms, s; B, KiB, MiB, GiB, TiB).

// fmtSig formats v with at most digits significant digits, trailing zeros
// after the decimal point dropped: 86.57000000000001 with 4 digits is
// "86.57", 75.6954 with 6 is "75.6954", 2.5 with 4 is "2.5". The integer
// part is never rounded away (97862.09565 with 4 digits is "97,862") and is
// grouped in thousands with commas. Magnitudes under 0.001 use e-notation;
// NaN and infinities are "n/a".
func fmtSig(v float64, digits int) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v == 0:
		return "0"
	case math.Abs(v) < 1e-3:
		return strconv.FormatFloat(v, 'g', max(digits, 1), 64)
	}
	decimals := max(digits-1-int(math.Floor(math.Log10(math.Abs(v)))), 0)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	s = groupThousands(whole)
	if hasFrac {
		s += "." + frac
	}
	return sign + s
}

// groupThousands puts commas between groups of three digits of a run of
// decimal digits.
func groupThousands(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	head := len(digits) % 3
	if head > 0 {
		b.WriteString(digits[:head])
	}
	for i := head; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// fmtCount formats a count with thousands separators: 1234567 is "1,234,567".
func fmtCount(n uint64) string {
	return groupThousands(strconv.FormatUint(n, 10))
}

// FormatDuration formats a duration in ns for people as the report does:
// four significant digits in the unit that suits its magnitude ("850 ns",
// "12.35 µs", "3.000 ms", "1.250 s"; from 1,000 s on, whole seconds with
// separators). The console uses it too.
func FormatDuration(ns int64) string { return fmtDur(ns) }

// fmtDur is FormatDuration.
func fmtDur(ns int64) string {
	a := math.Abs(float64(ns))
	switch {
	case a < 1e3:
		return strconv.FormatInt(ns, 10) + " ns"
	case a < 1e6:
		return sig4(float64(ns)/1e3) + " µs"
	case a < 1e9:
		return sig4(float64(ns)/1e6) + " ms"
	case a < 1e12:
		return sig4(float64(ns)/1e9) + " s"
	}
	return fmtSig(math.Round(float64(ns)/1e9), 1) + " s"
}

// sig4 formats v (1 ≤ |v| < 1000) with four significant digits, keeping
// trailing zeros so that a column of durations lines up ("3.000 ms").
func sig4(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// fmtRate formats a rate with four significant digits (the integer part
// kept whole) and its unit, such as "97,862 samples/s" or "499.9 queries/s".
func fmtRate(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmtSig(v, 4) + " " + unit
}

// fmtBytes formats a size in bytes in binary units with three significant
// digits: "512 B", "1.5 KiB", "64 GiB".
func fmtBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatUint(n, 10) + " B"
	}
	s := fmtSig(v, 3)
	if s == "1,024" && i < len(units)-1 { // rounding reached the next unit
		s, i = "1", i+1
	}
	return s + " " + units[i]
}

// fmtPct formats a percentile as its usual label: 0.99 is "p99", 0.999
// "p99.9".
func fmtPct(p float64) string {
	return "p" + strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(p*100, 'f', 1, 64), "0"), ".")
}

// accuracyDigits is the significant digits of an accuracy value: enough to
// tell a value from its target (75.6954 is 99 % of 76.46).
const accuracyDigits = 6

// fmtAccuracy formats an accuracy value for the metric named metric. A
// metric named "… (%)" is a percentage: the unit moves to the value and the
// name loses it. It returns the metric's name and the formatted value.
func fmtAccuracy(metric string, v float64) (name, value string) {
	if base, ok := strings.CutSuffix(strings.TrimSpace(metric), "(%)"); ok {
		return strings.TrimSpace(base), fmtSig(v, accuracyDigits) + " %"
	}
	return metric, fmtSig(v, accuracyDigits)
}

// fmtSetting formats a raw float setting as LoadGen's configuration would
// read it, at most seven significant digits and no separators:
// 97862.09565041763 is "97862.1".
func fmtSetting(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'g', 7, 64)
}
