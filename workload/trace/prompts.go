package trace

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"aimeter/dataset/prompts"
	"aimeter/tokenize"
)

// PromptOptions configure Schedule.Prompts.
type PromptOptions struct {
	// Seed varies the text; the same seed and trace give the same prompts.
	Seed uint64
	// Words is the list words are drawn from; nil means
	// prompts.GeneratedWords(8192), the same on every machine.
	Words []string
	// Tokenizer, when set, makes the trace's lengths exact in its tokens
	// (tokenize.Writer); nil draws one word a token.
	Tokenizer tokenize.Tokenizer
	// MaxWords bounds the total words of all prompts, which stay in
	// memory for the run; 0 means DefaultMaxWords.
	MaxWords int64
}

// DefaultMaxWords is PromptOptions.MaxWords' default: 256 M words, about
// 2 GB of prompt text.
const DefaultMaxWords = 256 << 20

// Stream selectors of the word generator: the text of a hash-id block,
// of a CSV session and of a CSV request without a session never share a
// stream.
const (
	streamBlock   = 0x6d6f6f6e63616b65 // "mooncake"
	streamSession = 0x73657373696f6e00 // "session"
	streamRow     = 0x726f770000000000 // "row"
)

// Prompts builds the prompt of every request of the schedule, as a prompt
// set whose sample k is request k, with max_tokens its output length.
// Words stand in for tokens (as in prompts.Synthetic): a prompt of N words
// is N tokens or more; the server's usage counts the exact figure.
//
// A Mooncake request's prompt is its blocks' texts in order: block j is
// BlockTokens words drawn from a generator seeded by (Seed, hash id), the
// last block cut to the request's length. Requests whose first j hash ids
// are equal thus share their first j blocks' text, as their prompts shared
// those tokens in the traced system, and a prefix cache hits as it did.
//
// A CSV request with a session is the first input_tokens words of its
// session's text, so that every turn extends the shared prefix of the
// earlier ones, as a chat history does; one without a session gets text
// of its own.
func (s *Schedule) Prompts(name string, o PromptOptions) (*prompts.Set, error) {
	words := o.Words
	if words == nil {
		words = prompts.GeneratedWords(8192)
	}
	if len(words) == 0 {
		return nil, errors.New("trace prompts: empty word list")
	}
	limit := o.MaxWords
	if limit == 0 {
		limit = DefaultMaxWords
	}
	var total int64
	for _, q := range s.Requests {
		total += int64(q.InputTokens)
	}
	if total > limit {
		return nil, fmt.Errorf("trace %s: its %d requests hold %d prompt tokens, over the %d words kept in memory: replay fewer requests (max requests, max duration)", name, len(s.Requests), total, limit)
	}
	ps := make([]prompts.Prompt, len(s.Requests))
	var b strings.Builder
	if o.Tokenizer != nil {
		return s.tokenPrompts(name, o, words)
	}
	for k, q := range s.Requests {
		b.Reset()
		b.Grow(q.InputTokens * 8)
		switch {
		case q.HashIDs != nil:
			left := q.InputTokens
			for _, h := range q.HashIDs {
				n := min(left, BlockTokens)
				writeWords(&b, words, o.Seed, streamBlock^uint64(h), n)
				left -= n
			}
		case q.Session != "":
			writeWords(&b, words, o.Seed, streamSession^sessionKey(q.Session), q.InputTokens)
		default:
			writeWords(&b, words, o.Seed, streamRow^uint64(q.Line), q.InputTokens)
		}
		ps[k] = prompts.Prompt{Text: strings.TrimSuffix(b.String(), " "), MaxTokens: q.OutputTokens}
	}
	return prompts.New(name, ps)
}

// tokenPrompts is Prompts with a tokenizer: each stream gives a text of
// the exact length in tokens. Two texts of one stream share all but their
// last few words, so that the hash-id blocks and a session's turns share
// prefixes as Prompts describes.
func (s *Schedule) tokenPrompts(name string, o PromptOptions, words []string) (*prompts.Set, error) {
	w, err := tokenize.NewWriter(o.Tokenizer, words)
	if err != nil {
		return nil, fmt.Errorf("trace %s prompts: %w", name, err)
	}
	ps := make([]prompts.Prompt, len(s.Requests))
	var b strings.Builder
	write := func(stream uint64, n int) error {
		return w.Append(&b, n, rand.New(rand.NewPCG(o.Seed, stream)))
	}
	for k, q := range s.Requests {
		b.Reset()
		var err error
		switch {
		case q.HashIDs != nil:
			left := q.InputTokens
			for _, h := range q.HashIDs {
				n := min(left, BlockTokens)
				if n > 0 {
					if err = write(streamBlock^uint64(h), n); err != nil {
						break
					}
				}
				left -= n
			}
		case q.Session != "":
			err = write(streamSession^sessionKey(q.Session), q.InputTokens)
		default:
			err = write(streamRow^uint64(q.Line), q.InputTokens)
		}
		if err != nil {
			return nil, fmt.Errorf("trace %s line %d: %w", name, q.Line, err)
		}
		ps[k] = prompts.Prompt{Text: b.String(), MaxTokens: q.OutputTokens}
	}
	return prompts.New(name+" ("+o.Tokenizer.Name()+" tokens)", ps)
}

// writeWords writes the first n words of the stream (seed, stream), each
// followed by a space.
func writeWords(b *strings.Builder, words []string, seed, stream uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, stream))
	for range n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
}

// sessionKey hashes a session name to its stream.
func sessionKey(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
