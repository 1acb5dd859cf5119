package gbt

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultMaxStreamsLimit bounds the stream counts MaxStreams tries when
// StreamsOptions.Limit is 0.
const DefaultMaxStreamsLimit = 1 << 16

// ErrStreamsLimit is returned (wrapped) by MaxStreams when every stream count
// up to the limit passed, so the maximum was not found.
var ErrStreamsLimit = errors.New("gbt: every stream count up to the limit passed")

// Phases of a stream probe.
const (
	PhaseGrow    = "grow"    // doubling from n = 1
	PhaseBisect  = "bisect"  // bisecting between the last pass and the first failure
	PhaseConfirm = "confirm" // re-running n and n + 1 as the linear procedure would end
	PhaseLinear  = "linear"  // stepping by one, as Table 21 d) and e) do
)

// StreamProbe is one run of the fixed-period video test with N streams.
type StreamProbe struct {
	N     int    `json:"n"`     // number of streams
	OK    bool   `json:"ok"`    // every frame of every stream returned in time
	Phase string `json:"phase"` // PhaseGrow, PhaseBisect, PhaseConfirm or PhaseLinear
}

// StreamsOptions are the parameters of MaxStreams.
type StreamsOptions struct {
	// Limit is the largest stream count tried (default
	// DefaultMaxStreamsLimit).
	Limit int
	// Linear runs the literal procedure of Table 21 (GB-7.6.7-T21-MVS):
	// n = 1, 2, 3, … until the first failure. Otherwise the search grows,
	// bisects and confirms (IN-78 (6)).
	Linear bool
}

// StreamsResult is the maximum number of video-analysis streams
// (GB-7.6.7-T21-MVS) with every probe run to find it, in order.
type StreamsResult struct {
	// MaxStreams is the largest n that passed with n + 1 failing, the
	// value the linear procedure reports as n − 1 at its first failure;
	// 0 when one stream fails.
	MaxStreams int `json:"max_streams"`
	// Probes are every run, in order.
	Probes []StreamProbe `json:"probes"`
}

// MaxStreams finds the maximum number of video-analysis streams
// (GB-7.6.7-T21-MVS). probe runs the fixed-period arrival mode with n
// parallel streams of one frame per job (each stream at the frame rate
// f = 1/T, IN-78 (3)) for the configured length and reports whether every
// frame of every stream returned within the mode-1 timeout (IN-78 (2), (5)).
//
// The literal procedure starts at n = 1 and adds one stream until a run
// fails, reporting n − 1 (StreamsOptions.Linear). The default search is
// faster and, as IN-78 (6) requires, reports the value the linear procedure
// ends on — the largest n that passes where n + 1 fails: it doubles n from 1
// until a run fails, bisects between the last pass and the first failure,
// then re-runs the candidate n and n + 1. If n passes and n + 1 fails the
// result is n. Otherwise it continues one step at a time from there: upwards
// while runs pass (n + 1 passed: try n + 2, …), downwards while they fail
// (n failed: try n − 1, …), until a pass is next to a failure. Every probe
// is recorded. With a probe that is not monotone (a failure below a pass)
// the confirmed value can differ from the first failure of the linear
// procedure; only Linear guarantees the literal reading.
//
// A probe error or a cancelled ctx ends the search: the probes so far are
// returned with the error. If every n up to Limit passes, MaxStreams is
// Limit and the error wraps ErrStreamsLimit.
func MaxStreams(ctx context.Context, probe func(ctx context.Context, n int) (ok bool, err error), opts StreamsOptions) (StreamsResult, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultMaxStreamsLimit
	}
	var res StreamsResult
	run := func(n int, phase string) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		ok, err := probe(ctx, n)
		if err != nil {
			return false, fmt.Errorf("gbt: video-stream probe with %d streams: %w", n, err)
		}
		res.Probes = append(res.Probes, StreamProbe{N: n, OK: ok, Phase: phase})
		return ok, nil
	}
	limitErr := func() (StreamsResult, error) {
		res.MaxStreams = limit
		return res, fmt.Errorf("%w (%d streams)", ErrStreamsLimit, limit)
	}

	if opts.Linear {
		for n := 1; n <= limit; n++ {
			ok, err := run(n, PhaseLinear)
			if err != nil {
				return res, err
			}
			if !ok {
				res.MaxStreams = n - 1
				return res, nil
			}
		}
		return limitErr()
	}

	// Grow: lo is the largest count known to pass, hi the smallest known
	// to fail (limit + 1: none yet).
	lo, hi := 0, limit+1
	for n := 1; ; n *= 2 {
		n = min(n, limit)
		ok, err := run(n, PhaseGrow)
		if err != nil {
			return res, err
		}
		if !ok {
			hi = n
			break
		}
		lo = n
		if n == limit {
			break
		}
	}
	// Bisect.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := run(mid, PhaseBisect)
		if err != nil {
			return res, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo == limit {
		return limitErr()
	}

	// Confirm n = lo and n + 1 = hi as the linear procedure would end.
	n := lo
	okN := n == 0 // zero streams trivially pass
	if n > 0 {
		var err error
		if okN, err = run(n, PhaseConfirm); err != nil {
			return res, err
		}
	}
	if okN {
		ok, err := run(n+1, PhaseConfirm)
		if err != nil {
			return res, err
		}
		if !ok {
			res.MaxStreams = n
			return res, nil
		}
		// n + 1 passed after all: step up until a run fails.
		for m := n + 2; m <= limit; m++ {
			ok, err := run(m, PhaseLinear)
			if err != nil {
				return res, err
			}
			if !ok {
				res.MaxStreams = m - 1
				return res, nil
			}
		}
		return limitErr()
	}
	// n failed after all: step down until a run passes.
	for m := n - 1; m >= 1; m-- {
		ok, err := run(m, PhaseLinear)
		if err != nil {
			return res, err
		}
		if ok {
			res.MaxStreams = m
			return res, nil
		}
	}
	res.MaxStreams = 0
	return res, nil
}

// StreamPlanInput is the fixed-period test of one stream probe
// (GB-7.6.7-T21-MVS, IN-78): n streams of fps frames per second, one frame
// per job, so n jobs arrive every period T = 1/fps for duration. timeout 0
// takes the mode-1 threshold of Table 10 (column 1). Plan turns it into
// LoadGen settings as for any test.
func StreamPlanInput(fps float64, n int, duration, timeout time.Duration) PlanInput {
	period := time.Duration(float64(time.Second) / fps)
	return PlanInput{
		Arrival:      Arrival{Mode: ModeFixedPeriod, Period: period, N: n, Duration: duration}.WithDefaults(),
		TimeoutClass: Threshold1,
		Timeout:      timeout,
	}
}

// StreamProbePassed reports whether a stream probe passed: every frame of
// every stream returned, none lost and none failed (IN-78 (2), (5)).
func StreamProbePassed(m Metrics) bool {
	return m.Loss.Lost == 0 && m.Throughput.Errors == 0
}
