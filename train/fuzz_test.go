package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
)

// kinds are the event kinds a fuzzed stream draws from.
var kinds = []Kind{DataReadStart, DataReadEnd, TrainStart, AcceleratorStart, EpochStart, EpochEnd,
	ValidationStart, ValidationEnd, TrainEnd, ConversionStart, ConversionEnd, PersistStart, PersistEnd,
	Send, Receive, GenerationStart, GenerationEnd, TrialStart, TrialEnd, Utilization, Power}

// eventsFrom decodes 12 bytes per event: kind, node, rank, trial, epoch,
// chip, a signed 16-bit time in ms and a 32-bit value (float32 bits, so
// NaN and infinities occur).
func eventsFrom(data []byte) []Event {
	var out []Event
	for len(data) >= 12 {
		b := data[:12]
		data = data[12:]
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[8:])))
		e := Event{
			Kind:  kinds[int(b[0])%len(kinds)],
			Node:  string(rune('a' + b[1]%3)),
			Rank:  int(b[2] % 4),
			Trial: int(b[3] % 4),
			Epoch: int(b[4] % 5),
			Chip:  int(b[5] % 3),
			Time:  int64(int16(binary.LittleEndian.Uint16(b[6:]))) * 1e6,
			Count: int64(b[4]) * 10,
			ID:    string(rune('x' + b[5]%3)),
		}
		if b[1]&0x80 != 0 {
			e.Value = &v
		}
		out = append(out, e)
	}
	return out
}

// FuzzCompute feeds arbitrary event streams to Compute, the log and the
// result writer: none may panic, and every result must encode as JSON
// (no NaN or infinity reaches a metric).
func FuzzCompute(f *testing.F) {
	var seed bytes.Buffer
	for _, e := range singleNode() {
		for i, k := range kinds {
			if k == e.Kind {
				seed.WriteByte(byte(i))
			}
		}
		seed.Write([]byte{0x80, 0, 1, byte(e.Epoch), byte(e.Chip)})
		binary.Write(&seed, binary.LittleEndian, int16(e.Time/1e6))
		var v float32
		if e.Value != nil {
			v = float32(*e.Value)
		}
		binary.Write(&seed, binary.LittleEndian, math.Float32bits(v))
	}
	f.Add(seed.Bytes())
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{5, 0x81, 1, 1, 1, 1, 0xff, 0x7f, 0, 0, 0xc0, 0x7f}, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := eventsFrom(data)
		m, err := Compute(evs, Config{TrainingSetMB: 1, Workloads: []Workload{{Name: "w", Baseline: 1, Weight: 1}}, Target: &Target{Value: 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("metrics do not encode: %v", err)
		}
		var b bytes.Buffer
		if err := WriteLog(&b, evs, LogOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n")) {
			if len(l) > 0 && !epochLineRE.Match(l) && !generationLineRE.Match(l) {
				t.Fatalf("log line %q matches neither pattern", l)
			}
		}
	})
}

// FuzzReadResult: any input is read or rejected without a panic, and what
// is read writes back.
func FuzzReadResult(f *testing.F) {
	f.Add([]byte(`{"version":"aimeter-gbt-training/1","metrics":{"throughput_unit":"samples/s","trials":[{"trial":1,"t_tr_ms":5}]}}`))
	f.Add([]byte(`{"version":"aimeter-gbt-training/1","info":{"task_type":1},"training_info":{"parallelism":2}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ReadResult(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := WriteResult(&bytes.Buffer{}, res); err != nil {
			t.Fatalf("read but not written back: %v", err)
		}
	})
}
