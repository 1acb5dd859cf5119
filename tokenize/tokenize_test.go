package tokenize

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// reference is testdata/reference.json: the ids Hugging Face's tokenizers
// library gives for each text (make_reference.py wrote it).
type reference struct {
	Version string           `json:"tokenizers_version"`
	Cases   []map[string]any `json:"cases"`
}

func readReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHFMatchesReference checks the pure-Go reader against the ids that
// Hugging Face's own library gave for the same files and texts: contractions
// of either case, digits in groups, accents composed and decomposed (NFC),
// CJK and emoji split into bytes, runs of whitespace and line ends, an added
// token, words the vocabulary never saw.
func TestHFMatchesReference(t *testing.T) {
	ref := readReference(t)
	for _, file := range []string{"gpt2-style.json", "llama3-style.json"} {
		tok, err := ReadHF(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ref.Cases {
			text := c["text"].(string)
			var want []int
			for _, v := range c[file].([]any) {
				want = append(want, int(v.(float64)))
			}
			got := tok.Encode(text)
			if !slices.Equal(got, want) {
				t.Errorf("%s: Encode(%q) = %v, tokenizers %s gives %v", file, text, got, ref.Version, want)
			}
			if n := tok.Count(text); n != len(want) {
				t.Errorf("%s: Count(%q) = %d, want %d", file, text, n, len(want))
			}
			// Byte-level BPE is lossless, except for what NFC composes.
			back := tok.Decode(want)
			if file == "gpt2-style.json" && back != text {
				t.Errorf("%s: Decode(Encode(%q)) = %q", file, text, back)
			}
		}
	}
}

// TestTiktoken checks the compiled-in encodings against the ids that
// OpenAI's tiktoken gives for "hello world" (published in its README and
// many others), and that Decode skips an id outside the vocabulary.
func TestTiktoken(t *testing.T) {
	for _, c := range []struct {
		enc  string
		want []int
	}{
		{"cl100k_base", []int{15339, 1917}},
		{"o200k_base", []int{24912, 2375}},
		{"r50k_base", []int{31373, 995}}, // GPT-2's vocabulary
		{"p50k_base", []int{31373, 995}}, // GPT-2's, with whitespace tokens
		{"p50k_edit", []int{31373, 995}}, // p50k_base with edit tokens
	} {
		tok, err := Open(c.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode("hello world"); !slices.Equal(got, c.want) {
			t.Errorf("%s: Encode(hello world) = %v, want %v", c.enc, got, c.want)
		}
		if got := tok.Count("hello world"); got != 2 {
			t.Errorf("%s: Count = %d", c.enc, got)
		}
		if got := tok.Decode(append([]int{1 << 30}, c.want...)); got != "hello world" {
			t.Errorf("%s: Decode with an unknown id = %q", c.enc, got)
		}
		if tok.Name() != c.enc {
			t.Errorf("Name = %q", tok.Name())
		}
	}
}

// TestOpen checks the names Open accepts and refuses.
func TestOpen(t *testing.T) {
	if tok, err := Open("testdata"); err == nil {
		t.Errorf("Open(testdata) = %v: the directory holds no tokenizer.json", tok.Name())
	}
	dir := t.TempDir()
	data, _ := os.ReadFile(filepath.Join("testdata", "gpt2-style.json"))
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644)
	if tok, err := Open(dir); err != nil || tok.Name() != "tokenizer.json" {
		t.Errorf("Open(dir with tokenizer.json) = %v, %v", tok, err)
	}
	for _, bad := range []string{"", "cl200k_base", filepath.Join(dir, "missing.json")} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		} else if !strings.Contains(err.Error(), "tokenizer") {
			t.Errorf("Open(%q): %v does not say what it was opening", bad, err)
		}
	}
}

// TestParseHFRefuses changes one field of a valid file at a time; each
// change must fail with an error that names the field.
func TestParseHFRefuses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gpt2-style.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why   string
		edit  func(m map[string]any)
		field string
	}{
		{"WordPiece is not BPE", func(m map[string]any) { m["model"].(map[string]any)["type"] = "WordPiece" }, "model.type"},
		{"an empty vocabulary", func(m map[string]any) { m["model"].(map[string]any)["vocab"] = map[string]any{} }, "model.vocab"},
		{"SentencePiece BPE with byte fallback", func(m map[string]any) { m["model"].(map[string]any)["byte_fallback"] = true }, "model.byte_fallback"},
		{"a merge of tokens not in the vocabulary", func(m map[string]any) {
			m["model"].(map[string]any)["merges"] = []any{"qqq zzz"}
		}, "model.merges"},
		{"a merge string with no space", func(m map[string]any) { m["model"].(map[string]any)["merges"] = []any{"ab"} }, "model.merges"},
		{"merges of the wrong type", func(m map[string]any) { m["model"].(map[string]any)["merges"] = 7 }, "model.merges"},
		{"a vocabulary without the byte alphabet", func(m map[string]any) {
			v := m["model"].(map[string]any)["vocab"].(map[string]any)
			delete(v, "Ġ")
			m["model"].(map[string]any)["merges"] = []any{}
		}, "model.vocab"},
		{"a negative id", func(m map[string]any) { m["model"].(map[string]any)["vocab"].(map[string]any)["x"] = -1 }, "model.vocab"},
		{"SentencePiece's Metaspace", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Metaspace"} }, "pre_tokenizer.type"},
		{"no pre-tokenizer", func(m map[string]any) { m["pre_tokenizer"] = nil }, "pre_tokenizer"},
		{"a Split that is not Isolated", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "a"}, "behavior": "Removed"},
				map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}, "pre_tokenizer.behavior"},
		{"a Split regex that does not compile", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(unclosed"}, "behavior": "Isolated"},
				map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}, "pre_tokenizer.pattern"},
		{"a Lowercase normalizer", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Lowercase"} }, "normalizer.type"},
		{"a WordPiece decoder", func(m map[string]any) { m["decoder"] = map[string]any{"type": "WordPiece"} }, "decoder.type"},
		{"an empty added token", func(m map[string]any) { m["added_tokens"] = []any{map[string]any{"id": 1, "content": ""}} }, "added_tokens"},
	} {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		c.edit(m)
		edited, _ := json.Marshal(m)
		_, err := ParseHF(strings.NewReader(string(edited)), "edited.json")
		if err == nil {
			t.Errorf("%s: accepted", c.why)
			continue
		}
		if !strings.Contains(err.Error(), "edited.json: "+c.field+":") {
			t.Errorf("%s: %v does not name %s", c.why, err, c.field)
		}
	}
	if _, err := ParseHF(strings.NewReader("not json"), "x.json"); err == nil || !strings.Contains(err.Error(), "x.json") {
		t.Errorf("garbage: %v", err)
	}
}

// TestWriter checks that Writer's texts have exactly the asked lengths
// under every tokenizer, that texts concatenate to the sum of their
// lengths, and that the same seed gives the same text.
func TestWriter(t *testing.T) {
	words := strings.Fields("the a of and to in is it you that he was for on are with as I his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find any new work part take get place made live where after back little only round man year came show every good me give our under name very through just form sentence great think say help low line differ turn cause much mean before move right boy old too same tell does set three want air well also play small end put home read hand port large spell add even land here must big high such follow act why ask men change went light kind off need house picture try us again animal point mother world near build self earth father zyzzyva quixotic")
	var toks []Tokenizer
	for _, e := range []string{"cl100k_base", "o200k_base", "r50k_base"} {
		tok, err := Tiktoken(e)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, f := range []string{"gpt2-style.json", "llama3-style.json"} {
		tok, err := ReadHF(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, tok := range toks {
		w, err := NewWriter(tok, words)
		if err != nil {
			t.Fatalf("%s: %v", tok.Name(), err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var all strings.Builder
		sum := 0
		for _, n := range []int{1, 2, 3, 7, 9, 64, 512, 1000} {
			s, err := w.Text(n, rng)
			if err != nil {
				t.Fatalf("%s: %v", tok.Name(), err)
			}
			if got := tok.Count(s); got != n {
				t.Errorf("%s: Text(%d) counts %d: %q", tok.Name(), n, got, s)
			}
			all.WriteString(s)
			sum += n
		}
		if got := tok.Count(all.String()); got != sum {
			t.Errorf("%s: the texts together count %d, want the sum %d", tok.Name(), got, sum)
		}
		a, _ := w.Text(100, rand.New(rand.NewPCG(7, 7)))
		b, _ := w.Text(100, rand.New(rand.NewPCG(7, 7)))
		if a != b {
			t.Errorf("%s: the same seed gave two texts", tok.Name())
		}
		for _, n := range []int{0, -1, MaxTextTokens + 1} {
			if _, err := w.Text(n, rng); err == nil {
				t.Errorf("%s: Text(%d) succeeded", tok.Name(), n)
			}
		}
	}
	cl, _ := Tiktoken("cl100k_base")
	if _, err := NewWriter(cl, []string{"", "two words"}); err == nil {
		t.Error("NewWriter accepted a list of no usable word")
	}
	if _, err := NewWriter(cl, []string{"zyzzyva"}); err == nil {
		t.Error("NewWriter accepted a list without a one-token word")
	}
}

// TestHFConcurrent encodes from many goroutines (run under -race).
func TestHFConcurrent(t *testing.T) {
	tok, err := ReadHF(filepath.Join("testdata", "llama3-style.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := tok.Encode("The quick brown fox jumps over the lazy dog.")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := tok.Encode("The quick brown fox jumps over the lazy dog."); !slices.Equal(got, want) {
					t.Errorf("concurrent Encode = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzParseHF feeds ParseHF arbitrary files: it must return an error or a
// tokenizer that encodes without panicking and decodes losslessly.
func FuzzParseHF(f *testing.F) {
	for _, name := range []string{"gpt2-style.json", "llama3-style.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "hello world")
	}
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{}}}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := ParseHF(strings.NewReader(string(data)), "fuzz.json")
		if err != nil {
			return
		}
		ids := tok.Encode(text)
		if tok.Count(text) != len(ids) {
			t.Fatalf("Count != len(Encode)")
		}
		_ = tok.Decode(ids)
	})
}

// FuzzHFEncode checks, over arbitrary texts, that Encode is lossless for a
// byte-level vocabulary without a normalizer (for valid UTF-8: invalid
// bytes read as U+FFFD, as Rust strings cannot hold them), and agrees with
// Count.
func FuzzHFEncode(f *testing.F) {
	tok, err := ReadHF(filepath.Join("testdata", "gpt2-style.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "hello world", "東京 😀", "a<|endoftext|>b", "\x00\xff  \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ids := tok.Encode(text)
		if got := tok.Decode(ids); utf8.ValidString(text) && got != text {
			t.Fatalf("Decode(Encode(%q)) = %q", text, got)
		}
		if tok.Count(text) != len(ids) {
			t.Fatal("Count != len(Encode)")
		}
	})
}
