package benchmark

import (
	"os"
	"path/filepath"
	"slices"

	"aimeter/tokenize"
)

// tokenizer opens the tokenizer the OpenAI client names, once, and records
// the digest of its file; nil when none is named.
func (r *runner) tokenizer() (tokenize.Tokenizer, error) {
	oc := r.plan.SUT.OpenAI
	if oc == nil || oc.Tokenizer == "" {
		return nil, nil
	}
	if r.tok != nil {
		return r.tok, nil
	}
	if !slices.Contains(tokenize.Encodings, oc.Tokenizer) {
		path := oc.Tokenizer
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, "tokenizer.json")
		}
		sum, err := pinnedFile("SUT.OpenAI.Tokenizer", path, oc.TokenizerSHA256)
		if err != nil {
			return nil, err
		}
		oc.TokenizerSHA256 = sum
	}
	tok, err := tokenize.Open(oc.Tokenizer)
	if err != nil {
		return nil, &UsageError{Field: "SUT.OpenAI.Tokenizer", Err: err}
	}
	r.tok = tok
	return tok, nil
}
