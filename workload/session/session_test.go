package session

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/tokenize"
)

func TestReadShareGPT(t *testing.T) {
	s, err := ReadShareGPT(filepath.Join("testdata", "sharegpt_sample.json"), ShareGPTOptions{Think: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Conversations) != 2 || s.Skipped != 1 || s.Dropped != 1 {
		t.Fatalf("%d conversations, %d skipped, %d dropped; want 2, 1 (empty), 1 (c3's unanswered turn)", len(s.Conversations), s.Skipped, s.Dropped)
	}
	a := s.Conversations[0]
	if a.ID != "a1" || a.System != "You are terse." || len(a.Turns) != 2 {
		t.Fatalf("a1: %+v", a)
	}
	// Hand-worked: "Cyan and magenta." is 3 words; the second turn waits
	// the think time, the first none.
	if a.Turns[1].OutputTokens != 3 || a.Turns[0].OutputTokens != 4 || a.Turns[0].Think != 0 || a.Turns[1].Think != 2*time.Second {
		t.Errorf("a1 turns: %+v", a.Turns)
	}
	if c := s.Conversations[1]; c.ID != "c3" || len(c.Turns) != 1 || c.Turns[0].OutputTokens != 6 {
		t.Errorf("c3: %+v", c)
	}
}

func TestParseShareGPTLinesAndLimits(t *testing.T) {
	jsonl := `{"id": 7, "conversations": [{"role": "user", "content": "a b"}, {"role": "assistant", "content": "c"}]}

{"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": "y z"}]}
{"conversations": [{"from": "human", "value": "p"}, {"from": "gpt", "value": "q"}]}
`
	s, err := ParseShareGPT(strings.NewReader(jsonl), "l.jsonl", ShareGPTOptions{MaxSessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Conversations) != 2 || s.Conversations[0].ID != "7" || s.Conversations[1].Turns[0].OutputTokens != 2 {
		t.Errorf("got %+v", s.Conversations)
	}
}

// TestShareGPTBadInput: each violation is an error naming the line, the
// entry and the turn.
func TestShareGPTBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, body, want, why string
	}{
		{"empty turn", `[{"id":"e","conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"  "}]}]`,
			`line 1: entry 0 (id "e"): "conversations"[1]: field "value": empty gpt turn`, "an empty answer has no length"},
		{"two users", "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},{\"from\":\"gpt\",\"value\":\"b\"}]},\n{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},{\"from\":\"human\",\"value\":\"b\"}]}\n]",
			`line 3: entry 1: "conversations"[1]: a user turn where an assistant turn must come`, "roles must alternate"},
		{"starts with gpt", `{"conversations":[{"from":"gpt","value":"a"}]}`,
			`line 1: entry 0: "conversations"[0]: an assistant turn where a user turn must come`, "a chat starts with the user"},
		{"late system", `{"conversations":[{"from":"human","value":"a"},{"from":"system","value":"b"}]}`,
			`"conversations"[1]: a system turn after the first turn`, "a system prompt comes first"},
		{"unknown speaker", `{"conversations":[{"from":"robot","value":"a"}]}`,
			`field "from": unknown speaker "robot"`, "speakers are known names"},
		{"no conversations", `{"id":"x"}`, `entry 0 (id "x")`, "the field is required"},
		{"not an array", `{"conversations":"hi"}`, `"conversations": want an array`, "the field's type"},
		{"value not string", `{"conversations":[{"from":"human","value":3}]}`, `field "value": want a string`, "values are text"},
		{"bad JSON", "[\n{\"conversations\": [}\n]", `line 2: entry 0`, "a syntax error names its entry"},
		{"trailing", `[{"conversations":[{"from":"human","value":"a"},{"from":"gpt","value":"b"}]}] x`, `text after the array`, "garbage after the array"},
		{"nothing usable", `[{"conversations":[]}]`, `no conversation with a complete exchange (1 entries skipped)`, "nothing to run"},
		{"scalar entry", `[1]`, `want an object`, "an entry is an object"},
		{"cut after a comma", "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},{\"from\":\"gpt\",\"value\":\"b\"}]},\n",
			`sharegpt f.json line 3: entry 1: the file ends (line 3, byte 79) before this entry is complete: it is truncated, not complete JSON`, "a truncated file says so, not EOF"},
		{"cut inside an entry", "[\n{\"conversations\":[{\"from\":\"human\",\"val",
			`sharegpt f.json line 2: entry 0: the file ends (line 2, byte 40) before this entry is complete: it is truncated, not complete JSON`, "a truncated file says so, not unexpected EOF"},
		{"no closing bracket", "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},{\"from\":\"gpt\",\"value\":\"b\"}]}\n",
			`sharegpt f.json line 3: after entry 0: the file ends before the array's closing ]: it is truncated, not complete JSON`, "a missing ] is a truncated file"},
		{"a JSON-lines file cut in its last line", "{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},{\"from\":\"gpt\",\"value\":\"b\"}]}\n{\"conversations\":[{\"fr",
			`sharegpt f.json line 2: entry 1: the line ends before its JSON object does: not complete JSON (is the file truncated?)`, "a cut line says so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseShareGPT(strings.NewReader(tc.body), "f.json", ShareGPTOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want an error containing %q", tc.why, err, tc.want)
			}
		})
	}
	if _, err := ParseShareGPT(strings.NewReader("[]"), "f", ShareGPTOptions{Think: -1}); err == nil {
		t.Error("a negative think time accepted")
	}
}

// TestClientHistoryGrows: each turn sends the whole history with the
// answers the server gave, as a chat client does.
func TestClientHistoryGrows(t *testing.T) {
	s, err := ReadShareGPT(filepath.Join("testdata", "sharegpt_sample.json"), ShareGPTOptions{Think: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cl := NewClient(&s.Conversations[0])
	turn, msgs, mt, think, ok := cl.Next()
	if !ok || turn != 0 || mt != 4 || think != 0 || len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Content != "Name three colours." {
		t.Fatalf("turn 0: %d %+v %d %v %v", turn, msgs, mt, think, ok)
	}
	if _, _, _, _, ok := cl.Next(); ok {
		t.Fatal("a turn before the previous answer")
	}
	cl.Answer("Server's own answer.")
	turn, msgs, mt, think, ok = cl.Next()
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !ok || turn != 1 || mt != 3 || think != time.Second || !slices.Equal(roles, []string{"system", "user", "assistant", "user"}) || msgs[2].Content != "Server's own answer." {
		t.Fatalf("turn 1: %d %+v %v", turn, msgs, ok)
	}
	cl.Answer("x")
	if _, _, _, _, ok := cl.Next(); ok {
		t.Error("a third turn of two")
	}
	// system 14 + 19 + 20 + 13 + 1 bytes of text, 4 slots… at least that.
	if cl.Bytes() < 14+19+20+13+1 {
		t.Errorf("Bytes %d", cl.Bytes())
	}
}

// TestGenerateInTokens: with a tokenizer, every user message has exactly
// UserWords of its tokens.
func TestGenerateInTokens(t *testing.T) {
	tok, err := tokenize.Tiktoken("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Generate(GenerateOptions{Sessions: 20, MinTurns: 1, MaxTurns: 4, UserWords: 37, OutputTokens: 9, Seed: 4, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Conversations {
		for k, tn := range c.Turns {
			if got := tok.Count(tn.User); got != 37 {
				t.Fatalf("conversation %s turn %d: %d o200k tokens, want 37", c.ID, k, got)
			}
		}
	}
	if !strings.Contains(s.Name, "37 o200k_base tokens in") {
		t.Errorf("the set's name %q does not say the unit", s.Name)
	}
}

func TestGenerate(t *testing.T) {
	o := GenerateOptions{Sessions: 50, MinTurns: 2, MaxTurns: 5, UserWords: 7, OutputTokens: 9, Think: 3 * time.Second, Seed: 4}
	s, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int]int{}
	for i, c := range s.Conversations {
		counts[len(c.Turns)]++
		for k, tn := range c.Turns {
			if len(strings.Fields(tn.User)) != 7 || tn.OutputTokens != 9 || (k == 0) != (tn.Think == 0) {
				t.Fatalf("conversation %d turn %d: %+v", i, k, tn)
			}
		}
	}
	for n := 2; n <= 5; n++ {
		if counts[n] == 0 {
			t.Errorf("no conversation of %d turns in 50 (uniform over 2..5): %v", n, counts)
		}
	}
	again, _ := Generate(o)
	if again.Conversations[49].Turns[0].User != s.Conversations[49].Turns[0].User {
		t.Error("the same options must give the same text")
	}
	for _, bad := range []GenerateOptions{{}, {Sessions: 1}, {Sessions: 1, MinTurns: 3, MaxTurns: 2, UserWords: 1, OutputTokens: 1},
		{Sessions: 1, MinTurns: 1, UserWords: 0, OutputTokens: 1}, {Sessions: 1, MinTurns: 1, UserWords: 1, OutputTokens: 1, Think: -1}} {
		if _, err := Generate(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestCompute works the metrics of two sessions out by hand.
func TestCompute(t *testing.T) {
	ms := int64(time.Millisecond)
	recs := []TurnRecord{
		// Session 0: turn 0 at 0, first token 100 ms, done 500 ms, 40
		// tokens; think 1 s; turn 1 at 1500 ms, first token 1700, done
		// 2500, 60 tokens.
		{Session: 0, Turn: 1, ScheduledNs: 1500 * ms, FirstTokenNs: 1700 * ms, CompletedNs: 2500 * ms, OutputTokens: 60, OK: true},
		{Session: 0, Turn: 0, ScheduledNs: 0, FirstTokenNs: 100 * ms, CompletedNs: 500 * ms, OutputTokens: 40, OK: true},
		// Session 1: turn 0 at 200 ms, first token 500, done 1200, 10
		// tokens; turn 1 failed.
		{Session: 1, Turn: 0, ScheduledNs: 200 * ms, FirstTokenNs: 500 * ms, CompletedNs: 1200 * ms, OutputTokens: 10, OK: true},
		{Session: 1, Turn: 1, ScheduledNs: 1300 * ms, OK: false},
	}
	m, err := Compute(recs)
	if err != nil {
		t.Fatal(err)
	}
	// Run: (40 + 60 + 10) tokens / (0.5 + 1.0 + 1.0) s = 44 tokens/s.
	if math.Abs(m.E2EInteractivity-44) > 1e-9 {
		t.Errorf("e2e_interactivity %v, want 44", m.E2EInteractivity)
	}
	s0, s1 := m.Sessions[0], m.Sessions[1]
	// Session 0: 100 tokens / 1.5 s; duration 0 → 2500 ms.
	if s0.Turns != 2 || s0.Failed != 0 || s0.Duration != 2500*time.Millisecond || s0.TurnTime != 1500*time.Millisecond || math.Abs(s0.Interactivity-100/1.5) > 1e-9 {
		t.Errorf("session 0: %+v", s0)
	}
	// Session 1: 10 tokens / 1 s; duration 200 → 1200 ms; one failure.
	if s1.Turns != 2 || s1.Failed != 1 || s1.Duration != time.Second || s1.Interactivity != 10 {
		t.Errorf("session 1: %+v", s1)
	}
	// Sessions' interactivity sorted: 10, 66.7. p50: ⌈1⌉ = 1st = 10;
	// p10: ⌈0.2⌉ = 1st = 10.
	if m.SessionInteractivityP50 != 10 || m.SessionInteractivityP10 != 10 {
		t.Errorf("session interactivity p50 %v p10 %v", m.SessionInteractivityP50, m.SessionInteractivityP10)
	}
	// Turn 0: TTFT 100 and 300 ms: p50 ⌈1⌉ = 100 ms, p90 ⌈1.8⌉ = 300 ms;
	// E2E 500 and 1000 ms. Turn 1: one success (TTFT 200, E2E 1000), one
	// failure.
	t0, t1 := m.PerTurn[0], m.PerTurn[1]
	if t0.Count != 2 || t0.TTFTP50 != 100*time.Millisecond || t0.TTFTP90 != 300*time.Millisecond || t0.E2EP50 != 500*time.Millisecond || t0.E2EP90 != time.Second {
		t.Errorf("turn 0: %+v", t0)
	}
	if t1.Count != 2 || t1.Failed != 1 || t1.TTFTP50 != 200*time.Millisecond || t1.E2EP90 != time.Second {
		t.Errorf("turn 1: %+v", t1)
	}
	for _, bad := range [][]TurnRecord{
		{{Session: 0, Turn: 0, OK: true, CompletedNs: 1}, {Session: 0, Turn: 0, OK: true, CompletedNs: 1}},
		{{Session: 0, Turn: 0, OK: true, ScheduledNs: 5, CompletedNs: 4}},
		{{Session: -1, Turn: 0}},
	} {
		if _, err := Compute(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestReadShareGPTMissingFile(t *testing.T) {
	if _, err := ReadShareGPT(filepath.Join(t.TempDir(), "none.json"), ShareGPTOptions{}); !os.IsNotExist(err) {
		t.Errorf("got %v", err)
	}
}
