package compliance

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/benchmark"
	"aimeter/serve"
	"aimeter/sut"
)

// TestAuditOverSocket runs TEST04 and TEST01 against serve's
// OpenAI-compatible simulator over a real socket. TEST04's audit run
// sends its repeated sample's prompt without the nonce of a performance
// run, so a server that caches answers (CacheResponses) answers every
// audit request after the first from its cache, and none of the
// reference run's; TEST01's answers agree, the simulator's being seeded
// by the prompt. The verdicts are not asserted here where they are the
// real clock's (TestTEST04 decides TEST04's on synctest's clock): each
// verification is written, agrees with Result.Pass, and Check of the
// folder agrees with it. (This was internal/cli's TestAuditOverSocket,
// whose TEST04 cell failed under load: it asserted a PASS from two
// 100 ms passes timed on the machine's clock.)
func TestAuditOverSocket(t *testing.T) {
	for _, tc := range []struct {
		test  Test
		cache bool
	}{{TEST04, false}, {TEST04, true}, {TEST01, false}} {
		name := string(tc.test)
		if tc.cache {
			name += " cache"
		}
		t.Run(name, func(t *testing.T) {
			out, _ := serve.ParseLengthDist("4")
			sim, err := serve.NewOpenAI(serve.OpenAIOptions{OutputTokens: out, CacheResponses: tc.cache})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sim)
			t.Cleanup(func() { srv.Close(); sim.Close() })
			dir := filepath.Join(t.TempDir(), "audit")
			p := benchmark.Plan{
				SUT: sut.Config{Kind: sut.OpenAI, QSLSize: 64, Net: sut.Net{URLs: []string{srv.URL}},
					OpenAI: &sut.OpenAIConfig{InputTokens: 8, OutputTokens: 4}},
				Settings:  benchmark.Settings{Scenario: "SingleStream", Set: []string{"min_duration=100", "min_query_count=50", "target_latency=0.1"}},
				OutputDir: dir,
				NoReport:  true,
			}
			res, err := Audit(context.Background(), tc.test, p)
			if err != nil {
				t.Fatal(err)
			}
			verify, err := os.ReadFile(filepath.Join(dir, string(tc.test), "verify_performance.txt"))
			if err != nil || res.Verification == nil || string(verify) != res.Verification.Output {
				t.Fatalf("verify_performance.txt %v:\n%s\nwant the verification's output", err, verify)
			}
			if pass := strings.HasSuffix(string(verify), "TEST PASS\n"); pass != res.Verification.Pass {
				t.Errorf("verification pass %v, but its file says:\n%s", res.Verification.Pass, verify)
			}
			if tc.test == TEST04 {
				hits := sim.Stats().CacheHits
				issued := res.Audit.Result.Passes[len(res.Audit.Result.Passes)-1].QueriesIssued
				if want := issued - 1; tc.cache && (issued < 2 || uint64(hits) != want) {
					t.Errorf("cache hits %d, want the audit run's %d samples but its first", hits, issued)
				}
			}
			if tc.test == TEST01 {
				acc, _ := os.ReadFile(filepath.Join(dir, "TEST01", "verify_accuracy.txt"))
				if !strings.Contains(string(acc), "TEST PASS") || strings.Contains(string(acc), "num_perf_log_qsl_idx_match = 0\n") {
					t.Errorf("verify_accuracy.txt:\n%s", acc)
				}
			}
			rep, err := Check(dir, CheckOptions{})
			if err != nil || rep.OK() != res.Pass {
				t.Errorf("Check of the audit (%v): OK %v, but the audit passed %v: %+v", err, rep.OK(), res.Pass, rep)
			}
		})
	}
}
