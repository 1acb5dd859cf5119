package tokenize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// MaxHFBytes bounds the size of a tokenizer.json file ReadHF and ParseHF
// accept (the largest public ones, of 256k-token vocabularies, are about
// 35 MB).
const MaxHFBytes = 256 << 20

// gpt2Pattern is the pre-tokenizer regex of a ByteLevel pre-tokenizer with
// use_regex true, as Hugging Face's tokenizers and OpenAI's GPT-2 write it.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// HF is a Hugging Face tokenizer.json of a byte-level BPE model: model type
// "BPE" with a byte-level alphabet, pre-tokenized by "ByteLevel" (and
// optionally "Split" regexes before it, in a "Sequence"), normalized by
// nothing or "NFC", and decoded by "ByteLevel". Its added tokens are matched
// in the text before anything else, as the Python library does; their
// lstrip, rstrip and single_word flags are not applied. Other
// configurations (WordPiece, Unigram, SentencePiece's Metaspace, byte
// fallback) are refused by ParseHF with the field that is not supported.
type HF struct {
	name      string
	vocab     map[string]int
	pieces    []string // by id; "" for unused ids
	merges    map[[2]int]merge
	splits    []*regexp2.Regexp
	prefix    bool // add_prefix_space
	nfc       bool
	wholeWord bool // ignore_merges: a whole pre-token in the vocabulary is one token
	added     []addedToken
	addedID   map[int]string

	mu    sync.Mutex
	cache map[string][]int
}

// merge is the result of merging a pair: its rank and the merged token.
type merge struct{ rank, id int }

// addedToken is one of the file's added_tokens.
type addedToken struct {
	content string
	id      int
}

// cacheEntries bounds HF's cache of encoded pre-tokens; it is emptied when
// full.
const cacheEntries = 1 << 16

// hfFile is the part of tokenizer.json that HF reads.
type hfFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Decoder      json.RawMessage `json:"decoder"`
	Model        struct {
		Type                    string          `json:"type"`
		Vocab                   map[string]int  `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Dropout                 *float64        `json:"dropout"`
	} `json:"model"`
}

// component is a normalizer, pre-tokenizer or decoder of tokenizer.json.
type component struct {
	Type           string            `json:"type"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Pattern        map[string]string `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	Pretokenizers  []component       `json:"pretokenizers"`
	Normalizers    []component       `json:"normalizers"`
	Decoders       []component       `json:"decoders"`
}

// ReadHF reads a Hugging Face tokenizer.json; see HF for what it supports.
func ReadHF(path string) (*HF, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	return ParseHF(f, filepath.Base(path))
}

// ParseHF reads a Hugging Face tokenizer.json named name (for Name and the
// errors); see HF for what it supports. Errors name the field of the file
// that is missing, malformed or not supported.
func ParseHF(r io.Reader, name string) (*HF, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxHFBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	if len(data) > MaxHFBytes {
		return nil, fmt.Errorf("tokenizer %s: larger than %d bytes", name, MaxHFBytes)
	}
	fail := func(field, format string, a ...any) error {
		return fmt.Errorf("tokenizer %s: %s: %s", name, field, fmt.Sprintf(format, a...))
	}
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer %s: not a tokenizer.json: %w", name, err)
	}
	m := &f.Model
	switch {
	case m.Type != "BPE" && !(m.Type == "" && m.Vocab != nil):
		return nil, fail("model.type", "%q: only BPE is supported", m.Type)
	case len(m.Vocab) == 0:
		return nil, fail("model.vocab", "missing or empty")
	case m.ByteFallback:
		return nil, fail("model.byte_fallback", "true: byte fallback (SentencePiece BPE) is not supported, only byte-level BPE")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, fail("model.continuing_subword_prefix", "%q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fail("model.end_of_word_suffix", "%q is not supported", *m.EndOfWordSuffix)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fail("model.dropout", "%g: BPE dropout is random and not supported", *m.Dropout)
	}
	t := &HF{name: name, vocab: m.Vocab, wholeWord: m.IgnoreMerges, merges: map[[2]int]merge{}, addedID: map[int]string{}, cache: map[string][]int{}}
	maxID := 0
	for tok, id := range m.Vocab {
		if id < 0 || id > 1<<24 {
			return nil, fail("model.vocab", "token %q has id %d: want 0 to %d", tok, id, 1<<24)
		}
		maxID = max(maxID, id)
	}
	for _, a := range f.AddedTokens {
		if a.Content == "" || a.ID < 0 || a.ID > 1<<24 {
			return nil, fail("added_tokens", "token %q with id %d: want a non-empty content and an id of 0 to %d", a.Content, a.ID, 1<<24)
		}
		t.added = append(t.added, addedToken{a.Content, a.ID})
		t.addedID[a.ID] = a.Content
		maxID = max(maxID, a.ID)
	}
	// Longest first, so that a token that begins another matches last.
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	t.pieces = make([]string, maxID+1)
	for tok, id := range m.Vocab {
		t.pieces[id] = tok
	}
	for b := range 256 {
		if _, ok := m.Vocab[string(byteRune[b])]; !ok {
			return nil, fail("model.vocab", "no token for byte 0x%02x (%q): not a byte-level vocabulary", b, byteRune[b])
		}
	}
	if err := t.readMerges(m.Merges, fail); err != nil {
		return nil, err
	}
	if err := t.readNormalizer(f.Normalizer, fail); err != nil {
		return nil, err
	}
	if err := t.readPreTokenizer(f.PreTokenizer, fail); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(f.Decoder)) > 0 && string(bytes.TrimSpace(f.Decoder)) != "null" {
		var d component
		if err := json.Unmarshal(f.Decoder, &d); err != nil {
			return nil, fail("decoder", "%v", err)
		}
		if !isByteLevelDecoder(d) {
			return nil, fail("decoder.type", "%q: only ByteLevel is supported", d.Type)
		}
	}
	return t, nil
}

// isByteLevelDecoder tells whether d is ByteLevel, alone or in a Sequence.
func isByteLevelDecoder(d component) bool {
	if d.Type == "ByteLevel" {
		return true
	}
	if d.Type == "Sequence" && len(d.Decoders) == 1 {
		return isByteLevelDecoder(d.Decoders[0])
	}
	return false
}

// readMerges reads model.merges: strings "a b" (older files) or pairs
// ["a", "b"] (tokenizers 0.20 and later).
func (t *HF) readMerges(raw json.RawMessage, fail func(string, string, ...any) error) error {
	var pairs [][2]string
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		for i, s := range strs {
			a, b, ok := strings.Cut(s, " ")
			if !ok || a == "" || b == "" || strings.Contains(b, " ") {
				return fail("model.merges", "entry %d %q: want two tokens separated by one space", i, s)
			}
			pairs = append(pairs, [2]string{a, b})
		}
	} else if err := json.Unmarshal(raw, &pairs); err != nil {
		return fail("model.merges", "want a list of \"a b\" strings or of [\"a\", \"b\"] pairs: %v", err)
	}
	for rank, p := range pairs {
		a, okA := t.vocab[p[0]]
		b, okB := t.vocab[p[1]]
		c, okC := t.vocab[p[0]+p[1]]
		if !okA || !okB || !okC {
			return fail("model.merges", "entry %d (%q %q): a token or the merged token is not in model.vocab", rank, p[0], p[1])
		}
		if _, dup := t.merges[[2]int{a, b}]; !dup {
			t.merges[[2]int{a, b}] = merge{rank, c}
		}
	}
	return nil
}

func (t *HF) readNormalizer(raw json.RawMessage, fail func(string, string, ...any) error) error {
	if s := string(bytes.TrimSpace(raw)); s == "" || s == "null" {
		return nil
	}
	var n component
	if err := json.Unmarshal(raw, &n); err != nil {
		return fail("normalizer", "%v", err)
	}
	list := []component{n}
	if n.Type == "Sequence" {
		list = n.Normalizers
	}
	for _, c := range list {
		if c.Type != "NFC" {
			return fail("normalizer.type", "%q: only none and NFC are supported", c.Type)
		}
		t.nfc = true
	}
	return nil
}

func (t *HF) readPreTokenizer(raw json.RawMessage, fail func(string, string, ...any) error) error {
	if s := string(bytes.TrimSpace(raw)); s == "" || s == "null" {
		return fail("pre_tokenizer", "missing: a byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	var p component
	if err := json.Unmarshal(raw, &p); err != nil {
		return fail("pre_tokenizer", "%v", err)
	}
	list := []component{p}
	if p.Type == "Sequence" {
		list = p.Pretokenizers
	}
	byteLevel := false
	for i, c := range list {
		switch c.Type {
		case "Split":
			if byteLevel {
				return fail("pre_tokenizer", "a Split after ByteLevel is not supported")
			}
			if c.Behavior != "Isolated" || c.Invert {
				return fail("pre_tokenizer.behavior", "%q (invert %v): only Isolated, not inverted, is supported", c.Behavior, c.Invert)
			}
			expr, isRegex := c.Pattern["Regex"]
			if !isRegex {
				s, ok := c.Pattern["String"]
				if !ok {
					return fail("pre_tokenizer.pattern", "want {\"Regex\": …} or {\"String\": …}")
				}
				expr = regexp2.Escape(s)
			}
			re, err := regexp2.Compile(expr, regexp2.Unicode)
			if err != nil {
				return fail("pre_tokenizer.pattern", "%q: %v", expr, err)
			}
			t.splits = append(t.splits, re)
		case "ByteLevel":
			if i != len(list)-1 {
				return fail("pre_tokenizer", "ByteLevel must come last")
			}
			byteLevel = true
			t.prefix = c.AddPrefixSpace
			if c.UseRegex == nil || *c.UseRegex {
				t.splits = append(t.splits, regexp2.MustCompile(gpt2Pattern, regexp2.Unicode))
			}
		default:
			return fail("pre_tokenizer.type", "%q: only ByteLevel, and Split before it, are supported", c.Type)
		}
	}
	if !byteLevel {
		return fail("pre_tokenizer", "no ByteLevel pre-tokenizer: not a byte-level BPE")
	}
	return nil
}

// Name returns the file's name.
func (t *HF) Name() string { return t.name }

// Count returns the number of tokens of text.
func (t *HF) Count(text string) int {
	n := 0
	t.encode(text, func(ids []int) { n += len(ids) })
	return n
}

// Encode returns the token ids of text, without the tokens a post-processor
// adds (Python's add_special_tokens=False). Invalid UTF-8 in text reads as
// U+FFFD, one a byte (a Python or Rust string cannot hold it).
func (t *HF) Encode(text string) []int {
	var out []int
	t.encode(text, func(ids []int) { out = append(out, ids...) })
	return out
}

// Decode returns the text of ids, skipping ids outside the vocabulary.
func (t *HF) Decode(ids []int) string {
	var b strings.Builder
	var raw []byte
	for _, id := range ids {
		if s, ok := t.addedID[id]; ok {
			b.Write(raw)
			raw = raw[:0]
			b.WriteString(s)
			continue
		}
		if id < 0 || id >= len(t.pieces) || t.pieces[id] == "" {
			continue
		}
		for _, r := range t.pieces[id] {
			if c, ok := runeByte[r]; ok {
				raw = append(raw, c)
			}
		}
	}
	b.Write(raw)
	return b.String()
}

// encode calls yield with the ids of each piece of text in order.
func (t *HF) encode(text string, yield func([]int)) {
	for text != "" {
		at, tok := len(text), -1
		for i, a := range t.added {
			if j := strings.Index(text, a.content); j >= 0 && j < at {
				at, tok = j, i
			}
		}
		t.encodePlain(text[:at], yield)
		if tok < 0 {
			return
		}
		yield([]int{t.added[tok].id})
		text = text[at+len(t.added[tok].content):]
	}
}

// encodePlain encodes text that holds no added token.
func (t *HF) encodePlain(text string, yield func([]int)) {
	if text == "" {
		return
	}
	if t.nfc {
		text = norm.NFC.String(text)
	}
	if t.prefix && !strings.HasPrefix(text, " ") {
		text = " " + text
	}
	pieces := []string{text}
	for _, re := range t.splits {
		var next []string
		for _, p := range pieces {
			next = appendSplit(next, re, p)
		}
		pieces = next
	}
	for _, p := range pieces {
		yield(t.bpe(p))
	}
}

// appendSplit appends the pieces of s that re's Isolated split gives: every
// match, and every stretch between matches.
func appendSplit(out []string, re *regexp2.Regexp, s string) []string {
	runes := []rune(s)
	last := 0
	m, err := re.FindRunesMatch(runes)
	for err == nil && m != nil {
		if m.RuneLength == 0 { // cannot happen with the known patterns
			break
		}
		if m.RuneIndex > last {
			out = append(out, string(runes[last:m.RuneIndex]))
		}
		out = append(out, string(runes[m.RuneIndex:m.RuneIndex+m.RuneLength]))
		last = m.RuneIndex + m.RuneLength
		m, err = re.FindNextMatch(m)
	}
	if last < len(runes) {
		out = append(out, string(runes[last:]))
	}
	return out
}

// bpe returns the ids of one pre-token.
func (t *HF) bpe(piece string) []int {
	t.mu.Lock()
	ids, ok := t.cache[piece]
	t.mu.Unlock()
	if ok {
		return ids
	}
	var mapped strings.Builder
	for i := range len(piece) {
		mapped.WriteRune(byteRune[piece[i]])
	}
	if id, ok := t.vocab[mapped.String()]; ok && t.wholeWord {
		ids = []int{id}
	} else {
		ids = make([]int, 0, len(piece))
		for i := range len(piece) {
			ids = append(ids, t.vocab[string(byteRune[piece[i]])])
		}
		for len(ids) > 1 {
			best, at := merge{rank: -1}, -1
			for i := range len(ids) - 1 {
				if m, ok := t.merges[[2]int{ids[i], ids[i+1]}]; ok && (at < 0 || m.rank < best.rank) {
					best, at = m, i
				}
			}
			if at < 0 {
				break
			}
			ids[at] = best.id
			ids = append(ids[:at+1], ids[at+2:]...)
		}
	}
	t.mu.Lock()
	if len(t.cache) >= cacheEntries {
		clear(t.cache)
	}
	t.cache[piece] = ids
	t.mu.Unlock()
	return ids
}

// byteRune is GPT-2's bytes_to_unicode: the printable character that
// stands for each byte in a byte-level vocabulary; runeByte is its inverse.
var byteRune, runeByte = byteLevelAlphabet()

func byteLevelAlphabet() ([256]rune, map[rune]byte) {
	var br [256]rune
	rb := make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			br[b] = rune(b)
		} else {
			br[b] = rune(256 + n)
			n++
		}
		rb[br[b]] = byte(b)
	}
	return br, rb
}
