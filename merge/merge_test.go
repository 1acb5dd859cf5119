package merge_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/clocksync"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/merge"
	"aimeter/shard"
	"aimeter/stats"
	"aimeter/sut"
	"aimeter/verdict"
)

const shards = 4

// serverPlan is an MLPerf Server test of the null SUT.
func serverPlan(dir string, sh *benchmark.Shard) benchmark.Plan {
	return benchmark.Plan{
		SUT:       sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		Settings:  benchmark.Settings{Scenario: "Server", Set: []string{"target_qps=4000", "min_duration=100", "min_query_count=1"}},
		OutputDir: dir, Shard: sh,
	}
}

// gbtPlan is a GB/T arrival mode 2 test (Poisson arrivals) of the null SUT.
func gbtPlan(dir string, sh *benchmark.Shard) benchmark.Plan {
	return benchmark.Plan{
		SUT:       sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		GBT:       &benchmark.GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 3000, Duration: 100 * time.Millisecond}}},
		OutputDir: dir, Shard: sh,
	}
}

// offlinePlan is an MLPerf Offline test of the null SUT.
func offlinePlan(dir string, sh *benchmark.Shard) benchmark.Plan {
	return benchmark.Plan{SUT: sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		Settings:  benchmark.Settings{Scenario: "Offline", Set: []string{"target_qps=20000", "min_duration=100"}},
		OutputDir: dir, Shard: sh}
}

// runs is one test run whole and as shards, in directories of root.
type runs struct {
	whole  string
	shards []string
}

var (
	runsMu    sync.Mutex
	runsCache = map[string]*runs{}
)

// runTest runs plan whole and as 4 shards (in process, one after another)
// once per test binary and name.
func runTest(t *testing.T, name string, plan func(string, *benchmark.Shard) benchmark.Plan) *runs {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if r := runsCache[name]; r != nil {
		return r
	}
	root, err := os.MkdirTemp("", "merge-"+name)
	if err != nil {
		t.Fatal(err)
	}
	r := &runs{whole: filepath.Join(root, "whole")}
	if _, err := benchmark.Run(context.Background(), plan(r.whole, nil)); err != nil {
		t.Fatal(err)
	}
	for i := range shards {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		if _, err := benchmark.Run(context.Background(), plan(dir, &benchmark.Shard{Index: i, Count: shards})); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		r.shards = append(r.shards, dir)
	}
	runsCache[name] = r
	return r
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, r := range runsCache {
		os.RemoveAll(filepath.Dir(r.whole))
	}
	os.Exit(code)
}

type schedKey struct {
	seq, query, index uint64
	sched             int64
}

func schedule(res *loadgen.Result) []schedKey {
	var out []schedKey
	for r := range res.Records() {
		out = append(out, schedKey{r.SeqID, r.QueryID, r.SampleIndex, r.ScheduledNs})
	}
	return out
}

// TestMergeEqualsWhole merges 4 shards of a Server test and of a GB/T mode 2
// test: the merged records' schedule fields are the single host's bit for
// bit; its percentiles are the exact percentiles of the union of the
// shards' records, sorted here; the merged bundle reads back and `aimeter
// report`'s regeneration gives the same derived files; it has no
// shard.json and a merge.json naming every shard and its digest.
func TestMergeEqualsWhole(t *testing.T) {
	for _, row := range []struct {
		why  string
		name string
		plan func(string, *benchmark.Shard) benchmark.Plan
		// same is what of the whole run's schedule the merge must give:
		// "all" its (seq, query, sample, scheduled time), "ids" all but
		// the time (a closed loop schedules a query at its issue, which
		// depends on the answers), "none" (a pass run for its duration
		// issues as many queries as its time allows).
		same string
	}{
		{"an MLPerf Server test: the Poisson schedule split query mod N", "server", serverPlan, "all"},
		{"a GB/T arrival mode 2 test: its metrics over the union", "gbt2", gbtPlan, "all"},
		{"an MLPerf Offline test: the query split in blocks of samples", "offline", offlinePlan, "all"},
		{"an MLPerf SingleStream test run for its duration: each shard issues what its time allows", "singlestream", singleStreamPlan, "none"},
		{"a fixed concurrency of 8, 2 a shard: whole queries move", "concurrency", func(dir string, sh *benchmark.Shard) benchmark.Plan {
			return benchmark.Plan{SUT: sut.Config{Kind: sut.NullAsync, QSLSize: 64},
				Settings:  benchmark.Settings{Concurrency: 8, Set: []string{"min_duration=0", "min_query_count=400"}},
				OutputDir: dir, Shard: sh}
		}, "ids"},
		{"a GB/T mode 0 test run for its duration: each shard's pass ends after its own last query", "gbt0", func(dir string, sh *benchmark.Shard) benchmark.Plan {
			return benchmark.Plan{SUT: sut.Config{Kind: sut.NullAsync, QSLSize: 64},
				GBT:       &benchmark.GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModeContinuous, Duration: 100 * time.Millisecond}}},
				OutputDir: dir, Shard: sh}
		}, "none"},
	} {
		t.Run(row.name, func(t *testing.T) {
			r := runTest(t, row.name, row.plan)
			out := filepath.Join(t.TempDir(), "merged")
			// Given out of order: the merge orders them by index.
			dirs := slices.Clone(r.shards)
			slices.Reverse(dirs)
			if _, err := merge.Write(context.Background(), dirs, out, merge.Options{}); err != nil {
				t.Fatal(err)
			}
			whole, err := derived.Read(r.whole)
			if err != nil {
				t.Fatal(err)
			}
			got, err := derived.Read(out)
			if err != nil {
				t.Fatalf("reading the merged bundle: %v", err)
			}
			if shard.Of(got) != nil {
				t.Fatal("the merged bundle has shard.json")
			}
			gs, ws := schedule(got.Result), schedule(whole.Result)
			if row.same == "ids" {
				for _, k := range [][]schedKey{gs, ws} {
					for i := range k {
						k[i].sched = 0
					}
				}
			}
			if row.same != "none" && !slices.Equal(gs, ws) {
				t.Fatalf("merged schedule: %d records, whole run's %d; not equal", len(gs), len(ws))
			}
			// Each pass ends at the largest of the shards' end_seq.
			for j, p := range got.Result.Passes {
				var end uint64
				for _, dir := range r.shards {
					b, err := bundle.Read(dir)
					if err != nil {
						t.Fatal(err)
					}
					end = max(end, b.Result.Passes[j].EndSeq)
				}
				if p.EndSeq != end {
					t.Errorf("pass %d ends at seq %d, the shards' largest end %d", j, p.EndSeq, end)
				}
			}
			mg := shard.MergeOf(got)
			if mg == nil || mg.Count != shards || len(mg.Shards) != shards || mg.Partial() {
				t.Fatalf("merge.json = %+v", mg)
			}
			for i, s := range mg.Shards {
				want, err := os.ReadFile(filepath.Join(r.shards[i], bundle.ManifestFile))
				if err != nil {
					t.Fatal(err)
				}
				if s.Index != i || s.Dir != r.shards[i] || s.ManifestSHA256 != sha(want) || s.Records == 0 {
					t.Errorf("merge.json shard %d = %+v", i, s)
				}
			}

			// Exact percentiles over the union of the shards' records.
			var lat []int64
			endNs := got.Result.Passes[got.Result.ReportedPass()].EndNs
			for _, dir := range r.shards {
				b, err := bundle.Read(dir)
				if err != nil {
					t.Fatal(err)
				}
				for rec := range b.Result.Records() {
					switch rec.Status {
					case loadgen.StatusError:
					case loadgen.StatusLost:
						lat = append(lat, endNs-rec.ScheduledNs)
					default:
						lat = append(lat, rec.CompletedNs-rec.ScheduledNs)
					}
				}
			}
			slices.Sort(lat)
			s := got.Result.Summary
			if s == nil || s.SampleCount != uint64(len(lat)) {
				t.Fatalf("merged summary %v counts %d samples, the shards hold %d", s != nil, s.SampleCount, len(lat))
			}
			for _, p := range s.Percentiles {
				if want := lat[stats.PercentileRank(len(lat), p.Percentile)]; p.SampleLatency != want {
					t.Errorf("p%v = %d ns, the union's sorted records give %d", p.Percentile*100, p.SampleLatency, want)
				}
			}
			if s.SampleLatencyMin != lat[0] || s.SampleLatencyMax != lat[len(lat)-1] {
				t.Errorf("min/max %d/%d, want %d/%d", s.SampleLatencyMin, s.SampleLatencyMax, lat[0], lat[len(lat)-1])
			}

			// aimeter report: regenerate and compare every derived file.
			again := filepath.Join(t.TempDir(), "again")
			names, err := derived.Regenerate(again, got)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(names, bundle.ResultFile) || !slices.Contains(names, bundle.ReportFile) {
				t.Fatalf("regenerated %v", names)
			}
			if row.name == "gbt2" && !slices.Contains(names, bundle.GBTResultFile) {
				t.Fatalf("regenerated %v: no %s", names, bundle.GBTResultFile)
			}
			for _, name := range names {
				a, err1 := os.ReadFile(filepath.Join(out, name))
				b, err2 := os.ReadFile(filepath.Join(again, name))
				if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
					t.Errorf("%s: merged and regenerated differ (%v, %v)", name, err1, err2)
				}
			}
			v, err := derived.Of(got).Verdict()
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind == verdict.None {
				t.Errorf("merged verdict %+v: a merge is the whole test and has a verdict", v)
			}
		})
	}
}

func sha(b []byte) string {
	h := sha256Sum(b)
	return h
}

// edited writes a copy of the bundle in dir, changed by edit, into a new
// directory and returns it.
func edited(t *testing.T, dir string, edit func(b *bundle.Bundle)) string {
	t.Helper()
	b, err := derived.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	out := filepath.Join(t.TempDir(), "edited")
	if err := derived.Write(out, b); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMergeRefuses gives the merge inputs that are not one test's shards:
// each is one error naming the shard, and nothing is written.
func TestMergeRefuses(t *testing.T) {
	r := runTest(t, "server", serverPlan)
	s := r.shards
	editShard := func(i int, f func(rec *shard.Record)) string {
		return edited(t, s[i], func(b *bundle.Bundle) {
			rec := *shard.Of(b)
			f(&rec)
			shard.Set(b, &rec)
		})
	}
	otherSeed := edited(t, s[3], func(b *bundle.Bundle) { b.Result.Effective.ScheduleRNGSeed++ })
	otherRate := edited(t, s[2], func(b *bundle.Bundle) {
		b.Result.Effective.TargetQPS *= 2
		b.Result.Requested.ServerTargetQPS *= 2
	})
	otherVersion := edited(t, s[1], func(b *bundle.Bundle) { b.Version = "0.0.1-other" })
	otherDigest := editShard(3, func(rec *shard.Record) { rec.ScheduleSHA256 = strings.Repeat("0", 64) })
	otherCount := editShard(3, func(rec *shard.Record) { rec.Count = 5 })
	mergedDir := filepath.Join(t.TempDir(), "merged")
	if _, err := merge.Write(context.Background(), s, mergedDir, merge.Options{}); err != nil {
		t.Fatal(err)
	}
	badRecord := edited(t, s[2], func(b *bundle.Bundle) {
		recs := slices.Collect(b.Result.Records())
		recs[5].IssuedNs = recs[5].ScheduledNs - 1
		b.Result.AttachRecords(recs)
	})
	interrupted := edited(t, s[1], func(b *bundle.Bundle) { b.Result.Interrupted = "interrupted by SIGTERM" })
	two, err := bundle.Read(s[2])
	if err != nil {
		t.Fatal(err)
	}
	overlapping := edited(t, s[3], func(b *bundle.Bundle) { b.Result.AttachRecords(slices.Collect(two.Result.Records())) })
	farClock := editShard(2, func(rec *shard.Record) {
		rec.Clock = &clocksync.Measurement{URL: "http://ref/api/v1/time", Offset: 300 * time.Millisecond, Uncertainty: time.Millisecond}
	})
	for _, row := range []struct {
		why   string
		dirs  []string
		opts  merge.Options
		index int    // the shard the error names (−1: a directory alone)
		dir   string // the directory it names
		says  string
		out   string // the output directory; "" for a new one
	}{
		{"a shard missing", []string{s[0], s[1], s[3]}, merge.Options{}, 2, "", "missing [2]", ""},
		{"an index given twice", []string{s[0], s[1], s[1], s[2], s[3]}, merge.Options{}, 1, s[1], "given twice", ""},
		{"different seeds", []string{s[0], s[1], s[2], otherSeed}, merge.Options{}, 3, otherSeed, "seeds differ", ""},
		{"another test's settings (rate)", []string{s[0], s[1], otherRate, s[3]}, merge.Options{}, 2, otherRate, "settings differ", ""},
		{"another aimeter version", []string{s[0], otherVersion, s[2], s[3]}, merge.Options{}, 1, otherVersion, "0.0.1-other", ""},
		{"the merging aimeter's version differs", s, merge.Options{Version: "9.9.9"}, 0, s[0], "merged by aimeter 9.9.9", ""},
		{"another schedule digest", []string{s[0], s[1], s[2], otherDigest}, merge.Options{}, 3, otherDigest, "schedule digest", ""},
		{"another shard count", []string{s[0], s[1], s[2], otherCount}, merge.Options{}, 3, otherCount, "one of 5 shards", ""},
		{"a whole test's bundle among the shards", []string{s[0], s[1], r.whole, s[3]}, merge.Options{}, -1, r.whole, "not a shard", ""},
		{"a clock beyond the default bound (the start tolerance, 100ms)", []string{s[0], s[1], farClock, s[3]}, merge.Options{}, 2, farClock, "exceeds the bound 100ms", ""},
		{"a clock beyond a bound given", []string{s[0], s[1], farClock, s[3]}, merge.Options{MaxClockOffset: 200 * time.Millisecond}, 2, farClock, "exceeds the bound 200ms", ""},
		{"a merged bundle among the shards", []string{s[0], s[1], s[2], mergedDir}, merge.Options{}, -1, mergedDir, "a merged bundle, not a shard", ""},
		{"the output directory among the shards", s, merge.Options{}, -1, s[3], "overwrite a shard", s[3]},
		{"a shard interrupted mid-run (SIGTERM: it wrote its bundle)", []string{s[0], interrupted, s[2], s[3]}, merge.Options{}, 1, interrupted, "interrupted by SIGTERM before it issued all of its schedule", ""},
		{"a directory that holds no bundle", []string{s[0], t.TempDir()}, merge.Options{}, -1, "", "manifest", ""},
		{"an impossible record (the shard's records are checked as they stream)", []string{s[0], s[1], badRecord, s[3]}, merge.Options{}, 2, badRecord, "issued_ns", ""},
		{"two shards holding the same records (found while they are merged)", []string{s[0], s[1], s[2], overlapping}, merge.Options{}, 3, overlapping, "in another shard's records too", ""},
	} {
		out := filepath.Join(t.TempDir(), "merged")
		if row.out != "" {
			out = row.out
		}
		b, err := merge.Write(context.Background(), row.dirs, out, row.opts)
		var se *merge.ShardError
		if b != nil || !errors.As(err, &se) || se.Index != row.index || (row.dir != "" && se.Dir != row.dir) || !strings.Contains(err.Error(), row.says) {
			t.Errorf("%s: %v; want a *ShardError naming shard %d (%s) and saying %q", row.why, err, row.index, row.dir, row.says)
			continue
		}
		if row.index >= 0 && !strings.Contains(err.Error(), fmt.Sprintf("shard %d", row.index)) {
			t.Errorf("%s: %v does not name shard %d", row.why, err, row.index)
		}
		if _, err := os.Stat(out); row.out == "" && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: something was written", row.why)
		}
		// Check, which builds nothing, refuses them alike.
		if row.out == "" {
			if cerr := merge.Check(context.Background(), row.dirs, row.opts); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("%s: Check says %v; Write said %v", row.why, cerr, err)
			}
		}
	}
	if err := merge.Check(context.Background(), s, merge.Options{}); err != nil {
		t.Errorf("Check of the test's shards: %v", err)
	}
	// A clock within a bound given is merged.
	if _, err := merge.Bundles(context.Background(), []string{s[0], s[1], farClock, s[3]}, merge.Options{MaxClockOffset: time.Second}); err != nil {
		t.Errorf("a clock within --max-clock-offset 1s: %v", err)
	}
}

// TestMergePartial merges 3 of 4 shards with AllowPartial: the result is
// INVALID, its first reason naming the missing shard, the same when
// `aimeter report` reads it back.
func TestMergePartial(t *testing.T) {
	r := runTest(t, "server", serverPlan)
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := merge.Write(context.Background(), []string{r.shards[0], r.shards[2], r.shards[3]}, out, merge.Options{AllowPartial: true}); err != nil {
		t.Fatal(err)
	}
	b, err := derived.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if mg := shard.MergeOf(b); !mg.Partial() || !slices.Equal(mg.Missing, []int{1}) {
		t.Fatalf("merge.json = %+v, want shard 1 missing", mg)
	}
	v, err := derived.Of(b).Verdict()
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Word() != "INVALID" || len(v.Reasons) == 0 || !strings.Contains(v.Reasons[0], "shard(s) [1] missing") {
		t.Fatalf("verdict %+v: want INVALID naming shard 1", v)
	}
	res, err := os.ReadFile(filepath.Join(out, bundle.ResultFile))
	if err != nil || !strings.Contains(string(res), "shard(s) [1] missing") {
		t.Fatalf("result.json does not name the missing shard (%v)", err)
	}
}

func sha256Sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestMergeCommonStart runs 4 shards at once with a common start and a
// measured clock (a reference 1 ms ahead, ± 1 ms), and merges them: each
// shard's records are moved by its start lateness less the smallest, so
// that every latency stays the shard's own while the merged pass starts
// when the first shard began; merge.json records the moves and the
// alignment's uncertainty (the two largest clock uncertainties).
func TestMergeCommonStart(t *testing.T) {
	measured := func(context.Context, string) (clocksync.Measurement, error) {
		return clocksync.Measurement{URL: "http://ref" + clocksync.Path, Offset: time.Millisecond, Uncertainty: time.Millisecond, Exchanges: 8}, nil
	}
	root := t.TempDir()
	start := time.Now().Add(time.Millisecond + 1500*time.Millisecond)
	dirs := make([]string, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		dirs[i] = filepath.Join(root, fmt.Sprintf("shard-%d", i))
		wg.Go(func() {
			_, errs[i] = benchmark.Run(context.Background(), serverPlan(dirs[i], &benchmark.Shard{Index: i, Count: shards,
				StartAt: start, StartTolerance: 2 * time.Second, ClockRef: "http://ref", Measure: measured}))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	b, err := merge.Bundles(context.Background(), dirs, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mg := shard.MergeOf(b)
	if mg.AlignmentUncertaintyNs != int64(2*time.Millisecond) || mg.MaxClockOffsetNs != int64(2*time.Second) || !mg.StartAt.Equal(start) {
		t.Fatalf("merge.json = %+v", mg)
	}
	minLate := mg.Shards[0].StartLateNs
	for _, s := range mg.Shards {
		minLate = min(minLate, s.StartLateNs)
	}
	if !slices.ContainsFunc(mg.Shards, func(s shard.MergedShard) bool { return s.ShiftNs > 0 }) {
		t.Fatalf("no shard was moved: %+v", mg.Shards)
	}
	merged := map[uint64]loadgen.Record{}
	for r := range b.Result.Records() {
		merged[r.SeqID] = r
	}
	for i, s := range mg.Shards {
		if s.ShiftNs != s.StartLateNs-minLate || !s.ClockMeasured || s.ClockOffsetNs != int64(time.Millisecond) {
			t.Errorf("shard %d: %+v, want a shift of %d", i, s, s.StartLateNs-minLate)
		}
		sb, err := bundle.Read(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		for r := range sb.Result.Records() {
			m := merged[r.SeqID]
			if m.ScheduledNs != r.ScheduledNs+s.ShiftNs || m.IssuedNs != r.IssuedNs+s.ShiftNs || m.CompletedNs-m.ScheduledNs != r.CompletedNs-r.ScheduledNs {
				t.Fatalf("shard %d seq %d: merged %+v, the shard's %+v moved by %d", i, r.SeqID, m, r, s.ShiftNs)
			}
		}
	}
	if p := b.Result.Passes[b.Result.ReportedPass()]; p.StartUnixNs != start.UnixNano()+minLate {
		t.Errorf("the merged pass starts at %d, want the start %d + the least lateness %d", p.StartUnixNs, start.UnixNano(), minLate)
	}
}

// singleStreamPlan is an MLPerf SingleStream test of the null SUT: one
// query at a time, whole queries moving to the shards.
func singleStreamPlan(dir string, sh *benchmark.Shard) benchmark.Plan {
	return benchmark.Plan{SUT: sut.Config{Kind: sut.NullAsync, QSLSize: 64},
		Settings:  benchmark.Settings{Scenario: "SingleStream", Set: []string{"min_duration=100", "min_query_count=2000"}},
		OutputDir: dir, Shard: sh}
}

// TestMergeSummaryEqualsInMemory checks the summary the merge reads from
// its streams (loadgen.SummarizePassScan: the shards' records files read
// in passes, never held) against LoadGen's in-memory summary of the union
// (every latency held and selected: SummarizeStoredPass), bit for bit, in
// Server, Offline, SingleStream and a GB/T mode 2 test; and each shard's
// figures in merge.json against the summary bundle.Read computes of it.
func TestMergeSummaryEqualsInMemory(t *testing.T) {
	for _, row := range []struct {
		why  string
		name string
		plan func(string, *benchmark.Shard) benchmark.Plan
	}{
		{"Server: over-latency counts and the Server early stopping", "server", serverPlan},
		{"Offline: one query, split in blocks", "offline", offlinePlan},
		{"SingleStream: early stopping reads ranks of the sorted latencies", "singlestream", singleStreamPlan},
		{"GB/T arrival mode 2", "gbt2", gbtPlan},
	} {
		t.Run(row.name, func(t *testing.T) {
			r := runTest(t, row.name, row.plan)
			b, err := merge.Bundles(context.Background(), r.shards, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := b.Result
			i := res.ReportedPass()
			want, err := res.SummarizeStoredPass(i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Summary, want) {
				t.Errorf("%s: streamed summary\n%+v\nin memory\n%+v", row.why, res.Summary, want)
			}
			if res.Summary.SampleCount == 0 {
				t.Fatalf("%s: no samples", row.why)
			}
			for k, s := range shard.MergeOf(b).Shards {
				sb, err := derived.Read(r.shards[k])
				if err != nil {
					t.Fatal(err)
				}
				ss := sb.Result.Summary
				p50, p99 := ss.Percentiles[0].SampleLatency, ss.Percentiles[4].SampleLatency
				if s.SamplesPerSecond != ss.CompletedSamplesPerSecond() || s.LatencyP50Ns != p50 || s.LatencyP99Ns != p99 ||
					s.Records != uint64(sb.Result.RecordCount()) {
					t.Errorf("%s: shard %d in merge.json %+v; read whole: %v samples/s, p50 %d, p99 %d, %d records",
						row.why, k, s, ss.CompletedSamplesPerSecond(), p50, p99, sb.Result.RecordCount())
				}
			}
		})
	}
}

// TestMergeShardWithSampleData merges a shard that has sample data (a
// samples.parquet, as a network SUT's shards have: read whole) with three
// that have records alone (streamed from their records files): the union
// carries the one shard's sample data on its records and nobody else's,
// and its summary is the in-memory one.
func TestMergeShardWithSampleData(t *testing.T) {
	r := runTest(t, "server", serverPlan)
	withData := edited(t, r.shards[1], func(b *bundle.Bundle) {
		recs := slices.Collect(b.Result.Records())
		for i := range recs {
			recs[i].RequestBytes, recs[i].ResponseBytes = 100+int64(i), 7
		}
		b.Result.AttachRecords(recs)
	})
	if _, err := os.Stat(filepath.Join(withData, bundle.SamplesFile)); err != nil {
		t.Fatalf("the edited shard has no %s: %v", bundle.SamplesFile, err)
	}
	dirs := []string{r.shards[0], withData, r.shards[2], r.shards[3]}
	b, err := merge.Write(context.Background(), dirs, filepath.Join(t.TempDir(), "merged"), merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := bundle.Read(withData)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]int64{}
	for rec := range one.Result.Records() {
		want[rec.SeqID] = rec.RequestBytes
	}
	n := 0
	for rec := range b.Result.Records() {
		if got := rec.RequestBytes; got != want[rec.SeqID] || (got != 0) != (rec.ResponseBytes == 7) {
			t.Fatalf("seq %d: request bytes %d, response bytes %d; the shard with sample data says %d", rec.SeqID, got, rec.ResponseBytes, want[rec.SeqID])
		}
		if rec.RequestBytes != 0 {
			n++
		}
	}
	if n != len(want) || n == 0 {
		t.Errorf("%d merged records carry sample data, the shard has %d", n, len(want))
	}
	res := b.Result
	if s, err := res.SummarizeStoredPass(res.ReportedPass()); err != nil || !reflect.DeepEqual(s, res.Summary) {
		t.Errorf("the streamed summary differs from the in-memory one (%v)", err)
	}
}

// TestMergeNetworkStreamedEqualsInMemory merges 4 shards of a network
// SUT's kind (sample data on their records, token times on most, as an
// OpenAI-style SUT's: samples.parquet and tokens.parquet, streamed from
// the shards' files and written straight into the merged bundle; failures
// of a kind of each shard's own and of one they share, whose error indexes
// the merge maps onto the merged error table) and checks that every file
// of the merged bundle but its records file, whose row groups the stream
// cuts its own way, is byte for byte the file of the
// merge built in memory (Bundles, then derived.Write), and that the
// merged bundle reads back with the same records and token times.
func TestMergeNetworkStreamedEqualsInMemory(t *testing.T) {
	r := runTest(t, "server", serverPlan)
	dirs := make([]string, len(r.shards))
	for k, dir := range r.shards {
		dirs[k] = edited(t, dir, func(b *bundle.Bundle) {
			recs := slices.Collect(b.Result.Records())
			var traces []loadgen.TokenTrace
			// Two kinds of failure: one of this shard's own, one every
			// shard has (the merge joins their error tables).
			b.Result.Errors = []loadgen.ErrorInfo{
				{Category: "http_5xx", Code: 500 + k, Message: fmt.Sprintf("shard %d's own", k)},
				{Category: "http_4xx", Code: 429, Message: "too many requests"},
			}
			for i := range recs {
				rec := &recs[i]
				rec.RequestBytes, rec.ResponseBytes = 100+int64(rec.SeqID%97), 7+int64(k)
				if rec.Status == loadgen.StatusOK && rec.SeqID%11 == 0 {
					rec.Status, rec.Error = loadgen.StatusError, 1+uint32(rec.SeqID/4%2)
					b.Result.Errors[rec.Error-1].Count++
					b.Result.FailedSamples++
				}
				if rec.Status == loadgen.StatusOK && rec.SeqID%5 != 0 {
					span := rec.CompletedNs - rec.IssuedNs
					traces = append(traces, loadgen.TokenTrace{SeqID: rec.SeqID,
						TimesNs: []int64{rec.IssuedNs + span/3, rec.IssuedNs + span/2 + int64(rec.SeqID%7), rec.CompletedNs}})
				}
			}
			b.Result.AttachRecords(recs)
			b.Result.AttachTokenTimes(traces)
		})
		for _, name := range []string{bundle.SamplesFile, bundle.TokensFile} {
			if _, err := os.Stat(filepath.Join(dirs[k], name)); err != nil {
				t.Fatalf("shard %d has no %s: %v", k, name, err)
			}
		}
	}
	streamed := filepath.Join(t.TempDir(), "streamed")
	got, err := merge.Write(context.Background(), dirs, streamed, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := merge.Bundles(context.Background(), dirs, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inMemory := filepath.Join(t.TempDir(), "in-memory")
	if err := derived.Write(inMemory, mem); err != nil {
		t.Fatal(err)
	}
	entries := func(m *bundle.Manifest) map[string]string {
		out := map[string]string{}
		for _, e := range m.Files {
			out[e.Name] = e.SHA256
		}
		return out
	}
	a, b := entries(got.Manifest), entries(mem.Manifest)
	for _, name := range []string{bundle.SamplesFile, bundle.TokensFile, bundle.ResultFile, bundle.ReportFile} {
		if _, ok := a[name]; !ok {
			t.Errorf("the streamed merge has no %s", name)
		}
	}
	for name, sum := range b {
		if name != bundle.RecordsFile && a[name] != sum {
			t.Errorf("%s of the streamed merge differs from the in-memory merge's", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("the streamed merge has %d files, the in-memory one %d", len(a), len(b))
	}
	back, err := derived.Read(streamed)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Collect(back.Result.Records()), slices.Collect(mem.Result.Records())) {
		t.Error("the streamed merge reads back other records than the in-memory merge's")
	}
	if !slices.Equal(slices.Collect(got.Result.Records()), slices.Collect(mem.Result.Records())) {
		t.Error("the bundle Write returns yields other records than the in-memory merge's")
	}
	// Each merged record carries its shard's sample data, its error
	// index naming the shard's kind of failure in the merged table.
	type data struct {
		req, resp int64
		code      int
	}
	want := map[uint64]data{}
	for _, dir := range dirs {
		sb, err := bundle.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for rec := range sb.Result.Records() {
			d := data{rec.RequestBytes, rec.ResponseBytes, 0}
			if rec.Error != 0 {
				d.code = sb.Result.Errors[rec.Error-1].Code
			}
			want[rec.SeqID] = d
		}
	}
	for rec := range got.Result.Records() {
		d := data{rec.RequestBytes, rec.ResponseBytes, 0}
		if rec.Error != 0 {
			d.code = got.Result.Errors[rec.Error-1].Code
		}
		if w, ok := want[rec.SeqID]; !ok || d != w {
			t.Fatalf("seq %d: merged sample data %+v, the shard's %+v", rec.SeqID, d, w)
		}
	}
	if len(got.Result.Errors) != shards+1 || got.Result.FailedSamples == 0 {
		t.Errorf("the merged error table has %d kinds (want %d) and %d failures", len(got.Result.Errors), shards+1, got.Result.FailedSamples)
	}
	n := 0
	for seq, times := range got.Result.TokenTimes() {
		n++
		if seq%5 == 0 || len(times) != 3 {
			t.Fatalf("seq %d: token times %v", seq, times)
		}
	}
	if n == 0 || got.Result.RecordSourceErr() != nil {
		t.Errorf("%d samples with token times; RecordSourceErr %v", n, got.Result.RecordSourceErr())
	}
}
