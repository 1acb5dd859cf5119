package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/clocksync"
	"aimeter/shard"
)

// shardRun is a short Server run of the null SUT into dir.
func shardRun(dir string, extra ...string) []string {
	return append([]string{"run", "--sut", "null-async", "--qsl-size", "64", "--set", "target_qps=2000", "--set", "min_duration=100",
		"--set", "min_query_count=1", "-q", "--no-store", "--output-dir", dir}, extra...)
}

// TestRunShards runs two shards of one test as a Kubernetes Indexed Job
// would (--shards 2 with JOB_COMPLETION_INDEX) and as given by hand
// (--shard 0/2, with a common start on a reference clock): each exits 0,
// says it is one part of a test and prints no VALID or INVALID, and their
// shard.json files name the same schedule; the second records its start
// and its clock against the reference.
func TestRunShards(t *testing.T) {
	ref := httptest.NewServer(clocksync.Handler(nil))
	defer ref.Close()
	root := t.TempDir()
	t.Setenv(shard.EnvIndex, "1")
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	var recs []shard.Record
	for i, dir := range []string{filepath.Join(root, "1"), filepath.Join(root, "0")} {
		args := shardRun(dir, "--shards", "2")
		if i == 1 {
			args = shardRun(dir, "--shard", "0/2", "--start-at", start, "--clock-ref", ref.URL, "--start-tolerance", "5s")
		}
		r := runCLI(t, "", args...)
		if r.code != ExitOK {
			t.Fatalf("shard run %d: %v", i, r)
		}
		if !strings.Contains(r.stdout, "this bundle is one part of a test; merge the shards for its result") ||
			strings.Contains(r.stdout, "VALID") {
			t.Fatalf("shard run %d: the console does not say it is a part, or judges it:\n%s", i, r)
		}
		var rec shard.Record
		if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(dir, shard.File))), &rec); err != nil {
			t.Fatalf("shard run %d: %v", i, err)
		}
		if rec.Count != 2 || rec.Index != 1-i {
			t.Fatalf("shard run %d: %+v, want index %d of 2", i, rec, 1-i)
		}
		recs = append(recs, rec)
		// aimeter report says the same of the bundle.
		if r := runCLI(t, "", "report", dir); r.code != ExitOK || !strings.Contains(r.stdout, "is one part of a test") || strings.Contains(r.stdout, "VALID") {
			t.Fatalf("aimeter report of shard %d: %v", 1-i, r)
		}
	}
	if recs[0].ScheduleSHA256 != recs[1].ScheduleSHA256 || len(recs[0].ScheduleSHA256) != 64 {
		t.Fatalf("schedule digests %s and %s, want one", recs[0].ScheduleSHA256, recs[1].ScheduleSHA256)
	}
	if recs[0].StartAt != nil || recs[0].Clock != nil {
		t.Errorf("the shard without a start records one: %+v", recs[0])
	}
	c := recs[1]
	if c.StartAt == nil || c.StartAt.Format(time.RFC3339Nano) != start || c.Clock == nil || c.Clock.URL != ref.URL+clocksync.Path ||
		c.Clock.Exchanges != clocksync.DefaultExchanges || c.StartToleranceNs != int64(5*time.Second) {
		t.Errorf("the shard with a start: %+v (clock %+v)", c, c.Clock)
	}
}

// TestRunShardBadInput: each bad shard or start is refused before
// anything runs (exit 2), naming its flag, and nothing is written.
func TestRunShardBadInput(t *testing.T) {
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	far := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	for _, row := range []struct {
		why  string
		env  string // JOB_COMPLETION_INDEX; "-" leaves it unset
		args []string
		says string
	}{
		{"an index at N", "-", []string{"--shard", "4/4"}, "--shard \"4/4\": index 4 is out of range"},
		{"a negative index", "-", []string{"--shard", "-1/4"}, "--shard \"-1/4\": index -1 is out of range"},
		{"no slash", "-", []string{"--shard", "1-4"}, "--shard \"1-4\": want I/N"},
		{"an index that is no number", "-", []string{"--shard", "a/4"}, "--shard \"a/4\": the index I must be a whole number"},
		{"no shards", "-", []string{"--shard", "0/0"}, "--shard \"0/0\": the number of shards N must be a whole number ≥ 1"},
		{"--shard with --shards", "1", []string{"--shard", "0/2", "--shards", "2"}, "--shard and --shards both name the shard"},
		{"--shards without the job's index", "-", []string{"--shards", "4"}, "--shards JOB_COMPLETION_INDEX is not set"},
		{"--shards with an empty index", "", []string{"--shards", "4"}, "--shards JOB_COMPLETION_INDEX is not set"},
		{"--shards with an index that is no number", "two", []string{"--shards", "4"}, "--shards JOB_COMPLETION_INDEX=\"two\" is not a number"},
		{"--shards with an index out of range", "4", []string{"--shards", "4"}, "--shards JOB_COMPLETION_INDEX=4 is out of range"},
		{"--shards 0", "0", []string{"--shards", "0"}, "--shards 0: the number of shards must be ≥ 1"},
		{"a start that is no time", "-", []string{"--shard", "0/2", "--start-at", "tomorrow"}, "--start-at \"tomorrow\": want an RFC 3339 time"},
		{"a start in the past", "-", []string{"--shard", "0/2", "--start-at", past}, "--start-at " + past + " is "},
		{"a start two days ahead", "-", []string{"--shard", "0/2", "--start-at", far}, "more than 24h0m0s"},
		{"a tolerance without a start", "-", []string{"--shard", "0/2", "--start-tolerance", "1s"}, "--start-tolerance applies only to a common start (--start-at)"},
		{"a zero tolerance", "-", []string{"--shard", "0/2", "--start-tolerance", "0s"}, "--start-tolerance 0s: must be > 0"},
		{"a clock reference that is no URL", "-", []string{"--shard", "0/2", "--clock-ref", "ref:80"}, "--clock-ref: clock reference \"ref:80\""},
		{"fewer slots than shards", "-", []string{"--scenario", "SingleStream", "--concurrency", "2", "--shard", "0/3"}, "--shard: 3 shards of a concurrency of 2 (--concurrency)"},
	} {
		if row.env == "-" {
			t.Setenv(shard.EnvIndex, "")
			os.Unsetenv(shard.EnvIndex)
		} else {
			t.Setenv(shard.EnvIndex, row.env)
		}
		dir := filepath.Join(t.TempDir(), "out")
		r := runCLI(t, "", shardRun(dir, row.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, row.says) {
			t.Errorf("%s: want exit %d saying %q; got %v", row.why, ExitUsage, row.says, r)
		}
		if _, err := os.Stat(filepath.Join(dir, "settings.json")); err == nil {
			t.Errorf("%s: a bundle was written", row.why)
		}
	}
}
