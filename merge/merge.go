// Package merge joins the bundles of a test's shards (docs/sharding.md)
// into one ordinary bundle, the whole test's: `aimeter merge`.
//
// Every shard ran the whole test's plan, generated the whole schedule and
// issued its part, keeping the whole test's sequence and query ids, so the
// merge is a union: the records of every shard, in sequence-id order (the
// single host's issue order), with LoadGen's summary computed again over
// the union (loadgen.Result.SummarizeStoredPass), so that percentiles,
// early stopping and validity are exactly those of the whole test's
// records, and every derived file (the MLPerf logs, result.json, the GB/T
// result, report.html) is derived from the union as from any run: the
// merged bundle reads back and regenerates with `aimeter report` like any
// other. It holds no shard.json; its merge.json (shard.Merge) names each
// shard, its bundle's digest, its clock, and what it measured alone.
//
// Times. A shard's record times are nanoseconds from the start of issuing
// of its pass, on its own clock: latencies (completion − schedule, both on
// one host) are exact whatever the clocks. Shards with a common start
// (--start-at) began issuing at the start on the reference clock plus
// their recorded lateness (start_late_ns; the start was waited for at
// start − offset on the host's clock, so the offset is already in it), so
// the merge moves every time of a shard's started pass by its lateness
// less the smallest of the shards' lateness: the merged pass starts when
// the first shard began. Its error is the shards' clock uncertainties
// (merge.json's alignment_uncertainty_ns); the merge refuses a shard whose
// |offset| + uncertainty exceeds Options.MaxClockOffset. Shards without a
// common start are each taken from their own start (no move).
//
// Memory. A shard is read as its head (bundle.ReadHead: everything but
// its per-sample files), and its records are streamed a row group at a
// time from its records.parquet (Bundle.ScanRecords) into a k-way merge by
// sequence id, their sample data (a network SUT's request and response
// bytes, nodes, errors) joined from its samples.parquet as they go
// (Bundle.ScanWholeRecords), and its token times are streamed from its
// tokens.parquet into a k-way merge of their own (Bundle.ScanTokens): no
// shard's records, sample data or token times are ever held. The summaries, the
// union's and each shard's (merge.json's figures), are read from the
// records in passes (loadgen.SummarizePassScan), exactly as LoadGen's
// in-memory summary and without its per-sample latency slices. Write
// writes the union's records straight into the output directory's
// records.parquet as they are merged (a bundle.RecordStream), their
// sample data into samples.parquet and the token times into
// tokens.parquet beside it (RecordStream.WriteSamples, WriteTokens), and
// the merged Result reads them back from those files, a row group at a
// time, each time they are wanted (loadgen.Result.AttachSource of a
// bundle.RecordFile with its samples attached, AttachTokenSource of a
// bundle.TokenFile): the derived files are computed from them without
// holding the records (the report keeps at most 2^20 exact latencies, the
// send lateness of a larger Server pass is read in passes). What Write
// holds is then fixed costs and bounded buffers: about 100 MiB of heap
// whatever the records, 140 to 160 MiB of RSS for 4 to 40 M records, and
// for a network SUT's shards (sample data, 8 token times a record) 150 to
// 220 MiB of heap at its peak, 200 to 280 MiB of RSS, for 4 or 12 M records
// (scripts/bench-merge.sh, SCENARIO=Network; TestMergeMemoryFlat bounds
// the heap's growth of both). Still linear in the records: a shard with
// stage times (stages.parquet: a SUT that reports them, such as
// Server-Timing's), or of a format before version 3, is read whole
// (bundle.Read), and then the union is one loadgen.RecordTable (about 8 to
// 104 bytes a record) with its stage times and token times held, as are
// Bundles' (no output directory; Check builds none); the
// GB/T files of a GB/T test collect the records (gbt.Evaluate takes a
// []loadgen.Record: 96 bytes a record, and its time breakdown 17 more,
// while they are written); the
// steady-state analysis of a token-latency run reads its pass into a
// table (at most metrics.MaxSteadyRecords records); accuracy-log entries
// are held (a performance run logs a sampled few).
package merge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/shard"
)

// Options controls Bundles.
type Options struct {
	// MaxClockOffset bounds each shard's clock: a shard whose measured
	// |offset| + uncertainty against the reference exceeds it is refused.
	// Zero means the shards' start tolerance (shard.json's
	// start_tolerance_ns, the largest), or loadgen.DefaultStartTolerance
	// (100 ms) when they recorded none.
	MaxClockOffset time.Duration
	// AllowPartial merges the shards given even when some are missing or
	// were interrupted mid-run; the result is then INVALID, its verdict
	// naming the missing or interrupted shards. The zero value refuses a
	// missing shard (ErrMissing) and an interrupted one (ErrInterrupted).
	AllowPartial bool
	// Version is the aimeter version that merges, checked against the
	// shards' (they must all have been written by one version); empty
	// accepts any version as long as the shards agree.
	Version string
}

// ShardError is a merge refused because of one input: its directory and,
// when it was read, its shard index (−1 when unknown).
type ShardError struct {
	Dir   string
	Index int
	Err   error
}

func (e *ShardError) Error() string {
	if e.Index < 0 {
		if msg := e.Err.Error(); strings.HasPrefix(msg, e.Dir+":") {
			return msg // the bundle reader names the directory already
		}
		return fmt.Sprintf("%s: %v", e.Dir, e.Err)
	}
	return fmt.Sprintf("shard %d (%s): %v", e.Index, e.Dir, e.Err)
}

// Unwrap returns the cause.
func (e *ShardError) Unwrap() error { return e.Err }

// ErrMissing is the cause of a merge refused because a shard is missing.
var ErrMissing = errors.New("shard missing")

// ErrInterrupted is the cause of a merge refused because a shard was
// interrupted mid-run (its bundle records why); Options.AllowPartial
// merges it, and the result is INVALID, naming the shard.
var ErrInterrupted = errors.New("shard interrupted")

// input is one shard read.
type input struct {
	dir string
	// b is the shard's bundle: its head (bundle.ReadHead: the records,
	// sample data and token times stay on disk, streamed by records and
	// tokenTimes), or, when whole, all of it (bundle.Read: a shard with
	// stage times, or of a format before records.parquet's tables).
	b        *bundle.Bundle
	whole    bool
	samples  bool // a head with samples.parquet: records joins it (wholeRecords)
	tokens   bool // a head with tokens.parquet
	rec      *shard.Record
	manifest string // hex SHA-256 of manifest.json
	shift    int64  // ns added to the started pass's times
	scanErr  error  // the error that ended records' stream, if any
	counted  int    // a head's records, once read (-1 before)
	checked  bool   // a head's records were read whole and checked
}

// scan is the head's ScanRecords, checking the records the first time
// they are read whole.
func (in *input) scan(fn func(*loadgen.RecordColumns) error) error {
	err := in.b.ScanRecords(bundle.ScanOptions{Unchecked: in.checked}, fn)
	if err == nil {
		in.checked = true
	}
	return err
}

// count is the number of the shard's records: for a head, counted as
// summarize read them, or by a reading of its own.
func (in *input) count() (int, error) {
	if in.whole {
		return in.b.Result.RecordCount(), nil
	}
	if in.counted < 0 {
		n := 0
		if err := in.scan(func(c *loadgen.RecordColumns) error { n += c.Len(); return nil }); err != nil {
			return 0, &ShardError{Dir: in.dir, Index: in.rec.Index, Err: err}
		}
		in.counted = n
	}
	return in.counted, nil
}

// records pulls the shard's records in its file's order: from the bundle
// read whole, or a row group at a time from its records.parquet (the
// records of a row group are read in place; only the row groups are
// pulled from the decoding). An error reading them ends the stream and is
// kept in in.scanErr. stop ends the stream early.
func (in *input) records() (next func() (loadgen.Record, bool), stop func()) {
	if in.whole {
		return iter.Pull(in.b.Result.Records())
	}
	if in.samples {
		return in.wholeRecords()
	}
	nextBlock, stop := iter.Pull(func(yield func(*loadgen.RecordColumns) bool) {
		err := in.scan(func(c *loadgen.RecordColumns) error {
			if !yield(c) {
				return errStopped
			}
			return nil
		})
		if err != nil && err != errStopped {
			in.scanErr = err
		}
	})
	var c *loadgen.RecordColumns
	i := 0
	return func() (loadgen.Record, bool) {
		for c == nil || i >= c.Len() {
			var ok bool
			if c, ok = nextBlock(); !ok {
				return loadgen.Record{}, false
			}
			i = 0
		}
		i++
		return c.Record(i - 1), true
	}, stop
}

// wholeRecords is records for a head with sample data: its records
// whole, their sample data joined from its samples.parquet as they
// stream (bundle.Bundle.ScanWholeRecords, a row group at a time).
func (in *input) wholeRecords() (next func() (loadgen.Record, bool), stop func()) {
	nextBlock, stop := iter.Pull(func(yield func([]loadgen.Record) bool) {
		err := in.b.ScanWholeRecords(bundle.ScanOptions{Unchecked: in.checked}, func(recs []loadgen.Record) error {
			if !yield(recs) {
				return errStopped
			}
			return nil
		})
		switch {
		case err == nil:
			in.checked = true
		case !errors.Is(err, errStopped):
			in.scanErr = err
		}
	})
	var blk []loadgen.Record
	i := 0
	return func() (loadgen.Record, bool) {
		for i >= len(blk) {
			var ok bool
			if blk, ok = nextBlock(); !ok {
				return loadgen.Record{}, false
			}
			i = 0
		}
		i++
		return blk[i-1], true
	}, stop
}

// tokenTimes yields the shard's token times in sequence order: from the
// bundle read whole, or for a head streamed from its tokens.parquet
// (bundle.ScanTokens: the times are a slice reused for the next sample).
// An error reading them ends the stream and is kept in in.scanErr.
func (in *input) tokenTimes() iter.Seq2[uint64, []int64] {
	if in.whole {
		return in.b.Result.TokenTimes()
	}
	return func(yield func(uint64, []int64) bool) {
		if !in.tokens {
			return
		}
		err := in.b.ScanTokens(func(seq uint64, times []int64) error {
			if !yield(seq, times) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) && in.scanErr == nil {
			in.scanErr = err
		}
	}
}

// hasTokenTimes reports whether the shard has token times.
func (in *input) hasTokenTimes() bool {
	if in.whole {
		return in.b.Result.HasTokenTimes()
	}
	return in.tokens
}

// errStopped ends a stream of records its reader left.
var errStopped = errors.New("stopped")

// summarize is the summary of the shard's reported pass (nil for none):
// the one bundle.Read computed, or for a head one read from the records
// file in passes (loadgen.SummarizePassScan).
func (in *input) summarize() error {
	res := in.b.Result
	i := res.ReportedPass()
	if in.whole || i < 0 {
		return nil
	}
	readings := 0
	s, err := loadgen.SummarizePassScan(res.SUTName, res.Effective, res.Passes[i], func(fn func(*loadgen.RecordColumns) error) error {
		readings++
		n := 0
		err := in.scan(func(c *loadgen.RecordColumns) error { n += c.Len(); return fn(c) })
		if readings == 1 && err == nil {
			in.counted = n
		}
		return err
	})
	if err != nil {
		return &ShardError{Dir: in.dir, Index: in.rec.Index, Err: err}
	}
	res.Summary = s
	return nil
}

// Bundles reads the shards' bundles in dirs and returns their merge, an
// ordinary bundle without a directory (write it with derived.Write, or
// use Write). It refuses, with a *ShardError naming the shard, a bundle
// that is no shard or of another test (settings, seeds, version, schedule
// digest, shard count or common start differ from the first's), an index
// given twice, a shard missing (unless opts.AllowPartial), or a clock
// beyond opts.MaxClockOffset.
func Bundles(ctx context.Context, dirs []string, opts Options) (*bundle.Bundle, error) {
	return bundles(ctx, dirs, opts, sink{})
}

// Check makes every check Bundles makes of the shards in dirs (that they
// are parts of one test, their clocks, and, reading their records in a
// k-way merge, that no two hold one sequence id) and returns the error
// Bundles would return, without building the merge: it holds none of the
// records of the shards it streams (a shard with stage times is read
// whole, as Bundles reads it). For a service that
// checks an upload against the shards it holds.
func Check(ctx context.Context, dirs []string, opts Options) error {
	_, err := bundles(ctx, dirs, opts, sink{checkOnly: true})
	return err
}

// sink is where bundles puts the union's records.
type sink struct {
	// dir, when not empty, is the output directory: the union's records
	// are written straight into its records file while they are merged,
	// and the merged Result reads them from it (see union).
	dir string
	// checkOnly merges the records to check them and keeps none: bundles
	// then returns no bundle.
	checkOnly bool
}

// bundles is Bundles, the union's records put as to says.
func bundles(ctx context.Context, dirs []string, opts Options, to sink) (*bundle.Bundle, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no shard directories given")
	}
	ins := make([]*input, 0, len(dirs))
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in, err := read(dir)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
	}
	slices.SortStableFunc(ins, func(a, b *input) int { return cmp.Compare(a.rec.Index, b.rec.Index) })
	if err := check(ins, opts); err != nil {
		return nil, err
	}
	for _, in := range ins {
		if err := in.summarize(); err != nil {
			return nil, err
		}
	}
	m, missing, err := plan(ins, opts)
	if err != nil {
		return nil, err
	}
	m.Missing = missing
	return union(ctx, ins, m, to)
}

// Write merges the shards in dirs (Bundles) and writes the merged bundle,
// with every derived file, into outDir, which must not be one of dirs.
// The union's records go straight into outDir's records.parquet as they
// are merged, and the bundle returned reads them from there whenever they
// are wanted (see the package's doc: Memory): the file must stay while the
// bundle is used. A merge that fails once it began writing removes what
// it wrote.
func Write(ctx context.Context, dirs []string, outDir string, opts Options) (*bundle.Bundle, error) {
	out, _ := filepath.Abs(outDir)
	for _, dir := range dirs {
		if d, _ := filepath.Abs(dir); d == out {
			return nil, &ShardError{Dir: dir, Index: -1, Err: errors.New("is also the output directory: the merge would overwrite a shard")}
		}
	}
	b, err := bundles(ctx, dirs, opts, sink{dir: outDir})
	if err != nil {
		return nil, err
	}
	if err := derived.Write(outDir, b); err != nil {
		return nil, err
	}
	if err := b.Result.RecordSourceErr(); err != nil {
		// The derived files met an error reading the records back.
		return nil, fmt.Errorf("merge: reading the merged records: %w", err)
	}
	return b, nil
}

func read(dir string) (*input, error) {
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return nil, &ShardError{Dir: dir, Index: -1, Err: err}
	}
	if _, ok := m.Entry(bundle.TrainingRunFile); ok {
		return nil, &ShardError{Dir: dir, Index: -1, Err: errors.New("not a run's bundle (a training run's?): nothing to merge")}
	}
	var b *bundle.Bundle
	whole := m.FormatVersion < 3
	if !whole {
		if b, err = bundle.ReadHead(dir, bundle.ReadOptions{Parts: derived.Parts()}); err == nil && slices.Contains(b.HeadLeaves(), bundle.StagesFile) {
			whole = true
		}
	}
	if whole {
		b, err = derived.Read(dir)
	}
	if err != nil {
		return nil, &ShardError{Dir: dir, Index: -1, Err: err}
	}
	rec := shard.Of(b)
	if rec == nil {
		if shard.MergeOf(b) != nil {
			return nil, &ShardError{Dir: dir, Index: -1, Err: errors.New("a merged bundle, not a shard: merge the shards themselves")}
		}
		return nil, &ShardError{Dir: dir, Index: -1, Err: fmt.Errorf("not a shard: the bundle has no %s (a whole test's bundle, or one of a run without --shard)", shard.File)}
	}
	sum, err := bundle.Digest(dir)
	if err != nil {
		return nil, &ShardError{Dir: dir, Index: rec.Index, Err: err}
	}
	in := &input{dir: dir, b: b, whole: whole, rec: rec, manifest: sum, counted: -1}
	if !whole {
		in.samples = slices.Contains(b.HeadLeaves(), bundle.SamplesFile)
		in.tokens = slices.Contains(b.HeadLeaves(), bundle.TokensFile)
	}
	return in, nil
}

// check refuses shards that are not parts of one test, naming the first
// that differs from the first shard (ins sorted by index).
func check(ins []*input, opts Options) error {
	first := ins[0]
	refuse := func(in *input, format string, args ...any) error {
		return &ShardError{Dir: in.dir, Index: in.rec.Index, Err: fmt.Errorf(format, args...)}
	}
	r0, e0 := first.b.Result, &first.b.Result.Effective
	for _, in := range ins {
		rec, res := in.rec, in.b.Result
		if opts.Version != "" && in.b.Version != opts.Version {
			return refuse(in, "written by aimeter %s, merged by aimeter %s: shards and merge must be one version", in.b.Version, opts.Version)
		}
		if res.Interrupted != "" && !opts.AllowPartial {
			// A shard stopped mid-run (SIGTERM, say) wrote its bundle, but
			// issued only part of its schedule: like a missing shard.
			return refuse(in, "%w: %s before it issued all of its schedule (--allow-partial merges it, INVALID)", ErrInterrupted, res.Interrupted)
		}
		if in == first {
			continue
		}
		if rec.Count != first.rec.Count {
			return refuse(in, "one of %d shards, shard %d (%s) one of %d: not parts of one test", rec.Count, first.rec.Index, first.dir, first.rec.Count)
		}
		if in.b.Version != first.b.Version {
			return refuse(in, "written by aimeter %s, shard %d (%s) by aimeter %s: shards of one test run one version", in.b.Version, first.rec.Index, first.dir, first.b.Version)
		}
		e := &res.Effective
		if s := seedDiff(e0, e); s != "" {
			return refuse(in, "seeds differ from shard %d's (%s): %s: not the same test", first.rec.Index, first.dir, s)
		}
		if d := settingsDiff(r0, res); d != "" {
			return refuse(in, "settings differ from shard %d's (%s): %s: not the same test", first.rec.Index, first.dir, d)
		}
		if rec.ScheduleSHA256 != first.rec.ScheduleSHA256 || !slices.Equal(rec.PassSchedules, first.rec.PassSchedules) {
			return refuse(in, "schedule digest %s, shard %d (%s) has %s: not the same schedule", short(rec.ScheduleSHA256), first.rec.Index, first.dir, short(first.rec.ScheduleSHA256))
		}
		if rec.Rule != first.rec.Rule {
			return refuse(in, "split by %q, shard %d by %q", rec.Rule, first.rec.Index, first.rec.Rule)
		}
		if !sameTime(rec.StartAt, first.rec.StartAt) {
			return refuse(in, "common start %s, shard %d's %s: not one test's shards", timeText(rec.StartAt), first.rec.Index, timeText(first.rec.StartAt))
		}
		if d := gbtDiff(gbt.TestOf(in.b), gbt.TestOf(first.b)); d != "" {
			return refuse(in, "its GB/T test (%s) differs from shard %d's in %s: not the same test", bundle.GBTTestFile, first.rec.Index, d)
		}
		if in.b.Foreign != nil || first.b.Foreign != nil {
			return refuse(in, "a GB/T mixed test (mode 5, with %s/): its foreign jobs are not split over shards, so their shards cannot be merged", bundle.ForeignDir)
		}
		if len(res.Passes) != len(r0.Passes) {
			return refuse(in, "%d passes, shard %d has %d", len(res.Passes), first.rec.Index, len(r0.Passes))
		}
		for j, p := range res.Passes {
			q := r0.Passes[j]
			if p.Kind != q.Kind || p.FirstSeq != q.FirstSeq || p.Reported != q.Reported || p.TargetQPS != q.TargetQPS {
				return refuse(in, "pass %d (%s, from seq %d) differs from shard %d's (%s, from seq %d)", j, p.Kind, p.FirstSeq, first.rec.Index, q.Kind, q.FirstSeq)
			}
		}
	}
	for k, in := range ins {
		if in.rec.Index < 0 || in.rec.Index >= first.rec.Count {
			return refuse(in, "index %d is out of range for %d shards", in.rec.Index, first.rec.Count)
		}
		if k > 0 && ins[k-1].rec.Index == in.rec.Index {
			return refuse(in, "index %d given twice: also %s", in.rec.Index, ins[k-1].dir)
		}
	}
	return nil
}

func seedDiff(a, b *loadgen.Effective) string {
	var d []string
	for _, f := range []struct {
		name string
		x, y uint64
	}{
		{"qsl_rng_seed", a.QSLRNGSeed, b.QSLRNGSeed},
		{"sample_index_rng_seed", a.SampleIndexRNGSeed, b.SampleIndexRNGSeed},
		{"schedule_rng_seed", a.ScheduleRNGSeed, b.ScheduleRNGSeed},
		{"accuracy_log_rng_seed", a.AccuracyLogRNGSeed, b.AccuracyLogRNGSeed},
	} {
		if f.x != f.y {
			d = append(d, fmt.Sprintf("%s %d, not %d", f.name, f.y, f.x))
		}
	}
	return strings.Join(d, ", ")
}

// settingsDiff names the settings.json fields (other than the per-shard
// passes and counters) in which b differs from a.
func settingsDiff(a, b *loadgen.Result) string {
	type plan struct {
		SUTName, QSLName                   string
		QSLTotalCount, QSLPerformanceCount uint64
		Requested                          loadgen.Settings
		Effective                          loadgen.Effective
	}
	pa := plan{a.SUTName, a.QSLName, a.QSLTotalCount, a.QSLPerformanceCount, a.Requested, a.Effective}
	pb := plan{b.SUTName, b.QSLName, b.QSLTotalCount, b.QSLPerformanceCount, b.Requested, b.Effective}
	if reflect.DeepEqual(pa, pb) {
		return ""
	}
	var ma, mb map[string]any
	ja, _ := json.Marshal(pa)
	jb, _ := json.Marshal(pb)
	_ = json.Unmarshal(ja, &ma)
	_ = json.Unmarshal(jb, &mb)
	var d []string
	for _, k := range []string{"SUTName", "QSLName", "QSLTotalCount", "QSLPerformanceCount"} {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			d = append(d, fmt.Sprintf("%s %v, not %v", k, mb[k], ma[k]))
		}
	}
	for _, sec := range []string{"Requested", "Effective"} {
		sa, _ := ma[sec].(map[string]any)
		sb, _ := mb[sec].(map[string]any)
		keys := make([]string, 0, len(sa))
		for k := range sa {
			keys = append(keys, k)
		}
		for k := range sb {
			if _, ok := sa[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !reflect.DeepEqual(sa[k], sb[k]) {
				d = append(d, fmt.Sprintf("%s %s %v, not %v", strings.ToLower(sec), k, sb[k], sa[k]))
			}
		}
	}
	if len(d) == 0 {
		return "their settings"
	}
	if len(d) > 4 {
		d = append(d[:4], fmt.Sprintf("and %d more", len(d)-4))
	}
	return strings.Join(d, "; ")
}

// gbtDiff names the first field of the GB/T test's plan in which b
// differs from a; the fields each shard fills itself (its start and end,
// lifecycle, online scores, accuracy, notes) are not compared.
func gbtDiff(a, b *gbt.Test) string {
	if a == nil || b == nil {
		if a != b {
			return "whether it is a GB/T test"
		}
		return ""
	}
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"format", a.Format, b.Format}, {"scenario", a.Scenario, b.Scenario}, {"arrival", a.Arrival, b.Arrival},
		{"underlying_mode", a.UnderlyingMode, b.UnderlyingMode}, {"mixed", a.Mixed, b.Mixed},
		{"timeout_class", a.TimeoutClass, b.TimeoutClass}, {"loss_threshold", a.LossThreshold, b.LossThreshold},
		{"sample_bytes", a.SampleBytes, b.SampleBytes}, {"schedule", a.Schedule, b.Schedule},
		{"test_info", a.Info, b.Info}, {"precision", a.Precision, b.Precision},
	} {
		jx, _ := json.Marshal(f.x)
		jy, _ := json.Marshal(f.y)
		if string(jx) != string(jy) {
			return f.name
		}
	}
	return ""
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func timeText(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// plan checks the clocks, works out each shard's shift and the missing
// shards, and returns the merge record without its missing list.
func plan(ins []*input, opts Options) (*shard.Merge, []int, error) {
	first := ins[0].rec
	bound := opts.MaxClockOffset
	if bound == 0 {
		for _, in := range ins {
			bound = max(bound, time.Duration(in.rec.StartToleranceNs))
		}
		if bound == 0 {
			bound = loadgen.DefaultStartTolerance
		}
	}
	var missing []int
	have := make([]bool, first.Count)
	for _, in := range ins {
		have[in.rec.Index] = true
	}
	for i, ok := range have {
		if !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 && !opts.AllowPartial {
		return nil, nil, &ShardError{Dir: "(not given)", Index: missing[0], Err: fmt.Errorf("%w: %d of %d shards given, missing %v (--allow-partial merges them, INVALID)", ErrMissing, len(ins), first.Count, missing)}
	}
	minLate := ins[0].rec.StartLateNs
	var uncs []int64
	for _, in := range ins {
		minLate = min(minLate, in.rec.StartLateNs)
		if c := in.rec.Clock; c != nil {
			off := c.Offset
			if off < 0 {
				off = -off
			}
			if off+c.Uncertainty > bound {
				return nil, nil, &ShardError{Dir: in.dir, Index: in.rec.Index, Err: fmt.Errorf("clock offset %v ± %v against %s exceeds the bound %v (--max-clock-offset)", c.Offset, c.Uncertainty, c.URL, bound)}
			}
			uncs = append(uncs, int64(c.Uncertainty))
		}
	}
	slices.Sort(uncs)
	var align int64
	for k := len(uncs) - 1; k >= 0 && k >= len(uncs)-2; k-- {
		align += uncs[k]
	}
	m := &shard.Merge{Count: first.Count, Rule: first.Rule, ScheduleSHA256: first.ScheduleSHA256, StartAt: first.StartAt,
		MaxClockOffsetNs: int64(bound), AlignmentUncertaintyNs: align}
	for _, in := range ins {
		if first.StartAt != nil {
			in.shift = in.rec.StartLateNs - minLate
		}
		res := in.b.Result
		ms := shard.MergedShard{Index: in.rec.Index, Dir: in.dir, ManifestSHA256: in.manifest, StartLateNs: in.rec.StartLateNs, ShiftNs: in.shift,
			Records: uint64(res.RecordCount()), Failed: res.FailedSamples, Lost: res.LostSamples}
		if c := in.rec.Clock; c != nil {
			ms.ClockMeasured, ms.ClockOffsetNs, ms.ClockUncertaintyNs = true, int64(c.Offset), int64(c.Uncertainty)
		}
		if s := res.Summary; s != nil {
			ms.SamplesPerSecond = s.CompletedSamplesPerSecond()
			for _, p := range s.Percentiles {
				switch p.Percentile {
				case .50:
					ms.LatencyP50Ns = p.SampleLatency
				case .99:
					ms.LatencyP99Ns = p.SampleLatency
				}
			}
		}
		m.Shards = append(m.Shards, ms)
	}
	return m, missing, nil
}

// startedPass is the pass a common start started: the reported pass, or in
// an accuracy-only test the first accuracy pass; −1 for none.
func startedPass(res *loadgen.Result) int {
	if i := res.ReportedPass(); i >= 0 {
		return i
	}
	if res.Effective.Mode == loadgen.AccuracyOnly {
		return slices.IndexFunc(res.Passes, func(p loadgen.PassInfo) bool { return p.Kind == loadgen.PassAccuracy })
	}
	return -1
}

// union builds the merged bundle. With outDir, and no shard read whole
// (none holds stage times), the union's records go straight into
// outDir's records file (a bundle.RecordStream, a few row groups at a
// time) as they are merged, their sample data into samples.parquet beside
// it (sideSamples) and the token times into tokens.parquet (mergeTokens),
// and the merged Result reads them from those files whenever they are
// wanted (loadgen.Result.AttachSource, bundle.RecordFile; AttachTokenSource,
// bundle.TokenFile): nothing of them is held. Otherwise the records are
// built into one loadgen.RecordTable and the token times held.
func union(ctx context.Context, ins []*input, m *shard.Merge, to sink) (_ *bundle.Bundle, err error) {
	outDir := to.dir
	b0, r0 := ins[0].b, ins[0].b.Result
	started := startedPass(r0)
	res := &loadgen.Result{
		SUTName: r0.SUTName, GetSUTNameDurationNs: r0.GetSUTNameDurationNs, QSLName: r0.QSLName,
		QSLTotalCount: r0.QSLTotalCount, QSLPerformanceCount: r0.QSLPerformanceCount,
		Requested: r0.Requested, Effective: r0.Effective, StartTime: r0.StartTime,
		Events: r0.Events, Passes: slices.Clone(r0.Passes),
	}
	blocks := m.Rule == shard.RuleSampleBlocks
	for j := range res.Passes {
		p := &res.Passes[j]
		p.QueriesIssued, p.ProtocolErrors, p.EndNs = 0, 0, 0
		for k, in := range ins {
			q := in.b.Result.Passes[j]
			p.EndSeq = max(p.EndSeq, q.EndSeq)
			if blocks {
				p.QueriesIssued = max(p.QueriesIssued, q.QueriesIssued)
			} else {
				p.QueriesIssued += q.QueriesIssued
			}
			p.ProtocolErrors += q.ProtocolErrors
			shift := int64(0)
			if j == started {
				shift = in.shift
			}
			p.EndNs = max(p.EndNs, q.EndNs+shift)
			if k == 0 || q.StartUnixNs+shift < p.StartUnixNs {
				p.StartUnixNs = q.StartUnixNs + shift
			}
			if p.StopReason == "" && q.StopReason != "" {
				// The union's verdict names the shard that stopped.
				p.StopReason = fmt.Sprintf("%s: %s", in.rec, q.StopReason)
			}
		}
	}
	if m.StartAt != nil && started >= 0 {
		minLate := ins[0].rec.StartLateNs
		for _, in := range ins {
			minLate = min(minLate, in.rec.StartLateNs)
		}
		res.Passes[started].StartUnixNs = m.StartAt.UnixNano() + minLate
	}
	for _, in := range ins {
		r := in.b.Result
		if r.StartTime.Before(res.StartTime) {
			res.StartTime = r.StartTime
		}
		res.UnknownCompletions += r.UnknownCompletions
		res.DuplicateCompletions += r.DuplicateCompletions
		res.FailedSamples += r.FailedSamples
		res.LostSamples += r.LostSamples
		res.LateCompletions += r.LateCompletions
		if res.Interrupted == "" && r.Interrupted != "" {
			res.Interrupted = fmt.Sprintf("%s: %s", in.rec, r.Interrupted)
		}
	}

	// The error tables, joined by (category, code, code name).
	errMaps := make([][]uint32, len(ins))
	index := map[[3]string]uint32{}
	for k, in := range ins {
		errMaps[k] = make([]uint32, len(in.b.Result.Errors)+1)
		for e, info := range in.b.Result.Errors {
			key := [3]string{info.Category, fmt.Sprint(info.Code), info.CodeName}
			at, ok := index[key]
			if !ok && len(res.Errors) < loadgen.MaxErrorKinds {
				res.Errors = append(res.Errors, info)
				at = uint32(len(res.Errors))
				index[key] = at
				errMaps[k][e+1] = at
				continue
			}
			if !ok {
				at = uint32(len(res.Errors)) // the last group takes the rest
			}
			g := &res.Errors[at-1]
			g.Count += info.Count
			for _, msg := range info.Messages() {
				if len(g.Examples) < loadgen.MaxErrorExamples && !slices.Contains(g.Examples, msg) {
					g.Examples = append(g.Examples, msg)
				}
			}
			if info.FirstNs != 0 && (g.FirstNs == 0 || info.FirstNs < g.FirstNs) {
				g.FirstNs = info.FirstNs
			}
			g.LastNs = max(g.LastNs, info.LastNs)
			errMaps[k][e+1] = at
		}
	}

	// The records: a k-way merge by sequence id.
	total := 0
	for _, in := range ins {
		n, err := in.count()
		if err != nil {
			return nil, err
		}
		total += n
	}
	var (
		table    *loadgen.RecordTable
		stream   *bundle.RecordStream
		finished string   // the stream's file, once finished
		side     []string // the files written beside it
		samples  *sideSamples
	)
	switch {
	case to.checkOnly:
	case outDir != "" && !slices.ContainsFunc(ins, func(in *input) bool { return in.whole }):
		_, statErr := os.Stat(outDir)
		made := errors.Is(statErr, fs.ErrNotExist) // the stream makes it
		stream = bundle.NewRecordStream(outDir)
		defer func() {
			if err != nil {
				if samples != nil {
					samples.abandon()
				}
				stream.Discard() // does nothing once finished: then the files go
				if finished != "" {
					_ = os.Remove(finished)
					for _, name := range side {
						_ = os.Remove(filepath.Join(outDir, name))
					}
				}
				if made {
					_ = os.Remove(outDir) // when empty: a refusal writes nothing
				}
			}
		}()
	default:
		table = loadgen.NewRecordTable(total)
	}
	if stream != nil && slices.ContainsFunc(ins, func(in *input) bool { return in.samples }) {
		// The sample data goes into samples.parquet beside the records,
		// written as they are merged.
		samples = writeSamples(stream)
	}
	flush := func(recs []loadgen.Record) {
		switch {
		case stream != nil:
			stream.Add(recs)
			if samples != nil {
				samples.add(recs)
			}
		case table != nil:
			table.Append(recs...)
		}
	}
	stages := make([][]loadgen.StageTimes, len(ins))
	hasStages := false
	for k, in := range ins {
		if stages[k] = in.b.StageTimes(); stages[k] != nil && !to.checkOnly {
			hasStages = true
		}
	}
	var mergedStages []loadgen.StageTimes
	if hasStages {
		mergedStages = make([]loadgen.StageTimes, 0, total)
	}
	type cursor struct {
		next  func() (loadgen.Record, bool)
		stop  func()
		rec   loadgen.Record
		at    int // records taken
		first uint64
		end   uint64 // the started pass's bounds in this shard
	}
	curs := make([]*cursor, 0, len(ins))
	defer func() {
		for _, c := range curs {
			c.stop()
		}
	}()
	live := []int{}
	for k, in := range ins {
		next, stop := in.records()
		c := &cursor{next: next, stop: stop}
		if started >= 0 {
			p := in.b.Result.Passes[started]
			c.first, c.end = p.FirstSeq, p.EndSeq
		}
		curs = append(curs, c)
		if r, ok := next(); ok {
			c.rec = r
			live = append(live, k)
		}
	}
	shiftTime := func(t, d int64) int64 {
		if t == loadgen.NoTime {
			return t
		}
		return t + d
	}
	n := 0
	var last uint64
	pending := make([]loadgen.Record, 0, 4096)
	for len(live) > 0 {
		if n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		best := 0
		for j := 1; j < len(live); j++ {
			if curs[live[j]].rec.SeqID < curs[live[best]].rec.SeqID {
				best = j
			}
		}
		k := live[best]
		c := curs[k]
		r := c.rec
		if n > 0 && r.SeqID == last {
			return nil, &ShardError{Dir: ins[k].dir, Index: ins[k].rec.Index, Err: fmt.Errorf("seq_id %d is in another shard's records too: the shards overlap", r.SeqID)}
		}
		if d := ins[k].shift; d != 0 && r.SeqID >= c.first && r.SeqID < c.end {
			r.ScheduledNs, r.IssuedNs = r.ScheduledNs+d, r.IssuedNs+d
			r.FirstTokenNs, r.CompletedNs = shiftTime(r.FirstTokenNs, d), shiftTime(r.CompletedNs, d)
		}
		if r.Error != 0 && int(r.Error) < len(errMaps[k]) {
			r.Error = errMaps[k][r.Error]
		}
		last = r.SeqID
		if pending = append(pending, r); len(pending) == cap(pending) {
			flush(pending) // in blocks: one record at a time leaves garbage a record
			pending = pending[:0]
		}
		if hasStages {
			st := loadgen.NoStages
			if stages[k] != nil {
				st = stages[k][c.at]
			}
			mergedStages = append(mergedStages, st)
		}
		c.at++
		n++
		if nr, ok := c.next(); ok {
			c.rec = nr
		} else {
			if err := ins[k].scanErr; err != nil {
				return nil, &ShardError{Dir: ins[k].dir, Index: ins[k].rec.Index, Err: err}
			}
			live = slices.Delete(live, best, best+1)
		}
	}
	flush(pending)
	for k, in := range ins {
		if in.scanErr != nil {
			return nil, &ShardError{Dir: in.dir, Index: in.rec.Index, Err: in.scanErr}
		}
		m.Shards[k].Records = uint64(curs[k].at) // a head's records were first counted here
	}
	if to.checkOnly {
		return nil, nil
	}
	if samples != nil {
		side = append(side, bundle.SamplesFile)
		if err := samples.finish(); err != nil {
			return nil, fmt.Errorf("merge: writing the merged sample data: %w", err)
		}
	}
	hasTokens := slices.ContainsFunc(ins, func(in *input) bool { return in.hasTokenTimes() })
	shifts := make([]shiftRange, len(ins))
	for k, in := range ins {
		shifts[k] = shiftRange{first: curs[k].first, end: curs[k].end, shift: in.shift}
	}
	if stream != nil && hasTokens {
		side = append(side, bundle.TokensFile)
		if err := stream.WriteTokens(mergeTokens(ins, shifts)); err != nil {
			return nil, fmt.Errorf("merge: writing the merged token times: %w", err)
		}
		for _, in := range ins {
			if in.scanErr != nil {
				return nil, &ShardError{Dir: in.dir, Index: in.rec.Index, Err: in.scanErr}
			}
		}
	}
	if stream != nil {
		path, err := stream.Finish()
		if err != nil {
			return nil, fmt.Errorf("merge: writing the merged records: %w", err)
		}
		finished = path
		rf, err := bundle.OpenRecordFile(path)
		if err != nil {
			return nil, fmt.Errorf("merge: reading the merged records back: %w", err)
		}
		if rf.Len() != n {
			return nil, fmt.Errorf("merge: %s holds %d records, %d were merged", path, rf.Len(), n)
		}
		if samples != nil {
			if err := rf.AttachSamples(filepath.Join(outDir, bundle.SamplesFile)); err != nil {
				return nil, fmt.Errorf("merge: reading the merged sample data back: %w", err)
			}
		}
		res.AttachSource(rf)
		if hasTokens {
			tf, err := bundle.OpenTokenFile(filepath.Join(outDir, bundle.TokensFile))
			if err != nil {
				return nil, fmt.Errorf("merge: reading the merged token times back: %w", err)
			}
			res.AttachTokenSource(tf)
		}
	} else {
		res.AttachTable(table)
	}

	// Token times (held, without an output directory) and the accuracy
	// log, in sequence order.
	if stream == nil && hasTokens {
		var traces []loadgen.TokenTrace
		for seq, times := range mergeTokens(ins, shifts) {
			traces = append(traces, loadgen.TokenTrace{SeqID: seq, TimesNs: slices.Clone(times)})
		}
		for _, in := range ins {
			if in.scanErr != nil {
				return nil, &ShardError{Dir: in.dir, Index: in.rec.Index, Err: in.scanErr}
			}
		}
		res.AttachTokenTimes(traces)
	}
	for _, in := range ins {
		res.Accuracy = append(res.Accuracy, in.b.Result.Accuracy...)
	}
	slices.SortStableFunc(res.Accuracy, func(a, b loadgen.AccuracyEntry) int { return cmp.Compare(a.SeqID, b.SeqID) })

	out := &bundle.Bundle{Result: res, Stages: mergedStages, Records: stream, Version: b0.Version, Name: b0.Name, PID: b0.PID, Location: b0.Location,
		System: b0.System, AccuracyCheck: nil, Trace: b0.Trace, NoReport: b0.NoReport, Nodes: b0.Nodes}
	if t := gbt.TestOf(b0); t != nil {
		gbt.SetTest(out, mergeGBT(ins, res, m.StartAt != nil, started))
	}
	shard.MergePart.Set(out, m)

	// The shards' records are no longer needed: let them go.
	for _, c := range curs {
		c.stop()
	}
	curs = nil
	for _, in := range ins {
		in.b = nil
	}
	b0, r0 = nil, nil
	if i := res.ReportedPass(); i >= 0 {
		s, err := loadgen.SummarizePassScan(res.SUTName, res.Effective, res.Passes[i], func(fn func(*loadgen.RecordColumns) error) error {
			for c := range res.PassColumns(i, 4096) {
				if err := fn(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			err = res.RecordSourceErr()
		}
		if err != nil {
			return nil, fmt.Errorf("merge: summarising the union: %w", err)
		}
		res.Summary = s
	}
	return out, nil
}

// mergeGBT is the GB/T test of the merge: shard 0's plan, with the run's
// start at the merged started pass's, its end the latest shard's, the
// lifecycle spanning every shard's, and each sample's online score from
// the shard that scored it.
func mergeGBT(ins []*input, res *loadgen.Result, common bool, started int) *gbt.Test {
	t := *gbt.TestOf(ins[0].b)
	lc := &t.Lifecycle
	correct := []byte(t.Correct)
	for k, in := range ins {
		s := gbt.TestOf(in.b)
		if k == 0 {
			continue
		}
		if s.Start.Before(t.Start) {
			t.Start = s.Start
		}
		earliest(&lc.TestStart, s.Lifecycle.TestStart)
		earliest(&lc.DatasetLoadStart, s.Lifecycle.DatasetLoadStart)
		latest(&lc.DatasetLoadEnd, s.Lifecycle.DatasetLoadEnd)
		latest(&lc.TestEnd, s.Lifecycle.TestEnd)
		latest(&lc.ResultUploadComplete, s.Lifecycle.ResultUploadComplete)
		if len(s.Correct) == len(correct) {
			for i := range correct {
				if correct[i] == '-' {
					correct[i] = s.Correct[i]
				}
			}
		}
		for _, n := range s.Notes {
			if !slices.Contains(t.Notes, n) {
				t.Notes = append(t.Notes, n)
			}
		}
	}
	t.Correct = string(correct)
	if common && started >= 0 {
		t.Start = time.Unix(0, res.Passes[started].StartUnixNs).In(t.Start.Location())
	}
	t.EndNs = 0
	for _, in := range ins {
		t.EndNs = max(t.EndNs, gbt.TestOf(in.b).EndNs+in.shift)
	}
	return &t
}

func earliest(t *time.Time, u time.Time) {
	if !u.IsZero() && (t.IsZero() || u.Before(*t)) {
		*t = u
	}
}

func latest(t *time.Time, u time.Time) {
	if u.After(*t) {
		*t = u
	}
}

// shiftRange is the range of sequence ids of a shard's started pass, whose
// times the merge moves by shift.
type shiftRange struct {
	first, end uint64
	shift      int64
}

// mergeTokens yields the token times of the shards, a k-way merge by
// sequence id (each shard's in sequence order: bundle.ScanTokens, or the
// times of a bundle read whole), those of shard k's started pass moved as
// its records are (shifts[k]); the slice yielded is reused for the next
// sample. An error reading a shard's ends its stream and is kept in its
// scanErr.
func mergeTokens(ins []*input, shifts []shiftRange) iter.Seq2[uint64, []int64] {
	return func(yield func(uint64, []int64) bool) {
		type cursor struct {
			next  func() (uint64, []int64, bool)
			stop  func()
			seq   uint64
			times []int64
			sr    shiftRange
		}
		var live []*cursor
		defer func() {
			for _, c := range live {
				c.stop()
			}
		}()
		for k, in := range ins {
			if !in.hasTokenTimes() {
				continue
			}
			next, stop := iter.Pull2(in.tokenTimes())
			c := &cursor{next: next, stop: stop, sr: shifts[k]}
			var ok bool
			if c.seq, c.times, ok = next(); !ok {
				stop()
				continue
			}
			live = append(live, c)
		}
		var buf []int64
		for len(live) > 0 {
			best := 0
			for j := 1; j < len(live); j++ {
				if live[j].seq < live[best].seq {
					best = j
				}
			}
			c := live[best]
			buf = append(buf[:0], c.times...)
			if d := c.sr.shift; d != 0 && c.seq >= c.sr.first && c.seq < c.sr.end {
				for i := range buf {
					buf[i] += d
				}
			}
			if !yield(c.seq, buf) {
				return
			}
			var ok bool
			if c.seq, c.times, ok = c.next(); !ok {
				c.stop()
				live = slices.Delete(live, best, best+1)
			}
		}
	}
}

// sideSamples writes the union's sample data into samples.parquet beside
// its records (bundle.RecordStream.WriteSamples) on a goroutine of its
// own, fed blocks of the merged records as they are flushed: it holds
// the blocks in flight and a row group being encoded.
type sideSamples struct {
	blocks chan []loadgen.Record
	quit   chan struct{} // closed when the writer ends
	err    error         // the writer's, once quit is closed
	closed bool
}

// writeSamples starts writing the samples file beside stream's records.
func writeSamples(stream *bundle.RecordStream) *sideSamples {
	s := &sideSamples{blocks: make(chan []loadgen.Record, 2), quit: make(chan struct{})}
	go func() {
		defer close(s.quit)
		s.err = stream.WriteSamples(func(yield func(loadgen.Record) bool) {
			for blk := range s.blocks {
				for i := range blk {
					if !yield(blk[i]) {
						return
					}
				}
			}
		})
	}()
	return s
}

// add queues a copy of recs for the file (nothing once the writer ended
// early: finish returns its error).
func (s *sideSamples) add(recs []loadgen.Record) {
	select {
	case s.blocks <- slices.Clone(recs):
	case <-s.quit:
	}
}

// finish ends the file and returns the writer's error.
func (s *sideSamples) finish() error {
	if !s.closed {
		s.closed = true
		close(s.blocks)
	}
	<-s.quit
	return s.err
}

// abandon ends the writer of a merge that failed; the stream's Discard
// removes the file.
func (s *sideSamples) abandon() { _ = s.finish() }
