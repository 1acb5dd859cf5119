package openai

import (
	"fmt"
	"sync/atomic"

	"aimeter/dataset/prompts"
)

// History makes the chat sessions of a run carry the server's own answers,
// as a real chat client does: the assistant messages of a later turn's
// prompt are replaced, in order, by the answers the server gave to the
// session's earlier turns. It is safe for concurrent use; the endpoints of
// one run (a dispatcher's nodes) share one, so that a session's turns may
// go to different servers.
type History struct {
	prev      []int32
	answers   []atomic.Pointer[string]
	fallbacks atomic.Uint64
}

// NewHistory returns the history of a run whose prompt i is a turn that
// follows the turn of prompt prev[i] in its session (-1: a session's first
// turn). prev is kept; the caller must not change it.
func NewHistory(prev []int32) *History {
	return &History{prev: prev, answers: make([]atomic.Pointer[string], len(prev))}
}

// Fallbacks counts the earlier turns whose answer a later turn's history
// lacked (the turn failed, or had not been answered), for which the data
// set's answer was sent instead.
func (h *History) Fallbacks() uint64 { return h.fallbacks.Load() }

// Answer returns the answer the server gave to prompt i, if any.
func (h *History) Answer(i int) (string, bool) {
	if i < 0 || i >= len(h.answers) {
		return "", false
	}
	if p := h.answers[i].Load(); p != nil {
		return *p, true
	}
	return "", false
}

// record keeps the answer to prompt i when a later turn needs it.
func (h *History) record(i uint64, text []byte) {
	if i < uint64(len(h.answers)) {
		s := string(text)
		h.answers[i].Store(&s)
	}
}

// follows reports whether prompt i has earlier turns.
func (h *History) follows(i uint64) bool {
	return i < uint64(len(h.prev)) && h.prev[i] >= 0
}

// appendBody appends the request body of prompt i with the server's
// answers in its history: head (the body up to the first message's
// content, as buildBodies cuts it), the nonce, then the messages.
func (h *History) appendBody(dst, head, nonce []byte, p prompts.Prompt, i uint64) ([]byte, error) {
	if len(p.Messages) == 0 {
		return nil, fmt.Errorf("prompt %d is not a chat conversation: a session's history needs messages", i)
	}
	// The earlier turns, oldest first.
	var turns []int
	for j := h.prev[i]; j >= 0 && len(turns) <= len(h.prev); j = h.prev[j] {
		turns = append(turns, int(j))
	}
	for a, b := 0, len(turns)-1; a < b; a, b = a+1, b-1 {
		turns[a], turns[b] = turns[b], turns[a]
	}
	dst = append(dst, head...)
	dst = append(dst, nonce...)
	dst = append(dst, jsonString(p.Messages[0].Content)[1:]...)
	dst = append(dst, '}')
	k := 0
	for _, m := range p.Messages[1:] {
		content := m.Content
		if m.Role == "assistant" && k < len(turns) {
			if a, ok := h.Answer(turns[k]); ok {
				content = a
			} else {
				h.fallbacks.Add(1)
			}
			k++
		}
		dst = append(dst, `,{"role":`...)
		dst = append(dst, jsonString(m.Role)...)
		dst = append(dst, `,"content":`...)
		dst = append(dst, jsonString(content)...)
		dst = append(dst, '}')
	}
	return append(dst, `]}`...), nil
}
