// Package tokenize counts text in a language model's own tokens: the
// OpenAI-family tiktoken encodings compiled into the binary
// (github.com/tiktoken-go/tokenizer), and Hugging Face tokenizer.json files
// of byte-level BPE (GPT-2, Llama 3, Qwen 2, Mistral Nemo and the like), read
// in pure Go. Nothing is ever downloaded.
//
// aimeter prefers the token counts a server reports (its usage); a
// Tokenizer is the fallback when a server reports none, and the means to
// prepare inputs of exact token lengths (Writer).
package tokenize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// Tokenizer turns text into a model's token ids and back. Implementations
// are safe for concurrent use.
type Tokenizer interface {
	// Name names the vocabulary: the tiktoken encoding, or the
	// tokenizer.json file.
	Name() string
	// Encode returns the token ids of text, without the special tokens
	// a model's template adds (a beginning-of-text token and the like).
	Encode(text string) []int
	// Count returns len(Encode(text)).
	Count(text string) int
	// Decode returns the text of ids; ids that are not in the vocabulary
	// are skipped.
	Decode(ids []int) string
}

// Encodings lists the tiktoken encodings Open accepts by name.
var Encodings = []string{"cl100k_base", "o200k_base", "p50k_base", "p50k_edit", "r50k_base"}

// Open returns the tokenizer that spec names: one of Encodings, or the path
// of a Hugging Face tokenizer.json (or of a directory holding one). The
// error says which names are accepted.
func Open(spec string) (Tokenizer, error) {
	if spec == "" {
		return nil, errors.New("tokenizer: empty name: want " + strings.Join(Encodings, ", ") + " or the path of a tokenizer.json")
	}
	if slices.Contains(Encodings, spec) {
		return Tiktoken(spec)
	}
	path := spec
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	} else if err != nil {
		return nil, fmt.Errorf("tokenizer %q: neither a tiktoken encoding (%s) nor a readable file: %w", spec, strings.Join(Encodings, ", "), err)
	}
	return ReadHF(path)
}

// tiktokenizer is a tiktoken encoding.
type tiktokenizer struct {
	name  string
	codec tiktoken.Codec
}

// Tiktoken returns the tiktoken encoding named name (one of Encodings),
// whose vocabulary is compiled into the binary.
func Tiktoken(name string) (Tokenizer, error) {
	c, err := tiktoken.Get(tiktoken.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: tiktoken encoding %q: %w (want one of %s)", name, err, strings.Join(Encodings, ", "))
	}
	return &tiktokenizer{name: name, codec: c}, nil
}

func (t *tiktokenizer) Name() string { return t.name }

func (t *tiktokenizer) Encode(text string) []int {
	ids, _, err := t.codec.Encode(text)
	if err != nil { // only in ErrorModeStrict, which is never set
		return nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func (t *tiktokenizer) Count(text string) int {
	n, err := t.codec.Count(text)
	if err != nil {
		return 0
	}
	return n
}

func (t *tiktokenizer) Decode(ids []int) string {
	u := make([]uint, 0, len(ids))
	for _, id := range ids {
		if id >= 0 {
			u = append(u, uint(id))
		}
	}
	s, err := t.codec.Decode(u)
	if err == nil {
		return s
	}
	// An id outside the vocabulary: decode the others one by one.
	var b strings.Builder
	for _, id := range u {
		if p, err := t.codec.Decode([]uint{id}); err == nil {
			b.WriteString(p)
		}
	}
	return b.String()
}
