package mlperflog

import (
	"math"
	"strconv"
)

// FormatDouble formats v the way a default-configured C++ std::ostream
// prints a double (precision 6, neither fixed nor scientific: printf's
// "%g"). LoadGen uses this for every double in the detail log and for the
// doubles of the summary that it does not pass through DoubleToString:
// 92.15442 → "92.1544", 1e7 → "1e+07", 0.5 → "0.5", 1234567 →
// "1.23457e+06", 1e-5 → "1e-05". Infinities and NaN print as glibc does
// ("inf", "-inf", "nan").
func FormatDouble(v float64) string {
	return string(appendDouble(nil, v))
}

// appendDouble appends FormatDouble(v) to dst.
func appendDouble(dst []byte, v float64) []byte {
	if s, ok := nonFinite(v); ok {
		return append(dst, s...)
	}
	// strconv's 'g' with an explicit precision matches C's %g: it switches
	// to the exponent form when exp < -4 or exp >= precision, drops trailing
	// zeros and writes at least two exponent digits.
	return strconv.AppendFloat(dst, v, 'g', 6, 64)
}

// DoubleToString is LoadGen's utils.cc DoubleToString: fixed notation with
// the given number of decimals (LoadGen's default is 2): 944.8567 →
// "944.86".
func DoubleToString(v float64, precision int) string {
	if s, ok := nonFinite(v); ok {
		return s
	}
	return strconv.FormatFloat(v, 'f', precision, 64)
}

func nonFinite(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan", true
		}
		return "nan", true
	case math.IsInf(v, 1):
		return "inf", true
	case math.IsInf(v, -1):
		return "-inf", true
	}
	return "", false
}

// percentileLabel is DoubleToString(p*100) as LoadGen builds percentile keys
// and labels ("99.90", "50.00").
func percentileLabel(p float64) string { return DoubleToString(p*100, 2) }

// appendTimeMs appends a detail-log time: whole milliseconds, a dot and the
// remaining nanoseconds on six digits ("600412.331207"). Negative times,
// which LoadGen cannot produce, are written as 0.
func appendTimeMs(dst []byte, ns int64) []byte {
	if ns < 0 {
		ns = 0
	}
	dst = strconv.AppendInt(dst, ns/1_000_000, 10)
	dst = append(dst, '.')
	return appendPadded(dst, ns%1_000_000, 6)
}

// appendPadded appends v (≥ 0) zero-padded to width digits.
func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], v, 10)
	for i := len(b); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, b...)
}

// appendMicros appends ns as microseconds with exactly three decimals, as
// the Chrome trace's std::fixed << setprecision(3) does (exact for integer
// nanoseconds).
func appendMicros(dst []byte, ns int64) []byte {
	if ns < 0 {
		dst = append(dst, '-')
		if ns == math.MinInt64 {
			// |MinInt64| does not fit; it never occurs, but stay correct.
			return append(dst, "9223372036854775.808"...)
		}
		ns = -ns
	}
	dst = strconv.AppendInt(dst, ns/1000, 10)
	dst = append(dst, '.')
	return appendPadded(dst, ns%1000, 3)
}

// appendQuoted appends s in double quotes, escaped as LoadGen's
// EscapeStringJson does (\" \\ \b \f \n \r \t, other control characters as
// \u00XX, everything else byte for byte). LoadGen itself writes most detail
// strings unescaped; for the strings it logs (no quotes, backslashes or
// control characters) the output is identical, and any other string stays
// valid JSON.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				const hex = "0123456789abcdef"
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// yesNo is LoadGen's summary spelling of a check outcome.
func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "NO"
}

// bool01 is how a C++ ostream prints a bool (std::boolalpha off).
func bool01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
