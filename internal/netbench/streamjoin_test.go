package netbench

import (
	"strings"
	"testing"

	"aimeter/serve"
)

// TestJoinStreams: pairing by order, the chat role event skipped, and the
// refusals that keep a wrong join from printing figures.
func TestJoinStreams(t *testing.T) {
	chat := []serve.SendTime{
		{ID: "chatcmpl-2", Chunk: 0, UnixNano: 2000}, {ID: "chatcmpl-2", Chunk: 1, UnixNano: 2100}, {ID: "chatcmpl-2", Chunk: 2, UnixNano: 2200}, {ID: "chatcmpl-2", Chunk: 3, UnixNano: 2300},
		{ID: "chatcmpl-1", Chunk: 0, UnixNano: 1000}, {ID: "chatcmpl-1", Chunk: 1, UnixNano: 1100}, {ID: "chatcmpl-1", Chunk: 2, UnixNano: 1200},
	}
	two := []ClientStream{{IssuedUnixNs: 900, TokenUnixNs: []int64{1110}}, {IssuedUnixNs: 1900, TokenUnixNs: []int64{2105, 2190}}}
	for _, c := range []struct {
		why    string
		client []ClientStream
		sends  []serve.SendTime
		want   []int64 // sorted deltas
		err    string
	}{
		{"responses sorted by arrival number, the role event skipped", two, chat, []int64{-10, 5, 10}, ""},
		{"completions have no role event", []ClientStream{{TokenUnixNs: []int64{120, 230}}},
			[]serve.SendTime{{ID: "cmpl-1", Chunk: 0, UnixNano: 100}, {ID: "cmpl-1", Chunk: 1, UnixNano: 200}, {ID: "cmpl-1", Chunk: 2, UnixNano: 300}}, []int64{20, 30}, ""},
		{"counts that differ are refused", two[:1], chat, nil, "2 responses and the client recorded 1"},
		{"more client chunks than server events", []ClientStream{{TokenUnixNs: []int64{1, 2, 3}}},
			[]serve.SendTime{{ID: "cmpl-1", Chunk: 0, UnixNano: 100}}, nil, "3 content chunks, the server sent 1 events"},
		{"a hole in the send log", []ClientStream{{TokenUnixNs: []int64{1, 2}}},
			[]serve.SendTime{{ID: "cmpl-1", Chunk: 1, UnixNano: 100}}, nil, "event 0 missing"},
		{"an id without a number", nil, []serve.SendTime{{ID: "chatcmpl-x"}}, nil, "no arrival number"},
	} {
		j, err := JoinStreams(c.client, c.sends)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.why, err, c.err)
			}
			continue
		}
		if err != nil || len(j.DeltasNs) != len(c.want) || j.Tokens != len(c.want) || j.Requests != len(c.client) {
			t.Fatalf("%s: %+v, %v", c.why, j, err)
		}
		for i := range c.want {
			if j.DeltasNs[i] != c.want[i] {
				t.Errorf("%s: deltas %v, want %v", c.why, j.DeltasNs, c.want)
				break
			}
		}
	}
	j := StreamJoin{DeltasNs: []int64{-50, 1, 2, 3}}
	if j.Percentile(0.5) != 1 || j.Percentile(1) != 3 || j.Percentile(0) != -50 || j.AbsPercentile(1) != 50 || (StreamJoin{}).Percentile(0.99) != 0 {
		t.Errorf("percentiles of %v: %d %d %d %d", j.DeltasNs, j.Percentile(0.5), j.Percentile(1), j.Percentile(0), j.AbsPercentile(1))
	}
}

// FuzzReadSendLog: any input gives entries or an error, never a crash,
// and the entries it accepts join without a crash.
func FuzzReadSendLog(f *testing.F) {
	f.Add(`{"id":"chatcmpl-1","chunk":0,"unix_ns":5}` + "\n" + `{"id":"chatcmpl-1","chunk":1,"unix_ns":7}`)
	f.Add(`{"id":"cmpl-3","chunk":-1,"unix_ns":5}`)
	f.Add(`{"id":"x","chunk":0}` + "\n\n")
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, in string) {
		sends, err := ReadSendLog(strings.NewReader(in))
		if err != nil {
			return
		}
		_, _ = JoinStreams([]ClientStream{{TokenUnixNs: []int64{1}}}, sends)
	})
}
