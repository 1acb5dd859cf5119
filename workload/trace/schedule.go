package trace

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ScheduleOptions scale and truncate a trace's schedule. The zero value
// replays the whole trace at its own speed.
type ScheduleOptions struct {
	// Speedup divides every gap of the trace: 2 replays it twice as fast,
	// 0.5 at half speed; 0 means 1.
	Speedup float64
	// MaxRequests keeps the first MaxRequests requests; 0 keeps all.
	MaxRequests int
	// MaxDuration keeps the requests scheduled before this offset (after
	// scaling); 0 keeps all.
	MaxDuration time.Duration
}

// Schedule is the part of a trace that a run replays.
type Schedule struct {
	// Arrivals are the scheduled offsets of the requests in ns from the
	// start of issuing (loadgen.Options.Arrivals): the trace's first
	// request is at 0, request k at (AtNs[k] − AtNs[0]) / Speedup, rounded
	// to the nearest ns.
	Arrivals []int64
	// Requests are the requests replayed, Requests[k] at Arrivals[k]
	// (sample k of the run's prompt set).
	Requests []Request
	// Speedup is the speed-up applied (1 when none was given).
	Speedup float64
	// Truncated says why the schedule is shorter than the trace ("" when
	// it is not).
	Truncated string
}

// Samples returns the sample index of each arrival
// (loadgen.Options.ArrivalSamples): request k is sample k.
func (s *Schedule) Samples() []uint64 {
	out := make([]uint64, len(s.Arrivals))
	for i := range out {
		out[i] = uint64(i)
	}
	return out
}

// Duration is the offset of the last arrival.
func (s *Schedule) Duration() time.Duration {
	return time.Duration(s.Arrivals[len(s.Arrivals)-1])
}

// RatePerSecond is the mean arrival rate: requests after the first over
// the schedule's duration (0 when all arrive at once).
func (s *Schedule) RatePerSecond() float64 {
	d := s.Duration()
	if d <= 0 {
		return 0
	}
	return float64(len(s.Arrivals)-1) / d.Seconds()
}

// Schedule scales and truncates the trace.
func (t *Trace) Schedule(o ScheduleOptions) (*Schedule, error) {
	speed := o.Speedup
	switch {
	case speed == 0:
		speed = 1
	case math.IsNaN(speed) || math.IsInf(speed, 0) || speed < 1e-6 || speed > 1e6:
		return nil, fmt.Errorf("speedup %v: want a factor in [1e-6, 1e6] (2 replays twice as fast)", o.Speedup)
	}
	if o.MaxRequests < 0 {
		return nil, fmt.Errorf("max requests %d: want ≥ 0 (0 = all)", o.MaxRequests)
	}
	if o.MaxDuration < 0 {
		return nil, fmt.Errorf("max duration %v: want ≥ 0 (0 = all)", o.MaxDuration)
	}
	if len(t.Requests) == 0 {
		return nil, errors.New("trace has no requests")
	}
	s := &Schedule{Speedup: speed}
	origin := t.Requests[0].AtNs
	n := len(t.Requests)
	if o.MaxRequests > 0 && o.MaxRequests < n {
		n = o.MaxRequests
		s.Truncated = fmt.Sprintf("the first %d of %d requests (max requests)", n, len(t.Requests))
	}
	s.Arrivals = make([]int64, 0, n)
	for k := range n {
		at := int64(math.Round(float64(t.Requests[k].AtNs-origin) / speed))
		if at > math.MaxInt64/2 {
			return nil, fmt.Errorf("trace %s line %d: scaled by %v its offset exceeds the int64 ns a schedule holds", t.Name, t.Requests[k].Line, speed)
		}
		if o.MaxDuration > 0 && at >= int64(o.MaxDuration) {
			s.Truncated = fmt.Sprintf("the %d of %d requests scheduled before %v (max duration)", k, len(t.Requests), o.MaxDuration)
			break
		}
		s.Arrivals = append(s.Arrivals, at)
	}
	s.Requests = t.Requests[:len(s.Arrivals)]
	return s, nil
}
