// Package prompts is the data set of a language-model benchmark: a list of
// prompts, read from a JSONL file or generated from a word list, served as a
// loadgen.QSL. The network adapter (sut/openai) sends prompt Index of the
// set for sample Index.
package prompts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"aimeter/loadgen"
)

// Message is one message of a chat prompt.
type Message struct {
	// Role is "system", "user", "assistant" or any role the server accepts.
	Role string `json:"role"`
	// Content is the message's text.
	Content string `json:"content"`
}

// Prompt is one sample: a plain prompt (for /v1/completions, or a single
// user message for /v1/chat/completions) or a list of chat messages.
// Exactly one of Text and Messages is set.
type Prompt struct {
	// Text is a plain prompt; empty when Messages is set.
	Text string
	// Messages is a chat conversation; nil when Text is set.
	Messages []Message
	// MaxTokens is the output length asked for this prompt (max_tokens),
	// instead of the run's; 0 means the run's.
	MaxTokens int
	// Lead is the number of words at the start of Text that hold the place
	// of a client's per-request nonce: Text then begins with Lead words of
	// the set's NonceWords, each preceded by one space and each one token
	// of the tokenizer the set was built for (Synthetic with a Tokenizer).
	// A client that marks each request with a nonce (sut/openai, unless it
	// sends prompts exactly) sends Lead nonce words of the same list in
	// their place, so that the text it sends keeps the prompt's exact
	// length in tokens. 0 means no such place: a client's nonce then comes
	// in front of Text and adds its own tokens. Only a set with
	// NonceWords may have prompts with a Lead (New refuses them).
	Lead int
}

// LeadBytes returns the bytes of Text that its Lead words take: the index
// of the space that follows the last of them, or len(Text). It is 0 when
// Lead is 0.
func (p Prompt) LeadBytes() int {
	end := 0
	for range p.Lead {
		if end >= len(p.Text) || p.Text[end] != ' ' {
			return -1
		}
		next := strings.IndexByte(p.Text[end+1:], ' ')
		if next < 0 {
			end = len(p.Text)
		} else {
			end += 1 + next
		}
	}
	return end
}

// Set is a list of prompts served as a loadgen.QSL. Every prompt stays in
// memory, so loading a sample only checks its index. A Set is safe for
// concurrent use once built.
type Set struct {
	name    string
	prompts []Prompt
	perf    uint64
	skipped int      // ShareGPT entries without a human turn
	nonce   []string // NonceWords

	mu     sync.Mutex
	loaded uint64 // samples loaded and not unloaded (for UnloadSamples' check)
}

var _ loadgen.QSL = (*Set)(nil)

// New returns a set named name over ps (which it keeps). It is an error for
// ps to be empty or for a prompt to have neither text nor messages.
func New(name string, ps []Prompt) (*Set, error) { return newSet(name, ps, nil) }

// newSet is New for a set whose prompts may have a Lead of nonce words.
func newSet(name string, ps []Prompt, nonce []string) (*Set, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("prompt set %s: no prompts", name)
	}
	for i, p := range ps {
		if p.Text == "" && len(p.Messages) == 0 {
			return nil, fmt.Errorf("prompt set %s: prompt %d is empty", name, i)
		}
		if p.Text != "" && len(p.Messages) > 0 {
			return nil, fmt.Errorf("prompt set %s: prompt %d has both text and messages", name, i)
		}
		if p.MaxTokens < 0 {
			return nil, fmt.Errorf("prompt set %s: prompt %d has a negative MaxTokens", name, i)
		}
		switch {
		case p.Lead < 0:
			return nil, fmt.Errorf("prompt set %s: prompt %d has a negative Lead", name, i)
		case p.Lead > 0 && nonce == nil:
			return nil, fmt.Errorf("prompt set %s: prompt %d has a Lead of %d words, but the set has no nonce words (only Synthetic with a Tokenizer makes such prompts)", name, i, p.Lead)
		case p.Lead > 0 && p.LeadBytes() < 0:
			return nil, fmt.Errorf("prompt set %s: prompt %d has a Lead of %d words, but its text does not start with that many space-led words", name, i, p.Lead)
		}
	}
	return &Set{name: name, prompts: ps, perf: uint64(len(ps)), nonce: nonce}, nil
}

// NonceWords returns the words of a set built to exact lengths in a
// tokenizer's tokens (Synthetic with a Tokenizer) that its prompts' Lead
// words are drawn from and that a client's nonce may be made of: a power
// of two of them, at least 2, each one token with its leading space. It is
// nil for any other set. The slice is shared: do not modify it.
func (s *Set) NonceWords() []string { return s.nonce }

// Name returns the set's name (the file name, or a description of the
// synthetic set).
func (s *Set) Name() string { return s.name }

// Len returns the number of prompts.
func (s *Set) Len() int { return len(s.prompts) }

// Prompt returns prompt i; it panics if i ≥ Len, like a slice.
func (s *Set) Prompt(i int) Prompt { return s.prompts[i] }

// TotalSampleCount returns the number of prompts.
func (s *Set) TotalSampleCount() uint64 { return uint64(len(s.prompts)) }

// PerformanceSampleCount returns the number of prompts unless
// SetPerformanceSampleCount changed it: prompts are small, so all of them
// fit in memory.
func (s *Set) PerformanceSampleCount() uint64 { return s.perf }

// SetPerformanceSampleCount makes the set report n as its performance
// sample count (0 = every prompt; more than Len is capped at Len). Call it
// before the run.
func (s *Set) SetPerformanceSampleCount(n uint64) {
	if n == 0 || n > uint64(len(s.prompts)) {
		n = uint64(len(s.prompts))
	}
	s.perf = n
}

// LoadSamples checks the indices: every prompt is in memory already.
func (s *Set) LoadSamples(indices []uint64) error {
	for _, i := range indices {
		if i >= uint64(len(s.prompts)) {
			return fmt.Errorf("sample index %d is outside prompt set %s (%d prompts)", i, s.name, len(s.prompts))
		}
	}
	s.mu.Lock()
	s.loaded += uint64(len(indices))
	s.mu.Unlock()
	return nil
}

// UnloadSamples releases a set loaded by LoadSamples.
func (s *Set) UnloadSamples(indices []uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uint64(len(indices)) > s.loaded {
		return fmt.Errorf("unloading %d samples of prompt set %s, of which only %d are loaded", len(indices), s.name, s.loaded)
	}
	s.loaded -= uint64(len(indices))
	return nil
}

// MaxLineBytes bounds one line of a JSONL prompt file, and one entry of a
// JSON-array prompt file.
const MaxLineBytes = 16 << 20

// ReadJSONL reads a prompt file; see ParseJSONL for the formats. The set is
// named after the file.
func ReadJSONL(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prompt file: %w", err)
	}
	defer f.Close()
	return ParseJSONL(f, path)
}

// The keys of a prompt object.
const (
	keyPrompt        = "prompt"
	keyText          = "text"
	keyMessages      = "messages"
	keyMaxTokens     = "max_tokens"
	keyConversations = "conversations"
)

// knownKeys are the keys a prompt object may have, as the error of an
// unknown key lists them.
var knownKeys = []string{keyPrompt, keyText, keyMessages, keyConversations, keyMaxTokens}

// IgnoredKeys are the keys of a prompt object that are accepted and
// ignored: an identifier, and the arrival time of a trace (the load's
// timing comes from the scenario, never from the file). Any other key
// not in the format is an error naming it.
var IgnoredKeys = []string{"id", "timestamp"}

// ParseJSONL reads prompts. Errors name the file (name) and the line, or
// the entry of a JSON array.
//
// The usual format is JSONL: one JSON object a line, blank lines skipped,
// each with exactly one of
//
//   - "prompt": "…" (or "text": "…", the same), a plain prompt;
//   - "messages": [{"role": "user", "content": "…"}, …], a chat prompt
//     (string contents only);
//   - "conversations": [{"from": "human", "value": "…"}, …], a ShareGPT
//     entry (see below);
//
// and optionally "max_tokens": N (a positive integer), the output length
// asked for that prompt instead of the run's. The keys in IgnoredKeys are
// ignored; any other key is an error naming it and the line, so that
// nothing in the file is silently dropped. Lines are limited to
// MaxLineBytes.
//
// A file whose first non-blank character is '[' is one JSON array of such
// objects instead: the ShareGPT files (ShareGPT_V3_unfiltered_cleaned_split
// .json and the like) are such arrays of {"id": …, "conversations": […]}.
//
// A ShareGPT entry becomes a plain prompt: the value of its first turn from
// "human" (or "user"), as vLLM's and SGLang's serving benchmarks take it;
// the other turns are not sent, and the entry's other keys (its id, a
// model, a language, …; ShareGPT files vary) are ignored. An entry with no
// human turn, or an empty one, is skipped and counted (Set.Skipped); turns
// may be {"role": …, "content": …} instead of {"from": …, "value": …}.
func ParseJSONL(r io.Reader, name string) (*Set, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if startsWithArray(br) {
		return parseArray(br, name)
	}
	var ps []Prompt
	skipped := 0
	var long []byte
	for lineNo := 1; ; lineNo++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull && len(long) <= MaxLineBytes {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			if len(long) > MaxLineBytes {
				return nil, fmt.Errorf("%s:%d: line longer than %d bytes", name, lineNo, MaxLineBytes)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if line := bytes.TrimSpace(b); len(line) > 0 {
			p, skip, perr := parseObject(line)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, lineNo, perr)
			}
			if skip {
				skipped++
			} else {
				ps = append(ps, p)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(ps) == 0 {
		if skipped > 0 {
			return nil, fmt.Errorf("%s: no prompts: none of its %d ShareGPT entries has a turn from \"human\"", name, skipped)
		}
		return nil, fmt.Errorf("%s: no prompts (want one JSON object a line: {\"prompt\": \"…\"} or {\"messages\": […]})", name)
	}
	s, err := New(name, ps)
	if s != nil {
		s.skipped = skipped
	}
	return s, err
}

// startsWithArray reports whether the first non-blank byte br holds is
// '[' (within its buffer), consuming nothing.
func startsWithArray(br *bufio.Reader) bool {
	for n := 1; n <= br.Size(); n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			if err != nil {
				return false
			}
			continue
		case '[':
			return true
		}
		return false
	}
	return false
}

// parseArray reads a file that is one JSON array of prompt objects.
func parseArray(r io.Reader, name string) (*Set, error) {
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil { // the '[' startsWithArray saw
		return nil, fmt.Errorf("%s: malformed JSON: %v", name, err)
	}
	var ps []Prompt
	skipped := 0
	for i := 1; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if endOfData(err) {
				return nil, fmt.Errorf("%s: the file ends inside entry %d of the JSON array (which starts after byte %d): it is truncated, not complete JSON", name, i, dec.InputOffset())
			}
			return nil, fmt.Errorf("%s: entry %d of the JSON array: malformed JSON: %v", name, i, err)
		}
		if len(raw) > MaxLineBytes {
			return nil, fmt.Errorf("%s: entry %d of the JSON array: longer than %d bytes", name, i, MaxLineBytes)
		}
		p, skip, err := parseObject(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d of the JSON array: %w", name, i, err)
		}
		if skip {
			skipped++
		} else {
			ps = append(ps, p)
		}
	}
	if _, err := dec.Token(); err != nil {
		if endOfData(err) {
			return nil, fmt.Errorf("%s: the file ends after entry %d of the JSON array, without its closing ]: it is truncated, not complete JSON", name, len(ps)+skipped)
		}
		return nil, fmt.Errorf("%s: malformed JSON at the end of the array: %v", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: something follows the JSON array (want one array, or one JSON object a line)", name)
	}
	if len(ps) == 0 {
		if skipped > 0 {
			return nil, fmt.Errorf("%s: no prompts: none of its %d ShareGPT entries has a turn from \"human\"", name, skipped)
		}
		return nil, fmt.Errorf("%s: no prompts: the JSON array is empty", name)
	}
	s, err := New(name, ps)
	if s != nil {
		s.skipped = skipped
	}
	return s, err
}

// Skipped returns the number of ShareGPT entries of the file that were
// skipped for want of a turn from "human".
func (s *Set) Skipped() int { return s.skipped }

var errNoPrompt = errors.New(`want an object with "prompt", "text", "messages" or "conversations"`)

// jsonKind names the kind of a JSON value for messages ("a string", "an
// array"), by its first byte.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// endOfData reports whether err, from encoding/json, says that the data
// ended before the JSON value did: a truncated file or line.
func endOfData(err error) bool {
	var se *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &se) && se.Error() == "unexpected end of JSON input"
}

// object decodes a JSON object into its keys and values, with an error
// that names no Go type.
func object(b []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		if endOfData(err) {
			return nil, errors.New("the line ends before its JSON value does: not complete JSON (is the file truncated?)")
		}
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if k := jsonKind(b); k != "an object" {
		return nil, fmt.Errorf("want a JSON object, got %s", k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	return m, nil
}

// str decodes a string value; null is absent.
func str(key string, v json.RawMessage) (s string, ok bool, err error) {
	if isNull(v) {
		return "", false, nil
	}
	if jsonKind(v) == "a string" {
		err := json.Unmarshal(v, &s)
		return s, true, err
	}
	return "", false, fmt.Errorf("%q: want a string, got %s", key, jsonKind(v))
}

// isNull reports whether v is absent or null.
func isNull(v json.RawMessage) bool { return v == nil || jsonKind(v) == "null" }

// parseObject reads one prompt object (a line, or an entry of an array);
// skip reports a ShareGPT entry without a human turn.
func parseObject(b []byte) (p Prompt, skip bool, err error) {
	m, err := object(b)
	if err != nil {
		return Prompt{}, false, err
	}
	if _, ok := m[keyConversations]; ok {
		return shareGPT(m)
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(knownKeys, k) && !slices.Contains(IgnoredKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Prompt{}, false, fmt.Errorf("unknown key %q: a prompt object has %s, and ignores %s",
			unknown[0], quoteList(knownKeys), quoteList(IgnoredKeys))
	}
	if p.MaxTokens, err = maxTokens(m[keyMaxTokens]); err != nil {
		return Prompt{}, false, err
	}
	n := 0
	for _, k := range []string{keyPrompt, keyText, keyMessages} {
		if !isNull(m[k]) {
			n++
		}
	}
	switch {
	case n == 0:
		return Prompt{}, false, errNoPrompt
	case n > 1:
		return Prompt{}, false, errors.New(`more than one of "prompt", "text" and "messages"`)
	case !isNull(m[keyMessages]):
		p.Messages, err = messages(m[keyMessages])
		return p, false, err
	}
	key := keyPrompt
	if isNull(m[keyPrompt]) {
		key = keyText
	}
	t, _, err := str(key, m[key])
	if err != nil {
		return Prompt{}, false, err
	}
	if t == "" {
		return Prompt{}, false, errors.New("empty prompt")
	}
	p.Text = t
	return p, false, nil
}

// maxTokens reads "max_tokens": a positive integer, or absent (0).
func maxTokens(v json.RawMessage) (int, error) {
	if isNull(v) {
		return 0, nil
	}
	s := string(bytes.TrimSpace(v))
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf(`"max_tokens": want a positive integer, got %s`, quotePrefix(s))
	}
	return n, nil
}

// quotePrefix shows at most 40 bytes of s.
func quotePrefix(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// messages reads a chat conversation: role and content strings.
func messages(v json.RawMessage) ([]Message, error) {
	const want = `"messages": want an array of {"role": "…", "content": "…"} with string contents`
	if jsonKind(v) != "an array" {
		return nil, fmt.Errorf("%s, got %s", want, jsonKind(v))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		return nil, fmt.Errorf("%s: %v", want, err)
	}
	if len(raws) == 0 {
		return nil, errors.New(`"messages" is empty`)
	}
	ms := make([]Message, len(raws))
	for i, raw := range raws {
		m, err := object(raw)
		if err != nil {
			return nil, fmt.Errorf(`"messages"[%d]: %v`, i, err)
		}
		for k := range m {
			if k != "role" && k != "content" {
				return nil, fmt.Errorf(`"messages"[%d]: unknown key %q: a message has "role" and "content"`, i, k)
			}
		}
		role, _, err := str("role", m["role"])
		if err != nil {
			return nil, fmt.Errorf(`"messages"[%d]: %v`, i, err)
		}
		if role == "" {
			return nil, fmt.Errorf(`"messages"[%d]: no "role"`, i)
		}
		content, _, err := str("content", m["content"])
		if err != nil {
			return nil, fmt.Errorf(`"messages"[%d]: %v (content parts are not supported)`, i, err)
		}
		ms[i] = Message{Role: role, Content: content}
	}
	return ms, nil
}

// shareGPT reads a ShareGPT entry: its first human turn is the prompt.
func shareGPT(m map[string]json.RawMessage) (Prompt, bool, error) {
	for _, k := range []string{keyPrompt, keyText, keyMessages} {
		if _, ok := m[k]; ok {
			return Prompt{}, false, fmt.Errorf(`both %q and "conversations" (a ShareGPT entry)`, k)
		}
	}
	mt, err := maxTokens(m[keyMaxTokens])
	if err != nil {
		return Prompt{}, false, err
	}
	v := m[keyConversations]
	if isNull(v) {
		return Prompt{}, true, nil
	}
	const want = `"conversations" (ShareGPT): want an array of {"from": "human", "value": "…"}`
	if jsonKind(v) != "an array" {
		return Prompt{}, false, fmt.Errorf("%s, got %s", want, jsonKind(v))
	}
	var turns []json.RawMessage
	if err := json.Unmarshal(v, &turns); err != nil {
		return Prompt{}, false, fmt.Errorf("%s: %v", want, err)
	}
	for i, raw := range turns {
		t, err := object(raw)
		if err != nil {
			return Prompt{}, false, fmt.Errorf(`"conversations"[%d]: %v`, i, err)
		}
		from, value := "from", "value"
		if _, ok := t[from]; !ok {
			from, value = "role", "content"
		}
		who, _, err := str(from, t[from])
		if err != nil {
			return Prompt{}, false, fmt.Errorf(`"conversations"[%d]: %v`, i, err)
		}
		if who != "human" && who != "user" {
			continue
		}
		text, _, err := str(value, t[value])
		if err != nil {
			return Prompt{}, false, fmt.Errorf(`"conversations"[%d]: %v`, i, err)
		}
		if text == "" {
			return Prompt{}, true, nil
		}
		return Prompt{Text: text, MaxTokens: mt}, false, nil
	}
	return Prompt{}, true, nil
}

// quoteList is `"a", "b" and "c"`.
func quoteList(ks []string) string {
	q := make([]string, len(ks))
	for i, k := range ks {
		q[i] = strconv.Quote(k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
