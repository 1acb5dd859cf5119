package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/serve"
)

// TestSaltFlags: --salt and --salt-seed given where they do not apply are
// usage errors naming the flag, before any request.
func TestSaltFlags(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	cases := []struct {
		name, why string
		args      []string
		want      string
	}{
		{"seed without salt", "a seed alone would salt nothing", []string{"--sut", "openai", "--url", downURL, "--salt-seed", "3"}, "--salt-seed applies only to --salt"},
		{"another SUT", "only the OpenAI client sends prompts", []string{"--sut", "null", "--salt"}, "--salt applies only to --sut openai"},
		{"accuracy run", "an accuracy run sends its prompts exactly", []string{"--sut", "openai", "--url", downURL, "--salt", "--mode", "accuracy"}, "--salt: this run sends its prompts exactly"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", out}, c.args...)...)
			if res.code != ExitUsage || !strings.Contains(res.stderr, c.want) {
				t.Errorf("%s: want exit %d with %q: %v", c.why, ExitUsage, c.want, res)
			}
		})
	}
}

// TestRunSalt runs --salt against the simulator with its result cache: no
// query is answered from the cache (each carries its own salt), the seed
// is recorded in invocation.json, and a rerun from the bundle salts with
// the same seed. Without --salt and with the prompts sent exactly (TEST04's
// audit run) the same simulator does answer from its cache: see
// TestAudit and sut/openai's TestSaltDefeatsCache.
func TestRunSalt(t *testing.T) {
	sim, err := serve.NewOpenAI(serve.OpenAIOptions{CacheResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	res := runCLI(t, "", "run", "-q", "--sut", "openai", "--url", srv.URL, "--scenario", "Offline", "--qsl-size", "4",
		"--set", "min_duration=0", "--set", "min_query_count=40", "--input-tokens", "8", "--output-tokens", "2",
		"--salt", "--salt-seed", "9315206023656308754", "--output-dir", out)
	if res.code != ExitOK {
		t.Fatal(res)
	}
	st := sim.Stats()
	if st.CacheHits != 0 || st.Requests < 40 {
		t.Errorf("%d cache hits in %d requests over 4 prompts, want none", st.CacheHits, st.Requests)
	}
	first := st.Requests
	seedOf := func(dir string) any {
		data, err := os.ReadFile(filepath.Join(dir, bundle.InvocationFile))
		if err != nil {
			t.Fatal(err)
		}
		var inv struct {
			SUT struct {
				OpenAI map[string]any `json:"openai"`
			} `json:"sut"`
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&inv); err != nil {
			t.Fatal(err)
		}
		return inv.SUT.OpenAI["salt_seed"]
	}
	if got := seedOf(out); got != json.Number("9315206023656308754") {
		t.Errorf("invocation.json's sut.openai.salt_seed %v, want 9315206023656308754", got)
	}
	again := filepath.Join(dir, "again")
	if res := runCLI(t, "", "run", "-q", "--from", out, "--output-dir", again); res.code != ExitOK {
		t.Fatal(res)
	}
	if got := seedOf(again); got != json.Number("9315206023656308754") {
		t.Errorf("the rerun's salt_seed %v, want the first run's", got)
	}
	// The rerun sends the first run's prompts, salt for salt (the same
	// seeds give the same samples in the same order): every one of its
	// requests is one the cache has seen.
	if st := sim.Stats(); st.CacheHits != st.Requests-first || st.Requests != 2*first {
		t.Errorf("the rerun hit the cache %d times in %d requests, want every one", st.CacheHits, st.Requests-first)
	}
}

// TestRunSaltWarmup: a warm-up is a LoadGen run of its own with the same
// seeds, so its queries repeat the measured run's first query ids and
// samples; their salts come from another stream, so the warm-up puts none
// of the measured run's prompts into the simulator's cache.
func TestRunSaltWarmup(t *testing.T) {
	for _, c := range []struct {
		name, why string
		args      []string
	}{
		{"salt", "the warm-up's salts are not the measured queries'", []string{"--salt"}},
		{"nonce", "nor are its nonces", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim, err := serve.NewOpenAI(serve.OpenAIOptions{CacheResponses: true})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sim)
			t.Cleanup(func() { srv.Close(); sim.Close() })
			args := append([]string{"run", "-q", "--sut", "openai", "--url", srv.URL, "--concurrency", "2", "--warmup", "20", "--qsl-size", "4",
				"--set", "min_duration=0", "--set", "min_query_count=40", "--input-tokens", "8", "--output-tokens", "2",
				"--output-dir", filepath.Join(t.TempDir(), "run")}, c.args...)
			if res := runCLI(t, "", args...); res.code != ExitOK && res.code != ExitInvalid {
				t.Fatal(res)
			}
			if st := sim.Stats(); st.CacheHits != 0 || st.Requests < 60 {
				t.Errorf("%s: %d cache hits in %d requests (20 of them the warm-up's), want none", c.why, st.CacheHits, st.Requests)
			}
		})
	}
}
