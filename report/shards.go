package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"aimeter/shard"
)

// shardsView is the per-shard part of a merged test's section: how the
// shards were split and put on one clock, and one row per shard.
type shardsView struct {
	Anchor string
	// Summary says how the test was split and merged; Clock how the
	// shards' clocks were bounded and aligned; Missing names the shards a
	// partial merge left out ("" for none).
	Summary, Clock, Missing string
	Table                   table
}

// shardHead are the columns of the per-shard table.
var shardHead = []string{"Shard", "Directory", "Records", "Samples/s", "p50", "p99", "Failed", "Lost",
	"Clock offset", "Start late", "Shift", "Bundle digest (manifest SHA-256)"}

// buildShards is the per-shard table of a merged test (merge.json): one
// row per shard of the test, by index, a shard that a partial merge left
// out marked missing; each shard's rate and latencies are its own (from
// its summary), its clock offset against the reference with its
// uncertainty, how late it began issuing after the common start and how
// far the merge moved its times, and its bundle's digest. Nil for a
// bundle that is no merge.
func buildShards(anchor string, m *shard.Merge) *shardsView {
	if m == nil {
		return nil
	}
	v := &shardsView{Anchor: anchor, Table: table{Head: shardHead}}
	rule := m.Rule
	if rule == "" {
		rule = "unknown"
	}
	v.Summary = fmt.Sprintf("This test ran as %d shards of one seeded schedule (split: %s; schedule SHA-256 %s) and was merged by aimeter merge from their records (merge.json): the figures above are the whole test's, over the union. Below, each shard's own: its samples per second and sample latencies from its summary.",
		m.Count, rule, m.ScheduleSHA256)
	if m.StartAt != nil {
		v.Clock = fmt.Sprintf("Common start %s on the reference clock. Every shard's |clock offset| + uncertainty was within %s; the shards' records lie on the common clock within %s of each other (the two largest uncertainties).",
			m.StartAt.UTC().Format(time.RFC3339Nano), fmtDur(m.MaxClockOffsetNs), fmtDur(m.AlignmentUncertaintyNs))
	} else {
		v.Clock = "No common start: each shard's records are taken from its own start; the union's throughput assumes the shards ran together."
	}
	if len(m.Missing) > 0 {
		v.Missing = m.PartialReason()
	}
	byIndex := map[int]shard.MergedShard{}
	for _, s := range m.Shards {
		byIndex[s.Index] = s
	}
	for i := range max(m.Count, len(m.Shards)) {
		s, ok := byIndex[i]
		if !ok {
			row := []string{strconv.Itoa(i), "missing"}
			if slices.Contains(m.Missing, i) {
				row[1] = "missing (merged with --allow-partial)"
			}
			v.Table.Rows = append(v.Table.Rows, append(row, make([]string, len(shardHead)-2)...))
			continue
		}
		v.Table.Rows = append(v.Table.Rows, shardCells(s))
	}
	return v
}

// shardCells is one merged shard's row of the per-shard table.
func shardCells(s shard.MergedShard) []string {
	lat := func(ns int64) string {
		if ns == 0 {
			return "—"
		}
		return fmtDur(ns)
	}
	rate := "—"
	if s.SamplesPerSecond > 0 {
		rate = fmtSig(s.SamplesPerSecond, 4)
	}
	clock := "not measured"
	if s.ClockMeasured {
		clock = fmtDur(s.ClockOffsetNs) + " ± " + fmtDur(s.ClockUncertaintyNs)
	}
	digest := s.ManifestSHA256
	if digest == "" {
		digest = "—"
	}
	return []string{strconv.Itoa(s.Index), s.Dir, fmtCount(s.Records), rate, lat(s.LatencyP50Ns), lat(s.LatencyP99Ns),
		fmtCount(s.Failed), fmtCount(s.Lost), clock, fmtDur(s.StartLateNs), fmtDur(s.ShiftNs), strings.ToLower(digest)}
}
