package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseJSONL(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Prompt
		err      string
	}{
		{"prompt, text and messages; blank lines and other keys ignored",
			"{\"prompt\": \"a\", \"id\": 7}\n\n{\"text\": \"b\"}\r\n{\"messages\": [{\"role\": \"system\", \"content\": \"s\"}, {\"role\": \"user\", \"content\": \"u\"}]}",
			[]Prompt{{Text: "a"}, {Text: "b"}, {Messages: []Message{{"system", "s"}, {"user", "u"}}}}, ""},
		{"no final newline", `{"prompt":"x"}`, []Prompt{{Text: "x"}}, ""},
		{"empty file", "\n\n", nil, "f.jsonl: no prompts"},
		{"malformed JSON names the line", "{\"prompt\":\"a\"}\n{\"prompt\":", nil, "f.jsonl:2: malformed JSON"},
		{"no prompt key", `{"question":"a"}`, nil, `f.jsonl:1: want an object with "prompt"`},
		{"two prompt keys", `{"prompt":"a","text":"b"}`, nil, "more than one"},
		{"empty prompt", `{"prompt":""}`, nil, "empty prompt"},
		{"prompt not a string", `{"prompt":3}`, nil, "malformed JSON"},
		{"messages not an array", `{"messages":"hi"}`, nil, `"messages": want an array`},
		{"content parts are not supported", `{"messages":[{"role":"user","content":[{"type":"text"}]}]}`, nil, `"messages": want an array`},
		{"empty messages", `{"messages":[]}`, nil, `"messages" is empty`},
		{"message without role", `{"messages":[{"content":"x"}]}`, nil, `"messages"[0]: no "role"`},
		{"a JSON array line", `["a"]`, nil, "f.jsonl:1: malformed JSON"},
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
			if got.Text != w.Text || len(got.Messages) != len(w.Messages) {
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
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseJSONL(strings.NewReader(s), "fuzz.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl") && !strings.HasPrefix(err.Error(), "prompt set fuzz.jsonl") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for i := range set.Len() {
			p := set.Prompt(i)
			if (p.Text == "") == (len(p.Messages) == 0) {
				t.Fatalf("prompt %d: %+v", i, p)
			}
		}
	})
}
