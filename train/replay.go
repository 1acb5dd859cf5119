package train

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"aimeter/telemetry"
)

// ReadPowerReplay reads a power replay file: whole-machine power samples
// taken by a meter outside aimeter (a PDU, a BMC's log, a bench meter), for
// runs where no telemetry sampler ran (GB-6.6.3-T7-PTR asks for one sample
// a second over T_TR). The format is CSV with a header line:
//
//	time,node,watts
//	2026-11-25T06:00:00.000Z,gpu-node-1,4210.5
//	1764050401.0,gpu-node-1,4302
//
// time is RFC 3339 (with any fraction of a second) or Unix seconds with an
// optional fraction; node names the machine as the training events do (it
// may be empty for a single machine); watts is a finite number ≥ 0. Blank
// lines and lines starting with # are skipped. Each sample becomes a Power
// event whose Time is its wall-clock time less origin (the run's clock
// origin), so samples before the run get negative times and fall outside
// every window. Errors name the line.
func ReadPowerReplay(r io.Reader, origin time.Time) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var out []Event
	header := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if !header {
			if len(fields) != 3 || fields[0] != "time" || fields[1] != "node" || fields[2] != "watts" {
				return nil, fmt.Errorf("power replay line %d: want the header time,node,watts, got %q", n, line)
			}
			header = true
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("power replay line %d: want 3 fields (time,node,watts), got %d", n, len(fields))
		}
		wall, err := telemetry.ParseWallTime(fields[0])
		if err != nil {
			return nil, fmt.Errorf("power replay line %d: time %q: %w", n, fields[0], err)
		}
		w, err := strconv.ParseFloat(fields[2], 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("power replay line %d: watts %q: want a finite number ≥ 0", n, fields[2])
		}
		out = append(out, Event{Kind: Power, Time: wall.Sub(origin).Nanoseconds(), Wall: wall, Node: fields[1], Value: &w})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("power replay: %w", err)
	}
	if !header {
		return nil, fmt.Errorf("power replay: empty file (want the header time,node,watts and one sample a line)")
	}
	return out, nil
}
