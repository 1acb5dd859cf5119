package tokenize

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// MaxTextTokens bounds the length Writer.Text builds.
const MaxTextTokens = 1 << 22

// Writer builds texts of exact lengths in a tokenizer's tokens from a word
// list, as AIPerf and GuideLLM build their synthetic prompts. Every text is
// a sequence of words each preceded by one space (" the cat sat"): the
// pre-tokenizers of byte-level BPE vocabularies (GPT-2, cl100k, o200k,
// Llama 3, Qwen 2) make each " word" a piece of its own, so a text's length
// is the sum of its words' lengths, and two texts concatenated have the sum
// of their lengths. Text checks the length of what it built by counting it
// again, and fails rather than return a text of another length. A Writer is
// safe for concurrent use.
type Writer struct {
	tok   Tokenizer
	words []string
	count []int   // tokens of " "+words[i]
	exact [][]int // exact[k]: the words of k tokens, k ≤ maxExact
}

// maxExact is the longest word length Writer keeps an index of.
const maxExact = 8

// NewWriter returns a Writer over words (nil or empty is an error). Words
// that are empty or hold a space are skipped. It counts the tokens of every
// word once. It is an error for the list to hold no word of exactly one
// token, which Text needs to end a text at its exact length.
func NewWriter(t Tokenizer, words []string) (*Writer, error) {
	if t == nil {
		return nil, errors.New("tokenize: nil tokenizer")
	}
	w := &Writer{tok: t, exact: make([][]int, maxExact+1)}
	for _, s := range words {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			continue
		}
		n := t.Count(" " + s)
		if n < 1 {
			continue
		}
		w.words = append(w.words, s)
		w.count = append(w.count, n)
		if n <= maxExact {
			w.exact[n] = append(w.exact[n], len(w.words)-1)
		}
	}
	if len(w.words) == 0 {
		return nil, errors.New("tokenize: no usable word in the word list")
	}
	if len(w.exact[1]) == 0 {
		return nil, fmt.Errorf("tokenize: no word of the list is one token of %s (with its leading space): texts of exact lengths need some", t.Name())
	}
	return w, nil
}

// Text returns a text of exactly n tokens (1 ≤ n ≤ MaxTextTokens) of words
// drawn by rng.
func (w *Writer) Text(n int, rng *rand.Rand) (string, error) {
	var b strings.Builder
	if err := w.Append(&b, n, rng); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Append writes a text of exactly n tokens to b; see Text.
func (w *Writer) Append(b *strings.Builder, n int, rng *rand.Rand) error {
	if n < 1 || n > MaxTextTokens {
		return fmt.Errorf("tokenize: text of %d tokens: want 1 to %d", n, MaxTextTokens)
	}
	start := b.Len()
	left := n
	for left > 0 {
		i := rng.IntN(len(w.words))
		if w.count[i] > left-1 && left <= maxExact {
			// End on a word of exactly the tokens left, else on
			// one-token words.
			if ws := w.exact[left]; len(ws) > 0 {
				i = ws[rng.IntN(len(ws))]
			} else {
				i = w.exact[1][rng.IntN(len(w.exact[1]))]
			}
		} else if w.count[i] > left {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(w.words[i])
		left -= w.count[i]
	}
	if got := w.tok.Count(b.String()[start:]); got != n {
		return fmt.Errorf("tokenize: a text built to %d tokens of %s counts %d: its words do not tokenize independently", n, w.tok.Name(), got)
	}
	return nil
}

// OneTokenWords returns the words of the list that are exactly one token
// with their leading space (" word"), in list order: a text of them, each
// preceded by one space, has as many tokens as words. The slice is the
// caller's.
func (w *Writer) OneTokenWords() []string {
	out := make([]string, len(w.exact[1]))
	for j, i := range w.exact[1] {
		out[j] = w.words[i]
	}
	return out
}
