package telemetry

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Replay is a Windowed source that replays power readings from a CSV file,
// for audits and tests. Two formats are read, told apart by the header:
//
//	t_ns,node,device,watts
//	0,node-1,cpu,250
//	1000000000,node-1,gpu0,150
//
// with t_ns on the run's clock (nanoseconds from the run's start, as in the
// records; an integer, negative before the run), and the training replay's
//
//	time,node,watts
//	2026-11-25T06:00:00.000Z,gpu-node-1,4210.5
//
// with time in RFC 3339 or Unix seconds, placed on the run's clock by the
// run's start; its device is "node" (the whole machine). watts is a finite
// number ≥ 0. Blank lines and lines starting with # are skipped.
type Replay struct {
	powerCeiling
	spec string
	rows []replayRow
}

type replayRow struct {
	t      int64     // run clock (format t_ns)
	wall   time.Time // wall clock (format time), zero otherwise
	node   string
	device string
	watts  float64
}

// ReadReplay reads a replay file whole; errors name the line and field.
// spec is how the source was asked for (recorded in the Log).
func ReadReplay(r io.Reader, spec string) (*Replay, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	rp := &Replay{spec: spec}
	wallFormat, header := false, false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if !header {
			switch strings.Join(f, ",") {
			case "t_ns,node,device,watts":
			case "time,node,watts":
				wallFormat = true
			default:
				return nil, fmt.Errorf("power replay line %d: want the header t_ns,node,device,watts (or time,node,watts), got %q", n, line)
			}
			header = true
			continue
		}
		want := 4
		if wallFormat {
			want = 3
		}
		if len(f) != want {
			return nil, fmt.Errorf("power replay line %d: want %d fields, got %d", n, want, len(f))
		}
		row := replayRow{node: f[1]}
		if wallFormat {
			wall, err := ParseWallTime(f[0])
			if err != nil {
				return nil, fmt.Errorf("power replay line %d: time %q: %w", n, f[0], err)
			}
			row.wall, row.device = wall, "node"
		} else {
			t, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("power replay line %d: t_ns %q: want an integer number of nanoseconds", n, f[0])
			}
			if f[2] == "" {
				return nil, fmt.Errorf("power replay line %d: device is empty", n)
			}
			row.t, row.device = t, f[2]
		}
		w, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("power replay line %d: watts %q: want a finite number ≥ 0", n, f[len(f)-1])
		}
		row.watts = w
		rp.rows = append(rp.rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("power replay: %w", err)
	}
	if !header {
		return nil, fmt.Errorf("power replay: empty file (want the header t_ns,node,device,watts and one reading a line)")
	}
	return rp, nil
}

// ParseWallTime reads a replay file's wall-clock time: RFC 3339, or Unix
// seconds with a fraction (the training power replay's time column).
func ParseWallTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e11 {
		return time.Time{}, fmt.Errorf("want RFC 3339 or Unix seconds")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
}

// Name is "replay".
func (*Replay) Name() string { return "replay" }

// Spec is how the source was asked for.
func (r *Replay) Spec() string { return r.spec }

// Notes says that the readings are replayed, not measured.
func (*Replay) Notes() []string {
	return []string{"replayed from a file, not measured during the run"}
}

// Window returns every row of the file as a Power reading; rows in the
// wall-clock format are placed on the run's clock by start.
func (r *Replay) Window(_ context.Context, start, _, _ time.Time) ([]Reading, error) {
	out := make([]Reading, len(r.rows))
	for i, row := range r.rows {
		t := row.t
		if !row.wall.IsZero() {
			t = row.wall.Sub(start).Nanoseconds()
		}
		out[i] = Reading{T: t, Source: r.Name(), Node: row.node, Device: row.device, Kind: Power, Value: row.watts}
	}
	return out, nil
}

// WallSample is a row of a replay file in the wall-clock format
// (time,node,watts): a whole machine's power at a wall-clock time.
type WallSample struct {
	Wall  time.Time
	Node  string
	Watts float64
}

// WallSamples returns the rows of a file in the wall-clock format, in file
// order; ok is false for the t_ns format, whose rows are on a run's clock.
// Training reads its power replay through it (train.ReadPowerReplay).
func (r *Replay) WallSamples() (samples []WallSample, ok bool) {
	for _, row := range r.rows {
		if row.wall.IsZero() {
			return nil, false
		}
		samples = append(samples, WallSample{Wall: row.wall, Node: row.node, Watts: row.watts})
	}
	return samples, true
}
