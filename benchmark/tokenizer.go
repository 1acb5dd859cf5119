package benchmark

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// A mistyped encoding is the likelier mistake than a
			// missing file: list the encodings.
			return nil, usage("SUT.OpenAI.Tokenizer", "SUT.OpenAI.Tokenizer %s: not a tiktoken encoding (want one of %s) nor an existing tokenizer.json file or directory holding one",
				oc.Tokenizer, strings.Join(tokenize.Encodings, ", "))
		case err == nil && fi.IsDir():
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
