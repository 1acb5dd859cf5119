package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/shard"
)

// shardFlags are the flags of aimeter run that make it one shard of a
// test split over several load generators (docs/sharding.md).
type shardFlags struct {
	spec           string        // --shard I/N
	count          int           // --shards N (index from JOB_COMPLETION_INDEX)
	startAt        string        // --start-at RFC 3339
	startTolerance time.Duration // --start-tolerance
	clockRef       string        // --clock-ref URL
}

// shardFlagNames are the shard flags, in the order of --help.
var shardFlagNames = []string{"shard", "shards", "start-at", "start-tolerance", "clock-ref"}

func addShardFlags(fl *pflag.FlagSet, f *shardFlags) {
	fl.StringVar(&f.spec, "shard", "", "run as shard I of N of one test: I/N, I from 0 (e.g. 0/4); every shard generates the whole seeded schedule and issues its part (docs/sharding.md)")
	fl.IntVar(&f.count, "shards", 0, "run as one of N shards, the index from $"+shard.EnvIndex+" (set by a Kubernetes Indexed Job)")
	fl.StringVar(&f.startAt, "start-at", "", "start issuing at this RFC 3339 time on the reference clock (--clock-ref), the same for every shard (e.g. 2026-11-29T02:00:00Z); in the future, at most 24h ahead")
	fl.DurationVar(&f.startTolerance, "start-tolerance", 0, "--start-at: refuse to run (exit 2) when issuing cannot start within this of the start (0 = "+loadgen.DefaultStartTolerance.String()+")")
	fl.StringVar(&f.clockRef, "clock-ref", "", "measure this host's clock offset against the server at this URL (the tester's service or aimeter serve: GET "+"/api/v1/time) and keep the start on its clock; recorded in shard.json")
}

// plan is the shard of the flags; nil when none was given.
func (f *shardFlags) plan(changed func(string) bool) (*benchmark.Shard, error) {
	if !anyChanged(changed, shardFlagNames) {
		return nil, nil
	}
	s := &benchmark.Shard{StartTolerance: f.startTolerance, ClockRef: f.clockRef}
	switch {
	case changed("shard") && changed("shards"):
		return nil, usageError("--shard and --shards both name the shard: give --shard I/N, or --shards N with the index in $%s", shard.EnvIndex)
	case changed("shard"):
		sh, err := shard.ParseSpec(f.spec)
		if err != nil {
			return nil, usageError("--shard %v", err)
		}
		s.Index, s.Count = sh.Index, sh.Count
	case changed("shards"):
		sh, err := shard.FromEnv(f.count, nil)
		if err != nil {
			return nil, usageError("--shards %v", err)
		}
		s.Index, s.Count = sh.Index, sh.Count
	}
	if changed("start-at") {
		at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(f.startAt))
		if err != nil {
			return nil, usageError("--start-at %q: want an RFC 3339 time with its zone, such as 2026-11-29T02:00:00Z", f.startAt)
		}
		s.StartAt = at
	}
	if changed("start-tolerance") && f.startTolerance <= 0 {
		return nil, usageError("--start-tolerance %v: must be > 0", f.startTolerance)
	}
	return s, nil
}

// shardNote is, for a shard's run, the note that its bundle is one part
// of a test (its verdict's only reason); "" for any other run.
func shardNote(out *benchmark.Outcome) string {
	if out == nil || out.Bundle == nil {
		return ""
	}
	if rec := shard.Of(out.Bundle); rec.Sharded() {
		return benchmark.PartialNote(rec)
	}
	return ""
}

// bindShardFlags adds the shard flags to aimeter run.
func bindShardFlags(cmd *cobra.Command, f *shardFlags) { addShardFlags(cmd.Flags(), f) }
