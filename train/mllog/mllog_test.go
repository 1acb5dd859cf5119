package mllog

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"aimeter/train"
)

// short renders an event compactly for comparison: kind, rank, time in ms
// from the origin, and the fields that are set.
func short(e train.Event) string {
	s := fmt.Sprintf("%s r%d %dms", e.Kind, e.Rank, e.Time/1e6)
	if e.Epoch != 0 {
		s += fmt.Sprintf(" e%d", e.Epoch)
	}
	if e.Count != 0 {
		s += fmt.Sprintf(" c%d", e.Count)
	}
	if e.Value != nil {
		s += fmt.Sprintf(" v%g", *e.Value)
	}
	if e.Chip != 0 {
		s += fmt.Sprintf(" chip%d", e.Chip)
	}
	if e.Trial != 0 {
		s += fmt.Sprintf(" t%d", e.Trial)
	}
	for _, f := range []string{e.Node, e.Status, e.ID} {
		if f != "" {
			s += " " + f
		}
	}
	return s
}

// TestFixture parses a two-rank ResNet-style log (written by hand for this
// test: rank prefixes, epochs counted from 0, eval accuracy after
// eval_stop, power readings, aimeter keys, one broken record, latin-1
// bytes) into the events worked out by hand below.
func TestFixture(t *testing.T) {
	f, err := os.Open("testdata/resnet_2rank.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, st, err := ParseAll(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	epoch := func(e, base int, acc string) []string {
		b := base
		return []string{
			fmt.Sprintf("block_start r0 %dms e%d c1", b, e),
			fmt.Sprintf("epoch_start r0 %dms e%d", b, e),
			fmt.Sprintf("epoch_start r1 %dms e%d", b+1, e),
			fmt.Sprintf("power r0 %dms v412.5 node0", b+200),
			fmt.Sprintf("power r1 %dms v398 node1", b+201),
			fmt.Sprintf("utilization r0 %dms v0.9", b+300),
			fmt.Sprintf("epoch_end r0 %dms e%d c500", b+1000, e),
			fmt.Sprintf("epoch_end r1 %dms e%d c500", b+1001, e),
			fmt.Sprintf("validation_start r0 %dms e%d", b+1010, e),
			fmt.Sprintf("validation_end r0 %dms e%d v%s", b+1200, e, acc),
			fmt.Sprintf("accuracy r0 %dms e%d v%s", b+1201, e, acc),
			fmt.Sprintf("block_end r0 %dms e%d", b+1202, e),
		}
	}
	want := []string{
		"init_start r0 0ms", "init_start r1 1ms",
		"train_samples r0 10ms c1000", "eval_samples r0 11ms c200",
		"data_read_start r0 20ms", "data_read_start r1 21ms",
		"data_read_end r0 300ms", "data_read_end r1 350ms",
		"init_end r0 400ms", "init_end r1 401ms",
		"train_start r0 500ms", "train_start r1 501ms",
		"accelerator_start r0 510ms", "accelerator_start r1 530ms",
	}
	want = append(want, epoch(1, 1000, "0.41")...)
	want = append(want, epoch(2, 3000, "0.63")...)
	want = append(want,
		"train_end r0 5000ms success", "train_end r1 5001ms success",
		"persist_start r0 5010ms", "persist_end r0 5090ms",
		"send r0 5100ms node0 x\u00b5",
	)
	var got []string
	for _, e := range evs {
		got = append(got, short(e))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	if st.Malformed != 1 || len(st.FirstMalformed) != 1 || st.FirstMalformed[0].Line != 42 {
		t.Errorf("malformed = %d %+v, want 1 on line 42", st.Malformed, st.FirstMalformed)
	}
	if st.Problems != 0 {
		t.Errorf("problems = %+v, want none", st.FirstProblems)
	}
	if st.Info["submission_benchmark"] != `"resnet"` || st.Info["global_batch_size"] != "256" {
		t.Errorf("info = %v", st.Info)
	}
	if st.Lines != 48 || st.Records != 46 || st.Events != int64(len(want)) {
		t.Errorf("lines %d records %d events %d", st.Lines, st.Records, st.Events)
	}
	if w := evs[0].Wall; !w.Equal(time.UnixMilli(1700000000000)) {
		t.Errorf("wall = %v", w)
	}
}

// TestLines checks single lines against hand-worked events and counts.
func TestLines(t *testing.T) {
	cases := []struct {
		name, in, want string
		malformed      int64
		problems       int64
	}{
		{"srun label prefix gives the rank", `3: :::MLLOG {"time_ms":1,"key":"run_start"}`, "train_start r3 0ms", 0, 0},
		{"mpirun tag-output prefix gives the rank", `[1,7]<stdout>::::MLLOG {"time_ms":1,"key":"run_start"}`, "train_start r7 0ms", 0, 0},
		{"torchrun prefix gives the rank", `[default5]::::MLLOG {"time_ms":1,"key":"run_start"}`, "train_start r5 0ms", 0, 0},
		{"metadata rank beats the prefix", `3: :::MLLOG {"time_ms":1,"key":"aimeter_accelerator_start","metadata":{"rank":9}}`, "accelerator_start r9 0ms", 0, 0},
		{"unrecognised prefix uses the default rank", `INFO 12:30 :::MLLOG {"time_ms":1,"key":"run_start"}`, "train_start r0 0ms", 0, 0},
		{"fractional time_ms", `:::MLLOG {"time_ms":1.5,"key":"run_start"}` + "\n" + `:::MLLOG {"time_ms":3.25,"key":"run_stop","metadata":{"status":"aborted"}}`, "train_start r0 0ms|train_end r0 1ms aborted", 0, 0},
		{"quoted numeric value", `:::MLLOG {"time_ms":1,"key":"train_samples","value":"1281167"}`, "train_samples r0 0ms c1281167", 0, 0},
		{"samples_count block", `:::MLLOG {"time_ms":1,"key":"block_start","metadata":{"samples_count":3072}}`, "block_start r0 0ms e1 c3072", 0, 0},
		{"accuracy before eval_stop", `:::MLLOG {"time_ms":1,"key":"eval_start","metadata":{"epoch_num":1}}` + "\n" + `:::MLLOG {"time_ms":2,"key":"eval_accuracy","value":0.7,"metadata":{"epoch_num":1}}` + "\n" + `:::MLLOG {"time_ms":3,"key":"eval_stop","metadata":{"epoch_num":1}}`, "validation_start r0 0ms e1|accuracy r0 1ms e1 v0.7|validation_end r0 2ms e1 v0.7", 0, 0},
		{"eval_stop at end of stream is flushed", `:::MLLOG {"time_ms":1,"key":"eval_start","metadata":{"epoch_num":2}}` + "\n" + `:::MLLOG {"time_ms":2,"key":"eval_stop","metadata":{"epoch_num":2}}`, "validation_start r0 0ms e2|validation_end r0 1ms e2", 0, 0},
		{"trial numbers follow aimeter_trial_start", `:::MLLOG {"time_ms":1,"key":"aimeter_trial_start","metadata":{"trial":2}}` + "\n" + `:::MLLOG {"time_ms":2,"key":"run_start"}` + "\n" + `:::MLLOG {"time_ms":3,"key":"aimeter_trial_stop","metadata":{"status":"converged"}}`, "trial_start r0 0ms t2|train_start r0 1ms t2|trial_end r0 2ms t2 converged", 0, 0},
		{"generation with neurons", `:::MLLOG {"time_ms":1,"key":"aimeter_generation_stop","metadata":{"generation":4,"neurons":1200}}`, "generation_end r0 0ms e4 c1200", 0, 0},
		{"power_reading names its host as mlperf-logging writes it", `:::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 2250.5, "metadata": {"host": "node_07", "file": "power_measurement.py", "lineno": 89}}`, "power r0 0ms v2250.5 node_07", 0, 0},
		{"numeric send id", `:::MLLOG {"time_ms":1,"key":"aimeter_receive","metadata":{"id":17}}`, "receive r0 0ms 17", 0, 0},
		{"second run_start is reported", `:::MLLOG {"time_ms":1,"key":"run_start"}` + "\n" + `:::MLLOG {"time_ms":2,"key":"run_start"}`, "train_start r0 0ms|train_start r0 1ms", 0, 1},
		{"epoch ending before it starts is reported", `:::MLLOG {"time_ms":1,"key":"epoch_stop","metadata":{"epoch_num":1}}` + "\n" + `:::MLLOG {"time_ms":2,"key":"epoch_start","metadata":{"epoch_num":1}}`, "epoch_end r0 0ms e1|epoch_start r0 1ms e1", 0, 1},
		{"run_stop without run_start is reported", `:::MLLOG {"time_ms":1,"key":"run_stop","metadata":{"status":"success"}}`, "train_end r0 0ms success", 0, 1},
		{"no key", `:::MLLOG {"time_ms":1}`, "", 1, 0},
		{"no time", `:::MLLOG {"key":"run_start"}`, "", 1, 0},
		{"NaN-like huge time", `:::MLLOG {"time_ms":1e300,"key":"run_start"}`, "", 1, 0},
		{"not JSON", `:::MLLOG hello`, "", 1, 0},
		{"accuracy not a number", `:::MLLOG {"time_ms":1,"key":"eval_accuracy","value":"high"}`, "", 1, 0},
		{"send without id", `:::MLLOG {"time_ms":1,"key":"aimeter_send"}`, "", 1, 0},
		{"negative metadata rank", `:::MLLOG {"time_ms":1,"key":"run_start","metadata":{"rank":-1}}`, "", 1, 0},
		{"plain output is no record", `epoch 3 loss 0.2`, "", 0, 0},
		{"CRLF line ends", ":::MLLOG {\"time_ms\":1,\"key\":\"run_start\"}\r\n", "train_start r0 0ms", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, st, err := ParseAll(strings.NewReader(c.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs {
				got = append(got, short(e))
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Errorf("events %q, want %q", g, c.want)
			}
			if st.Malformed != c.malformed || st.Problems != c.problems {
				t.Errorf("malformed %d problems %d, want %d %d (%+v %+v)", st.Malformed, st.Problems, c.malformed, c.problems, st.FirstMalformed, st.FirstProblems)
			}
		})
	}
}

// TestLongLines checks that a line over the limit is counted and skipped,
// whether it arrives in one write or many, and that the next line parses.
func TestLongLines(t *testing.T) {
	long := ":::MLLOG " + strings.Repeat("x", 100)
	in := long + "\n" + `:::MLLOG {"time_ms":1,"key":"run_start"}` + "\n" + long
	for _, chunk := range []int{1, 7, len(in)} {
		var evs []train.Event
		p := NewParser(Options{MaxLine: 64}, func(e train.Event) { evs = append(evs, e) })
		w := NewWriter(p)
		for b := []byte(in); len(b) > 0; {
			n := min(chunk, len(b))
			w.Write(b[:n])
			b = b[n:]
		}
		w.Close()
		st := p.Stats()
		if st.LongLines != 2 || len(evs) != 1 || st.Lines != 3 || st.Malformed != 0 {
			t.Errorf("chunk %d: long %d events %d lines %d malformed %d", chunk, st.LongLines, len(evs), st.Lines, st.Malformed)
		}
	}
}

// TestQuotesBounded checks that only the first MaxQuoted malformed records
// are quoted, each excerpt at most 200 bytes, while all are counted.
func TestQuotesBounded(t *testing.T) {
	var b bytes.Buffer
	for range 20 {
		b.WriteString(":::MLLOG {" + strings.Repeat("y", 500) + "\n")
	}
	_, st, _ := ParseAll(&b, Options{MaxQuoted: 3})
	if st.Malformed != 20 || len(st.FirstMalformed) != 3 {
		t.Fatalf("malformed %d quoted %d", st.Malformed, len(st.FirstMalformed))
	}
	for _, q := range st.FirstMalformed {
		if len(q.Excerpt) > 200 || len(q.Reason) > 200 {
			t.Errorf("quote too long: %d %d", len(q.Excerpt), len(q.Reason))
		}
	}
}

// FuzzParse feeds arbitrary bytes to the parser: it must not panic, must
// count every line, and must emit only events with a kind.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/resnet_2rank.log"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`0: :::MLLOG {"time_ms":1,"key":"eval_stop","metadata":{"epoch_num":0}}`))
	f.Add([]byte("[1,2]<stderr>::::MLLOG {\"time_ms\":1,\"key\":\"aimeter_send\",\"metadata\":{\"id\":\"\xff\"}}\n"))
	f.Add([]byte(":::MLLOG {\"time_ms\":-1e20,\"key\":\"x\",\"value\":[1,2]}\r\n:::MLLOG"))
	f.Add([]byte(":::MLLOG {\"time_ms\":1,\"key\":\"aimeter_trial_start\",\"metadata\":{\"trial\":1e300,\"rank\":1e9}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		st, err := Parse(bytes.NewReader(b), Options{MaxLine: 256}, func(e train.Event) {
			n++
			if e.Kind == "" {
				t.Fatalf("event without kind: %+v", e)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if int64(n) != st.Events {
			t.Fatalf("emitted %d, counted %d", n, st.Events)
		}
		if lines := int64(bytes.Count(b, []byte("\n"))); st.Lines < lines || st.Lines > lines+1 {
			t.Fatalf("lines %d for %d newlines", st.Lines, lines)
		}
	})
}
