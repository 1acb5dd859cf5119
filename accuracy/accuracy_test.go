package accuracy

import (
	"bytes"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
)

func TestTop1(t *testing.T) {
	labels := []uint8{1, 2, 3, 4}
	label := func(i uint64) uint8 { return labels[i] }
	entries := []loadgen.AccuracyEntry{
		{SeqID: 0, QSLIndex: 0, Data: []byte{1}}, // right
		{SeqID: 1, QSLIndex: 1, Data: []byte{0}}, // wrong
		{SeqID: 2, QSLIndex: 2, Data: []byte{3}}, // right
		{SeqID: 3, QSLIndex: 0, Data: []byte{9}}, // repeat of sample 0: ignored
	}
	s, err := Top1(entries, 4, label)
	if err != nil {
		t.Fatal(err)
	}
	// 2 right of 4 samples; sample 3 has no response and counts as wrong.
	if s.Correct != 2 || s.Scored != 3 || s.Missing != 1 || s.Value != 0.5 {
		t.Errorf("%+v", s)
	}
	if _, err := Top1([]loadgen.AccuracyEntry{{QSLIndex: 7, Data: []byte{1}}}, 4, label); err == nil {
		t.Error("an index outside the set is an error")
	}
	if _, err := Top1([]loadgen.AccuracyEntry{{QSLIndex: 0, Data: []byte{1, 2}}}, 4, label); err == nil {
		t.Error("a response that is not one class byte is an error")
	}
}

func TestReadLogRoundTrip(t *testing.T) {
	in := []loadgen.AccuracyEntry{
		{SeqID: 0, QSLIndex: 22, Data: []byte{0x16, 0xC0}},
		{SeqID: 1, QSLIndex: 5, Data: []byte{0x05}, TokenData: []byte{0x05}, TokenCount: 7, HasTokens: true},
	}
	var buf bytes.Buffer
	if err := bundle.WriteAccuracyLog(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := bundle.ReadAccuracyLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].QSLIndex != 22 || !bytes.Equal(out[0].Data, in[0].Data) || out[1].TokenCount != 7 || !bytes.Equal(out[1].TokenData, []byte{5}) {
		t.Errorf("%+v", out)
	}
	for _, bad := range []string{`{}`, `[{"seq_id": 0}]`, `[{"seq_id":0,"qsl_idx":1,"data":"XZ"}]`, `[{"seq_id":0,"qsl_idx":1,"data":"00"}`} {
		if _, err := bundle.ReadAccuracyLog(strings.NewReader(bad)); err == nil {
			t.Errorf("%q must be rejected", bad)
		}
	}
}

func FuzzReadLog(f *testing.F) {
	f.Add([]byte("[\n{ \"seq_id\" : 0, \"qsl_idx\" : 22, \"data\" : \"16C0B0A0\" }\n]\n"))
	f.Add([]byte("[\n]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := bundle.ReadAccuracyLog(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := bundle.WriteAccuracyLog(&buf, entries); err != nil {
			t.Fatal(err)
		}
		again, err := bundle.ReadAccuracyLog(&buf)
		if err != nil || len(again) != len(entries) {
			t.Fatalf("round trip: %v, %d vs %d", err, len(again), len(entries))
		}
	})
}
