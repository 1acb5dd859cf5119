// Package session holds multi-turn chat sessions for aimeter's workloads:
// conversations read from ShareGPT-format JSON or generated from length
// and think-time settings, the message history a chat client sends at
// each turn (growing with the answers it received), and the per-turn and
// per-session metrics of a run, with MLPerf Endpoints' agentic
// e2e_interactivity (output tokens per turn over turn time).
//
// Each turn is one sample: its records carry the session and the turn
// index (Turn), its latency counts from its scheduled time (the moment the
// user sends it: the previous answer's completion plus the think time).
//
// Package loadgen issues the dependent turns (loadgen.Options.Chains: a
// turn is scheduled only once the previous one completed, plus the think
// time); package benchmark (Plan.Sessions) and `aimeter sessions` put the
// two together.
package session

import (
	"time"

	"aimeter/dataset/prompts"
)

// Limits on what a conversation may hold: beyond them the input is taken
// for corrupt.
const (
	// MaxTurns bounds the user turns of one conversation.
	MaxTurns = 1024
	// MaxTurnWords bounds the words of one message.
	MaxTurnWords = 1 << 20
)

// Turn is one exchange: the user's message and the reference answer.
type Turn struct {
	// User is the user's message.
	User string
	// Answer is the reference answer of the data set (ShareGPT's "gpt"
	// turn, or generated text); the run sends its own answers back.
	Answer string
	// OutputTokens is the turn's max_tokens: the reference answer's
	// length in words (≥ 1).
	OutputTokens int
	// Think is the time the user takes after the previous answer before
	// sending this turn (0 for the first turn).
	Think time.Duration
}

// Conversation is one session's script.
type Conversation struct {
	// ID is the data set's id ("" when it has none); Index its position.
	ID    string
	Index int
	// System is a system prompt sent before the first turn ("" for none).
	System string
	// Turns are the exchanges in order; at least one.
	Turns []Turn
}

// Client is a chat client's state in one session: the history it sends.
// It is not safe for concurrent use; one session's turns are sequential.
type Client struct {
	conv    *Conversation
	history []prompts.Message
	next    int
}

// NewClient starts a session over c.
func NewClient(c *Conversation) *Client {
	cl := &Client{conv: c}
	if c.System != "" {
		cl.history = append(cl.history, prompts.Message{Role: "system", Content: c.System})
	}
	return cl
}

// Next returns the next turn's index, the messages to send (the history
// so far and the new user message, which the history then holds), its
// max_tokens and the think time before it; ok is false once every turn was
// sent. The returned slice is the client's: the caller must not keep it
// past the next call of Answer or Next.
func (cl *Client) Next() (turn int, msgs []prompts.Message, maxTokens int, think time.Duration, ok bool) {
	if cl.next >= len(cl.conv.Turns) || (cl.next > 0 && cl.history[len(cl.history)-1].Role != "assistant") {
		return cl.next, nil, 0, 0, false
	}
	t := cl.conv.Turns[cl.next]
	cl.history = append(cl.history, prompts.Message{Role: "user", Content: t.User})
	turn = cl.next
	cl.next++
	return turn, cl.history, t.OutputTokens, t.Think, true
}

// Answer appends the answer the server gave to the last turn, as a chat
// client keeps it in the history. A failed turn has no answer: the
// session ends there (Next reports no more turns).
func (cl *Client) Answer(text string) {
	cl.history = append(cl.history, prompts.Message{Role: "assistant", Content: text})
}

// Bytes is the memory the client holds for its history: the message
// texts and the slice of messages.
func (cl *Client) Bytes() int {
	n := cap(cl.history) * 32 // two string headers a message
	for _, m := range cl.history {
		n += len(m.Content) // the roles are shared constants
	}
	return n
}
