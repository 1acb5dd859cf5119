package shard

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"aimeter/bundle"
)

// MergeFile is the part of a bundle that `aimeter merge` made from the
// bundles of a test's shards (package merge): which shards it joined and
// how it put their clocks together. A merged bundle has no shard.json: it
// is the whole test.
const MergeFile = "merge.json"

// Merge is merge.json.
type Merge struct {
	// Count is the number of shards the test was split into.
	Count int `json:"count"`
	// Rule is how the test was split (RuleQueryModN or RuleSampleBlocks).
	Rule string `json:"rule"`
	// ScheduleSHA256 is the whole test's schedule digest, every shard's.
	ScheduleSHA256 string `json:"schedule_sha256"`
	// StartAt is the shards' common start on the reference clock; nil
	// when they had none (each shard's records were taken from its own
	// start).
	StartAt *time.Time `json:"start_at,omitempty"`
	// MaxClockOffsetNs is the bound the merge assumed and checked: every
	// shard's |clock offset| + uncertainty was within it.
	MaxClockOffsetNs int64 `json:"max_clock_offset_ns"`
	// AlignmentUncertaintyNs is how far apart two shards' records may be
	// placed on the common clock from where they truly were: the sum of
	// the two largest clock uncertainties (0 when no clock was measured:
	// the hosts' own clocks were taken as the reference).
	AlignmentUncertaintyNs int64 `json:"alignment_uncertainty_ns"`
	// Missing are the indexes of the shards that were not merged: a merge
	// with --allow-partial, whose result is INVALID. Empty otherwise.
	Missing []int `json:"missing,omitempty"`
	// Shards are the merged shards, by index.
	Shards []MergedShard `json:"shards"`
}

// MergedShard is one shard of a merge: where its bundle was, its digest,
// its clock and what it measured on its own.
type MergedShard struct {
	Index int `json:"index"`
	// Dir is the directory the shard's bundle was read from.
	Dir string `json:"dir"`
	// ManifestSHA256 is the SHA-256 of the shard's manifest.json: the
	// digest of its whole bundle, since the manifest lists every file's.
	ManifestSHA256 string `json:"manifest_sha256"`
	// ClockOffsetNs and ClockUncertaintyNs are the shard's clock against
	// the reference (shard.json's clock); ClockMeasured is false when
	// the shard had no reference (offset 0 assumed).
	ClockMeasured      bool  `json:"clock_measured"`
	ClockOffsetNs      int64 `json:"clock_offset_ns"`
	ClockUncertaintyNs int64 `json:"clock_uncertainty_ns"`
	// StartLateNs is how late the shard began issuing after the common
	// start, on its own clock; ShiftNs is how far the merge moved its
	// records' times of the started pass to put them on the common clock.
	StartLateNs int64 `json:"start_late_ns"`
	ShiftNs     int64 `json:"shift_ns"`
	// Records is the number of records the shard contributed, Failed and
	// Lost of them failed or were lost.
	Records uint64 `json:"records"`
	Failed  uint64 `json:"failed"`
	Lost    uint64 `json:"lost"`
	// SamplesPerSecond is the shard's completed samples per second in its
	// reported pass; LatencyP50Ns and LatencyP99Ns its sample latencies
	// (0 where the shard has no performance pass).
	SamplesPerSecond float64 `json:"samples_per_second"`
	LatencyP50Ns     int64   `json:"latency_p50_ns"`
	LatencyP99Ns     int64   `json:"latency_p99_ns"`
}

// Partial reports whether the merge left shards out (--allow-partial).
func (m *Merge) Partial() bool { return m != nil && len(m.Missing) > 0 }

// PartialReason is the verdict's reason of a partial merge: which shards
// are missing.
func (m *Merge) PartialReason() string {
	return fmt.Sprintf("Merged %d of %d shards: shard(s) %v missing (merged with --allow-partial); the test is not whole.",
		len(m.Shards), m.Count, m.Missing)
}

// MergePart is merge.json as a part of a bundle.
var MergePart = bundle.PartType[*Merge]{Name: MergeFile, Read: ReadMerge, Write: WriteMerge}

// MergeOf returns b's merge record; nil for a bundle that is no merge.
func MergeOf(b *bundle.Bundle) *Merge { return MergePart.Value(b) }

// WriteMerge writes merge.json.
func WriteMerge(w io.Writer, m *Merge) error { return bundle.WriteJSON(w, m) }

// ReadMerge reads merge.json; an unknown field is an error.
func ReadMerge(r io.Reader) (*Merge, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var m Merge
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", MergeFile, err)
	}
	if m.Count < 1 {
		return nil, fmt.Errorf("%s: count %d: want at least 1 shard", MergeFile, m.Count)
	}
	return &m, nil
}
