package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/bundle/internal/parquet"
	"aimeter/internal/peerstest"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
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

// TestTablesReadByDuckDB writes stages.parquet, samples.parquet and
// tokens.parquet of real runs (stage times on the run's clock, bytes,
// nodes, failures and three token times a sample) in row groups of 100
// rows, and reads them back with DuckDB from PyPI: every value of every
// row must be the one aimeter recorded, a time not measured being NULL
// and the clock the string "test" or "sut".
func TestTablesReadByDuckDB(t *testing.T) {
	bin := peerstest.Bin(t, nil, "duckdb")
	run := func(sut loadgen.SUT) *loadgen.Result {
		s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
		s.MinQueryCount = 1000
		res, err := loadgen.Run(context.Background(), sut, &loadgentest.QSL{Total: 64}, s, &loadgen.Options{SpinWindow: -1})
		if res == nil {
			t.Fatal(err)
		}
		return res
	}
	staged, wire := run(&loadgentest.StagedSUT{}), run(&loadgentest.WireSUT{})
	// The SUT's clock and a time left out on some rows, as a server
	// reporting Server-Timing durations gives them.
	stages := slices.Collect(staged.Stages())
	for i := range stages {
		if i%3 == 1 {
			stages[i].Clock, stages[i].Received, stages[i].Node = loadgen.SUTClock, loadgen.NoTime, uint32(i)
		}
	}
	dir := t.TempDir()
	files := map[string]func(io.Writer) error{
		StagesFile: func(w io.Writer) error {
			return parquet.WriteStages(w, staged.Records(), slices.Values(stages), 100)
		},
		SamplesFile: func(w io.Writer) error { return parquet.WriteSamples(w, wire.Records(), 100) },
		TokensFile:  func(w io.Writer) error { return parquet.WriteTokens(w, wire.TokenTimes(), 100) },
	}
	for name, write := range files {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each row as DuckDB reads it, printed as CSV is written (an empty
	// field for NULL), to compare with the CSV aimeter writes.
	script := `
import duckdb, sys
for path in sys.argv[1:]:
    rel = duckdb.execute("SELECT * FROM read_parquet(?)", [path])
    print("#", ",".join(d[0] for d in rel.description))
    for r in rel.fetchall():
        print(",".join("" if v is None else str(v) for v in r))
`
	args := []string{"-c", script}
	for _, name := range []string{StagesFile, SamplesFile, TokensFile} {
		args = append(args, filepath.Join(dir, name))
	}
	cmd := exec.Command(filepath.Join(bin, "python"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v: %s", err, stderr.String())
	}
	var want bytes.Buffer
	if err := WriteStages(&want, staged.Records(), slices.Values(stages)); err != nil {
		t.Fatal(err)
	}
	if err := writeSamples(&want, wire.Records()); err != nil {
		t.Fatal(err)
	}
	if err := writeTokens(&want, wire.TokenTimes()); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(string(out), "# ", "")
	if got != want.String() {
		gl, wl := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d: DuckDB read %q, aimeter recorded %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("DuckDB read %d lines, aimeter recorded %d", len(gl), len(wl))
	}
	if n := strings.Count(got, "\n"); n < 1000+1000+2000 { // stages, samples, tokens
		t.Errorf("only %d rows compared", n)
	}
}
