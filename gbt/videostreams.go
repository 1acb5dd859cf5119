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

// StreamsGrowth is the factor by which the search multiplies the stream
// count while every probe passes (1, 8, 64, …), until one fails and the
// bisection starts. A large factor brackets the answer in few probes; the
// bisection then halves the bracket with each probe.
const StreamsGrowth = 8

// maxConfirmRounds bounds how often a confirmation may contradict the
// bisection and send the search back to it, so that a SUT whose probes do not
// repeat cannot keep the search going forever.
const maxConfirmRounds = 4

// ErrStreamsLimit is returned (wrapped) by MaxStreams when every stream count
// up to the limit passed, so the maximum was not found.
var ErrStreamsLimit = errors.New("gbt: every stream count up to the limit passed")

// Phases of a stream probe.
const (
	PhaseGrow    = "grow"    // multiplying n by StreamsGrowth from n = 1
	PhaseBisect  = "bisect"  // bisecting between the last pass and the first failure
	PhaseConfirm = "confirm" // re-running the answer and the count above it
	PhaseLinear  = "linear"  // stepping by one, as Table 21 d) and e) do
)

// Reasons a search stopped before it was confirmed at its resolution
// (StreamsResult.Stop).
const (
	// StopBudget: the time budget ran out; the result is the best bracket
	// found so far.
	StopBudget = "budget"
	// StopLimit: every count up to the limit passed.
	StopLimit = "limit"
	// StopUnstable: confirmations kept contradicting the bisection (the
	// probe's verdict does not repeat at the same count).
	StopUnstable = "unstable"
)

// StreamProbe is one run of the fixed-period video test with N streams.
// The probe function fills OK, Frames, Lost, Failed and Idle; MaxStreams
// fills N, Phase and Seconds.
type StreamProbe struct {
	N      int    `json:"n"`      // number of streams
	Phase  string `json:"phase"`  // PhaseGrow, PhaseBisect, PhaseConfirm or PhaseLinear
	OK     bool   `json:"ok"`     // every frame of every stream returned in time
	Frames int64  `json:"frames"` // frames issued
	Lost   int64  `json:"lost"`   // frames not returned within the timeout
	Failed int64  `json:"failed"` // frames the SUT answered with an error
	// Seconds is the wall time of the probe, making the SUT idle included.
	Seconds float64 `json:"seconds"`
	// Idle says how the SUT was made idle before the probe: "drained"
	// (its queue discarded and in-progress work awaited) or "fresh"
	// (a new SUT instance).
	Idle string `json:"idle,omitempty"`
}

// LostFraction is the share of the probe's frames that were lost or failed.
func (p StreamProbe) LostFraction() float64 {
	if p.Frames == 0 {
		return 0
	}
	return float64(p.Lost+p.Failed) / float64(p.Frames)
}

// StreamProber runs one probe with n streams from an idle SUT and reports
// its outcome; see MaxStreams.
type StreamProber func(ctx context.Context, n int) (StreamProbe, error)

// StreamsOptions are the parameters of MaxStreams.
type StreamsOptions struct {
	// Limit is the largest stream count tried (default
	// DefaultMaxStreamsLimit).
	Limit int
	// Linear runs the literal procedure of Table 21 (GB-7.6.7-T21-MVS):
	// n = 1, 2, 3, … until the first failure, with no confirmation.
	// Otherwise the search grows, bisects and confirms (IN-78 (6)).
	Linear bool
	// Resolution ends the bisection once the bracket is narrow enough:
	// when the smallest failing count minus the largest passing count is at
	// most max(1, ⌊Resolution × the passing count⌋). 0 refines to one
	// stream, which is the value of the linear procedure (IN-78 (6)); 0.05
	// stops within 5 %.
	Resolution float64
	// Budget bounds the wall time of the search (0: none). A probe is only
	// started if it is expected to end within the budget, and refining
	// stops early enough to leave time for the two confirmation runs. When
	// the budget runs out the result is the best bracket found, with Stop
	// set to StopBudget.
	Budget time.Duration
	// ProbeEstimate is the expected wall time of one probe, used for the
	// budget until a probe has been timed; afterwards the longest probe so
	// far is used.
	ProbeEstimate time.Duration
}

// StreamsResult is the maximum number of video-analysis streams
// (GB-7.6.7-T21-MVS) with every probe run to find it, in order.
type StreamsResult struct {
	// MaxStreams is the largest count that passed: the lower end of the
	// bracket; 0 when no count passed.
	MaxStreams int `json:"max_streams"`
	// FirstFail is the smallest count above MaxStreams that failed: the
	// exact maximum lies in [MaxStreams, FirstFail − 1]. 0 when no count
	// failed.
	FirstFail int `json:"first_fail,omitempty"`
	// Confirmed: after the search, a run at MaxStreams passed and a run at
	// FirstFail failed, each from an idle SUT, so the bracket holds on
	// re-running. The linear procedure does not confirm.
	Confirmed bool `json:"confirmed"`
	// Stop says why the search ended before a confirmed bracket at its
	// resolution (StopBudget, StopLimit, StopUnstable); empty when it did not.
	Stop string `json:"stop,omitempty"`
	// Resolution is StreamsOptions.Resolution.
	Resolution float64 `json:"resolution"`
	// Seconds is the wall time of the search.
	Seconds float64 `json:"seconds"`
	// Probes are every run, in order.
	Probes []StreamProbe `json:"probes"`
}

// Exact reports whether the result is the value of the linear procedure for
// a SUT whose verdicts repeat: MaxStreams passed and MaxStreams + 1 failed.
func (r StreamsResult) Exact() bool {
	return r.FirstFail == r.MaxStreams+1
}

// Answered reports whether r answers the search (the command line's exit
// 0): every count up to the limit passed (at least MaxStreams), the linear
// procedure (StreamsOptions.Linear, linear) found its first failure, or
// the bracket was confirmed. A search in which no count passed, a budget
// that ran out first and probes that disagree are no answer.
func (r StreamsResult) Answered(linear bool) bool {
	switch {
	case r.Stop == StopLimit:
		return true
	case r.MaxStreams == 0 && r.FirstFail > 0 && r.Stop == "":
		return false
	case linear && r.FirstFail > 0:
		return true
	}
	return r.Confirmed
}

// LatestProbe is the latest of r's probes of n streams; a probe with only
// N set when there is none.
func (r StreamsResult) LatestProbe(n int) StreamProbe {
	for i := len(r.Probes) - 1; i >= 0; i-- {
		if r.Probes[i].N == n {
			return r.Probes[i]
		}
	}
	return StreamProbe{N: n}
}

// SingleProbeResult is the result of a single probe of p.N streams, with
// no search: p.N is the maximum when it passed, the first failure when it
// failed.
func SingleProbeResult(p StreamProbe) StreamsResult {
	r := StreamsResult{Probes: []StreamProbe{p}, Seconds: p.Seconds}
	if p.OK {
		r.MaxStreams = p.N
	} else {
		r.FirstFail = p.N
	}
	return r
}

// MaxStreams finds the maximum number of video-analysis streams
// (GB-7.6.7-T21-MVS). probe runs the fixed-period arrival mode with n
// parallel streams of one frame per job (each stream at the frame rate
// f = 1/T, IN-78 (3)) for the configured length, from an idle SUT, and
// reports whether every frame of every stream returned within the mode-1
// timeout (IN-78 (2), (5)). A probe must not inherit the previous probe's
// backlog: the SUT is drained or replaced before each (loadgen.Drainer).
//
// The literal procedure starts at n = 1 and adds one stream until a run
// fails, reporting n − 1 (StreamsOptions.Linear). The default search
// brackets the answer by multiplying n by StreamsGrowth from 1 until a run
// fails, then bisects between the largest pass and the smallest failure
// until the bracket is within StreamsOptions.Resolution (one stream by
// default, the value the linear procedure ends on, IN-78 (6)). It then
// confirms by re-running the largest pass and the smallest failure (a count
// whose latest run was a confirmation is not run again). If the
// pass fails on re-running, the bracket moves below it (to the largest
// count whose latest run passed) and bisection resumes; if the failure
// passes, the bracket moves above it. It never steps one stream at a time.
// Every probe is recorded, and the search stops early, stating why, when
// StreamsOptions.Budget runs out or the confirmations keep contradicting the
// bisection. With a probe that is not monotone (a failure below a pass) the
// result can differ from the first failure of the linear procedure; only
// Linear guarantees the literal reading.
//
// A probe error or a cancelled ctx ends the search: the probes so far are
// returned with the error. If every n up to Limit passes, MaxStreams is
// Limit, Stop is StopLimit and the error wraps ErrStreamsLimit.
func MaxStreams(ctx context.Context, probe StreamProber, opts StreamsOptions) (StreamsResult, error) {
	s := newStreamSearch(probe, opts)
	var err error
	if opts.Linear {
		err = s.linear(ctx)
	} else {
		err = s.search(ctx)
	}
	s.res.Seconds = time.Since(s.start).Seconds()
	if err == nil && s.res.Stop == StopLimit {
		err = fmt.Errorf("%w (%d streams)", ErrStreamsLimit, s.limit)
	}
	return s.res, err
}

// streamSearch is the state of one MaxStreams call.
type streamSearch struct {
	probe  StreamProber
	opts   StreamsOptions
	limit  int
	start  time.Time
	est    time.Duration // expected wall time of one probe
	latest map[int]bool  // the verdict of the latest probe of each count
	res    StreamsResult
}

func newStreamSearch(probe StreamProber, opts StreamsOptions) *streamSearch {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultMaxStreamsLimit
	}
	return &streamSearch{
		probe: probe, opts: opts, limit: limit,
		start: time.Now(), est: opts.ProbeEstimate,
		latest: map[int]bool{},
		res:    StreamsResult{Resolution: opts.Resolution},
	}
}

// run probes n streams and records the probe.
func (s *streamSearch) run(ctx context.Context, n int, phase string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	t0 := time.Now()
	p, err := s.probe(ctx, n)
	if err != nil {
		return false, fmt.Errorf("gbt: video-stream probe with %d streams: %w", n, err)
	}
	took := time.Since(t0)
	s.est = max(s.est, took)
	p.N, p.Phase, p.Seconds = n, phase, took.Seconds()
	s.res.Probes = append(s.res.Probes, p)
	s.latest[n] = p.OK
	return p.OK, nil
}

// fits reports whether k more probes are expected to end within the budget.
func (s *streamSearch) fits(k int) bool {
	return s.opts.Budget <= 0 || time.Since(s.start)+time.Duration(k)*s.est <= s.opts.Budget
}

// step is the bracket width at which refining stops, for lower end lo.
func (s *streamSearch) step(lo int) int {
	return max(1, int(s.opts.Resolution*float64(lo)))
}

func (s *streamSearch) linear(ctx context.Context) error {
	for n := 1; n <= s.limit; n++ {
		if !s.fits(1) {
			s.res.MaxStreams, s.res.Stop = n-1, StopBudget
			return nil
		}
		ok, err := s.run(ctx, n, PhaseLinear)
		if err != nil {
			return err
		}
		if !ok {
			s.res.MaxStreams, s.res.FirstFail = n-1, n
			return nil
		}
	}
	s.res.MaxStreams, s.res.Stop = s.limit, StopLimit
	return nil
}

func (s *streamSearch) search(ctx context.Context) error {
	// lo passed (0 passes trivially); hi failed (limit + 1: none yet).
	lo, hi := 0, s.limit+1
	for round := 0; ; round++ {
		if round == maxConfirmRounds {
			s.bracket(lo, hi, StopUnstable)
			return nil
		}
		stop, err := s.refine(ctx, &lo, &hi)
		if err != nil {
			return err
		}
		// Confirm lo (when a count passed) and hi (when one failed), each
		// by a fresh run, unless its latest run was already a confirmation
		// with the same verdict.
		if lo > 0 && !s.confirmed(lo, true) {
			if !s.fits(1) {
				s.bracket(lo, hi, StopBudget)
				return nil
			}
			ok, err := s.run(ctx, lo, PhaseConfirm)
			if err != nil {
				return err
			}
			if !ok {
				// The pass did not repeat: the bracket moves below it.
				hi, lo = lo, s.largestPassBelow(lo)
				continue
			}
		}
		if hi > s.limit {
			if lo == s.limit {
				stop = StopLimit
			}
			s.bracket(lo, hi, stop)
			return nil
		}
		if s.confirmed(hi, false) {
			s.bracket(lo, hi, stop)
			s.res.Confirmed = true
			return nil
		}
		if !s.fits(1) {
			s.bracket(lo, hi, StopBudget)
			return nil
		}
		ok, err := s.run(ctx, hi, PhaseConfirm)
		if err != nil {
			return err
		}
		if ok {
			// The failure did not repeat: the bracket moves above it.
			lo, hi = hi, s.smallestFailAbove(hi)
			continue
		}
		s.bracket(lo, hi, stop)
		s.res.Confirmed = true
		return nil
	}
}

// refine grows then bisects [lo, hi] until the bracket is within the
// resolution, every count up to the limit passed, or the budget leaves only
// the time of the confirmation runs (then it returns StopBudget).
func (s *streamSearch) refine(ctx context.Context, lo, hi *int) (string, error) {
	for {
		var n int
		var phase string
		switch {
		case *hi > s.limit && *lo == s.limit:
			return "", nil
		case *hi > s.limit:
			n, phase = min(max(1, *lo*StreamsGrowth), s.limit), PhaseGrow
		case *hi-*lo <= s.step(*lo):
			return "", nil
		default:
			n, phase = *lo+(*hi-*lo)/2, PhaseBisect
		}
		if !s.fits(3) { // this probe and the two confirmations
			return StopBudget, nil
		}
		ok, err := s.run(ctx, n, phase)
		if err != nil {
			return "", err
		}
		if ok {
			*lo = n
		} else {
			*hi = n
		}
	}
}

// bracket records [lo, hi) as the result; hi > limit means no count failed.
func (s *streamSearch) bracket(lo, hi int, stop string) {
	s.res.MaxStreams, s.res.FirstFail, s.res.Stop = lo, 0, stop
	if hi <= s.limit {
		s.res.FirstFail = hi
	}
}

// confirmed reports whether the latest probe of n was a confirmation with
// verdict ok.
func (s *streamSearch) confirmed(n int, ok bool) bool {
	for i := len(s.res.Probes) - 1; i >= 0; i-- {
		if p := s.res.Probes[i]; p.N == n {
			return p.Phase == PhaseConfirm && p.OK == ok
		}
	}
	return false
}

func (s *streamSearch) largestPassBelow(n int) int {
	best := 0
	for m, ok := range s.latest {
		if ok && m < n && m > best {
			best = m
		}
	}
	return best
}

func (s *streamSearch) smallestFailAbove(n int) int {
	best := s.limit + 1
	for m, ok := range s.latest {
		if !ok && m > n && m < best {
			best = m
		}
	}
	return best
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
