package tokenize

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// benchText is about 1,000 words of English-like text.
var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog, and a benchmark counts 12345 tokens of it. ", 60)

// BenchmarkCount counts a 5 kB text; ns/op over the text's bytes is the
// tokenizer's speed (the HF reader's cache of pre-tokens is warm after the
// first round, as it is over a run's prompts).
func BenchmarkCount(b *testing.B) {
	hf, err := ReadHF(filepath.Join("testdata", "llama3-style.json"))
	if err != nil {
		b.Fatal(err)
	}
	cl, err := Tiktoken("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	for _, tok := range []Tokenizer{cl, hf} {
		b.Run(tok.Name(), func(b *testing.B) {
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				tok.Count(benchText)
			}
		})
	}
}

// BenchmarkWriterText builds prompts of 1,024 cl100k tokens.
func BenchmarkWriterText(b *testing.B) {
	cl, err := Tiktoken("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWriter(cl, strings.Fields(benchText))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		if _, err := w.Text(1024, rng); err != nil {
			b.Fatal(err)
		}
	}
}
