package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// TestExport: aimeter export writes the records of a new bundle
// (records.parquet) as the records.csv the version 1 writer gives for the
// same records, byte for byte, and as JSON Lines with the same values; a
// version 1 bundle exports its own records.csv unchanged.
func TestExport(t *testing.T) {
	dir := runQuick(t, "Server", []int{ExitOK})
	recs := readRecordsT(t, dir)
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	var want bytes.Buffer
	if err := bundle.WriteRecords(&want, recs); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "export", dir)
	if res.code != ExitOK || res.stdout != want.String() {
		t.Fatalf("export --format csv: exit %d, output differs from the version 1 writer's (%d bytes, want %d):\n%s", res.code, len(res.stdout), want.Len(), res.stderr)
	}
	out := filepath.Join(t.TempDir(), "recs.jsonl")
	if res := runCLI(t, "", "export", dir, "--format", "jsonl", "--output", out); res.code != ExitOK {
		t.Fatalf("export --format jsonl: %s", res)
	}
	lines := strings.Split(strings.TrimSuffix(readFileT(t, out), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d JSON lines, %d records", len(lines), len(recs))
	}
	for i, l := range lines {
		var o struct {
			SeqID        uint64 `json:"seq_id"`
			QueryID      uint64 `json:"query_id"`
			SampleIndex  uint64 `json:"sample_index"`
			ScheduledNs  *int64 `json:"scheduled_ns"`
			IssuedNs     *int64 `json:"issued_ns"`
			FirstTokenNs *int64 `json:"first_token_ns"`
			CompletedNs  *int64 `json:"completed_ns"`
			Tokens       int64  `json:"tokens"`
			Status       string `json:"status"`
		}
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		tm := func(p *int64) int64 {
			if p == nil {
				return loadgen.NoTime
			}
			return *p
		}
		st, _ := loadgen.ParseStatus(o.Status)
		got := loadgen.Record{SeqID: o.SeqID, QueryID: o.QueryID, SampleIndex: o.SampleIndex, ScheduledNs: tm(o.ScheduledNs),
			IssuedNs: tm(o.IssuedNs), FirstTokenNs: tm(o.FirstTokenNs), CompletedNs: tm(o.CompletedNs), Tokens: o.Tokens, Status: st}
		if got != recs[i] {
			t.Fatalf("line %d is %+v, want %+v", i+1, got, recs[i])
		}
	}
	// A version 1 bundle exports its records.csv as it is.
	toV1T(t, dir)
	if res := runCLI(t, "", "export", dir); res.code != ExitOK || res.stdout != readFileT(t, filepath.Join(dir, bundle.RecordsCSVFile)) {
		t.Errorf("export of a version 1 bundle differs from its records.csv: %s", res.stderr)
	}
	if res := runCLI(t, "", "export", dir, "--format", "xml"); res.code != ExitUsage {
		t.Errorf("--format xml: exit %d, want %d", res.code, ExitUsage)
	}
	if res := runCLI(t, "", "export", filepath.Join(dir, "nothing")); res.code != ExitFailure {
		t.Errorf("a missing bundle: exit %d, want %d", res.code, ExitFailure)
	}
}
