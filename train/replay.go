package train

import (
	"fmt"
	"io"
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
// every window. Errors name the line. The file is parsed by
// telemetry.ReadReplay, the one parser of power replays (aimeter run and
// aimeter train --power replay:FILE read it too).
func ReadPowerReplay(r io.Reader, origin time.Time) ([]Event, error) {
	rp, err := telemetry.ReadReplay(r, "")
	if err != nil {
		return nil, err
	}
	samples, ok := rp.WallSamples()
	if !ok {
		return nil, fmt.Errorf("power replay: want the header time,node,watts (a whole machine's samples on the wall clock), not t_ns,node,device,watts")
	}
	out := make([]Event, len(samples))
	for i, s := range samples {
		w := s.Watts
		out[i] = Event{Kind: Power, Time: s.Wall.Sub(origin).Nanoseconds(), Wall: s.Wall, Node: s.Node, Value: &w}
	}
	return out, nil
}
