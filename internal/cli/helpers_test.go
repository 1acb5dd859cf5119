package cli

import (
	"aimeter/model"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut/reference/mlp"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the
// command writing at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// twin is a test double of the process State: captured streams, a working
// directory of the test's own, an interrupt the test fires, and a recorded
// exit code instead of os.Exit.
type twin struct {
	st     *State
	stdout syncBuffer
	stderr syncBuffer
	wd     string

	mu        sync.Mutex
	exits     []int
	interrupt context.CancelCauseFunc // set once NotifyInterrupt was called
	second    func()
	notified  chan struct{} // closed when NotifyInterrupt is called
	stopped   bool          // the CancelFunc of NotifyInterrupt was called
}

func newTwin(t *testing.T, args ...string) *twin {
	t.Helper()
	tw := &twin{wd: t.TempDir(), notified: make(chan struct{})}
	tw.st = &State{
		Args: args,
		// Runs are recorded into a store of the test's own, never the
		// user's.
		Store:  filepath.Join(t.TempDir(), "results.db"),
		Stdout: &tw.stdout,
		Stderr: &tw.stderr,
		Getwd:  func() (string, error) { return tw.wd, nil },
		NotifyInterrupt: func(parent context.Context, onSecond func()) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(parent)
			tw.mu.Lock()
			tw.interrupt, tw.second = cancel, onSecond
			tw.mu.Unlock()
			close(tw.notified)
			return ctx, func() {
				tw.mu.Lock()
				tw.stopped = true
				tw.mu.Unlock()
				cancel(nil)
			}
		},
		Exit: func(code int) {
			tw.mu.Lock()
			tw.exits = append(tw.exits, code)
			tw.mu.Unlock()
		},
	}
	return tw
}

// main runs the command line and returns the exit code.
func (tw *twin) main() int { return Main(tw.st) }

// cliResult is what one in-process invocation produced.
type cliResult struct {
	code   int
	stdout string
	stderr string
	exits  []int
}

// runCLI runs aimeter with args in a fresh twin whose working directory is
// wd (a new temporary directory when empty).
func runCLI(t *testing.T, wd string, args ...string) cliResult {
	t.Helper()
	tw := newTwin(t, args...)
	if wd != "" {
		tw.wd = wd
	}
	code := tw.main()
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return cliResult{code: code, stdout: tw.stdout.String(), stderr: tw.stderr.String(), exits: tw.exits}
}

func (r cliResult) String() string {
	return "exit " + strconv.Itoa(r.code) + "\n--- stdout:\n" + r.stdout + "--- stderr:\n" + r.stderr
}

// detailLog parses mlperf_log_detail.txt into key → raw JSON value; a key
// logged more than once keeps every value in order.
func parseDetailLog(t *testing.T, path string) map[string][]json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]json.RawMessage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line, ok := strings.CutPrefix(sc.Text(), ":::MLLOG ")
		if !ok {
			t.Fatalf("%s:%d: not an MLLOG line: %q", path, n, sc.Text())
		}
		var e struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out[e.Key] = append(out[e.Key], e.Value)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// detailValue returns the last value logged under key, decoded into T.
func detailValue[T any](t *testing.T, d map[string][]json.RawMessage, key string) T {
	t.Helper()
	var v T
	vals := d[key]
	if len(vals) == 0 {
		t.Fatalf("detail log has no %q", key)
	}
	if err := json.Unmarshal(vals[len(vals)-1], &v); err != nil {
		t.Fatalf("detail log %q = %s: %v", key, vals[len(vals)-1], err)
	}
	return v
}

func readRunInfoT(t *testing.T, dir string) bundle.RunInfo {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, bundle.SettingsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := bundle.ReadRunInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// recordFileT is the record file of the bundle in dir: records.parquet or,
// in a version 1 bundle, records.csv.
func recordFileT(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, bundle.RecordsCSVFile)); err == nil {
		return bundle.RecordsCSVFile
	}
	return bundle.RecordsFile
}

func readRecordsT(t *testing.T, dir string) []loadgen.Record {
	t.Helper()
	name := recordFileT(dir)
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read := bundle.ReadRecordsParquet
	if name == bundle.RecordsCSVFile {
		read = bundle.ReadRecords
	}
	recs, err := read(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func writeRecordsT(t *testing.T, dir string, recs []loadgen.Record) {
	t.Helper()
	var b bytes.Buffer
	name := recordFileT(dir)
	write := bundle.WriteRecords
	if name == bundle.RecordsFile {
		write = func(w io.Writer, recs []loadgen.Record) error {
			return bundle.WriteRecordsParquet(w, recs, bundle.RecordWriterOptions{})
		}
	}
	if err := write(&b, recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// accuracyLogEntry is one entry of mlperf_log_accuracy.json.
type accuracyLogEntry struct {
	SeqID  uint64 `json:"seq_id"`
	QSLIdx uint64 `json:"qsl_idx"`
	Data   string `json:"data"`
}

func readAccuracyT(t *testing.T, dir string) []accuracyLogEntry {
	t.Helper()
	var entries []accuracyLogEntry
	data := readFileT(t, filepath.Join(dir, bundle.AccuracyFile))
	if err := json.Unmarshal([]byte(data), &entries); err != nil {
		t.Fatalf("%s: %v", bundle.AccuracyFile, err)
	}
	return entries
}

// useUntrainedWeights points the user cache at dir and puts untrained
// reference-model weights there, so that a test running the reference SUT
// does not train the model first: training takes minutes under the race
// detector, and such tests check what the commands do, not what the model
// learns.
func useUntrainedWeights(t *testing.T, dir string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", dir)
	data, err := mlp.LoadData("auto", mlp.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := mlp.WeightsPath(data.Train)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := model.New(model.DefaultLayers(), 1).SaveFile(path); err != nil {
		t.Fatal(err)
	}
}
