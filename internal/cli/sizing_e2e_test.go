package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"aimeter/serve"
)

// The sizing rule of issue 39 over real sockets: a run lasts what was
// asked, or says so before it starts. The servers are aimeter's own
// (`aimeter serve openai` and `aimeter serve kserve --null-model`); the
// checks are of lengths and notices, not of a real-clock VALID.

// newNullKServe starts `aimeter serve kserve --null-model` on a loopback
// listener and returns its URL.
func newNullKServe(t *testing.T) string {
	t.Helper()
	k, err := serve.NewKServe(serve.KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k)
	t.Cleanup(func() { srv.Close(); k.Close() })
	return srv.URL
}

// TestGBTMode0LastsItsDurationOverSockets: `run --arrival-mode 0 --duration
// 1s` against the simulator sent LoadGen's 2 × 1 s / 1 s + 1 = 3
// pre-generated jobs (aimeter's expected latency for an OpenAI server is
// 1 s) and ended in milliseconds; against a KServe server 201 jobs. Mode 0
// sends the next job until the duration has passed (GB-7.4.2-T10-mode0).
func TestGBTMode0LastsItsDurationOverSockets(t *testing.T) {
	llm := []string{"--sut", "openai", "--url", newSimServer(t, "sim-mode0"), "--qsl-size", "64", "--input-tokens", "16", "--output-tokens", "8"}
	kserve := []string{"--sut", "kserve", "--url", newNullKServe(t), "--qsl-size", "64"}
	for name, sut := range map[string][]string{"openai": llm, "kserve": kserve} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--arrival-mode", "0", "--duration", "1s", "--output-dir", dir}, sut...)
			if r := runCLI(t, "", args...); r.code == ExitUsage || r.code == ExitFailure {
				t.Fatalf("%v", r)
			}
			recs := readRecordsT(t, dir)
			var end int64
			for _, rec := range recs {
				end = max(end, rec.CompletedNs)
			}
			if time.Duration(end) < time.Second || len(recs) < 50 {
				t.Errorf("%d jobs over %v; want the 1 s duration filled with jobs sent one after another", len(recs), time.Duration(end))
			}
		})
	}
}

// TestGBTMode4SendsTheDataSetOverSockets: mode 4 sent LoadGen's default
// min_query_count of 100 jobs, said nowhere, and recorded a duration of
// 10 s that no offline job waits for (GB-7.4.2-T10-mode4). It now sends
// the loaded data set (64 prompts here), or --jobs, records the count in
// gbt_test.json and gbt_result.json, and records no duration.
func TestGBTMode4SendsTheDataSetOverSockets(t *testing.T) {
	url := newSimServer(t, "sim-mode4")
	for _, tc := range []struct {
		extra []string
		jobs  int
	}{{nil, 64}, {[]string{"--jobs", "37"}, 37}} {
		dir := filepath.Join(t.TempDir(), "out")
		args := append([]string{"run", "-q", "--arrival-mode", "4", "--sut", "openai", "--url", url, "--qsl-size", "64", "--input-tokens", "16",
			"--output-tokens", "8", "--output-dir", dir}, tc.extra...)
		if r := runCLI(t, "", args...); r.code == ExitUsage || r.code == ExitFailure {
			t.Fatalf("%v", r)
		}
		if n := len(readRecordsT(t, dir)); n != tc.jobs {
			t.Errorf("%v: %d jobs sent, want %d", tc.extra, n, tc.jobs)
		}
		for _, name := range []string{"gbt_test.json", "gbt_result.json", "result.json"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"duration_ns"`) {
				t.Errorf("%v: %s records a duration for the offline mode", tc.extra, name)
			}
			if name != "result.json" && !strings.Contains(string(b), `"jobs": `+strconv.Itoa(tc.jobs)) {
				t.Errorf("%v: %s does not record the %d jobs", tc.extra, name, tc.jobs)
			}
		}
	}
	r := runCLI(t, "", "run", "-q", "--arrival-mode", "2", "--jobs", "5", "--output-dir", filepath.Join(t.TempDir(), "out"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "jobs") {
		t.Errorf("--jobs with mode 2: want a usage error naming it, got %v", r)
	}
}

// TestLengthNoticeOverSockets: `run --sut openai --duration 2s` ran 10 s
// (min_query_count 100 at aimeter's 10 queries/s) with only a progress
// line saying so, and a sweep point at concurrency 1 of `--duration 500ms`
// waited for 100 requests one at a time (34 s of a slow server). Both say
// so before they start, with the setting that ends them as asked.
func TestLengthNoticeOverSockets(t *testing.T) {
	sim := []string{"--sut", "openai", "--url", newSimServer(t, "sim-notice"), "--qsl-size", "64", "--input-tokens", "16", "--output-tokens", "8"}
	r := runCLI(t, "", append([]string{"run", "-q", "--duration", "2s", "--timeout", "300ms", "--output-dir", filepath.Join(t.TempDir(), "out")}, sim...)...)
	for _, want := range []string{"this run will take about 10s, longer than min_duration = 2000 ms", "min_query_count = 100", "at target_qps = 10",
		"To end it at 2s: --set min_query_count=20"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("run --duration 2s: stderr lacks %q:\n%v", want, r)
		}
	}
	r = runCLI(t, "", append([]string{"sweep", "-q", "--points", "1", "--duration", "500ms", "--output-dir", filepath.Join(t.TempDir(), "sweep")}, sim...)...)
	for _, want := range []string{"this run may last longer than min_duration = 500 ms", "min_query_count = 100 queries", "1 at a time",
		"--set min_query_count=1"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("sweep --points 1 --duration 500ms: stderr lacks %q:\n%v", want, r)
		}
	}
}
