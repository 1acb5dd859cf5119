package aisbench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/train"
)

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 not installed: %v", err)
	}
}

// python runs a Python program with aimeter's ais_utils.py importable and
// the results file named by ResultsEnv; it returns the records written.
func python(t *testing.T, program string) ([]Record, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ais_utils.py"), AisUtils, 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.jsonl")
	cmd := exec.Command("python3", "-c", program)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), ResultsEnv+"="+results, "PYTHONPATH="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	data, _ := os.ReadFile(results)
	recs, bad, first, err := ReadRecords(bytes.NewReader(data))
	if err != nil || bad > 0 {
		t.Fatalf("results file: %d malformed (%v), %v", bad, first, err)
	}
	return recs, string(out)
}

// TestAisUtilsFunctions: the functions the workloads call behave as the
// stubs' adapter does, and get_datatime() serves both stubs' uses.
func TestAisUtilsFunctions(t *testing.T) {
	needPython(t)
	_, out := python(t, `import ais_utils as a
print(a.calc_throughput_rate(100, 2.0, 2.0), a.calc_throughput_rate(100, 1.0, 3.0), a.calc_lantency(10.0, 0), a.calc_lantency(10.0, 4))
t = a.get_datatime()
print(type(t.decode("utf-8")).__name__, len(t.decode("utf-8")), a.calc_throughput_rate(1, t, t + 0.5))`)
	if want := "0 50.0 0 2.5\nstr 19 2.0\n"; out != want {
		t.Errorf("printed %q, want %q (rate 0 when start equals end; latency 0 for no count; a stamp that decodes to %%Y-%%m-%%d %%H:%%M:%%S and subtracts as seconds)", out, want)
	}
}

// TestAisUtilsValues: values are kept as set: numbers as numbers, strings
// and bytes as strings, NaN as its text; the command line's value is the
// fourth word, with the rest kept apart.
func TestAisUtilsValues(t *testing.T) {
	needPython(t)
	recs, _ := python(t, `import ais_utils as a, subprocess, sys
a.set_result("training", "throughput_ratio", 450.5)
a.set_result("training", "max_power", 0)
a.set_result("training", "accuracy", "0.71")
a.set_result("training", "bytes", b"2022-07-13 13:24:43")
a.set_result("training", "nan", float("nan"))
subprocess.check_call([sys.executable, "ais_utils.py", "set_result", "training", "proc_start_time", "2022-07-13", "13:24:43"])`)
	want := []struct{ key, value, extra string }{
		{"throughput_ratio", "450.5", ""}, {"max_power", "0", ""}, {"accuracy", `"0.71"`, ""},
		{"bytes", `"2022-07-13 13:24:43"`, ""}, {"nan", `"nan"`, ""}, {"proc_start_time", `"2022-07-13"`, "13:24:43"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		r := recs[i]
		if r.Mode != ModeTraining || r.Key != w.key || string(r.Value) != w.value || strings.Join(r.Extra, " ") != w.extra || r.Time <= 0 || r.PID <= 0 {
			t.Errorf("record %d: %+v, want %s = %s extra %q", i, r, w.key, w.value, w.extra)
		}
	}
}

// TestAisUtilsConcurrentRanks: ranks setting results at once lose no line
// and tear none.
func TestAisUtilsConcurrentRanks(t *testing.T) {
	needPython(t)
	recs, _ := python(t, `import os, subprocess, sys
procs = [subprocess.Popen([sys.executable, "-c", "import ais_utils\nfor i in range(50): ais_utils.set_result('training', 'k', 'x' * 3000)"], env=dict(os.environ, RANK_ID=str(r))) for r in range(8)]
sys.exit(max(p.wait() for p in procs))`)
	if len(recs) != 400 {
		t.Fatalf("%d records, want 8 ranks × 50", len(recs))
	}
	ranks := map[string]int{}
	for _, r := range recs {
		ranks[r.Rank]++
	}
	if len(ranks) != 8 || ranks["0"] != 50 {
		t.Errorf("records by rank %v, want 50 from each of 8", ranks)
	}
}

// TestAisUtilsOutsideAimeter: without ResultsEnv the module says so on
// stderr and the workload goes on.
func TestAisUtilsOutsideAimeter(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ais_utils.py"), AisUtils, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "ais_utils.py", "set_result", "training", "result", "OK")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), ResultsEnv+" is not set") {
		t.Errorf("exit %v, output %q: want exit 0 and a note that the result was not recorded", err, out)
	}
}

func TestParseStamp(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	for _, c := range []struct {
		in      string
		want    time.Time
		dayOnly bool
		bad     bool
		why     string
	}{
		{"2022-07-13 13:24:43", time.Date(2022, 7, 13, 13, 24, 43, 0, loc), false, false, "the stubs' form, in the run's zone"},
		{"2022-07-13 13:24:43.5", time.Date(2022, 7, 13, 13, 24, 43, 5e8, loc), false, false, "fractions kept"},
		{"1657689883.25", time.Unix(1657689883, 25e7), false, false, "time.time() of the stubs 1.0 adapter"},
		{"2022-07-13", time.Time{}, true, true, "the unquoted-date quirk: the day alone"},
		{"yesterday", time.Time{}, false, true, "not a time"},
		{"-5", time.Time{}, false, true, "negative seconds"},
	} {
		got, dayOnly, err := ParseStamp(c.in, loc)
		if (err != nil) != c.bad || dayOnly != c.dayOnly || !got.Equal(c.want) {
			t.Errorf("%s: ParseStamp(%q) = %v, %v, %v", c.why, c.in, got, dayOnly, err)
		}
	}
}

func TestParseRankFile(t *testing.T) {
	for _, c := range []struct {
		name, data string
		rank       int
		th         float64 // -1: none
		bad        bool
		why        string
	}{
		{"result/throughput_rank_3", "450.5\n", 3, 450.5, false, "calc_result.py's bare float"},
		{"throughput_rank_0", "fast", 0, -1, true, "a throughput that is not a number"},
		{"result_rank_1.json", `{"train": {"throughput_ratio": [10, "20.5"], "train_start_time": ["2023-11-01 10:00:00"]}}`, 1, 30.5, false, "calc_llm_result.py's lists, numbers or strings"},
		{"result_rank_2.json", `{"train": {"train_start_time": ["2023-11-01 10:00:00"]}}`, 2, -1, false, "no throughput set by the rank"},
		{"result_rank_2.json", `{"train": [1]}`, 2, -1, true, "not the {mode: {key: [values]}} shape"},
	} {
		rf := ParseRankFile(c.name, []byte(c.data))
		got := -1.0
		if rf.Throughput != nil {
			got = *rf.Throughput
		}
		if rf.Rank != c.rank || got != c.th || (rf.Error != "") != c.bad {
			t.Errorf("%s: %+v, want rank %d throughput %v error %v", c.why, rf, c.rank, c.th, c.bad)
		}
	}
}

// FuzzParseLine: no line crashes the parser, and what it accepts has a
// key and a value that Number and Text read.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"mode": "training", "key": "accuracy", "value": 0.71, "time": 1657689883.2, "pid": 1}`,
		`{"mode": "training", "key": "proc_start_time", "value": "2022-07-13", "extra": ["13:24:43"], "time": 1, "rank": "0"}`,
		`{"mode": "x", "key": "", "value": null, "time": -1}`,
		`{"key": "a", "value": [1], "time": 1}`, `{"key": "a", "value": 1e999, "time": 1}`, "", "{", "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseLine(line)
		if err != nil {
			return
		}
		if strings.TrimSpace(r.Key) == "" || len(r.Value) == 0 {
			t.Fatalf("accepted %q as %+v", line, r)
		}
		_ = r.Text()
		_, _ = r.Number()
		_ = r.When()
		run := &Run{Records: []Record{r}, Phases: []Phase{{Name: "run_train", Start: time.Unix(1, 0), End: time.Unix(2, 0)}}}
		_ = Map(run, nil, trainConfig)
		_ = Events(run, "n")
	})
}

// FuzzParseRankFile: no file crashes the reader.
func FuzzParseRankFile(f *testing.F) {
	f.Add("throughput_rank_0", []byte("1.5"))
	f.Add("result_rank_0.json", []byte(`{"train": {"throughput_ratio": [1, 2]}}`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		rf := ParseRankFile(name, data)
		if rf.Throughput != nil && rf.Error != "" {
			t.Fatalf("%+v: a throughput and an error", rf)
		}
	})
}

var trainConfig = train.Config{TrainingSetSize: 1000}

// TestReadRecordsBounds: a line over MaxLine is one malformed line, not a
// record and not held whole; the lines around it still count.
func TestReadRecordsBounds(t *testing.T) {
	good := `{"mode": "training", "key": "a", "value": 1, "time": 1}` + "\n"
	in := good + strings.Repeat("x", 3*MaxLine) + "\n" + "not json\n\n" + good
	recs, bad, first, err := ReadRecords(strings.NewReader(in))
	if err != nil || len(recs) != 2 || bad != 2 || len(first) != 2 || first[0].Line != 2 || first[1].Line != 3 || len(first[0].Excerpt) != 200 {
		t.Errorf("records %d, malformed %d %+v, error %v: want 2 records and lines 2 and 3 malformed", len(recs), bad, first, err)
	}
}

// FuzzReadRecords: no results file crashes the reader.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"mode": "training", "key": "a", "value": 1, "time": 1}` + "\n\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, bad, first, err := ReadRecords(bytes.NewReader(data))
		if err != nil || len(first) > 5 || len(first) > bad || len(recs) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d records, %d malformed, %v, %v", len(recs), bad, first, err)
		}
	})
}
