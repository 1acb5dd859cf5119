package session

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"aimeter/dataset/prompts"
	"aimeter/tokenize"
)

// GenerateOptions configure Generate.
type GenerateOptions struct {
	// Sessions is the number of conversations (≥ 1).
	Sessions int
	// MinTurns and MaxTurns bound each conversation's user turns, drawn
	// uniformly; MaxTurns 0 means MinTurns (a fixed count, ≥ 1).
	MinTurns, MaxTurns int
	// UserWords is each user message's length in words (≈ tokens, ≥ 1),
	// or in Tokenizer's tokens when it is set.
	UserWords int
	// Tokenizer, when set, makes UserWords an exact length in its tokens
	// (tokenize.Writer); nil counts words.
	Tokenizer tokenize.Tokenizer
	// OutputTokens is each turn's max_tokens (≥ 1).
	OutputTokens int
	// Think is the think time before every turn after the first.
	Think time.Duration
	// Seed chooses the turn counts and the words.
	Seed uint64
	// Words is the list words are drawn from; nil means
	// prompts.GeneratedWords(8192).
	Words []string
}

// Generate returns Sessions conversations of generated text: the same
// options give the same conversations.
func Generate(o GenerateOptions) (*Set, error) {
	if o.MaxTurns == 0 {
		o.MaxTurns = o.MinTurns
	}
	switch {
	case o.Sessions < 1:
		return nil, fmt.Errorf("session: %d sessions: want at least 1", o.Sessions)
	case o.MinTurns < 1:
		return nil, errNoTurns
	case o.MaxTurns < o.MinTurns || o.MaxTurns > MaxTurns:
		return nil, fmt.Errorf("session: turns %d to %d: want 1 ≤ min ≤ max ≤ %d", o.MinTurns, o.MaxTurns, MaxTurns)
	case o.UserWords < 1 || o.UserWords > MaxTurnWords:
		return nil, fmt.Errorf("session: %d user words: want 1 to %d", o.UserWords, MaxTurnWords)
	case o.OutputTokens < 1 || o.OutputTokens > MaxTurnWords:
		return nil, fmt.Errorf("session: %d output tokens: want 1 to %d", o.OutputTokens, MaxTurnWords)
	case o.Think < 0:
		return nil, fmt.Errorf("session: think time %v is negative", o.Think)
	}
	words := o.Words
	if words == nil {
		words = prompts.GeneratedWords(8192)
	}
	if len(words) == 0 {
		return nil, errors.New("session: empty word list")
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x73657373))
	text := generatedText(rng, words)
	var writer *tokenize.Writer
	unit := "words"
	if o.Tokenizer != nil {
		w, err := tokenize.NewWriter(o.Tokenizer, words)
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		writer, unit = w, o.Tokenizer.Name()+" tokens"
	}
	userText := func(n int) (string, error) {
		if writer == nil {
			return text(n), nil
		}
		return writer.Text(n, rng)
	}
	s := &Set{Name: fmt.Sprintf("generated: %d sessions of %d–%d turns, %d %s in, %d tokens out, think %v, seed %d",
		o.Sessions, o.MinTurns, o.MaxTurns, o.UserWords, unit, o.OutputTokens, o.Think, o.Seed)}
	s.Conversations = make([]Conversation, o.Sessions)
	for i := range s.Conversations {
		n := o.MinTurns + rng.IntN(o.MaxTurns-o.MinTurns+1)
		c := Conversation{ID: fmt.Sprintf("s%d", i), Index: i, Turns: make([]Turn, n)}
		for k := range c.Turns {
			user, err := userText(o.UserWords)
			if err != nil {
				return nil, fmt.Errorf("session: %w", err)
			}
			c.Turns[k] = Turn{User: user, Answer: text(o.OutputTokens), OutputTokens: o.OutputTokens}
			if k > 0 {
				c.Turns[k].Think = o.Think
			}
		}
		s.Conversations[i] = c
	}
	return s, nil
}

// generatedText is the text of Generate without a tokenizer.
func generatedText(rng *rand.Rand, words []string) func(n int) string {
	return func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
}
