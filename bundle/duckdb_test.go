package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"aimeter/internal/peerstest"
	"aimeter/loadgen"
	"aimeter/loadgentest"
)

// TestRecordsReadByDuckDB writes a run's records.parquet (with failed and
// lost samples, first-token times and samples without them) and reads it
// back with DuckDB from PyPI: every value of every row must be the one
// aimeter recorded, a missing time being NULL.
func TestRecordsReadByDuckDB(t *testing.T) {
	bin := peerstest.Bin(t, nil, "duckdb")
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	s.MinQueryCount = 70000 // two row groups
	s.UseTokenLatencies = true
	sut := funcSUT(func(r *loadgen.Responder, samples []loadgen.QuerySample) {
		for _, q := range samples {
			switch q.Index % 5 {
			case 0: // never answered: lost at the end of the pass
			case 1:
				r.Fail(q.ID, errors.New("boom"))
			case 2:
				r.Complete(q.ID, nil, 7) // no first token
			default:
				r.FirstToken(q.ID, nil)
				r.Complete(q.ID, nil, int64(q.Index))
			}
		}
	})
	dir := filepath.Join(t.TempDir(), "run")
	stream := NewRecordStream(dir)
	res, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 64}, s, &loadgen.Options{Records: stream.Add, StallTimeout: 100 * time.Millisecond})
	if err != nil && res == nil {
		stream.Discard()
		t.Fatal(err)
	}
	if err := Write(dir, &Bundle{Result: res, Version: "test", Records: stream}, nil); err != nil {
		t.Fatal(err)
	}
	script := `
import duckdb, json, sys
rows = duckdb.execute("SELECT seq_id, query_id, sample_index, scheduled_ns, issued_ns, first_token_ns, completed_ns, tokens, status FROM read_parquet(?) ORDER BY seq_id", [sys.argv[1]]).fetchall()
for r in rows:
    print(json.dumps(r))
`
	cmd := exec.Command(filepath.Join(bin, "python"), "-c", script, filepath.Join(dir, RecordsFile))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v: %s", err, stderr.String())
	}
	want := make(map[uint64]loadgen.Record)
	statuses := map[loadgen.Status]int{}
	for rec := range res.Records() {
		want[rec.SeqID] = rec
		statuses[rec.Status]++
	}
	if len(statuses) < 3 {
		t.Fatalf("the run has statuses %v, want ok, error and lost", statuses)
	}
	ns := func(v *int64) int64 {
		if v == nil {
			return loadgen.NoTime
		}
		return *v
	}
	n := 0
	for line := range bytes.Lines(out) {
		var row [9]*int64
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		n++
		r, ok := want[uint64(*row[0])]
		if !ok {
			t.Fatalf("DuckDB read seq_id %d, which aimeter did not record", *row[0])
		}
		got := loadgen.Record{SeqID: uint64(*row[0]), QueryID: uint64(*row[1]), SampleIndex: uint64(*row[2]),
			ScheduledNs: ns(row[3]), IssuedNs: ns(row[4]), FirstTokenNs: ns(row[5]), CompletedNs: ns(row[6]),
			Tokens: *row[7], Status: loadgen.Status(*row[8])}
		r.RequestBytes, r.ResponseBytes, r.Node, r.Error = 0, 0, 0, 0 // in samples.csv, not here
		if got != r {
			t.Fatalf("DuckDB read %+v, aimeter recorded %+v", got, r)
		}
	}
	if n != len(want) {
		t.Fatalf("DuckDB read %d rows, aimeter recorded %d", n, len(want))
	}
}

// funcSUT is a SUT of one function.
type funcSUT func(r *loadgen.Responder, samples []loadgen.QuerySample)

func (funcSUT) Name() string { return "funcSUT" }
func (f funcSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	f(r, samples)
}
func (funcSUT) FlushQueries() {}
