package openai

import (
	"io"
	"net/http"
	"regexp"
	"testing"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
)

// TestSalt sends every shape of prompt with a salt and reads where the
// server finds it: between the system prompt and the user content when
// there is a system prompt, else at the very start; one per query, all
// different, and the same again on a rerun with the same seed.
func TestSalt(t *testing.T) {
	salt := regexp.MustCompile(`\[salt: ([0-9a-f]{16})\]`)
	cases := []struct {
		name, why string
		api       string
		prompt    prompts.Prompt
		// field picks the text the salt is in from the request body:
		// the prompt, or message i's content.
		field func(body map[string]any) string
		want  *regexp.Regexp // the text, salt and all
	}{
		{"chat with a system prompt", "the salt ends the system message, so the system prompt stays a shared prefix and the user content follows the salt",
			APIChat, prompts.Prompt{Messages: []prompts.Message{{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "hello"}}},
			contentOf(0), regexp.MustCompile(`^be <brief>\n\n\[salt: [0-9a-f]{16}\]$`)},
		{"chat without a system prompt", "nothing comes before the user content, so the salt starts it",
			APIChat, prompts.Prompt{Messages: []prompts.Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi"}, {Role: "user", Content: "more"}}},
			contentOf(0), regexp.MustCompile(`^\[salt: [0-9a-f]{16}\]\n\nhello$`)},
		{"chat from a plain prompt", "a plain prompt is one user message: the salt starts it",
			APIChat, prompts.Prompt{Text: "plain \"text\""},
			contentOf(0), regexp.MustCompile(`^\[salt: [0-9a-f]{16}\]\n\nplain "text"$`)},
		{"completions", "a completions prompt has no system part: the salt starts it, so no two queries share a prefix",
			APICompletions, prompts.Prompt{Text: "plain \"text\""},
			func(body map[string]any) string { s, _ := body["prompt"].(string); return s },
			regexp.MustCompile(`^\[salt: [0-9a-f]{16}\]\n\nplain "text"$`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := prompts.New("salted", []prompts.Prompt{c.prompt})
			if err != nil {
				t.Fatal(err)
			}
			salts := func(seed uint64) []string {
				var rec recorder
				srv := server(t, &rec, func(w http.ResponseWriter, r *http.Request, q request) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"choices":[{"index":0,"text":"ok","message":{"role":"assistant","content":"ok"}}],"usage":{"completion_tokens":1}}`)
				})
				ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", API: c.api, Prompts: set, Salt: &seed})
				if res := run(t, ep, runOpts{samples: 20}); res.FailedSamples != 0 {
					t.Fatalf("errors: %+v", res.Errors)
				}
				var out []string
				for _, q := range rec.all() {
					text := c.field(q.Body)
					if !c.want.MatchString(text) {
						t.Errorf("%s: %q does not match %s", c.why, text, c.want)
					}
					if m := salt.FindAllStringSubmatch(text, -1); len(m) == 1 {
						out = append(out, m[0][1])
					}
					if ms, ok := q.Body["messages"].([]any); ok && len(ms) != len(c.prompt.Messages) && len(c.prompt.Messages) > 0 {
						t.Errorf("%d messages sent, the prompt has %d", len(ms), len(c.prompt.Messages))
					}
				}
				return out
			}
			a, b, other := salts(7), salts(7), salts(8)
			if len(a) != 20 {
				t.Fatalf("%d salts in 20 requests", len(a))
			}
			seen := map[string]bool{}
			for _, s := range a {
				seen[s] = true
			}
			if len(seen) != len(a) {
				t.Errorf("%d distinct salts in %d queries: a salt is per query", len(seen), len(a))
			}
			// Query id k (the record of seq id k − 1) carried SaltOf(7, k).
			for k := range uint64(20) {
				if !seen[SaltOf(7, loadgen.ResponseID(k+1))] {
					t.Errorf("no request carried SaltOf(7, %d)", k+1)
				}
			}
			// An Offline run issues its queries at once: compare as sets.
			for _, s := range b {
				if !seen[s] {
					t.Errorf("the rerun with the same seed sent salt %s, which the first run did not", s)
				}
			}
			for _, s := range other {
				if seen[s] {
					t.Errorf("seed 8 sent seed 7's salt %s", s)
				}
			}
		})
	}
}

// contentOf picks message i's content of a chat request body.
func contentOf(i int) func(map[string]any) string {
	return func(body map[string]any) string {
		ms, _ := body["messages"].([]any)
		if len(ms) <= i {
			return ""
		}
		s, _ := ms[i].(map[string]any)["content"].(string)
		return s
	}
}

// TestSaltOf: SaltOf is the salt a request carries (query id = the
// record's seq id + 1), fixed for a seed and id, so that a bundle's
// records give every query's salt.
func TestSaltOf(t *testing.T) {
	cases := []struct {
		seed uint64
		id   uint64
		why  string
	}{
		{0, 1, "seed 0 is a seed like another"},
		{7, 1, "the first query"},
		{7, 2, "the next query differs"},
		{8, 1, "another seed differs"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		s := SaltOf(c.seed, loadgen.ResponseID(c.id))
		if len(s) != 16 || s != SaltOf(c.seed, loadgen.ResponseID(c.id)) || seen[s] {
			t.Errorf("%s: SaltOf(%d, %d) = %q (16 hex digits, fixed, unlike the others)", c.why, c.seed, c.id, s)
		}
		seen[s] = true
	}
	seed := uint64(1)
	if _, err := New(Options{BaseURL: "http://127.0.0.1:1", Prompts: testPrompts(t, 1), Salt: &seed, AllowRepeatedPrompts: true}); err == nil {
		t.Error("a salt with the prompts sent exactly was accepted")
	}
}
