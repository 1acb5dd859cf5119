// Package shard is shard.json, the part of a bundle that a shard of a test
// split over several load generators writes (docs/sharding.md): which part
// of the test it ran, the digest of the whole test's schedule, and how its
// clock and start compared with the others'. A bundle without the part is
// a whole test (every bundle written before sharding existed is one).
//
// The whole test's settings are the bundle's own settings.json: a shard
// runs with the whole test's settings and generates the whole schedule,
// taking its part by the rule of loadgen.Shard; the split counts recorded
// here follow from those settings, for the reader's convenience.
package shard

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/clocksync"
	"aimeter/loadgen"
)

// File is the part's file in a bundle.
const File = "shard.json"

// EnvIndex is the environment variable a Kubernetes Indexed Job sets to
// the pod's completion index, from 0: the shard index with --shards N.
const EnvIndex = "JOB_COMPLETION_INDEX"

// Rules of loadgen.Shard, as Record.Rule names them.
const (
	// RuleQueryModN: query q of a pass to shard q mod N (Server, GB/T
	// arrival modes 1–3, SingleStream, fixed concurrency, MultiStream).
	RuleQueryModN = "query mod N"
	// RuleSampleBlocks: Offline's one query in contiguous blocks of
	// samples, the first S mod N shards one sample more.
	RuleSampleBlocks = "offline sample blocks"
)

// Record is shard.json.
type Record struct {
	// Index is the shard's number, from 0; Count the number of shards (1
	// for a whole test with a common start).
	Index int `json:"index"`
	Count int `json:"count"`
	// Rule is how the test was split (RuleQueryModN or RuleSampleBlocks).
	Rule string `json:"rule"`
	// ScheduleSHA256 is the digest of the whole test's schedule (every
	// shard's part): shards of one test have the same. PassSchedules are
	// its passes' digests in the order of settings.json's passes
	// (loadgen.ShardRun documents what they cover).
	ScheduleSHA256 string   `json:"schedule_sha256"`
	PassSchedules  []string `json:"pass_schedules_sha256"`
	// Concurrency, MinQueryCount and MaxQueryCount are this shard's part
	// of the whole test's (loadgen.Shard.ShardSplit); 0 where the test
	// has none.
	Concurrency   uint64 `json:"concurrency,omitempty"`
	MinQueryCount uint64 `json:"min_query_count,omitempty"`
	MaxQueryCount uint64 `json:"max_query_count,omitempty"`
	// StartAt is the common start on the reference clock; nil when the
	// shard started at once.
	StartAt *time.Time `json:"start_at,omitempty"`
	// StartToleranceNs is how late the shard could start and still run.
	StartToleranceNs int64 `json:"start_tolerance_ns,omitempty"`
	// LocalStartAt is StartAt on this host's clock (StartAt − the clock
	// offset): when this shard waited for.
	LocalStartAt *time.Time `json:"local_start_at,omitempty"`
	// StartLateNs is how long after LocalStartAt the shard began issuing.
	StartLateNs int64 `json:"start_late_ns"`
	// Clock is this host's clock measured against the reference; nil
	// when there was no reference (the local clock was taken as it).
	// Latencies are measured on this host's clock alone; a merge puts the
	// shards' throughput windows on the reference clock by this offset,
	// within its uncertainty.
	Clock *clocksync.Measurement `json:"clock,omitempty"`
}

// String is "shard I/N" (I from 0).
func (r *Record) String() string { return fmt.Sprintf("shard %d/%d", r.Index, r.Count) }

// Sharded reports whether the record is a part of a test of more than one
// shard (a record of Count 1 is a whole test with a common start).
func (r *Record) Sharded() bool { return r != nil && r.Count > 1 }

// Part is shard.json as a part of a bundle.
var Part = bundle.PartType[*Record]{Name: File, Read: Read, Write: Write}

// Of returns b's shard record; nil for a whole test (or a malformed part,
// which derived.Read reports).
func Of(b *bundle.Bundle) *Record { return Part.Value(b) }

// Set records r as b's shard record; nil removes it.
func Set(b *bundle.Bundle, r *Record) {
	if r == nil {
		Part.Remove(b)
		return
	}
	Part.Set(b, r)
}

// Write writes shard.json.
func Write(w io.Writer, r *Record) error { return bundle.WriteJSON(w, r) }

// Read reads shard.json; an unknown field is an error.
func Read(r io.Reader) (*Record, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rec Record
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s: %w", File, err)
	}
	if err := (loadgen.Shard{Index: rec.Index, Count: rec.Count}).Validate(); err != nil || rec.Count < 1 {
		return nil, fmt.Errorf("%s: index %d of %d shards: not a shard", File, rec.Index, rec.Count)
	}
	return &rec, nil
}

// ParseSpec parses the shard of --shard: "I/N" with 0 ≤ I < N, I from 0 as
// a Kubernetes Indexed Job numbers its pods.
func ParseSpec(spec string) (loadgen.Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok {
		return loadgen.Shard{}, fmt.Errorf("%q: want I/N, the shard's index from 0 and the number of shards (e.g. 0/4)", spec)
	}
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || count < 1 {
		return loadgen.Shard{}, fmt.Errorf("%q: the number of shards N must be a whole number ≥ 1", spec)
	}
	index, err := strconv.Atoi(strings.TrimSpace(i))
	if err != nil {
		return loadgen.Shard{}, fmt.Errorf("%q: the index I must be a whole number from 0 to %d", spec, count-1)
	}
	if index < 0 || index >= count {
		return loadgen.Shard{}, fmt.Errorf("%q: index %d is out of range: with %d shards it runs from 0 to %d", spec, index, count, count-1)
	}
	return loadgen.Shard{Index: index, Count: count}, nil
}

// FromEnv is the shard of --shards N: its index from EnvIndex as getenv
// reads it (nil means os.Getenv).
func FromEnv(count int, getenv func(string) string) (loadgen.Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if count < 1 {
		return loadgen.Shard{}, fmt.Errorf("%d: the number of shards must be ≥ 1", count)
	}
	v := getenv(EnvIndex)
	if v == "" {
		return loadgen.Shard{}, fmt.Errorf("%s is not set: a Kubernetes Indexed Job sets it to each pod's index; elsewhere give --shard I/%d", EnvIndex, count)
	}
	index, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return loadgen.Shard{}, fmt.Errorf("%s=%q is not a number", EnvIndex, v)
	}
	if index < 0 || index >= count {
		return loadgen.Shard{}, fmt.Errorf("%s=%d is out of range: with %d shards it runs from 0 to %d", EnvIndex, index, count, count-1)
	}
	return loadgen.Shard{Index: index, Count: count}, nil
}
