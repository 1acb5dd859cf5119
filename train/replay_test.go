package train

import (
	"strings"
	"testing"
	"time"
)

func TestReadPowerReplay(t *testing.T) {
	origin := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	in := "# meter export\ntime,node,watts\n2026-11-25T06:00:01.5Z,n1,400\n\n1764050402,n1,420.25\n2026-11-25T05:59:59Z,,10\n"
	evs, err := ReadPowerReplay(strings.NewReader(in), origin)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		t     int64
		node  string
		watts float64
	}{
		{1_500_000_000, "n1", 400},
		{time.Unix(1764050402, 0).Sub(origin).Nanoseconds(), "n1", 420.25},
		{-1_000_000_000, "", 10},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events", len(evs))
	}
	for i, w := range want {
		e := evs[i]
		if e.Kind != Power || e.Time != w.t || e.Node != w.node || e.Value == nil || *e.Value != w.watts {
			t.Errorf("event %d: %+v, want %+v", i, e, w)
		}
	}
	for _, tc := range []struct{ in, want, why string }{
		{"", "empty file", "nothing at all"},
		{"t,n,w\n", "header", "a wrong header"},
		{"time,node,watts\nyesterday,n,1\n", "line 2: time", "an unreadable time"},
		{"time,node,watts\n1764050402,n,-3\n", "line 2: watts", "negative power"},
		{"time,node,watts\n1764050402,n,NaN\n", "line 2: watts", "not a number"},
		{"time,node,watts\n1764050402,n\n", "line 2: want 3 fields", "a short line"},
		{"t_ns,node,device,watts\n0,n,gpu0,300\n", "want the header time,node,watts", "the run-clock format of aimeter run's replays"},
	} {
		if _, err := ReadPowerReplay(strings.NewReader(tc.in), origin); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.why, err, tc.want)
		}
	}
}

// TestPowerReplayFeedsTable7: replayed samples inside [t_TR1, t_TR2] give
// P_TR and P_TRmax by hand: samples 100, 200 and 300 W inside, 1000 W
// before the training starts → P_TR = 200 W, P_TRmax = 300 W.
func TestPowerReplayFeedsTable7(t *testing.T) {
	origin := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	replay := "time,node,watts\n2026-11-25T05:59:59Z,n1,1000\n2026-11-25T06:00:01Z,n1,100\n2026-11-25T06:00:02Z,n1,200\n2026-11-25T06:00:03Z,n1,300\n"
	evs, err := ReadPowerReplay(strings.NewReader(replay), origin)
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, ev(TrainStart, 0, onNode("n1")), ev(TrainEnd, 4000, onNode("n1"), status("success")))
	m, err := Compute(evs, Config{})
	if err != nil {
		t.Fatal(err)
	}
	tm := m.Trials[0]
	if len(tm.Nodes) != 1 {
		t.Fatalf("%d nodes", len(tm.Nodes))
	}
	checkF(t, "P_TR", tm.Nodes[0].PowerW, 200)
	checkF(t, "P_TRmax", tm.Nodes[0].PowerMaxW, 300)
}

func FuzzReadPowerReplay(f *testing.F) {
	f.Add("time,node,watts\n2026-11-25T06:00:01.5Z,n1,400\n")
	f.Add("time,node,watts\n1764050402.25,,1e3\n# c\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := ReadPowerReplay(strings.NewReader(in), time.Unix(0, 0))
		if err != nil {
			return
		}
		for _, e := range evs {
			if e.Kind != Power || e.Value == nil || *e.Value < 0 {
				t.Fatalf("bad event %+v", e)
			}
		}
	})
}
