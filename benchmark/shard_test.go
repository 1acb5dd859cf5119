package benchmark

import (
	"cmp"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/clocksync"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/shard"
	"aimeter/sut"
)

func shardPlan(dir string, sh *Shard) Plan {
	return Plan{
		SUT:       sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		Settings:  Settings{Scenario: "Server", Set: []string{"target_qps=4000", "min_duration=100", "min_query_count=1"}},
		OutputDir: dir, Shard: sh,
	}
}

// TestShardBundles runs a Server test whole and as 3 shards through Run:
// each shard's bundle holds shard.json (its index, N, the whole schedule's
// digest, the same for all), reads back with it, has no verdict of its own
// but the note that it is a part, and the shards' records are the whole
// run's schedule. The whole run's bundle has no shard.json.
func TestShardBundles(t *testing.T) {
	for _, row := range []struct {
		why  string
		plan func(dir string, sh *Shard) Plan
	}{
		{"an MLPerf Server test", shardPlan},
		{"a GB/T arrival mode 2 test (Poisson arrivals)", func(dir string, sh *Shard) Plan {
			return Plan{
				SUT:       sut.Config{Kind: sut.NullAsync, QSLSize: 64},
				GBT:       &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 3000, Duration: 100 * time.Millisecond}}},
				OutputDir: dir, Shard: sh,
			}
		}},
	} {
		t.Run(row.why, func(t *testing.T) { testShardBundles(t, row.plan) })
	}
}

func testShardBundles(t *testing.T, plan func(dir string, sh *Shard) Plan) {
	type key struct {
		seq   uint64
		sched int64
		idx   uint64
	}
	keys := func(r *loadgen.Result) []key {
		var out []key
		for rec := range r.Records() {
			out = append(out, key{rec.SeqID, rec.ScheduledNs, rec.SampleIndex})
		}
		return out
	}
	root := t.TempDir()
	whole, err := Run(context.Background(), plan(filepath.Join(root, "whole"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "whole", shard.File)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a whole test's bundle has %s: %v", shard.File, err)
	}
	var union []key
	digest := ""
	for i := range 3 {
		dir := filepath.Join(root, "shard", string(rune('0'+i)))
		out, err := Run(context.Background(), plan(dir, &Shard{Index: i, Count: 3}))
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		if out.Verdict.Kind != VerdictNone || len(out.Verdict.Reasons) != 1 || !strings.Contains(out.Verdict.Reasons[0], "is one part of a test; merge the shards") {
			t.Fatalf("shard %d: verdict %+v, want none with the note that it is a part", i, out.Verdict)
		}
		b, err := derived.Read(dir)
		if err != nil {
			t.Fatalf("shard %d: reading its bundle: %v", i, err)
		}
		rec := shard.Of(b)
		if rec == nil || rec.Index != i || rec.Count != 3 || rec.Rule != shard.RuleQueryModN || len(rec.ScheduleSHA256) != 64 || len(rec.PassSchedules) != 1 {
			t.Fatalf("shard %d: %s = %+v", i, shard.File, rec)
		}
		if digest == "" {
			digest = rec.ScheduleSHA256
		} else if rec.ScheduleSHA256 != digest {
			t.Fatalf("shard %d: schedule digest %s, shard 0's %s", i, rec.ScheduleSHA256, digest)
		}
		union = append(union, keys(out.Result)...)
	}
	slices.SortFunc(union, func(a, b key) int { return cmp.Compare(a.seq, b.seq) })
	if want := keys(whole.Result); !slices.Equal(union, want) {
		t.Fatalf("the shards issued %d samples, the whole run %d: not the same schedule", len(union), len(want))
	}
}

// TestShardStart checks the common start: the clock is measured against
// the reference and the start kept on its clock; a start in the past, too
// far ahead, missed beyond the tolerance, or a reference that cannot be
// measured is refused naming its field, with nothing written.
func TestShardStart(t *testing.T) {
	// A reference 2 h ahead of this host: a start 1 s ahead on it is 2 h
	// behind here, and would be in the past without the offset.
	ahead := 2 * time.Hour
	measured := func(context.Context, string) (clocksync.Measurement, error) {
		return clocksync.Measurement{URL: "http://ref" + clocksync.Path, Offset: ahead, Uncertainty: time.Millisecond, Exchanges: 8}, nil
	}
	dir := filepath.Join(t.TempDir(), "out")
	start := time.Now().Add(ahead + 300*time.Millisecond)
	out, err := Run(context.Background(), shardPlan(dir, &Shard{Index: 1, Count: 2, StartAt: start, ClockRef: "http://ref", Measure: measured, StartTolerance: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	rec := shard.Of(out.Bundle)
	if rec == nil || rec.Clock == nil || rec.Clock.Offset != ahead || !rec.StartAt.Equal(start) || !rec.LocalStartAt.Equal(start.Add(-ahead)) ||
		rec.StartToleranceNs != int64(time.Second) {
		t.Fatalf("%s = %+v", shard.File, rec)
	}
	p := out.Result.Passes[out.Result.ReportedPass()]
	if late := time.Unix(0, p.StartUnixNs).Sub(start.Add(-ahead)); late < 0 || time.Duration(rec.StartLateNs) != out.Result.Shard.StartLate {
		t.Fatalf("issuing started %v after the local start (recorded %v)", late, time.Duration(rec.StartLateNs))
	}

	closed := httptest.NewServer(nil)
	closed.Close()
	hourAgo := func() time.Time { return time.Now().Add(-time.Hour) }
	for _, row := range []struct {
		why   string
		shard Shard
		field string
		says  string
	}{
		{"a start in the past", Shard{Count: 2, StartAt: time.Now().Add(-time.Minute)}, "Shard.StartAt", "in the past"},
		{"a start in the past on the reference's clock", Shard{Count: 2, StartAt: time.Now().Add(time.Hour), ClockRef: "http://ref", Measure: measured}, "Shard.StartAt", "in the past"},
		{"a start more than 24 h ahead", Shard{Count: 2, StartAt: time.Now().Add(25 * time.Hour)}, "Shard.StartAt", "more than 24h0m0s"},
		{"a reference that does not answer", Shard{Count: 2, StartAt: time.Now().Add(time.Hour), ClockRef: closed.URL}, "Shard.ClockRef", "cannot measure the clock offset"},
		{"a reference that is no URL", Shard{Count: 2, ClockRef: "ref:80"}, "Shard.ClockRef", "http://"},
		{"an index out of range", Shard{Index: 2, Count: 2}, "Shard.Index", "runs from 0"},
		{"a tolerance without a start", Shard{Count: 2, StartTolerance: time.Second}, "Shard.StartTolerance", "applies only to a common start"},
		// This host's clock reads an hour behind while the checks run, so
		// that the start, half an hour ago, passes them and is missed.
		{"a start missed beyond the tolerance", Shard{Count: 2, StartAt: time.Now().Add(-30 * time.Minute), Now: hourAgo}, "Shard.StartTolerance", "missed the common start"},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		sh := row.shard
		out, err := Run(context.Background(), shardPlan(dir, &sh))
		var ue *UsageError
		if out != nil || !errors.As(err, &ue) || ue.Field != row.field || !strings.Contains(err.Error(), row.says) {
			t.Errorf("%s: %v, %v; want a usage error naming %s and saying %q", row.why, out, err, row.field, row.says)
		}
		if _, err := os.Stat(filepath.Join(dir, bundle.SettingsFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a bundle was written", row.why)
		}
	}
}
