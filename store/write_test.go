package store

import (
	"strings"
	"testing"
	"time"
)

// TestWriteRuns: a line saying so without runs; a header and a line a run
// with "-" for an empty cell.
func TestWriteRuns(t *testing.T) {
	var b strings.Builder
	if err := WriteRuns(&b, nil); err != nil || b.String() != "no runs in the results store\n" {
		t.Errorf("no runs: %q, %v", b.String(), err)
	}
	b.Reset()
	runs := []Run{{ID: 7, RecordedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Kind: "run", Scenario: "Offline", VerdictWord: "VALID", Status: "stored", SeriesKey: "abc"}}
	if err := WriteRuns(&b, runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], "7 ") ||
		!strings.Contains(lines[1], "2026-01-02 03:04:05") || strings.Fields(lines[1])[5] != "-" {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestWriteThresholds: a line saying what compare uses without thresholds;
// a header and a line a threshold otherwise.
func TestWriteThresholds(t *testing.T) {
	var b strings.Builder
	if err := WriteThresholds(&b, nil); err != nil || !strings.HasPrefix(b.String(), "no thresholds stored") {
		t.Errorf("none: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := WriteThresholds(&b, []Threshold{{Metric: "headline", Test: ZScore, Limit: 5, Lookback: 1}}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "-  ") || !strings.Contains(lines[1], "headline") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestWriteExportFormats: JSON is an indented array, CSV has a header,
// any other format is refused.
func TestWriteExportFormats(t *testing.T) {
	var b strings.Builder
	if err := WriteExport(&b, []RunDetail{}, ExportJSON); err != nil || b.String() != "[]\n" {
		t.Errorf("json: %q, %v", b.String(), err)
	}
	if err := WriteExport(&b, nil, "xml"); err == nil {
		t.Error("xml accepted")
	}
}
