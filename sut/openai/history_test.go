package openai

import (
	"encoding/json"
	"testing"

	"aimeter/dataset/prompts"
)

// TestHistoryBody: a later turn's body carries the server's answers to the
// earlier turns of its session in order (JSON-escaped), the data set's
// answer where the server gave none (counted), and its own messages
// otherwise unchanged.
func TestHistoryBody(t *testing.T) {
	h := NewHistory([]int32{-1, 0, 1})
	h.record(0, []byte(`first "answer"`+"\n"))
	p := prompts.Prompt{Messages: []prompts.Message{
		{Role: "system", Content: "be brief"}, {Role: "user", Content: "q0"}, {Role: "assistant", Content: "dataset a0"},
		{Role: "user", Content: "q1"}, {Role: "assistant", Content: "dataset a1"}, {Role: "user", Content: "q2"}}}
	if h.follows(0) || !h.follows(2) || h.follows(9) {
		t.Error("follows: want turns 1 and 2 only")
	}
	body, err := h.appendBody(nil, []byte(`{"model":"m","messages":[{"role":"system","content":"`), []byte("nonce12345678 "), p, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Messages []prompts.Message }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	want := []string{"nonce12345678 be brief", "q0", "first \"answer\"\n", "q1", "dataset a1", "q2"}
	if len(got.Messages) != len(want) {
		t.Fatalf("messages %+v", got.Messages)
	}
	for i, m := range got.Messages {
		if m.Content != want[i] || m.Role != p.Messages[i].Role {
			t.Errorf("message %d = %+v, want %s %q", i, m, p.Messages[i].Role, want[i])
		}
	}
	if h.Fallbacks() != 1 {
		t.Errorf("%d fallbacks, want 1 (turn 1 has no answer yet)", h.Fallbacks())
	}
	if _, err := h.appendBody(nil, nil, nil, prompts.Prompt{Text: "plain"}, 1); err == nil {
		t.Error("a plain prompt in a session's history was accepted")
	}
}
