package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"aimeter/internal/browsertest"
	"aimeter/loadgen"
	"aimeter/shard"
)

// mergeOf is a merge.json for res as if it had been run as count shards
// (query q to shard q mod count) and merged: each shard's records are its
// part of the reported pass, its figures made up but plausible, its digest
// the SHA-256 of its name. With common, the shards had a common start and
// measured their clocks; missing are left out (--allow-partial).
func mergeOf(res *loadgen.Result, count int, common bool, missing ...int) *shard.Merge {
	m := &shard.Merge{Count: count, Rule: shard.RuleQueryModN, ScheduleSHA256: digestOf("schedule"), MaxClockOffsetNs: 100_000_000, Missing: missing}
	if common {
		at := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
		m.StartAt, m.AlignmentUncertaintyNs = &at, 120_500
	}
	records := make([]uint64, count)
	pass := res.ReportedPass()
	for r := range res.PassRecords(pass) {
		records[int(r.SeqID-res.Passes[pass].FirstSeq)%count]++
	}
	for i := range count {
		if slices.Contains(missing, i) {
			continue
		}
		s := shard.MergedShard{Index: i, Dir: fmt.Sprintf("shard-%d", i), ManifestSHA256: digestOf(fmt.Sprintf("shard-%d", i)),
			StartLateNs: int64(150 + 40_000*i), Records: records[i], Failed: uint64(i % 2), Lost: 0,
			SamplesPerSecond: 121.9135802 + float64(i)/3, LatencyP50Ns: 2_693_147 + int64(i)*10_301, LatencyP99Ns: 6_604_911 + int64(i)*99_017}
		if common {
			s.ClockMeasured, s.ClockOffsetNs, s.ClockUncertaintyNs = true, int64(-17_411+12_000*i), int64(36_279-5_000*i)
			s.ShiftNs = s.StartLateNs - 150
		}
		m.Shards = append(m.Shards, s)
	}
	return m
}

func digestOf(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }

// TestShardTable: one row per shard of the test, by index, with its own
// records, rate, p50 and p99, failures, clock offset ± uncertainty (or
// "not measured"), start lateness, shift and full bundle digest; a shard
// a partial merge left out is a row marked missing, and the section says
// which; a run that is no merge shows no shard table.
func TestShardTable(t *testing.T) {
	res := serverResultOf(t, serverValid)
	m := mergeOf(res, 4, true)
	v := buildShards("s1", m)
	if len(v.Table.Rows) != 4 || len(v.Table.Head) != len(shardHead) {
		t.Fatalf("%d rows of %d columns, want 4 of %d", len(v.Table.Rows), len(v.Table.Head), len(shardHead))
	}
	row := v.Table.Rows[1]
	want := []string{"1", "shard-1", fmtCount(m.Shards[1].Records), "122.2", "2.703 ms", "6.704 ms", "1", "0", "-5.411 µs ± 31.28 µs", "40.15 µs", "40.00 µs", digestOf("shard-1")}
	if strings.Join(row, "|") != strings.Join(want, "|") {
		t.Errorf("shard 1's row:\n got %q\nwant %q", row, want)
	}
	var total, rows uint64
	for _, s := range m.Shards {
		total += s.Records
	}
	for range res.PassRecords(res.ReportedPass()) {
		rows++
	}
	if total != rows || rows == 0 {
		t.Fatalf("the fixture's shards hold %d records, its pass %d", total, rows)
	}
	if !strings.Contains(v.Clock, "2026-11-29T02:00:00Z") || !strings.Contains(v.Clock, "100.0 ms") || !strings.Contains(v.Clock, "120.5 µs") {
		t.Errorf("the clock line: %q", v.Clock)
	}
	if v.Missing != "" {
		t.Errorf("a whole merge says %q is missing", v.Missing)
	}

	p := buildShards("s2", mergeOf(res, 4, false, 2))
	if got := p.Table.Rows[2][:2]; got[0] != "2" || got[1] != "missing (merged with --allow-partial)" {
		t.Errorf("the missing shard's row starts %q", got)
	}
	if !strings.Contains(p.Missing, "shard(s) [2] missing") || !strings.Contains(p.Clock, "No common start") || p.Table.Rows[0][8] != "not measured" {
		t.Errorf("a partial merge without a common start: missing %q, clock %q, offset %q", p.Missing, p.Clock, p.Table.Rows[0][8])
	}
	if buildShards("s3", nil) != nil {
		t.Error("a run that is no merge has a shard table")
	}
	page := string(render(t, &Report{Runs: []RunSection{{Name: "server", Result: res}}}))
	if strings.Contains(page, "Per shard") {
		t.Error("the page of a run that is no merge shows a shard table")
	}
}

// TestBrowserShowsShardTable renders a merged run's page in headless
// Chromium: under "Per shard" a table of one row per shard whose cells
// are what merge.json says (index, directory, records, the full bundle
// digest), and a partial merge's missing shard named in a warning.
func TestBrowserShowsShardTable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	res := serverResultOf(t, serverValid)
	whole, partial := mergeOf(res, 4, true), mergeOf(res, 4, false, 2)
	page := filepath.Join(t.TempDir(), "report.html")
	r := &Report{Runs: []RunSection{{Name: "merged", Result: res, Shards: whole}, {Name: "partial", Result: res, Shards: partial}}}
	if err := os.WriteFile(page, render(t, r), 0o644); err != nil {
		t.Fatal(err)
	}
	run := openInBrowser(t, page, "")
	for _, p := range run.problems {
		t.Errorf("page: %s", p)
	}
	for _, p := range numberProblems(hashRE.ReplaceAllString(run.text, "<hash>")) {
		t.Errorf("page text: %s", p)
	}
	var tables [][][]string
	var warns []string
	ctx := browsertest.Context(t, 30*time.Second)
	if err := chromedp.Run(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible("body", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("section.scenario")).map(function (s) {
			var h = s.querySelector("h3[id$='-shards']");
			var d = h ? h.parentElement.querySelector("div.shards table") : null;
			return d ? Array.from(d.querySelectorAll("tbody tr")).map(function (tr) {
				return Array.from(tr.children).map(function (c) { return c.innerText; });
			}) : [];
		})`, &tables),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("section.scenario p.warn")).map(function (p) { return p.innerText; })`, &warns),
	); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 {
		t.Fatalf("%d sections", len(tables))
	}
	for k, m := range []*shard.Merge{whole, partial} {
		rows := tables[k]
		if len(rows) != m.Count {
			t.Fatalf("section %d: %d shard rows, want %d", k+1, len(rows), m.Count)
		}
		for _, s := range m.Shards {
			row := rows[s.Index]
			if row[0] != fmt.Sprint(s.Index) || row[1] != s.Dir || row[2] != fmtCount(s.Records) || row[len(row)-1] != s.ManifestSHA256 {
				t.Errorf("section %d, shard %d: the browser shows %q", k+1, s.Index, row)
			}
		}
	}
	if got := tables[1][2][1]; got != "missing (merged with --allow-partial)" {
		t.Errorf("the partial merge's shard 2 shows %q", got)
	}
	if !strings.Contains(strings.Join(warns, "\n"), "Merged 3 of 4 shards: shard(s) [2] missing") {
		t.Errorf("the partial merge's warnings: %q", warns)
	}
}
