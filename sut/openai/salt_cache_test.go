package openai

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"aimeter/dataset/prompts"
	"aimeter/serve"
)

// TestSaltDefeatsCache runs 40 queries over 4 chat prompts that share a
// system prompt against aimeter's simulator with its result cache
// (serve.OpenAIOptions.CacheResponses), which answers a prompt it has
// seen before from the cache: with the salt no query hits it; with the
// prompts sent exactly every repeat does.
func TestSaltDefeatsCache(t *testing.T) {
	ps := make([]prompts.Prompt, 4)
	for i := range ps {
		ps[i].Messages = []prompts.Message{{Role: "system", Content: "you are a benchmark"}, {Role: "user", Content: fmt.Sprintf("question %d", i)}}
	}
	set, err := prompts.New("shared system prompt", ps)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(42)
	cases := []struct {
		name  string
		why   string
		salt  *uint64
		exact bool
		hits  int64
	}{
		{"salt", "every query differs after the system prompt", &seed, false, 0},
		{"nonce", "aimeter's default marks every query too, at the start", nil, false, 0},
		{"exact prompts", "without a marker, 36 of the 40 queries repeat a prompt answered before", nil, true, 36},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sim, err := serve.NewOpenAI(serve.OpenAIOptions{CacheResponses: true})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sim)
			t.Cleanup(func() { srv.Close(); sim.Close() })
			ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "sim", Prompts: set, Salt: c.salt, AllowRepeatedPrompts: c.exact})
			if res := run(t, ep, runOpts{samples: 40}); res.FailedSamples != 0 {
				t.Fatalf("errors: %+v", res.Errors)
			}
			if st := sim.Stats(); st.CacheHits != c.hits || st.Requests != 40 {
				t.Errorf("%s: %d cache hits in %d requests, want %d in 40", c.why, st.CacheHits, st.Requests, c.hits)
			}
		})
	}
}
