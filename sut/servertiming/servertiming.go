package servertiming

import (
	"math"
	"strconv"
	"strings"

	"aimeter/loadgen"
)

// The Server-Timing metric names by which a network SUT reports its stage
// durations to aimeter. This is the one place they are defined. Each carries
// a duration, dur, in milliseconds, as the W3C Server Timing specification
// prescribes; a server reports durations, not time points, because its clock
// is not the tester's (IN-69). FromMetrics lays them out on the
// SUT's clock from t_ITR = 0.
const (
	// MetricDispatch is T_DIS: from having the whole sample (t_ITR) to the
	// start of processing (GB-7.6.2-TDIS). Absent: taken as 0.
	MetricDispatch = "aimeter-dispatch"
	// MetricPreprocess is T_IPR (GB-7.6.2-TIPR). Absent: no preprocessing.
	MetricPreprocess = "aimeter-preprocess"
	// MetricInference is T_IN (GB-7.6.2-TIN).
	MetricInference = "aimeter-inference"
	// MetricPostprocess is T_IPO (GB-7.6.2-TIPO). Absent: no
	// post-processing.
	MetricPostprocess = "aimeter-postprocess"
	// MetricFirstToken is T_ftoken: from t_ITR to immediately before the
	// first byte of the result (of the first token, for generative models)
	// is sent, t_IRS (GB-7.6.2-TFTOKEN, IN-66). A non-streaming server may
	// report it as the time to its response.
	MetricFirstToken = "aimeter-first-token"
)

// stageMetrics are the consecutive stage metrics in their order.
var stageMetrics = [...]string{MetricDispatch, MetricPreprocess, MetricInference, MetricPostprocess}

// maxDurMs bounds a usable duration: 10^9 ms (11.6 days) still fits
// in int64 nanoseconds when four are added.
const maxDurMs = 1e9

// Metric is one metric of a Server-Timing header: a name with an
// optional duration (ms) and description.
type Metric struct {
	Name    string  // the metric name, a token
	Dur     float64 // the dur parameter, milliseconds, ≥ 0
	HasDur  bool    // whether dur was given
	Desc    string  // the desc parameter, unescaped
	HasDesc bool    // whether desc was given
}

// Parse parses Server-Timing header values (one per header line;
// a value is a comma-separated list of metrics):
//
//	Server-Timing: aimeter-inference;dur=12.3;desc="gpu 0", cache;desc=hit
//
// following the W3C grammar: metric = token *( OWS ";" OWS param ), param =
// token OWS "=" OWS ( token / quoted-string ). Of repeated dur or desc
// parameters the first counts; other parameters are ignored. A metric that
// does not follow the grammar, or whose dur is not a non-negative decimal
// number, is left out and counted in malformed; parsing goes on with the next
// metric. Nothing is fatal.
func Parse(values ...string) (metrics []Metric, malformed int) {
	for _, v := range values {
		p := stParser{s: v}
		for {
			p.ows()
			if p.eof() {
				break
			}
			if p.peek() == ',' { // empty list element: allowed by #rule
				p.i++
				continue
			}
			start := p.i
			m, ok := p.metric()
			if ok {
				p.ows()
				ok = p.eof() || p.peek() == ','
			}
			if ok {
				metrics = append(metrics, m)
			} else {
				malformed++
				p.i = start
				p.skipElement()
			}
			if !p.eof() {
				p.i++ // the comma
			}
		}
	}
	return metrics, malformed
}

// stParser scans one header value.
type stParser struct {
	s string
	i int
}

func (p *stParser) eof() bool  { return p.i >= len(p.s) }
func (p *stParser) peek() byte { return p.s[p.i] }

// ows skips optional white space (SP, HTAB).
func (p *stParser) ows() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

// token scans an RFC 9110 token.
func (p *stParser) token() (string, bool) {
	start := p.i
	for !p.eof() && isTchar(p.peek()) {
		p.i++
	}
	return p.s[start:p.i], p.i > start
}

// quoted scans a quoted-string and returns its unescaped content.
func (p *stParser) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		p.i++
		switch {
		case c == '"':
			return b.String(), true
		case c == '\\':
			if p.eof() || !isQuotedPairChar(p.peek()) {
				return "", false
			}
			b.WriteByte(p.peek())
			p.i++
		case isQdtext(c):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return "", false // unterminated
}

// skipElement moves to the next comma that is not inside a quoted string.
func (p *stParser) skipElement() {
	inQuote := false
	for !p.eof() {
		c := p.peek()
		switch {
		case inQuote && c == '\\':
			p.i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ',':
			return
		}
		p.i++
	}
}

// metric scans one server-timing-metric.
func (p *stParser) metric() (Metric, bool) {
	var m Metric
	name, ok := p.token()
	if !ok {
		return m, false
	}
	m.Name = name
	for {
		save := p.i
		p.ows()
		if p.eof() || p.peek() != ';' {
			p.i = save
			return m, true
		}
		p.i++
		p.ows()
		pname, ok := p.token()
		if !ok {
			return m, false
		}
		p.ows()
		if p.eof() || p.peek() != '=' {
			return m, false
		}
		p.i++
		p.ows()
		var val string
		if !p.eof() && p.peek() == '"' {
			val, ok = p.quoted()
		} else {
			val, ok = p.token()
		}
		if !ok {
			return m, false
		}
		switch strings.ToLower(pname) {
		case "dur":
			if m.HasDur {
				continue
			}
			d, ok := parseDuration(val)
			if !ok {
				return m, false
			}
			m.Dur, m.HasDur = d, true
		case "desc":
			if !m.HasDesc {
				m.Desc, m.HasDesc = val, true
			}
		}
	}
}

// parseDuration accepts a non-negative decimal number: digits with an
// optional fraction and exponent ("12", "0.5", ".5", "1e+21"), finite.
func parseDuration(s string) (float64, bool) {
	i, n := 0, len(s)
	digits := func() int {
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < n && s[i] == '+' {
		i++
	}
	intDigits := digits()
	fracDigits := 0
	if i < n && s[i] == '.' {
		i++
		fracDigits = digits()
	}
	if intDigits+fracDigits == 0 {
		return 0, false
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if i != n {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// isTchar reports whether c is an RFC 9110 tchar.
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isQdtext reports whether c may stand unescaped in a quoted-string.
func isQdtext(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E) || c >= 0x80
}

// isQuotedPairChar reports whether c may follow a backslash.
func isQuotedPairChar(c byte) bool {
	return c == '\t' || (c >= 0x20 && c <= 0x7E) || c >= 0x80
}

// Format writes metrics as one Server-Timing header value that
// Parse reads back unchanged. Names must be tokens and
// descriptions may hold any byte but control characters other than HTAB
// (the grammar has no escape for them); such metrics are written as given
// and will not parse.
func Format(metrics []Metric) string {
	var b strings.Builder
	for i, m := range metrics {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.Name)
		if m.HasDur {
			b.WriteString(";dur=")
			b.WriteString(strconv.FormatFloat(m.Dur, 'g', -1, 64))
		}
		if m.HasDesc {
			b.WriteString(`;desc="`)
			for j := 0; j < len(m.Desc); j++ {
				if c := m.Desc[j]; c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(m.Desc[j])
			}
			b.WriteByte('"')
		}
	}
	return b.String()
}

// FromMetrics turns parsed Server-Timing metrics into stage times
// on the SUT's clock (loadgen.SUTClock): Received (t_ITR) is 0 and the
// stages follow one another without gaps in the order dispatch,
// preprocessing, inference, post-processing, each as long as its reported
// duration; ResultSent (t_IRS) is Received + the first-token duration.
// T_IP is then exactly T_IPR + T_IN + T_IPO (GB-7.6.2-TIP). A stage the
// server does not report is not measured (NoTime), except dispatch, which is
// taken as 0 so that the later stages keep their place after t_ITR.
//
// Metrics with other names are ignored. An aimeter metric without a usable
// dur (missing, over 10^9 ms), or repeated (the first counts), is counted
// in malformed and ignored, as are the malformed metrics of the header.
func FromMetrics(metrics []Metric) (st loadgen.StageTimes, malformed int) {
	var durNs [len(stageMetrics)]int64
	var have [len(stageMetrics)]bool
	firstToken, haveFirst := int64(0), false
	for _, m := range metrics {
		k := -1
		for j, name := range stageMetrics {
			if m.Name == name {
				k = j
			}
		}
		if k < 0 && m.Name != MetricFirstToken {
			continue
		}
		if !m.HasDur || !(m.Dur >= 0 && m.Dur <= maxDurMs) {
			malformed++
			continue
		}
		ns := int64(math.Round(m.Dur * 1e6)) // milliseconds to nanoseconds
		switch {
		case k < 0 && haveFirst, k >= 0 && have[max(k, 0)]:
			malformed++
		case k < 0:
			firstToken, haveFirst = ns, true
		default:
			durNs[k], have[k] = ns, true
		}
	}
	st = loadgen.NoStages
	st.Clock = loadgen.SUTClock
	st.Received = 0
	t := durNs[0] // dispatch, 0 when absent
	set := func(k int, start, end *int64) {
		if have[k] {
			*start, *end = t, t+durNs[k]
			t += durNs[k]
		}
	}
	set(1, &st.PreprocessStart, &st.PreprocessEnd)
	set(2, &st.InferenceStart, &st.InferenceEnd)
	set(3, &st.PostprocessStart, &st.PostprocessEnd)
	if haveFirst {
		st.ResultSent = firstToken
	}
	return st, malformed
}

// ParseStages parses Server-Timing header values and turns them into
// stage times: Parse then FromMetrics, with the
// malformed counts added.
func ParseStages(values ...string) (loadgen.StageTimes, int) {
	metrics, bad := Parse(values...)
	st, bad2 := FromMetrics(metrics)
	return st, bad + bad2
}
