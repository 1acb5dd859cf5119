package bundle

import (
	"aimeter/loadgen/loadgentest"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

// writeRunDir writes a real run of sut with settings s into a new
// directory and returns it.
func writeRunDir(t testing.TB, sut loadgen.SUT, s loadgen.Settings) string {
	t.Helper()
	return writeRunDirVersion(t, sut, s, FormatVersion)
}

// writeRunDirVersion is writeRunDir in bundle layout version.
func writeRunDirVersion(t testing.TB, sut loadgen.SUT, s loadgen.Settings, version int) string {
	t.Helper()
	res, err := loadgen.Run(context.Background(), sut, null.QSL{Total: 256}, s, &loadgen.Options{SpinWindow: -1})
	if res == nil {
		t.Fatalf("Run: %v", err)
	}
	dir := t.TempDir()
	if err := WriteWith(dir, &Bundle{Result: res, Version: "test", Trace: true}, nil, WriteOptions{FormatVersion: version}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// recordFile is the record file of the bundle in dir: records.parquet or,
// in a version 1 bundle, records.csv.
func recordFile(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, RecordsCSVFile)); err == nil {
		return RecordsCSVFile
	}
	return RecordsFile
}

// recordsText is the records.csv text of the records of dir, whichever
// file holds them.
func recordsText(t *testing.T, dir string) string {
	t.Helper()
	data := readAll(t, filepath.Join(dir, recordFile(dir)))
	if recordFile(dir) == RecordsCSVFile {
		return string(data)
	}
	recs, err := ReadRecordsParquet(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteRecords(&b, recs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// editRecords rewrites the record file of dir (records.csv or
// records.parquet) through edit, which gets and returns the rows of
// records.csv after the header, each split into its fields.
func editRecords(t *testing.T, dir string, edit func(rows [][]string) [][]string) {
	t.Helper()
	p := filepath.Join(dir, recordFile(dir))
	lines := strings.Split(strings.TrimSuffix(recordsText(t, dir), "\n"), "\n")
	var rows [][]string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Split(l, ","))
	}
	var b strings.Builder
	b.WriteString(lines[0] + "\n")
	for _, r := range edit(rows) {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	data := []byte(b.String())
	if recordFile(dir) == RecordsFile {
		var recs []loadgen.Record
		for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")[1:] {
			rec, err := parseRecord([]byte(l), i+2)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		var out bytes.Buffer
		if err := WriteRecordsParquet(&out, recs, RecordWriterOptions{RowGroupRows: 7}); err != nil {
			t.Fatal(err)
		}
		data = out.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Field positions in a records.csv row.
const (
	fSeq = iota
	fQuery
	fIndex
	fScheduled
	fIssued
	fFirstToken
	fCompleted
	fTokens
	fStatus
)

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestReadRefusesImpossibleRecords: aimeter report refuses records no run
// can have written, naming the line and the field, instead of reporting
// them (negative latencies, completions without times, every row twice
// were all reported VALID before).
func TestReadRefusesImpossibleRecords(t *testing.T) {
	for _, version := range []int{1, FormatVersion} {
		t.Run(strconv.Itoa(version), func(t *testing.T) { testReadRefusesImpossibleRecords(t, version) })
	}
}

// testReadRefusesImpossibleRecords is TestReadRefusesImpossibleRecords for
// a bundle of layout version, whose errors name the row of
// records.parquet (the line of records.csv less one) or the line of
// records.csv.
func testReadRefusesImpossibleRecords(t *testing.T, version int) {
	s := loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)
	orig := writeRunDirVersion(t, null.SUT{}, s, version)
	file, where := RecordsCSVFile, "line"
	if version > 1 {
		file, where = RecordsFile, "row"
	}
	cases := []struct {
		name   string
		edit   func(t *testing.T, rows [][]string) [][]string
		line   int
		field  string
		reason string
	}{
		{"completed before scheduled", func(t *testing.T, rows [][]string) [][]string {
			rows[2][fCompleted] = strconv.FormatInt(atoi(t, rows[2][fScheduled])-5, 10)
			return rows
		}, 4, "completed_ns", "a negative latency is impossible"},
		{"issued before scheduled", func(t *testing.T, rows [][]string) [][]string {
			rows[1][fIssued] = strconv.FormatInt(atoi(t, rows[1][fScheduled])-1, 10)
			return rows
		}, 3, "issued_ns", "LoadGen never issues a query before its schedule"},
		{"ok row without a completion", func(t *testing.T, rows [][]string) [][]string {
			rows[0][fCompleted] = ""
			return rows
		}, 2, "completed_ns", "an ok sample completed at some time"},
		{"error row without a completion", func(t *testing.T, rows [][]string) [][]string {
			rows[3][fCompleted], rows[3][fStatus] = "", "error"
			return rows
		}, 5, "completed_ns", "a failure is reported at some time"},
		{"lost row with a completion", func(t *testing.T, rows [][]string) [][]string {
			rows[4][fStatus] = "lost"
			return rows
		}, 6, "completed_ns", "a lost sample never completed"},
		{"first token after completion", func(t *testing.T, rows [][]string) [][]string {
			rows[5][fFirstToken] = strconv.FormatInt(atoi(t, rows[5][fCompleted])+1, 10)
			return rows
		}, 7, "first_token_ns", "the first token cannot come after the whole response"},
		{"first token before issue", func(t *testing.T, rows [][]string) [][]string {
			rows[5][fFirstToken] = strconv.FormatInt(atoi(t, rows[5][fIssued])-1, 10)
			return rows
		}, 7, "first_token_ns", "no token comes before the query"},
		{"every row duplicated", func(t *testing.T, rows [][]string) [][]string {
			var out [][]string
			for _, r := range rows {
				out = append(out, r, r)
			}
			return out
		}, 3, "seq_id", "a sample is issued once"},
		{"a row repeated out of order", func(t *testing.T, rows [][]string) [][]string {
			return append(rows, rows[1])
		}, len(mustRows(t, orig)) + 2, "seq_id", "a repeat far from the first is found too"},
		{"seq id outside every pass", func(t *testing.T, rows [][]string) [][]string {
			rows[len(rows)-1][fSeq] = "99999999"
			return rows
		}, len(mustRows(t, orig)) + 1, "seq_id", "a record belongs to a pass"},
		{"sample index outside the QSL", func(t *testing.T, rows [][]string) [][]string {
			rows[0][fIndex] = "256"
			return rows
		}, 2, "sample_index", "the QSL has 256 samples"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, orig, d)
			editRecords(t, d, func(rows [][]string) [][]string { return c.edit(t, rows) })
			_, err := ReadWith(d, ReadOptions{SkipVerify: true})
			line := c.line
			if version > 1 {
				line-- // rows of records.parquet have no header before them
			}
			var re *RecordsError
			if !errors.As(err, &re) || re.Line != line || re.Field != c.field {
				t.Fatalf("%s: ReadWith = %v, want a RecordsError at %s %d, field %s", c.reason, err, where, line, c.field)
			}
			if want := fmt.Sprintf("%s %s %d", file, where, line); !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
		})
	}
}

func mustRows(t *testing.T, dir string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(recordsText(t, dir), "\n"), "\n")
	return lines[1:]
}

// editSettings rewrites settings.json of dir through edit, on its JSON
// object (numbers kept as json.Number).
func editSettings(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, SettingsFile)
	dec := json.NewDecoder(bytes.NewReader(readAll(t, p)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadRefusesImpossibleSettings: a stored setting outside its range is
// refused with its key named (a target_latency_percentile outside (0, 1)
// made aimeter report panic).
func TestReadRefusesImpossibleSettings(t *testing.T) {
	orig := writeRunDir(t, null.SUT{}, loadgentest.SmallSettings(loadgen.SingleStream, loadgen.PerformanceOnly))
	effective := func(key string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["effective"].(map[string]any)[key] = v }
	}
	pass := func(key string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["passes"].([]any)[0].(map[string]any)[key] = v }
	}
	cases := []struct {
		name   string
		edit   func(m map[string]any)
		key    string
		reason string
	}{
		{"percentile above 1", effective("target_latency_percentile", 1.5), "effective.target_latency_percentile", "indexes past the latencies: it panicked"},
		{"percentile of 1", effective("target_latency_percentile", 1), "effective.target_latency_percentile", "the bound is open"},
		{"percentile 0", effective("target_latency_percentile", 0), "effective.target_latency_percentile", "the bound is open"},
		{"negative percentile", effective("target_latency_percentile", -0.5), "effective.target_latency_percentile", "a negative index panicked"},
		{"no samples per query", effective("samples_per_query", 0), "effective.samples_per_query", "a query has at least one sample"},
		{"zero target qps", effective("target_qps", 0), "effective.target_qps", "rates are positive"},
		{"accuracy probability above 1", effective("accuracy_log_probability", 2), "effective.accuracy_log_probability", "a probability is in [0, 1]"},
		{"requested percentile above 1", func(m map[string]any) {
			m["requested"].(map[string]any)["single_stream_target_latency_percentile"] = 1.5
		}, "requested.single_stream_target_latency_percentile", "the requested settings passed Settings.Validate before the run"},
		{"pass ending before it starts", pass("end_seq", -1+1), "passes[0].end_seq", "first_seq ≤ end_seq"},
		{"negative pass end", pass("end_ns", -3), "passes[0].end_ns", "lost samples are censored at end_ns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, orig, d)
			if c.key == "passes[0].end_seq" {
				editSettings(t, d, func(m map[string]any) {
					p := m["passes"].([]any)[0].(map[string]any)
					p["first_seq"], p["end_seq"] = 10, 5
				})
			} else {
				editSettings(t, d, c.edit)
			}
			_, err := ReadWith(d, ReadOptions{SkipVerify: true})
			var fe *loadgen.FieldError
			if !errors.As(err, &fe) || fe.Field != c.key || !strings.Contains(err.Error(), SettingsFile) {
				t.Fatalf("%s: ReadWith = %v, want a FieldError for %s naming %s", c.reason, err, c.key, SettingsFile)
			}
		})
	}
}
