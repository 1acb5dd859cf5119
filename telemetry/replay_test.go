package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestReadReplay(t *testing.T) {
	start := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name, in string
		want     []Reading
		err      string
	}{
		{"run-clock format, comments and blank lines skipped", "# meter A\nt_ns,node,device,watts\n\n0,n1,cpu,250\n-1000000000,n1,gpu0,150.5\n",
			[]Reading{{T: 0, Source: "replay", Node: "n1", Device: "cpu", Kind: Power, Value: 250}, {T: -sec, Source: "replay", Node: "n1", Device: "gpu0", Kind: Power, Value: 150.5}}, ""},
		{"training format: wall time placed by the run's start, device node", "time,node,watts\n2026-11-25T06:00:01Z,g1,4210.5\n1795586402.5,g1,4300\n",
			[]Reading{{T: sec, Source: "replay", Node: "g1", Device: "node", Kind: Power, Value: 4210.5}, {T: 5 * sec / 2, Source: "replay", Node: "g1", Device: "node", Kind: Power, Value: 4300}}, ""},
		{"empty file", "", nil, "empty file"},
		{"wrong header names the line", "# x\nt,node,watts\n", nil, "line 2: want the header"},
		{"too few fields", "t_ns,node,device,watts\n0,n1,250\n", nil, "line 2: want 4 fields, got 3"},
		{"t_ns not an integer", "t_ns,node,device,watts\n1.5,n1,cpu,250\n", nil, "line 2: t_ns \"1.5\""},
		{"negative watts", "t_ns,node,device,watts\n0,n1,cpu,-1\n", nil, "line 2: watts \"-1\""},
		{"NaN watts", "t_ns,node,device,watts\n0,n1,cpu,NaN\n", nil, "watts \"NaN\""},
		{"empty device", "t_ns,node,device,watts\n0,n1,,1\n", nil, "device is empty"},
		{"bad wall time", "time,node,watts\nyesterday,n,1\n", nil, "line 2: time \"yesterday\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp, err := ReadReplay(strings.NewReader(tt.in), "replay:x.csv")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := rp.Window(context.Background(), start, start, start)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("reading %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func FuzzReadReplay(f *testing.F) {
	f.Add("t_ns,node,device,watts\n0,n1,cpu,250\n")
	f.Add("time,node,watts\n2026-11-25T06:00:01Z,g1,4210.5\n")
	f.Add("t_ns,node,device,watts\n9223372036854775807,n,d,1e308\n")
	f.Fuzz(func(t *testing.T, in string) {
		rp, err := ReadReplay(strings.NewReader(in), "replay:fuzz")
		if err != nil {
			return
		}
		rs, _ := rp.Window(context.Background(), time.Unix(0, 0), time.Unix(0, 0), time.Unix(0, 0))
		for _, r := range rs {
			if err := r.check(); err != nil {
				t.Fatalf("accepted a reading the log would refuse: %+v: %v", r, err)
			}
		}
		Summarize(&Log{PeriodNs: sec, Readings: rs}, Window{0, sec})
	})
}
