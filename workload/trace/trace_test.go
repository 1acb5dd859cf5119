package trace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/tokenize"
)

func TestReadMooncake(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "mooncake_sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != Mooncake || tr.Name != "mooncake_sample.jsonl" || len(tr.Requests) != 4 {
		t.Fatalf("got %s %s with %d requests", tr.Name, tr.Format, len(tr.Requests))
	}
	want := Request{AtNs: 1_500_500_000, InputTokens: 1200, OutputTokens: 1, HashIDs: []int64{0, 1, 4}, Line: 4}
	if got := tr.Requests[3]; got.AtNs != want.AtNs || got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens || !slices.Equal(got.HashIDs, want.HashIDs) || got.Line != 4 {
		t.Errorf("request 3 = %+v, want %+v", got, want)
	}
}

func TestReadCSV(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "sessions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for _, q := range tr.Requests {
		sessions = append(sessions, q.Session)
	}
	if !slices.Equal(sessions, []string{"alice", "", "alice", "bob"}) || tr.Requests[3].AtNs != 250_250_000 || tr.Requests[3].Line != 5 {
		t.Errorf("sessions %q, last %+v", sessions, tr.Requests[3])
	}
}

func TestFormatFromContent(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		body string
		want Format
		why  string
	}{
		{"\n  {\"timestamp\":1,\"input_length\":1,\"output_length\":1,\"hash_ids\":[0]}\n", Mooncake, "a '{' after blank space is JSON"},
		{"5,1,1\n", CSV, "anything else is CSV"},
	} {
		p := filepath.Join(dir, "trace.txt")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Read(p)
		if err != nil || tr.Format != tc.want {
			t.Errorf("%s: got %v, %v; want %s", tc.why, tr, err, tc.want)
		}
	}
	p := filepath.Join(dir, "empty.txt")
	os.WriteFile(p, []byte(" \n"), 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty file: %v", err)
	}
}

// TestBadInput: every bad trace is refused before a run with the line and
// field named.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		body   string
		want   string
		why    string
	}{
		{"unordered", Mooncake, `{"timestamp":5,"input_length":1,"output_length":1,"hash_ids":[0]}` + "\n" + `{"timestamp":4,"input_length":1,"output_length":1,"hash_ids":[0]}`,
			`line 2: field "timestamp": 4 ms is before the 5 ms of line 1`, "a trace must be in time order"},
		{"negative", Mooncake, `{"timestamp":-1,"input_length":1,"output_length":1,"hash_ids":[0]}`,
			`line 1: field "timestamp": -1: negative`, "a time before the origin has no meaning"},
		{"missing output", Mooncake, `{"timestamp":0,"input_length":1,"hash_ids":[0]}`,
			`line 1: field "output_length": missing`, "each length is needed"},
		{"missing hash ids", Mooncake, `{"timestamp":0,"input_length":1,"output_length":1}`,
			`field "hash_ids": missing`, "without them no prefix can be rebuilt"},
		{"string length", Mooncake, `{"timestamp":0,"input_length":"9","output_length":1,"hash_ids":[0]}`,
			`field "input_length": "\"9\"": want a number`, "a quoted number is a string"},
		{"fractional length", Mooncake, `{"timestamp":0,"input_length":9.5,"output_length":1,"hash_ids":[0]}`,
			`field "input_length": 9.5: want a whole number`, "tokens are whole"},
		{"absurd input", Mooncake, `{"timestamp":0,"input_length":99999999,"output_length":1,"hash_ids":[0]}`,
			`field "input_length": 99999999 tokens: want 1 to 1048576`, "beyond any context window"},
		{"zero output", Mooncake, `{"timestamp":0,"input_length":1,"output_length":0,"hash_ids":[0]}`,
			`field "output_length": 0 tokens`, "a request must ask for a token"},
		{"block count", Mooncake, `{"timestamp":0,"input_length":513,"output_length":1,"hash_ids":[0]}`,
			`1 ids for 513 input tokens: want 2`, "one id per 512-token block"},
		{"negative hash", Mooncake, `{"timestamp":0,"input_length":1,"output_length":1,"hash_ids":[-3]}`,
			`entry 0 is -3`, "hash ids are non-negative"},
		{"not JSON", Mooncake, `{"timestamp":0,`, `line 1: not a JSON object`, "a broken line"},
		{"array line", Mooncake, `[1,2]`, `line 1: not a JSON object`, "a line must be an object"},
		{"exponent time", Mooncake, `{"timestamp":1e3,"input_length":1,"output_length":1,"hash_ids":[0]}`,
			`field "timestamp": "1e3": not a number of ms`, "plain decimals only"},
		{"sub-ns time", Mooncake, `{"timestamp":0.0000001,"input_length":1,"output_length":1,"hash_ids":[0]}`,
			`finer than a nanosecond`, "offsets are whole ns"},
		{"huge time", Mooncake, `{"timestamp":99999999999999,"input_length":1,"output_length":1,"hash_ids":[0]}`,
			`beyond the 8640000000 ms`, "beyond int64 ns"},
		{"empty", Mooncake, "\n\n", `no requests`, "nothing to replay"},
		{"csv fields", CSV, "0,1\n", `line 1: 2 fields: want 3 or 4`, "a length is missing"},
		{"csv too many", CSV, "0,1,2,s,x\n", `line 1: 5 fields`, "an extra column is a mistake"},
		{"csv unordered", CSV, "t_ms,input_tokens,output_tokens\n10,1,1\n9.5,1,1\n", `line 3: field "t_ms": 9.5 ms is before the 10 ms of line 2`, "time order"},
		{"csv negative", CSV, "-0.5,1,1\n", `line 1: field "t_ms": -0.5: negative`, "before the origin"},
		{"csv bad header", CSV, "t_ms,output_tokens,input_tokens\n", `header column 2 is "output_tokens"`, "swapped columns would swap the lengths"},
		{"csv bad input", CSV, "0,abc,1\n", `line 1: field "input_tokens": "abc"`, "not a number"},
		{"csv absurd output", CSV, "0,1,2000000\n", `field "output_tokens": 2000000 tokens`, "beyond any limit"},
		{"csv quote", CSV, "0,\"1,1\n", `line 1:`, "a broken quote"},
		{"csv empty time", CSV, ",1,1\n", `field "t_ms": empty`, "no time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.body), "t", tc.format)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want an error containing %q", tc.why, err, tc.want)
			}
		})
	}
}

func TestMsToNs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		why  string
	}{
		{"0", 0, "the origin"},
		{"1500", 1_500_000_000, "whole ms"},
		{"12.25", 12_250_000, "fraction"},
		{".5", 500_000, "no integer part"},
		{"3.", 3_000_000, "no fraction digits"},
		{"0.000001", 1, "one ns"},
		{"7.1234560000", 7_123_456, "trailing zeros past ns"},
	} {
		if got, err := msToNs(tc.in); err != nil || got != tc.want {
			t.Errorf("%s: msToNs(%q) = %d, %v; want %d", tc.why, tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", ".", "-1", "1e3", "0x10", "NaN", "1.2.3", "1.0000001"} {
		if _, err := msToNs(bad); err == nil {
			t.Errorf("msToNs(%q) accepted", bad)
		}
	}
}

// TestSchedule works out the schedule of the sample trace by hand.
func TestSchedule(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "mooncake_sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		o         ScheduleOptions
		want      []int64
		truncated string
		why       string
	}{
		{"as recorded", ScheduleOptions{}, []int64{0, 27e6, 27e6, 1_500_500_000}, "", "ms to ns, ties kept"},
		{"twice as fast", ScheduleOptions{Speedup: 2}, []int64{0, 13_500_000, 13_500_000, 750_250_000}, "", "each gap halved"},
		{"third speed", ScheduleOptions{Speedup: 3}, []int64{0, 9e6, 9e6, 500_166_667}, "", "1500.5 ms / 3 = 500.1666… ms, rounded to the ns"},
		{"slower", ScheduleOptions{Speedup: 0.5}, []int64{0, 54e6, 54e6, 3_001_000_000}, "", "each gap doubled"},
		{"first two", ScheduleOptions{MaxRequests: 2}, []int64{0, 27e6}, "the first 2 of 4 requests (max requests)", "a count"},
		{"more than all", ScheduleOptions{MaxRequests: 9}, []int64{0, 27e6, 27e6, 1_500_500_000}, "", "no truncation"},
		{"one second", ScheduleOptions{MaxDuration: time.Second}, []int64{0, 27e6, 27e6}, "the 3 of 4 requests scheduled before 1s (max duration)", "the 1.5 s request is cut"},
		{"speedup then duration", ScheduleOptions{Speedup: 2, MaxDuration: time.Second}, []int64{0, 13_500_000, 13_500_000, 750_250_000}, "", "the cut applies to the scaled times"},
		{"duration at a tie", ScheduleOptions{MaxDuration: 27 * time.Millisecond}, []int64{0}, "the 1 of 4 requests scheduled before 27ms (max duration)", "the window is half-open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tr.Schedule(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Arrivals, tc.want) || s.Truncated != tc.truncated || len(s.Requests) != len(tc.want) {
				t.Errorf("%s: got %v %q, want %v %q", tc.why, s.Arrivals, s.Truncated, tc.want, tc.truncated)
			}
			if !slices.Equal(s.Samples(), []uint64{0, 1, 2, 3}[:len(tc.want)]) {
				t.Errorf("samples %v", s.Samples())
			}
		})
	}
	for _, o := range []ScheduleOptions{{Speedup: -1}, {Speedup: 1e9}, {MaxRequests: -1}, {MaxDuration: -1}} {
		if _, err := tr.Schedule(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestScheduleRate(t *testing.T) {
	tr, _ := Parse(strings.NewReader("100,1,1\n600,1,1\n1100,1,1\n"), "t", CSV)
	s, err := tr.Schedule(ScheduleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The origin is the first request: 0, 0.5 s, 1 s; 2 gaps in 1 s.
	if s.Duration() != time.Second || s.RatePerSecond() != 2 {
		t.Errorf("duration %v rate %v, want 1s and 2/s", s.Duration(), s.RatePerSecond())
	}
}

// TestPromptsSharePrefixesAsTheHashIDs: equal hash ids give equal text;
// the first differing block differs from there on.
func TestPromptsSharePrefixesAsTheHashIDs(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "mooncake_sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := tr.Schedule(ScheduleOptions{})
	set, err := s.Prompts("sample", PromptOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	words := func(i int) []string { return strings.Fields(set.Prompt(i).Text) }
	p0, p1, p2, p3 := words(0), words(1), words(2), words(3)
	// Lengths: one word per token.
	for i, w := range [][]string{p0, p1, p2, p3} {
		if len(w) != tr.Requests[i].InputTokens {
			t.Errorf("prompt %d has %d words, want %d", i, len(w), tr.Requests[i].InputTokens)
		}
		if set.Prompt(i).MaxTokens != tr.Requests[i].OutputTokens {
			t.Errorf("prompt %d max_tokens %d", i, set.Prompt(i).MaxTokens)
		}
	}
	// p0 = [0, 1(488)], p1 = [0, 2(188)], p2 = [3], p3 = [0, 1, 4(176)].
	if common(p0, p1) != 512 {
		t.Errorf("p0 and p1 share block 0 only: %d words in common", common(p0, p1))
	}
	if common(p0, p3) != 1000 {
		t.Errorf("p0 is a prefix of p3 (blocks 0, 1 of which p0 has 488 words): %d in common", common(p0, p3))
	}
	if common(p2, p0) == 512 {
		t.Error("block 3 must differ from block 0")
	}
	again, _ := s.Prompts("sample", PromptOptions{Seed: 7})
	other, _ := s.Prompts("sample", PromptOptions{Seed: 8})
	if again.Prompt(3).Text != set.Prompt(3).Text || other.Prompt(3).Text == set.Prompt(3).Text {
		t.Error("the same seed must give the same text, another seed other text")
	}
	if _, err := s.Prompts("sample", PromptOptions{MaxWords: 3000}); err == nil || !strings.Contains(err.Error(), "3412 prompt tokens") {
		t.Errorf("over the word budget: %v", err)
	}
}

// TestPromptsOfSessionsGrow: a session's later turn extends its earlier
// one; other sessions and rows without one have text of their own.
func TestPromptsOfSessionsGrow(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "sessions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := tr.Schedule(ScheduleOptions{})
	set, err := s.Prompts("s", PromptOptions{Words: []string{"a", "b", "c", "d", "e", "f", "g", "h"}})
	if err != nil {
		t.Fatal(err)
	}
	w := func(i int) []string { return strings.Fields(set.Prompt(i).Text) }
	if common(w(0), w(2)) != 30 || len(w(2)) != 45 {
		t.Errorf("alice's second turn must start with her first: %d in common", common(w(0), w(2)))
	}
	if common(w(0), w(3)) > 10 || common(w(0), w(1)) > 10 {
		t.Error("other sessions share alice's text")
	}
}

func common(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestLateness works out the send lateness of five records by hand.
func TestLateness(t *testing.T) {
	recs := []loadgen.Record{
		{ScheduledNs: 0, IssuedNs: 10_000},            // 10 µs
		{ScheduledNs: 1e6, IssuedNs: 1e6},             // 0
		{ScheduledNs: 2e6, IssuedNs: 2e6 + 3_000_000}, // 3 ms: late
		{ScheduledNs: 3e6, IssuedNs: 3e6 + 1_000_000}, // 1 ms: not later than 1 ms
		{ScheduledNs: 4e6, IssuedNs: 4e6 + 50_000},    // 50 µs
	}
	got := Lateness(slices.Values(recs), 0)
	// Sorted: 0, 10 µs, 50 µs, 1 ms, 3 ms. p50: ⌈2.5⌉ = 3rd = 50 µs;
	// p99: ⌈4.95⌉ = 5th = 3 ms.
	want := LatenessSummary{Count: 5, Late: 1, LateAfter: time.Millisecond, P50: 50 * time.Microsecond, P99: 3 * time.Millisecond, Max: 3 * time.Millisecond}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if !strings.Contains(got.String(), "1 later than 1ms") {
		t.Errorf("String: %s", got)
	}
	if z := Lateness(slices.Values([]loadgen.Record(nil)), time.Second); z.Count != 0 || z.LateAfter != time.Second {
		t.Errorf("no records: %+v", z)
	}
}

func TestParseUnknownFormat(t *testing.T) {
	if _, err := Parse(strings.NewReader(""), "x", "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
	var le *lineError
	_, err := Parse(strings.NewReader("0,0,1\n"), "x", CSV)
	if !errors.As(err, &le) || le.line != 1 {
		t.Errorf("want a line error: %v", err)
	}
}

// TestPromptsInTokens: with a tokenizer, every prompt has exactly its
// request's input length in that tokenizer's tokens, and the requests that
// share hash ids still share their blocks' text.
func TestPromptsInTokens(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "mooncake_sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := tr.Schedule(ScheduleOptions{})
	set, err := s.Prompts("sample", PromptOptions{Seed: 7, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	for i := range set.Len() {
		if got := tok.Count(set.Prompt(i).Text); got != tr.Requests[i].InputTokens {
			t.Errorf("prompt %d counts %d cl100k tokens, want %d", i, got, tr.Requests[i].InputTokens)
		}
	}
	// p0 = [0, 1(488)], p3 = [0, 1, 4(176)]: block 0 is the same text.
	p0, p3 := set.Prompt(0).Text, set.Prompt(3).Text
	block0 := tok.Decode(tok.Encode(p0)[:BlockTokens])
	if !strings.HasPrefix(p3, block0) || len(block0) < 1000 {
		t.Errorf("p3 does not begin with p0's first block (%d bytes)", len(block0))
	}
	if strings.HasPrefix(set.Prompt(2).Text, block0) {
		t.Error("block 3 must differ from block 0")
	}
}
