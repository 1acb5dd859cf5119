package telemetry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// A replay's power readings through the Sampler's Stop: a reading above
// the ceiling (100 kW, or SpecOptions.MaxPowerW) is left out, with a gap
// from the series' reading before to the one after, so that the trapezoid
// does not bridge it. A replay holds power only: no counter to wrap, reset
// or step back. Each row works out the energy and coverage over its
// window, readings a second apart from 0 s.
func TestReplayAbsurdReadings(t *testing.T) {
	tests := []struct {
		why            string
		maxW           float64
		watts          []string
		energy, cov    float64
		gapFrom, gapTo int64 // s; gapTo 0: no gap
	}{
		{"the issue's case: 1e12 W at 2 s between 500 W readings: 500 J over 0–1 s or 1 s of 3", 0,
			[]string{"500", "500", "1e12", "500"}, 500, 1.0 / 3, 1, 3},
		{"two absurd readings in a row are one gap from 1 to 4 s: 500 J over 0–1 s or 1 s of 4", 0,
			[]string{"500", "500", "1e12", "2e12", "500"}, 500, 1.0 / 4, 1, 4},
		{"an absurd first reading: the gap runs from it to the next and 1000 J over 1–3 s count", 0,
			[]string{"1e12", "500", "500", "500"}, 1000, 2.0 / 3, 0, 1},
		{"a configured ceiling of 1 kW leaves out 1500 W", 1000,
			[]string{"500", "500", "1500", "500"}, 500, 1.0 / 3, 1, 3},
		{"exactly the configured ceiling is kept: (500+500)/2 + (500+1000)/2 + (1000+500)/2 = 2000 J", 1000,
			[]string{"500", "500", "1000", "500"}, 2000, 1, 0, 0},
		{"a drop to 0 W is a reading and not a reset: (500+500)/2 + (500+0)/2 + (0+500)/2 = 1000 J", 0,
			[]string{"500", "500", "0", "500"}, 1000, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			csv := "t_ns,node,device,watts\n"
			for i, w := range tt.watts {
				csv += fmt.Sprintf("%d,n1,gpu0,%s\n", int64(i)*sec, w)
			}
			file := filepath.Join(t.TempDir(), "trace.csv") // no comma in the name: it would split the spec
			if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
				t.Fatal(err)
			}
			srcs, err := Open("replay:"+file, SpecOptions{MaxPowerW: tt.maxW})
			if err != nil {
				t.Fatal(err)
			}
			l, err := Start(time.Now(), srcs, Options{}).Stop(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tt.gapTo == 0 && len(l.Gaps) != 0 || tt.gapTo != 0 && (len(l.Gaps) != 1 || l.Gaps[0].T != tt.gapFrom*sec ||
				l.Gaps[0].DurationNs != (tt.gapTo-tt.gapFrom)*sec || l.Gaps[0].Device != "gpu0" || !strings.Contains(l.Gaps[0].Reason, "above the ceiling")) {
				t.Fatalf("gaps %+v: want one from %d to %d s", l.Gaps, tt.gapFrom, tt.gapTo)
			}
			s := Summarize(l, Window{0, int64(len(tt.watts)-1) * sec})
			if !near(val(s.EnergyJ), tt.energy) || !near(s.Coverage, tt.cov) || val(s.PeakW) > max(tt.maxW, 500, 1000) {
				t.Errorf("energy %v J, coverage %v, peak %v W: want %v J, %v", val(s.EnergyJ), s.Coverage, val(s.PeakW), tt.energy, tt.cov)
			}
		})
	}
}
