package bundle

import (
	"bytes"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// FuzzReadEvents: any input gives events or an error, never a panic, and
// what it reads writes back to input that reads the same.
func FuzzReadEvents(f *testing.F) {
	var b bytes.Buffer
	_ = WriteEvents(&b, []loadgen.Event{
		{TimeNs: 1, Key: "a", Value: "x"}, {Key: "b", Value: true, Warning: true}, {Key: "c", Value: int64(-3)},
		{Key: "d", Value: uint64(1 << 63)}, {Key: "e", Value: 0.1, Kind: loadgen.EventIntervalStart}, {Key: "f", Value: []uint64{1, 2}, Error: true},
	})
	f.Add(b.String())
	f.Add(`{"time_ns":0,"key":"k","type":"float","value":"NaN"}`)
	f.Add(`{"key":"k","type":"uints","value":null}`)
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := ReadEvents(strings.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteEvents(&out, evs); err != nil {
			t.Fatalf("read events do not write: %v", err)
		}
		again, err := ReadEvents(&out)
		if err != nil || len(again) != len(evs) {
			t.Fatalf("written events do not read back: %v", err)
		}
	})
}

// FuzzReadTokens: tokens.csv is read or refused, never a panic; every
// trace read has its tokens numbered from 0 in order.
func FuzzReadTokens(f *testing.F) {
	f.Add(TokensHeader + "\n1,0,5\n1,1,7\n3,0,9\n")
	f.Add(TokensHeader + "\n1,1,5\n")
	f.Add(TokensHeader + "\n2,0,5\n1,0,5\n")
	f.Fuzz(func(t *testing.T, in string) {
		traces, err := readTokens(strings.NewReader(in))
		if err != nil {
			return
		}
		for i := 1; i < len(traces); i++ {
			if traces[i].SeqID <= traces[i-1].SeqID {
				t.Fatalf("traces out of order: %d after %d", traces[i].SeqID, traces[i-1].SeqID)
			}
		}
	})
}

// FuzzReadSamples: samples.csv is read or refused, never a panic, and an
// accepted error index always names an entry of the table.
func FuzzReadSamples(f *testing.F) {
	f.Add(SamplesHeader+"\n0,100,7,1,0\n1,0,0,0,2\n", 2)
	f.Add(SamplesHeader+"\n5,1,1,1,1\n", 1)
	f.Fuzz(func(t *testing.T, in string, nErrors int) {
		if nErrors < 0 || nErrors > 1<<20 {
			return
		}
		tab := loadgen.NewRecordTable(3)
		tab.Append([]loadgen.Record{{SeqID: 0}, {SeqID: 1}, {SeqID: 2}}...)
		if err := readSamples(strings.NewReader(in), tab, nErrors); err != nil {
			return
		}
		for r := range tab.All() {
			if int(r.Error) > nErrors {
				t.Fatalf("error index %d accepted with %d entries", r.Error, nErrors)
			}
		}
	})
}
