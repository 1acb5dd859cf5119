package prompts

import (
	"bufio"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"strings"

	"aimeter/tokenize"
)

// SystemWordList is the word list Synthetic prefers: Debian's wamerican
// (and most Unix systems) install it.
const SystemWordList = "/usr/share/dict/words"

// SyntheticOptions configure Synthetic.
type SyntheticOptions struct {
	// Count is the number of prompts; zero means 1024.
	Count int
	// InputWords is the length of each prompt in words; zero means 128.
	// Words stand in for tokens: a tokenizer of the GPT or Llama families
	// splits a common English word into about 1.3 tokens, and a rare word
	// of a dictionary list into 2 or more, so a prompt of N words is N
	// tokens or more. The server's usage.prompt_tokens is the exact figure.
	InputWords int
	// InputLengths, when not zero, draws each prompt's length from a
	// distribution instead of InputWords (words, or Tokenizer's tokens).
	InputLengths tokenize.Lengths
	// OutputLengths, when not zero, draws each prompt's output length
	// (its MaxTokens, sent as max_tokens instead of the client's) from a
	// distribution, with a generator of its own seeded by Seed: the
	// prompts' texts are the same with or without it.
	OutputLengths tokenize.Lengths
	// Tokenizer, when set, makes InputWords a length in its tokens, met
	// exactly (tokenize.Writer: every prompt then begins with a space);
	// nil counts words. Each prompt of a tokenizer's set then starts with
	// the place of a client's per-request nonce (Prompt.Lead: the one-token
	// words a NonceBits nonce takes, or all of a shorter prompt), which sut/openai fills
	// with its nonce instead of putting one in front: the text a server
	// receives then has exactly the length asked for.
	Tokenizer tokenize.Tokenizer
	// Seed seeds the choice of words; the same options give the same
	// prompts. Zero is a valid seed.
	Seed uint64
	// Words is the list to draw from; nil means LoadWords(SystemWordList),
	// or GeneratedWords when that file is missing or has too few words.
	Words []string
}

// Synthetic returns Count prompts of InputWords words each, drawn uniformly
// with replacement from the word list with a PCG generator seeded by Seed.
// The set's name says the length, seed and source of the words.
func Synthetic(o SyntheticOptions) (*Set, error) {
	if o.Count < 0 || o.InputWords < 0 {
		return nil, fmt.Errorf("synthetic prompts: count %d and input words %d must not be negative", o.Count, o.InputWords)
	}
	if o.Count == 0 {
		o.Count = 1024
	}
	if o.InputWords == 0 {
		o.InputWords = 128
	}
	source := "given words"
	words := o.Words
	if words == nil {
		var err error
		words, err = LoadWords(SystemWordList)
		source = SystemWordList
		if err != nil || len(words) < 1000 {
			words, source = GeneratedWords(8192), "generated words"
		}
	}
	if len(words) == 0 {
		return nil, errors.New("synthetic prompts: empty word list")
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	ps := make([]Prompt, o.Count)
	outputs := ""
	if !o.OutputLengths.IsZero() {
		out := rand.New(rand.NewPCG(o.Seed, 0x6a09e667f3bcc909))
		for i := range ps {
			ps[i].MaxTokens = o.OutputLengths.Draw(out)
		}
		outputs = ", output lengths " + o.OutputLengths.String()
	}
	var b strings.Builder
	if o.Tokenizer != nil {
		w, err := tokenize.NewWriter(o.Tokenizer, words)
		if err != nil {
			return nil, fmt.Errorf("synthetic prompts: %w", err)
		}
		nonce, lead := nonceWords(w.OneTokenWords())
		for i := range ps {
			b.Reset()
			n := o.length(rng)
			if n < 1 || n > tokenize.MaxTextTokens {
				return nil, fmt.Errorf("synthetic prompts: a prompt of %d tokens: want 1 to %d", n, tokenize.MaxTextTokens)
			}
			ps[i].Lead = min(n, lead)
			for range ps[i].Lead {
				b.WriteByte(' ')
				b.WriteString(nonce[rng.IntN(len(nonce))])
			}
			if n > ps[i].Lead {
				if err := w.Append(&b, n-ps[i].Lead, rng); err != nil {
					return nil, fmt.Errorf("synthetic prompts: %w", err)
				}
			}
			ps[i].Text = b.String()
		}
		place := ""
		if lead > 0 {
			place = fmt.Sprintf(", the first %d tokens of each a per-request nonce's place", lead)
		}
		return newSet(fmt.Sprintf("synthetic prompts (%d × %s tokens of %s, words from %s, seed %d%s%s)", o.Count, o.lengthName(), o.Tokenizer.Name(), source, o.Seed, outputs, place), ps, nonce)
	}
	for i := range ps {
		b.Reset()
		for w := range o.length(rng) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		ps[i].Text = b.String()
	}
	return New(fmt.Sprintf("synthetic prompts (%d × %s words from %s, seed %d%s)", o.Count, o.lengthName(), source, o.Seed, outputs), ps)
}

// LoadWords reads a word list, one word a line, keeping only the words of
// lower-case ASCII letters (no proper nouns, possessives or accents), in
// file order.
func LoadWords(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("word list: %w", err)
	}
	defer f.Close()
	var words []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if w := sc.Text(); isPlainWord(w) {
			words = append(words, w)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("word list %s: %w", path, err)
	}
	return words, nil
}

func isPlainWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// GeneratedWords returns n pronounceable made-up words of one to three
// consonant-vowel syllables (with an optional closing consonant), the same
// on every machine: the word list of a machine without one installed. n is
// capped at 1 << 20.
func GeneratedWords(n int) []string {
	n = min(max(n, 0), 1<<20)
	const consonants = "bcdfghjklmnprstvwz"
	const vowels = "aeiou"
	rng := rand.New(rand.NewPCG(45087, 2024))
	seen := make(map[string]bool, n)
	words := make([]string, 0, n)
	var b []byte
	for len(words) < n {
		b = b[:0]
		for range 1 + rng.IntN(3) {
			b = append(b, consonants[rng.IntN(len(consonants))], vowels[rng.IntN(len(vowels))])
		}
		if rng.IntN(2) == 0 {
			b = append(b, consonants[rng.IntN(len(consonants))])
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// length is the next prompt's length: InputWords, or a draw from
// InputLengths.
func (o *SyntheticOptions) length(rng *rand.Rand) int {
	if o.InputLengths.IsZero() {
		return o.InputWords
	}
	return o.InputLengths.Draw(rng)
}

// lengthName is the prompts' length for the set's name.
func (o *SyntheticOptions) lengthName() string {
	if o.InputLengths.IsZero() {
		return fmt.Sprint(o.InputWords)
	}
	return o.InputLengths.String()
}

// NonceBits is the number of bits of a client's per-request nonce that a
// tokenizer's synthetic set makes room for: the 64 of sut/openai's.
const NonceBits = 64

// nonceWords picks the nonce words of a tokenizer's set from its one-token
// words: the first 2^b of them (b ≤ 16 bits a word), and the number of
// words a nonce of NonceBits bits takes. It returns nil and 0 when there
// are fewer than 2 one-token words: the prompts then have no nonce place.
func nonceWords(one []string) ([]string, int) {
	n := min(len(one), 1<<16)
	if n < 2 {
		return nil, 0
	}
	b := bits.Len(uint(n)) - 1
	return one[:1<<b], (NonceBits + b - 1) / b
}
