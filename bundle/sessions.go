package bundle

import "time"

// SessionsInput is a multi-turn run as it was asked for
// (invocation.json's "sessions"): conversations from a ShareGPT file or
// generated, and how their turns were timed. Sample k of the run is turn
// t of session s where the turns of sessions 0…s−1 come first
// (TurnsPerSession gives each session's count), so the records give every
// turn its session and turn index.
type SessionsInput struct {
	// ShareGPT is the conversations file; "" when they were generated.
	ShareGPT string `json:"sharegpt,omitempty"`
	// SHA256 is the hex digest of the ShareGPT file read; a run repeated
	// from its bundle refuses a file that changed.
	SHA256 string `json:"sha256,omitempty"`
	// Sessions is the number of generated conversations, or the most
	// conversations taken from the file (0: all).
	Sessions int `json:"sessions,omitempty"`
	// MinTurns, MaxTurns, UserWords and AnswerTokens shape generated
	// conversations (see workload/session.GenerateOptions).
	MinTurns     int `json:"min_turns,omitempty"`
	MaxTurns     int `json:"max_turns,omitempty"`
	UserWords    int `json:"user_words,omitempty"`
	AnswerTokens int `json:"answer_tokens,omitempty"`
	// Think is the time between an answer's completion and the next turn.
	Think time.Duration `json:"think_ns,omitempty"`
	// Interval is the time between the starts of consecutive sessions (0:
	// all start at once).
	Interval time.Duration `json:"interval_ns,omitempty"`
	// Seed chooses the generated conversations.
	Seed uint64 `json:"seed,omitempty"`
	// History is what the assistant messages of a later turn's history
	// hold: HistoryServer, the server's own answers to the earlier turns,
	// as a chat client sends them; HistoryDataset or "" (bundles written
	// before the choice existed), the data set's answers.
	History string `json:"history,omitempty"`
	// TurnsPerSession is each session's number of turns, as run.
	TurnsPerSession []int `json:"turns_per_session,omitempty"`
}

// The histories of SessionsInput.History.
const (
	HistoryServer  = "server"
	HistoryDataset = "dataset"
)
