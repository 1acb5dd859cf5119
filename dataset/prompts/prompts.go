// Package prompts is the data set of a language-model benchmark: a list of
// prompts, read from a JSONL file or generated from a word list, served as a
// loadgen.QSL. The network adapter (sut/openai) sends prompt Index of the
// set for sample Index.
package prompts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"aimeter/loadgen"
)

// Message is one message of a chat prompt.
type Message struct {
	// Role is "system", "user", "assistant" or any role the server accepts.
	Role string `json:"role"`
	// Content is the message's text.
	Content string `json:"content"`
}

// Prompt is one sample: a plain prompt (for /v1/completions, or a single
// user message for /v1/chat/completions) or a list of chat messages.
// Exactly one of Text and Messages is set.
type Prompt struct {
	// Text is a plain prompt; empty when Messages is set.
	Text string
	// Messages is a chat conversation; nil when Text is set.
	Messages []Message
}

// Set is a list of prompts served as a loadgen.QSL. Every prompt stays in
// memory, so loading a sample only checks its index. A Set is safe for
// concurrent use once built.
type Set struct {
	name    string
	prompts []Prompt
	perf    uint64

	mu     sync.Mutex
	loaded uint64 // samples loaded and not unloaded (for UnloadSamples' check)
}

var _ loadgen.QSL = (*Set)(nil)

// New returns a set named name over ps (which it keeps). It is an error for
// ps to be empty or for a prompt to have neither text nor messages.
func New(name string, ps []Prompt) (*Set, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("prompt set %s: no prompts", name)
	}
	for i, p := range ps {
		if p.Text == "" && len(p.Messages) == 0 {
			return nil, fmt.Errorf("prompt set %s: prompt %d is empty", name, i)
		}
		if p.Text != "" && len(p.Messages) > 0 {
			return nil, fmt.Errorf("prompt set %s: prompt %d has both text and messages", name, i)
		}
	}
	return &Set{name: name, prompts: ps, perf: uint64(len(ps))}, nil
}

// Name returns the set's name (the file name, or a description of the
// synthetic set).
func (s *Set) Name() string { return s.name }

// Len returns the number of prompts.
func (s *Set) Len() int { return len(s.prompts) }

// Prompt returns prompt i; it panics if i ≥ Len, like a slice.
func (s *Set) Prompt(i int) Prompt { return s.prompts[i] }

// TotalSampleCount returns the number of prompts.
func (s *Set) TotalSampleCount() uint64 { return uint64(len(s.prompts)) }

// PerformanceSampleCount returns the number of prompts unless
// SetPerformanceSampleCount changed it: prompts are small, so all of them
// fit in memory.
func (s *Set) PerformanceSampleCount() uint64 { return s.perf }

// SetPerformanceSampleCount makes the set report n as its performance
// sample count (0 = every prompt; more than Len is capped at Len). Call it
// before the run.
func (s *Set) SetPerformanceSampleCount(n uint64) {
	if n == 0 || n > uint64(len(s.prompts)) {
		n = uint64(len(s.prompts))
	}
	s.perf = n
}

// LoadSamples checks the indices: every prompt is in memory already.
func (s *Set) LoadSamples(indices []uint64) error {
	for _, i := range indices {
		if i >= uint64(len(s.prompts)) {
			return fmt.Errorf("sample index %d is outside prompt set %s (%d prompts)", i, s.name, len(s.prompts))
		}
	}
	s.mu.Lock()
	s.loaded += uint64(len(indices))
	s.mu.Unlock()
	return nil
}

// UnloadSamples releases a set loaded by LoadSamples.
func (s *Set) UnloadSamples(indices []uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uint64(len(indices)) > s.loaded {
		return fmt.Errorf("unloading %d samples of prompt set %s, of which only %d are loaded", len(indices), s.name, s.loaded)
	}
	s.loaded -= uint64(len(indices))
	return nil
}

// MaxLineBytes bounds one line of a JSONL prompt file.
const MaxLineBytes = 16 << 20

// ReadJSONL reads a prompt file; see ParseJSONL for the format. The set is
// named after the file.
func ReadJSONL(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prompt file: %w", err)
	}
	defer f.Close()
	return ParseJSONL(f, path)
}

// jsonLine is one line of a prompt file.
type jsonLine struct {
	Prompt   *string         `json:"prompt"`
	Text     *string         `json:"text"`
	Messages json.RawMessage `json:"messages"`
}

// ParseJSONL reads prompts, one JSON object a line: {"prompt": "…"},
// {"text": "…"} (the same) or {"messages": [{"role": "user", "content":
// "…"}, …]}; other keys are ignored, blank lines skipped. Errors name the
// file (name) and line. Lines are limited to MaxLineBytes.
func ParseJSONL(r io.Reader, name string) (*Set, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var ps []Prompt
	var long []byte
	for lineNo := 1; ; lineNo++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull && len(long) <= MaxLineBytes {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			if len(long) > MaxLineBytes {
				return nil, fmt.Errorf("%s:%d: line longer than %d bytes", name, lineNo, MaxLineBytes)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if line := bytes.TrimSpace(b); len(line) > 0 {
			p, perr := parseLine(line)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, lineNo, perr)
			}
			ps = append(ps, p)
		}
		if err == io.EOF {
			break
		}
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no prompts (want one JSON object a line: {\"prompt\": \"…\"} or {\"messages\": […]})", name)
	}
	return New(name, ps)
}

var errNoPrompt = errors.New(`want an object with "prompt", "text" or "messages"`)

func parseLine(line []byte) (Prompt, error) {
	var l jsonLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Prompt{}, fmt.Errorf("malformed JSON: %w", err)
	}
	n := 0
	for _, set := range []bool{l.Prompt != nil, l.Text != nil, len(l.Messages) > 0 && string(l.Messages) != "null"} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return Prompt{}, errNoPrompt
	case n > 1:
		return Prompt{}, errors.New(`more than one of "prompt", "text" and "messages"`)
	case l.Prompt != nil || l.Text != nil:
		t := l.Prompt
		if t == nil {
			t = l.Text
		}
		if *t == "" {
			return Prompt{}, errors.New("empty prompt")
		}
		return Prompt{Text: *t}, nil
	}
	var ms []Message
	if err := json.Unmarshal(l.Messages, &ms); err != nil {
		return Prompt{}, fmt.Errorf(`"messages": want an array of {"role": "…", "content": "…"} with string contents: %w`, err)
	}
	if len(ms) == 0 {
		return Prompt{}, errors.New(`"messages" is empty`)
	}
	for i, m := range ms {
		if m.Role == "" {
			return Prompt{}, fmt.Errorf(`"messages"[%d]: no "role"`, i)
		}
	}
	return Prompt{Messages: ms}, nil
}
