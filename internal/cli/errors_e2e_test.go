package cli

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/serve"
	"aimeter/sut/netsut"
)

// newFaultySimServer is newSimServer with injected faults; it returns the
// simulator too, for its fault counters.
func newFaultySimServer(t *testing.T, faults serve.Faults) (string, *serve.OpenAIServer) {
	t.Helper()
	sim := newSim(t, "8", serve.OpenAIOptions{Models: []string{"sim"}, Faults: faults, Seed: 11})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return srv.URL, sim
}

// TestErrorTaxonomyAgainstServe runs --sut openai against the simulator
// with one fault kind injected into every request, and checks that every
// sample failed with the fault's category, exactly as many as there were
// samples (per HTTP status as many as the simulator answered), in
// errors.json and on the console.
func TestErrorTaxonomyAgainstServe(t *testing.T) {
	const samples = 40
	for _, tc := range []struct {
		name   string
		faults serve.Faults
		stream bool
		// want gives the group counts (label → count) from the simulator's
		// counters; nil: no failure at all.
		want func(st serve.OpenAIStats) map[string]uint64
	}{
		{"5xx", serve.Faults{Status5xx: 1}, true, func(st serve.OpenAIStats) map[string]uint64 {
			m := map[string]uint64{}
			for label, n := range map[string]int64{"http_5xx/500": st.Status500, "http_5xx/503": st.Status503, "http_4xx/429": st.Status429} {
				if n > 0 {
					m[label] = uint64(n)
				}
			}
			return m
		}},
		{"reset", serve.Faults{Reset: 1}, true, func(serve.OpenAIStats) map[string]uint64 {
			return map[string]uint64{netsut.CategoryConnectionReset: samples}
		}},
		{"truncate stream", serve.Faults{Truncate: 1}, true, func(serve.OpenAIStats) map[string]uint64 {
			return map[string]uint64{netsut.CategoryStreamTruncated: samples}
		}},
		{"truncate body", serve.Faults{Truncate: 1}, false, func(serve.OpenAIStats) map[string]uint64 {
			return map[string]uint64{netsut.CategoryStreamTruncated: samples}
		}},
		{"malformed stream", serve.Faults{Malformed: 1}, true, func(serve.OpenAIStats) map[string]uint64 {
			return map[string]uint64{netsut.CategoryMalformedJSON: samples}
		}},
		{"malformed body", serve.Faults{Malformed: 1}, false, func(serve.OpenAIStats) map[string]uint64 {
			return map[string]uint64{netsut.CategoryMalformedJSON: samples}
		}},
		{"no usage is not a failure", serve.Faults{NoUsage: 1}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, sim := newFaultySimServer(t, tc.faults)
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", "run", "--sut", "openai", "--url", url, "--scenario", "Offline", "--output-dir", out,
				"--qsl-size", "64", "--input-tokens", "16", "--output-tokens", "8", fmt.Sprintf("--stream=%v", tc.stream),
				"--request-timeout", "5s", "--set", "min_duration=0", "--set", fmt.Sprintf("min_query_count=%d", samples))
			b, err := bundle.Read(out)
			if err != nil {
				t.Fatalf("%v\n%v", err, res)
			}
			got := map[string]uint64{}
			for _, e := range b.Result.Errors {
				got[e.Label()] += e.Count
				if len(e.Messages()) == 0 || e.FirstNs > e.LastNs || e.LastNs <= 0 {
					t.Errorf("group %+v: want examples and first ≤ last", e)
				}
			}
			var want map[string]uint64
			if tc.want != nil {
				want = tc.want(sim.Stats())
			}
			if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("groups %v, want %v\nsimulator: %v\n%v", got, want, sim.Stats(), res)
			}
			var failed uint64
			for _, n := range want {
				failed += n
			}
			if b.Result.FailedSamples != failed {
				t.Errorf("%d failed samples, want %d", b.Result.FailedSamples, failed)
			}
			for rec := range b.Result.Records() {
				if e, ok := b.Result.ErrorOf(rec); ok && want[e.Label()] == 0 {
					t.Errorf("record %+v points to group %+v", rec, e)
				}
			}
			if failed == 0 {
				if strings.Contains(res.stdout, "Failed:") {
					t.Errorf("console names failures of a run without:\n%s", res.stdout)
				}
				return
			}
			line := regexp.MustCompile(`(?m)^Failed: (\d+) of (\d+) samples \(([0-9.]+) %\): (.*); see (.*)$`).FindStringSubmatch(res.stdout)
			if line == nil || line[1] != fmt.Sprint(failed) || line[2] != fmt.Sprint(samples) || line[5] != filepath.Join(out, "errors.json") {
				t.Fatalf("console lacks the breakdown:\n%s", res.stdout)
			}
			for label, n := range want {
				if !strings.Contains(line[4], fmt.Sprintf("%s ×%d", label, n)) {
					t.Errorf("breakdown %q lacks %s ×%d", line[4], label, n)
				}
			}
		})
	}
}

// TestErrorTaxonomyStall: a stalled server ends every request at the
// request timeout: request_timeout where it sent nothing, stream_stalled
// where it had sent the headers; together, every sample.
func TestErrorTaxonomyStall(t *testing.T) {
	const samples = 20
	url, sim := newFaultySimServer(t, serve.Faults{Stall: 1})
	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, "", "run", "--sut", "openai", "--url", url, "--scenario", "Offline", "--output-dir", out,
		"--qsl-size", "64", "--input-tokens", "16", "--output-tokens", "8",
		"--request-timeout", "300ms", "--set", "min_duration=0", "--set", fmt.Sprintf("min_query_count=%d", samples))
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatalf("%v\n%v", err, res)
	}
	var n uint64
	for _, e := range b.Result.Errors {
		if e.Category != netsut.CategoryRequestTimeout && e.Category != netsut.CategoryStreamStalled {
			t.Errorf("group %+v, want request_timeout or stream_stalled", e)
		}
		n += e.Count
	}
	if n != samples || b.Result.FailedSamples != samples || sim.Stats().Stalls != samples {
		t.Errorf("%d failures in the table, %d failed samples, %d stalls; want %d\n%v", n, b.Result.FailedSamples, sim.Stats().Stalls, samples, res)
	}
}
