package tokenize_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"aimeter/tokenize"
)

// Count a text in GPT-4's tokens, then build a prompt of exactly 16 of them.
func Example() {
	tok, err := tokenize.Open("cl100k_base") // or the path of a tokenizer.json
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Count("hello world"), tok.Encode("hello world"))

	w, err := tokenize.NewWriter(tok, strings.Fields("the quick brown fox jumps over a lazy dog"))
	if err != nil {
		panic(err)
	}
	prompt, err := w.Text(16, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Count(prompt))
	// Output:
	// 2 [15339 1917]
	// 16
}
