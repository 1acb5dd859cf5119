package openai

import (
	"unicode/utf8"
)

// parsed is what the adapter needs of one body, however it was decoded.
type parsed struct {
	choices  int         // len(choices)
	fields   [9]span     // of choices[0]; see the field* constants
	scratch  []byte      // the decoded strings the spans point into
	usage    int64       // usage.completion_tokens
	hasUsage bool        // usage is an object
	hasErr   bool        // error is an object
	errMsg   span        // error.message
	any      [2]nonEmpty // delta.tool_calls, message.tool_calls
}

// span is a decoded string in parsed.scratch.
type span struct{ off, n int }

// The fields of choices[0] in the order content() tries them.
const (
	fDeltaContent = iota
	fDeltaReasoningContent
	fDeltaReasoning
	fMsgContent
	fMsgReasoningContent
	fMsgReasoning
	fText
)

func (p *parsed) reset() {
	*p = parsed{scratch: p.scratch[:0]}
}

func (p *parsed) str(s span) []byte { return p.scratch[s.off : s.off+s.n] }

// content returns the generated text of the first choice (its content,
// else its reasoning, for the delta and then the message, else its text)
// and whether it carries any output (text, reasoning or a tool call).
func (p *parsed) content() ([]byte, bool) {
	if p.choices == 0 {
		return nil, false
	}
	for m := range 2 {
		for k := range 3 {
			if s := p.fields[m*3+k]; s.n > 0 {
				return p.str(s), true
			}
		}
		if p.any[m] {
			return nil, true
		}
	}
	t := p.str(p.fields[fText])
	return t, len(t) > 0
}

// decode parses body b into p: with the small scanner below when b has the
// usual shape, else with encoding/json into c (which also gives the error
// of a malformed body). Both give the same result; the fuzz test FuzzChunk
// checks it.
func (p *parsed) decode(b []byte, c *chunk) error {
	p.reset()
	w := walker{b: b, p: p}
	if w.top() {
		return nil
	}
	p.reset()
	if err := c.decode(b); err != nil {
		return err
	}
	p.fromChunk(c)
	return nil
}

// fromChunk copies what encoding/json decoded.
func (p *parsed) fromChunk(c *chunk) {
	add := func(s string) span {
		sp := span{len(p.scratch), len(s)}
		p.scratch = append(p.scratch, s...)
		return sp
	}
	p.choices = len(c.Choices)
	if p.choices > 0 {
		ch := &c.Choices[0]
		for m, msg := range [2]*message{&ch.Delta, &ch.Message} {
			p.fields[m*3] = add(msg.Content)
			p.fields[m*3+1] = add(msg.ReasoningContent)
			p.fields[m*3+2] = add(msg.Reasoning)
			p.any[m] = msg.ToolCalls
		}
		p.fields[fText] = add(ch.Text)
	}
	if c.Usage != nil {
		p.hasUsage, p.usage = true, c.Usage.CompletionTokens
	}
	if c.Error != nil {
		p.hasErr, p.errMsg = true, add(c.Error.Message)
	}
}

// walker reads a body with the shape of OpenAI responses. It accepts only
// valid JSON and gives up (returns false) on anything invalid and on
// anything whose meaning to encoding/json it does not reproduce exactly: a
// key that matters spelt in another case or repeated, a key with an escape
// or a non-ASCII byte, a \u escape or invalid UTF-8 in a string it keeps,
// a value of an unexpected type, a token count that is not a plain
// integer of at most 18 digits, nesting deeper than maxDepth. The caller
// then decodes with encoding/json, which has the last word.
type walker struct {
	b     []byte
	i     int
	p     *parsed
	depth int
}

// maxDepth bounds the nesting the walker follows (encoding/json's own
// limit is 10 000).
const maxDepth = 512

// peek returns the next byte, or 0 at the end.
func (w *walker) peek() byte {
	if w.i < len(w.b) {
		return w.b[w.i]
	}
	return 0
}

func (w *walker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// lit consumes the literal s if it comes next.
func (w *walker) lit(s string) bool {
	if len(w.b)-w.i >= len(s) && string(w.b[w.i:w.i+len(s)]) == s {
		w.i += len(s)
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// plainStr marks the bytes a JSON string holds as they are: all but the
// quote, the backslash and the control characters. plainKey marks those a
// key the walker follows may hold: the printable ASCII ones but the quote
// and the backslash.
var plainStr, plainKey = func() (s, k [256]bool) {
	for c := 0x20; c < 256; c++ {
		s[c] = c != '"' && c != '\\'
		k[c] = s[c] && c < 0x80
	}
	return s, k
}()

// skipString passes over a string (at its opening quote), checking it.
func (w *walker) skipString() bool {
	b, i := w.b, w.i+1
	for {
		for i < len(b) && plainStr[b[i]] {
			i++
		}
		if i >= len(b) {
			w.i = i
			return false
		}
		switch b[i] {
		case '"':
			w.i = i + 1
			return true
		case '\\':
			if i+1 >= len(b) {
				w.i = i
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					w.i = i
					return false
				}
				i += 6
			default:
				w.i = i
				return false
			}
		default: // a control character
			w.i = i
			return false
		}
	}
}

// skipNumber passes over a number, checking JSON's grammar; integer
// reports whether it had no fraction and no exponent.
func (w *walker) skipNumber() (ok, integer bool) {
	if w.peek() == '-' {
		w.i++
	}
	digits := func() int {
		n := 0
		for w.i < len(w.b) && w.b[w.i] >= '0' && w.b[w.i] <= '9' {
			w.i++
			n++
		}
		return n
	}
	first := w.peek()
	n := digits()
	if n == 0 || (first == '0' && n > 1) {
		return false, false
	}
	integer = true
	if w.peek() == '.' {
		w.i++
		if digits() == 0 {
			return false, false
		}
		integer = false
	}
	if c := w.peek(); c == 'e' || c == 'E' {
		w.i++
		if c := w.peek(); c == '+' || c == '-' {
			w.i++
		}
		if digits() == 0 {
			return false, false
		}
		integer = false
	}
	return true, integer
}

// skip passes over one value, checking it.
func (w *walker) skip() bool {
	w.ws()
	switch c := w.peek(); {
	case c == '"':
		return w.skipString()
	case c == '{':
		return w.object(func([]byte) bool { return w.skip() })
	case c == '[':
		return w.array(func(int) bool { return w.skip() })
	case c == 't':
		return w.lit("true")
	case c == 'f':
		return w.lit("false")
	case c == 'n':
		return w.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		ok, _ := w.skipNumber()
		return ok
	}
	return false
}

// isNull consumes a null if one comes next.
func (w *walker) isNull() bool {
	w.ws()
	return w.lit("null")
}

// str decodes a string value (or null) into the scratch buffer.
func (w *walker) str() (span, bool) {
	if w.isNull() {
		return span{}, true
	}
	if w.peek() != '"' {
		return span{}, false
	}
	w.i++
	p := w.p
	off := len(p.scratch)
	start := w.i
	for w.i < len(w.b) {
		for w.i < len(w.b) && plainStr[w.b[w.i]] {
			w.i++
		}
		if w.i >= len(w.b) {
			break
		}
		c := w.b[w.i]
		switch {
		case c == '"':
			p.scratch = append(p.scratch, w.b[start:w.i]...)
			w.i++
			// encoding/json turns invalid UTF-8 into U+FFFD; leave that
			// to it. (The escapes handled here are ASCII.)
			return span{off, len(p.scratch) - off}, utf8.Valid(p.scratch[off:])
		case c < 0x20:
			return span{}, false
		case c == '\\':
			if w.i+1 >= len(w.b) {
				return span{}, false
			}
			p.scratch = append(p.scratch, w.b[start:w.i]...)
			var r byte
			switch w.b[w.i+1] {
			case '"', '\\', '/':
				r = w.b[w.i+1]
			case 'n':
				r = '\n'
			case 't':
				r = '\t'
			case 'r':
				r = '\r'
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			default: // \uXXXX, or invalid
				return span{}, false
			}
			p.scratch = append(p.scratch, r)
			w.i += 2
			start = w.i
		default:
			w.i++
		}
	}
	return span{}, false
}

// object reads an object (or null), calling field with every key; field
// reads the value and returns false to give up. A key with an escape, a
// control character or a non-ASCII byte gives up.
func (w *walker) object(field func(key []byte) bool) bool {
	if w.isNull() {
		return true
	}
	if w.peek() != '{' || w.depth >= maxDepth {
		return false
	}
	w.depth++
	w.i++
	w.ws()
	if w.peek() == '}' {
		w.i++
		w.depth--
		return true
	}
	for {
		if w.peek() != '"' {
			return false
		}
		w.i++
		start := w.i
		for w.i < len(w.b) && plainKey[w.b[w.i]] {
			w.i++
		}
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return false // the end, or an escape, a control character or a non-ASCII byte
		}
		key := w.b[start:w.i]
		w.i++
		w.ws()
		if w.peek() != ':' {
			return false
		}
		w.i++
		w.ws()
		if !field(key) {
			return false
		}
		w.ws()
		switch w.peek() {
		case ',':
			w.i++
			w.ws()
		case '}':
			w.i++
			w.depth--
			return true
		default:
			return false
		}
	}
}

// array reads an array (at its '['), calling elem for every element.
func (w *walker) array(elem func(n int) bool) bool {
	if w.peek() != '[' || w.depth >= maxDepth {
		return false
	}
	w.depth++
	w.i++
	w.ws()
	if w.peek() == ']' {
		w.i++
		w.depth--
		return true
	}
	for n := 0; ; n++ {
		if !elem(n) {
			return false
		}
		w.ws()
		switch w.peek() {
		case ',':
			w.i++
			w.ws()
		case ']':
			w.i++
			w.depth--
			return true
		default:
			return false
		}
	}
}

// match reports whether key is name; a key equal to name but for case
// (which encoding/json would take) or a repeat (seen) gives up. Keys are
// ASCII (object gives up on others), and so are names, so only ASCII
// letters fold.
func match(key []byte, name string, seen *uint16, bit uint16, giveUp *bool) bool {
	if len(key) != len(name) {
		return false // most keys: decided inline
	}
	return matchSameLen(key, name, seen, bit, giveUp)
}

// matchSameLen is match for a key of name's length (kept out of line so
// that match itself inlines).
//
//go:noinline
func matchSameLen(key []byte, name string, seen *uint16, bit uint16, giveUp *bool) bool {
	if string(key) == name {
		if *seen&bit != 0 {
			*giveUp = true
			return false
		}
		*seen |= bit
		return true
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	*giveUp = true
	return false
}

// top reads the whole body: an object (or null) and nothing after it.
func (w *walker) top() bool {
	var seen uint16
	w.ws()
	ok := w.object(func(key []byte) bool {
		giveUp := false
		switch {
		case match(key, "choices", &seen, 1, &giveUp):
			return w.choices()
		case match(key, "usage", &seen, 2, &giveUp):
			return w.usage()
		case match(key, "error", &seen, 4, &giveUp):
			return w.errorObject()
		}
		return !giveUp && w.skip()
	})
	w.ws()
	return ok && w.i == len(w.b)
}

func (w *walker) choices() bool {
	if w.isNull() {
		return true
	}
	n := 0
	ok := w.array(func(i int) bool {
		n = i + 1
		return w.choice(i == 0)
	})
	w.p.choices = n
	return ok
}

// choice reads one element of choices, keeping it when keep is set.
func (w *walker) choice(keep bool) bool {
	var seen uint16
	return w.object(func(key []byte) bool {
		giveUp := false
		switch {
		case match(key, "text", &seen, 1, &giveUp):
			s, ok := w.str()
			if keep {
				w.p.fields[fText] = s
			}
			return ok
		case match(key, "delta", &seen, 2, &giveUp):
			return w.message(0, keep)
		case match(key, "message", &seen, 4, &giveUp):
			return w.message(1, keep)
		}
		return !giveUp && w.skip()
	})
}

// message reads a delta (m = 0) or a message (m = 1).
func (w *walker) message(m int, keep bool) bool {
	var seen uint16
	return w.object(func(key []byte) bool {
		giveUp := false
		k := -1
		switch {
		case match(key, "content", &seen, 1, &giveUp):
			k = 0
		case match(key, "reasoning_content", &seen, 2, &giveUp):
			k = 1
		case match(key, "reasoning", &seen, 4, &giveUp):
			k = 2
		case match(key, "tool_calls", &seen, 8, &giveUp):
			start := w.i
			if !w.skip() {
				return false
			}
			if keep {
				_ = w.p.any[m].UnmarshalJSON(w.b[start:w.i])
			}
			return true
		}
		if giveUp {
			return false
		}
		if k < 0 {
			return w.skip()
		}
		s, ok := w.str()
		if keep {
			w.p.fields[m*3+k] = s
		}
		return ok
	})
}

func (w *walker) usage() bool {
	var seen uint16
	if w.isNull() {
		return true
	}
	w.p.hasUsage = true
	return w.object(func(key []byte) bool {
		giveUp := false
		if match(key, "completion_tokens", &seen, 1, &giveUp) {
			return w.int64()
		}
		return !giveUp && w.skip()
	})
}

// int64 reads completion_tokens: a plain integer of at most 18 digits
// (which fits), or null.
func (w *walker) int64() bool {
	if w.isNull() {
		return true
	}
	start := w.i
	ok, integer := w.skipNumber()
	if !ok || !integer {
		return false
	}
	digits := w.b[start:w.i]
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) > 18 {
		return false
	}
	var v int64
	for _, d := range digits {
		v = v*10 + int64(d-'0')
	}
	if neg {
		v = -v
	}
	w.p.usage = v
	return true
}

func (w *walker) errorObject() bool {
	var seen uint16
	if w.isNull() {
		return true
	}
	w.p.hasErr = true
	return w.object(func(key []byte) bool {
		giveUp := false
		if match(key, "message", &seen, 1, &giveUp) {
			s, ok := w.str()
			w.p.errMsg = s
			return ok
		}
		return !giveUp && w.skip()
	})
}
