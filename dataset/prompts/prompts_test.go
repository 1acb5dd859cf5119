package prompts

import (
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/tokenize"
)

func TestParseJSONL(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Prompt
		err      string
	}{
		{"prompt, text and messages; blank lines, id and timestamp ignored",
			"{\"prompt\": \"a\", \"id\": 7, \"timestamp\": 12.5}\n\n{\"text\": \"b\"}\r\n{\"messages\": [{\"role\": \"system\", \"content\": \"s\"}, {\"role\": \"user\", \"content\": \"u\"}]}",
			[]Prompt{{Text: "a"}, {Text: "b"}, {Messages: []Message{{"system", "s"}, {"user", "u"}}}}, ""},
		{"max_tokens per line", `{"prompt":"a","max_tokens":5}` + "\n" + `{"prompt":"b","max_tokens":null}` + "\n" + `{"messages":[{"role":"user","content":"c"}],"max_tokens":7}`,
			[]Prompt{{Text: "a", MaxTokens: 5}, {Text: "b"}, {Messages: []Message{{"user", "c"}}, MaxTokens: 7}}, ""},
		{"no final newline", `{"prompt":"x"}`, []Prompt{{Text: "x"}}, ""},
		{"empty file", "\n\n", nil, "f.jsonl: no prompts"},
		{"malformed JSON names the line", "{\"prompt\":\"a\"}\n{\"prompt\":,}", nil, "f.jsonl:2: malformed JSON"},
		{"a truncated line says so, naming it", "{\"prompt\":\"a\"}\n{\"prompt\":", nil, "f.jsonl:2: the line ends before its JSON value does: not complete JSON (is the file truncated?)"},
		{"no prompt key", `{}`, nil, `f.jsonl:1: want an object with "prompt"`},
		{"an unknown key names the line and the key and lists the known ones", "{\"prompt\":\"a\"}\n{\"prompt\":\"a\",\"temperature\":1}", nil,
			`f.jsonl:2: unknown key "temperature": a prompt object has "prompt", "text", "messages", "conversations" and "max_tokens", and ignores "id" and "timestamp"`},
		{"keys are case-sensitive", `{"Prompt":"a"}`, nil, `unknown key "Prompt"`},
		{"two prompt keys", `{"prompt":"a","text":"b"}`, nil, "more than one"},
		{"empty prompt", `{"prompt":""}`, nil, "empty prompt"},
		{"prompt not a string", `{"prompt":3}`, nil, `f.jsonl:1: "prompt": want a string, got a number`},
		{"max_tokens zero", `{"prompt":"a","max_tokens":0}`, nil, `"max_tokens": want a positive integer, got 0`},
		{"max_tokens fraction", `{"prompt":"a","max_tokens":1.5}`, nil, `"max_tokens": want a positive integer, got 1.5`},
		{"max_tokens string", `{"prompt":"a","max_tokens":"8"}`, nil, `"max_tokens": want a positive integer, got "8"`},
		{"messages not an array", `{"messages":"hi"}`, nil, `"messages": want an array of {"role": "…", "content": "…"} with string contents, got a string`},
		{"content parts are not supported", `{"messages":[{"role":"user","content":[{"type":"text"}]}]}`, nil, `"messages"[0]: "content": want a string, got an array (content parts are not supported)`},
		{"unknown message key", `{"messages":[{"role":"user","content":"x","name":"n"}]}`, nil, `"messages"[0]: unknown key "name"`},
		{"empty messages", `{"messages":[]}`, nil, `"messages" is empty`},
		{"message without role", `{"messages":[{"content":"x"}]}`, nil, `"messages"[0]: no "role"`},
		{"a line that is not an object", "{\"prompt\":\"a\"}\n\"a\"", nil, "f.jsonl:2: want a JSON object, got a string"},
		{"an array of prompt objects", "[\n {\"prompt\": \"a\", \"max_tokens\": 3},\n {\"text\": \"b\"}\n]\n",
			[]Prompt{{Text: "a", MaxTokens: 3}, {Text: "b"}}, ""},
		{"an array of something else", `["a"]`, nil, "f.jsonl: entry 1 of the JSON array: want a JSON object, got a string"},
		{"an empty array", `[]`, nil, "f.jsonl: no prompts: the JSON array is empty"},
		{"an unterminated array is a truncated file", `[{"prompt":"a"}`, nil, "f.jsonl: the file ends after entry 1 of the JSON array, without its closing ]: it is truncated, not complete JSON"},
		{"an array that ends inside an entry: truncated, naming the entry", "[{\"prompt\":\"a\"},\n{\"prompt\":\"b", nil, "f.jsonl: the file ends inside entry 2 of the JSON array (which starts after byte 16): it is truncated, not complete JSON"},
		{"a ShareGPT array cut after a comma: truncated, not EOF", "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"}]},\n", nil, "f.jsonl: the file ends inside entry 2 of the JSON array"},
		{"malformed JSON inside an array is still malformed", `[{"prompt":"a"},{"prompt":,}]`, nil, "f.jsonl: entry 2 of the JSON array: malformed JSON: invalid character"},
		{"two arrays", `[{"prompt":"a"}] []`, nil, "something follows the JSON array"},
		{"ShareGPT JSON array: the first human turn; entries without one skipped", `[
  {"id": "x1", "conversations": [{"from": "system", "value": "be nice"}, {"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}, {"from": "human", "value": "more"}]},
  {"id": "x2", "conversations": []},
  {"id": "x3", "conversations": [{"from": "gpt", "value": "alone"}]},
  {"id": "x4", "conversations": [{"role": "user", "content": "role and content"}], "max_tokens": 9}
]`, []Prompt{{Text: "hi"}, {Text: "role and content", MaxTokens: 9}}, ""},
		{"ShareGPT JSONL", `{"id":"a","conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"r"}],"model":"gpt-4"}`,
			[]Prompt{{Text: "q"}}, ""},
		{"ShareGPT without a human turn anywhere", `[{"conversations":[]}]`, nil, `no prompts: none of its 1 ShareGPT entries has a turn from "human"`},
		{"ShareGPT turns not an array", `{"conversations":{"from":"human"}}`, nil, `"conversations" (ShareGPT): want an array of {"from": "human", "value": "…"}, got an object`},
		{"ShareGPT value not a string", `{"conversations":[{"from":"human","value":["x"]}]}`, nil, `"conversations"[0]: "value": want a string, got an array`},
		{"ShareGPT and prompt", `{"conversations":[],"prompt":"a"}`, nil, `both "prompt" and "conversations"`},
	} {
		set, err := ParseJSONL(strings.NewReader(tc.in), "f.jsonl")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if set.Len() != len(tc.want) || set.TotalSampleCount() != uint64(len(tc.want)) || set.PerformanceSampleCount() != uint64(len(tc.want)) {
			t.Errorf("%s: %d prompts, want %d", tc.name, set.Len(), len(tc.want))
			continue
		}
		for i, w := range tc.want {
			got := set.Prompt(i)
			if got.Text != w.Text || len(got.Messages) != len(w.Messages) || got.MaxTokens != w.MaxTokens {
				t.Errorf("%s: prompt %d = %+v, want %+v", tc.name, i, got, w)
				continue
			}
			for j := range w.Messages {
				if got.Messages[j] != w.Messages[j] {
					t.Errorf("%s: prompt %d message %d = %+v, want %+v", tc.name, i, j, got.Messages[j], w.Messages[j])
				}
			}
		}
	}
}

func TestReadJSONLAndLongLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.jsonl")
	long := strings.Repeat("w ", 100_000) // longer than the reader's buffer
	if err := os.WriteFile(path, []byte(`{"prompt":"`+long+`"}`+"\n"+`{"prompt":"b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := ReadJSONL(path)
	if err != nil || set.Len() != 2 || set.Prompt(0).Text != long || set.Name() != path {
		t.Fatalf("ReadJSONL: %v", err)
	}
	if _, err := ReadJSONL(filepath.Join(dir, "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
	huge := strings.NewReader(`{"prompt":"` + strings.Repeat("x", MaxLineBytes+10))
	if _, err := ParseJSONL(huge, "huge.jsonl"); err == nil || !strings.Contains(err.Error(), "huge.jsonl:1: line longer") {
		t.Errorf("huge line: %v", err)
	}
}

func TestQSL(t *testing.T) {
	set, err := New("s", []Prompt{{Text: "a"}, {Text: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.LoadSamples([]uint64{0, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := set.LoadSamples([]uint64{2}); err == nil || !strings.Contains(err.Error(), "index 2") {
		t.Errorf("index out of range: %v", err)
	}
	if err := set.UnloadSamples([]uint64{0, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := set.UnloadSamples([]uint64{0}); err == nil {
		t.Error("unloading what is not loaded")
	}
	set.SetPerformanceSampleCount(1)
	if set.PerformanceSampleCount() != 1 {
		t.Error("performance sample count not set")
	}
	set.SetPerformanceSampleCount(9)
	if set.PerformanceSampleCount() != 2 {
		t.Error("performance sample count not capped")
	}
	for _, ps := range [][]Prompt{nil, {{}}, {{Text: "a", Messages: []Message{{"user", "b"}}}}} {
		if _, err := New("bad", ps); err == nil {
			t.Errorf("New accepted %+v", ps)
		}
	}
}

func TestSynthetic(t *testing.T) {
	words := []string{"alpha", "beta", "gamma"}
	a, err := Synthetic(SyntheticOptions{Count: 5, InputWords: 7, Seed: 1, Words: words})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthetic(SyntheticOptions{Count: 5, InputWords: 7, Seed: 1, Words: words})
	c, _ := Synthetic(SyntheticOptions{Count: 5, InputWords: 7, Seed: 2, Words: words})
	same := true
	for i := range a.Len() {
		p := a.Prompt(i).Text
		if n := len(strings.Fields(p)); n != 7 {
			t.Errorf("prompt %q has %d words, want 7", p, n)
		}
		if p != b.Prompt(i).Text {
			t.Error("same seed, different prompts")
		}
		same = same && p == c.Prompt(i).Text
	}
	if same {
		t.Error("another seed gave the same prompts")
	}
	d, err := Synthetic(SyntheticOptions{})
	if err != nil || d.Len() != 1024 || len(strings.Fields(d.Prompt(0).Text)) != 128 {
		t.Fatalf("defaults: %v", err)
	}
	if _, err := Synthetic(SyntheticOptions{Count: -1}); err == nil {
		t.Error("negative count accepted")
	}
	if _, err := Synthetic(SyntheticOptions{Words: []string{}}); err == nil {
		t.Error("empty word list accepted")
	}
}

func TestWords(t *testing.T) {
	g := GeneratedWords(5000)
	seen := map[string]bool{}
	for _, w := range g {
		if !isPlainWord(w) || seen[w] || len(w) > 7 {
			t.Fatalf("generated word %q (plain, new, short?)", w)
		}
		seen[w] = true
	}
	if len(g) != 5000 || strings.Join(GeneratedWords(50), " ") != strings.Join(g[:50], " ") {
		t.Error("generated words not deterministic")
	}
	path := filepath.Join(t.TempDir(), "words")
	os.WriteFile(path, []byte("apple\nApple\nbanana's\nkiwi\ncafé\n\n"), 0o644)
	ws, err := LoadWords(path)
	if err != nil || strings.Join(ws, ",") != "apple,kiwi" {
		t.Errorf("LoadWords: %q, %v", ws, err)
	}
}

func FuzzJSONL(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"a"}`, "{\"text\":\"b\"}\n{\"prompt\":\"c\"}\n",
		`{"messages":[{"role":"user","content":"x"}]}`, `{"messages":null}`, "\n", `{"prompt":"\u00e9"}`,
		`{"prompt":"a","max_tokens":4,"id":1}`, `[{"prompt":"a"},{"conversations":[{"from":"human","value":"q"}]}]`,
		`{"conversations":[{"from":"gpt","value":"r"},{"role":"user","content":"q"}]}`, ` [`, `{"prompt":"a","x":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseJSONL(strings.NewReader(s), "fuzz.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl") && !strings.HasPrefix(err.Error(), "prompt set fuzz.jsonl") {
				t.Fatalf("error %q does not name the file", err)
			}
			// Errors speak of JSON, never of Go's types.
			if m := err.Error(); strings.Contains(m, "Go ") && !strings.Contains(s, "Go ") {
				t.Fatalf("error %q names a Go type", err)
			}
			return
		}
		for i := range set.Len() {
			p := set.Prompt(i)
			if (p.Text == "") == (len(p.Messages) == 0) || p.MaxTokens < 0 {
				t.Fatalf("prompt %d: %+v", i, p)
			}
		}
	})
}

// TestSyntheticInTokens: with a tokenizer, every prompt has exactly
// InputWords of its tokens, from the word list of a machine without one.
func TestSyntheticInTokens(t *testing.T) {
	tok, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	set, err := Synthetic(SyntheticOptions{Count: 30, InputWords: 211, Seed: 3, Words: GeneratedWords(8192), Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	for i := range set.Len() {
		if got := tok.Count(set.Prompt(i).Text); got != 211 {
			t.Fatalf("prompt %d: %d tokens, want 211", i, got)
		}
	}
	if !strings.Contains(set.Name(), "211 tokens of cl100k_base") {
		t.Errorf("name %q", set.Name())
	}
}

// TestSyntheticNoncePlace: with a tokenizer, each prompt starts with the
// place of a client's nonce (Lead): as many one-token words of the set's
// NonceWords as a 64-bit nonce takes, or the whole of a shorter prompt; the
// words are a power of two, each one token with its leading space, and the
// prompt still has exactly its length. A set without a tokenizer has no
// such place, and New refuses a Lead it could not fill.
func TestSyntheticNoncePlace(t *testing.T) {
	tok, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		why   string
	}{
		{nil, "the system's word list (or the generated one)"},
		{GeneratedWords(8192), "the word list of a machine without one"},
	} {
		lengths, err := tokenize.ParseLengths("uniform:1:12")
		if err != nil {
			t.Fatal(err)
		}
		set, err := Synthetic(SyntheticOptions{Count: 64, InputLengths: lengths, Seed: 5, Words: tc.words, Tokenizer: tok})
		if err != nil {
			t.Fatal(tc.why, err)
		}
		ws := set.NonceWords()
		if len(ws) < 2 || len(ws)&(len(ws)-1) != 0 {
			t.Fatalf("%s: %d nonce words, want a power of two ≥ 2", tc.why, len(ws))
		}
		for _, w := range ws {
			if tok.Count(" "+w) != 1 {
				t.Fatalf("%s: nonce word %q is not one token", tc.why, w)
			}
		}
		full := (NonceBits + bits.Len(uint(len(ws))) - 2) / (bits.Len(uint(len(ws))) - 1)
		for i := range set.Len() {
			p := set.Prompt(i)
			n := tok.Count(p.Text)
			if p.Lead != min(n, full) {
				t.Fatalf("%s: prompt %d of %d tokens has a Lead of %d, want %d", tc.why, i, n, p.Lead, min(n, full))
			}
			for _, w := range strings.Fields(p.Text[:p.LeadBytes()]) {
				if !slices.Contains(ws, w) {
					t.Fatalf("%s: prompt %d: lead word %q is not a nonce word", tc.why, i, w)
				}
			}
		}
	}
	plain, err := Synthetic(SyntheticOptions{Count: 4, InputWords: 10, Words: GeneratedWords(2000)})
	if err != nil {
		t.Fatal(err)
	}
	if plain.NonceWords() != nil || plain.Prompt(0).Lead != 0 {
		t.Errorf("a set in words has nonce words %v and a Lead %d", plain.NonceWords(), plain.Prompt(0).Lead)
	}
	if _, err := New("x", []Prompt{{Text: " a b", Lead: 1}}); err == nil || !strings.Contains(err.Error(), "no nonce words") {
		t.Errorf("New with a Lead: %v", err)
	}
}

// TestSyntheticLengthDistribution: with InputLengths, each prompt's length
// is drawn from it, in tokens with a tokenizer and in words without.
func TestSyntheticLengthDistribution(t *testing.T) {
	tok, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	l, err := tokenize.ParseLengths("uniform:5:9")
	if err != nil {
		t.Fatal(err)
	}
	for _, withTok := range []bool{true, false} {
		o := SyntheticOptions{Count: 200, Seed: 3, Words: GeneratedWords(8192), InputLengths: l}
		count := func(s string) int { return len(strings.Fields(s)) }
		if withTok {
			o.Tokenizer, count = tok, tok.Count
		}
		set, err := Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for i := range set.Len() {
			n := count(set.Prompt(i).Text)
			if n < 5 || n > 9 {
				t.Fatalf("tokenizer %v: prompt %d has length %d, outside uniform:5:9", withTok, i, n)
			}
			seen[n] = true
		}
		if len(seen) != 5 || !strings.Contains(set.Name(), "uniform:5:9") {
			t.Errorf("tokenizer %v: lengths %v in 200 prompts, name %q", withTok, seen, set.Name())
		}
	}
}

// TestSyntheticOutputLengths: with OutputLengths, each prompt asks for a
// drawn max_tokens; the texts are those drawn without it.
func TestSyntheticOutputLengths(t *testing.T) {
	l, err := tokenize.ReadHistogram("out.csv", strings.NewReader("16,1\n256,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := SyntheticOptions{Count: 100, Seed: 3, InputWords: 8, Words: GeneratedWords(8192)}
	plain, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	o.OutputLengths = l
	set, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for i := range set.Len() {
		p := set.Prompt(i)
		if p.Text != plain.Prompt(i).Text {
			t.Fatalf("prompt %d: the output lengths changed its text", i)
		}
		seen[p.MaxTokens]++
	}
	if len(seen) != 2 || seen[16] == 0 || seen[256] == 0 || !strings.Contains(set.Name(), "output lengths hist:out.csv") {
		t.Errorf("max_tokens drawn %v (want 16 and 256 only), name %q", seen, set.Name())
	}
	if plain.Prompt(0).MaxTokens != 0 {
		t.Errorf("without OutputLengths, max_tokens %d: want 0 (the client's)", plain.Prompt(0).MaxTokens)
	}
}
