package session_test

import (
	"fmt"
	"strings"

	"aimeter/workload/session"
)

// A ShareGPT conversation of two exchanges: the history a chat client
// sends at each turn, and the metrics of a run's turns.
func Example() {
	const file = `[{"id": "c1", "conversations": [
  {"from": "human", "value": "Name a colour."},
  {"from": "gpt", "value": "Blue."},
  {"from": "human", "value": "Another?"},
  {"from": "gpt", "value": "Green, or red."}]}]`
	set, err := session.ParseShareGPT(strings.NewReader(file), "chat.json", session.ShareGPTOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cl := session.NewClient(&set.Conversations[0])
	for {
		turn, msgs, maxTokens, _, ok := cl.Next()
		if !ok {
			break
		}
		fmt.Printf("turn %d sends %d messages, max_tokens %d\n", turn, len(msgs), maxTokens)
		cl.Answer(set.Conversations[0].Turns[turn].Answer)
	}
	// Two turns of 1 and 3 tokens, each taking 0.5 s: 4 tokens / 1 s.
	m, err := session.Compute([]session.TurnRecord{
		{Session: 0, Turn: 0, ScheduledNs: 0, CompletedNs: 500e6, OutputTokens: 1, OK: true},
		{Session: 0, Turn: 1, ScheduledNs: 2e9, CompletedNs: 2.5e9, OutputTokens: 3, OK: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("e2e_interactivity %.0f tokens/s, session duration %v\n", m.E2EInteractivity, m.Sessions[0].Duration)
	// Output:
	// turn 0 sends 1 messages, max_tokens 1
	// turn 1 sends 3 messages, max_tokens 3
	// e2e_interactivity 4 tokens/s, session duration 2.5s
}
