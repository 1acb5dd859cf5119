package gbt

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"time"

	"aimeter/loadgen"
	"aimeter/stdrand"
)

// ArrivalMode is a job arrival mode of GB/T 45087 Table 10, numbered 0 to 5
// as in the standard (GB-7.4.2). In JSON it is the bare number, so
// gbt_result.json keeps "arrival_mode": 2.
type ArrivalMode int

// The arrival modes of GB/T 45087 Table 10 (GB-7.4.2-T10-mode0 … mode5).
const (
	ModeContinuous  ArrivalMode = 0 // the next job when the previous completes or times out
	ModeFixedPeriod ArrivalMode = 1 // n jobs every period T
	ModePoisson     ArrivalMode = 2 // Poisson arrivals at λ jobs/s
	ModePeak        ArrivalMode = 3 // Poisson with j bursts of fixed-period arrivals
	ModeOffline     ArrivalMode = 4 // every job at once
	ModeMixed       ArrivalMode = 5 // another mode with foreign jobs injected
)

// Valid reports whether m is one of the six modes of Table 10.
func (m ArrivalMode) Valid() bool { return m >= ModeContinuous && m <= ModeMixed }

// String returns the mode's short name ("poisson"), or "mode(n)" for a
// number outside Table 10.
func (m ArrivalMode) String() string { return ModeName(m) }

// Default arrival parameters (GB-7.4.5-T11-FNa): λ = 5 jobs/s, T = 500 ms, n = 1.
const (
	DefaultLambda = 5.0
	DefaultPeriod = 500 * time.Millisecond
	DefaultN      = 1
)

// Arrival holds the parameters of an arrival mode. The zero values of the
// rate fields take the standard's defaults.
type Arrival struct {
	// Mode is the Table 10 mode number, 0 to 5.
	Mode ArrivalMode `json:"mode"`
	// Lambda is the Poisson rate λ in jobs per second (modes 2, 3; IN-47:
	// any real λ > 0).
	Lambda float64 `json:"lambda,omitempty"`
	// Period and N are the fixed-period parameters T and n (mode 1).
	Period time.Duration `json:"period_ns,omitempty"`
	N      int           `json:"n,omitempty"`
	// Duration is how long jobs keep arriving (modes 0–3, and the foreign
	// jobs of mode 5). The offline mode has none: its jobs all arrive at
	// once, and its test records no duration (omitted, 0).
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Jobs is the number of jobs of the offline mode (4, and 5 over it),
	// all sent at once (GB-7.4.2-T10-mode4); other modes leave it 0. As
	// Plan's input, 0 sends a user's explicit min_query_count, else the
	// loaded data set (RunPlan.SizeJobs); the plan's test records the
	// count sent.
	Jobs uint64 `json:"jobs,omitempty"`
	// Bursts is j, the number of bursts of the peak mode (mode 3).
	Bursts int `json:"bursts,omitempty"`
	// BurstLength is T_G, the length of each burst (e.g. 5–10 s).
	BurstLength time.Duration `json:"burst_length_ns,omitempty"`
	// BurstPeriod and BurstN are the fixed-period arrivals inside a burst;
	// their concurrency σ = BurstN / BurstPeriod jobs/s (IN-49).
	BurstPeriod time.Duration `json:"burst_period_ns,omitempty"`
	BurstN      int           `json:"burst_n,omitempty"`
	// BurstStarts, if set, places the bursts (offsets from the start);
	// otherwise they are placed at random from Seed without overlapping,
	// and recorded here by Schedule (IN-49).
	BurstStarts []time.Duration `json:"burst_starts_ns,omitempty"`
	// Timeout is the timeout-control threshold t*_OUT (Table 10); 0 for
	// the offline mode, where there is none.
	Timeout time.Duration `json:"timeout_ns"`
	// Seed drives every random choice of the schedule (IN-53).
	Seed uint64 `json:"seed"`
}

// WithDefaults returns a with the standard's defaults in unset fields.
func (a Arrival) WithDefaults() Arrival {
	if a.Lambda == 0 {
		a.Lambda = DefaultLambda
	}
	if a.Period == 0 {
		a.Period = DefaultPeriod
	}
	if a.N == 0 {
		a.N = DefaultN
	}
	return a
}

// ParamError names an impossible arrival parameter.
type ParamError struct {
	Param string
	Value any
	Why   string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("invalid arrival parameter %s = %v: %s", e.Param, e.Value, e.Why)
}

// Validate rejects impossible parameters before a run, naming the parameter.
// It expects WithDefaults to have been applied.
func (a Arrival) Validate() error {
	bad := func(p string, v any, why string) error { return &ParamError{Param: p, Value: v, Why: why} }
	if a.Mode < ModeContinuous || a.Mode > ModeMixed {
		return bad("mode", a.Mode, "Table 10 defines modes 0 to 5")
	}
	if !(a.Lambda > 0) {
		return bad("lambda", a.Lambda, "the Poisson rate must be > 0 jobs/s (IN-47)")
	}
	if a.N <= 0 {
		return bad("n", a.N, "at least one job must arrive per period")
	}
	if a.Period <= 0 {
		return bad("period", a.Period, "the period T must be > 0")
	}
	if a.Timeout < 0 {
		return bad("timeout", a.Timeout, "must be ≥ 0")
	}
	switch a.Mode {
	case ModeFixedPeriod, ModePoisson, ModePeak:
		if a.Duration <= 0 {
			return bad("duration", a.Duration, "jobs must arrive for some time")
		}
	}
	if a.Mode == ModeFixedPeriod && a.Timeout > 0 && a.Timeout < a.Period {
		return bad("timeout", a.Timeout, fmt.Sprintf("shorter than the period T = %v: every job would be lost before the next arrives", a.Period))
	}
	if a.Mode == ModePeak {
		if a.Bursts <= 0 {
			return bad("bursts", a.Bursts, "the peak mode needs j ≥ 1 bursts")
		}
		if a.BurstLength <= 0 {
			return bad("burst_length", a.BurstLength, "T_G must be > 0")
		}
		if a.BurstPeriod <= 0 || a.BurstN <= 0 {
			return bad("burst_period", a.BurstPeriod, "bursts need a period > 0 and n ≥ 1 jobs per tick")
		}
		if time.Duration(a.Bursts)*a.BurstLength > a.Duration {
			return bad("burst_length", a.BurstLength, fmt.Sprintf("%d bursts of %v do not fit in a run of %v", a.Bursts, a.BurstLength, a.Duration))
		}
		if a.BurstStarts != nil {
			if len(a.BurstStarts) != a.Bursts {
				return bad("burst_starts", len(a.BurstStarts), fmt.Sprintf("want one start per burst (%d)", a.Bursts))
			}
			for i, s := range a.BurstStarts {
				if s < 0 || s+a.BurstLength > a.Duration {
					return bad("burst_starts", s, fmt.Sprintf("burst %d does not fit in the run of %v", i, a.Duration))
				}
			}
		}
		if a.Timeout > 0 && a.Timeout < a.BurstPeriod {
			return bad("timeout", a.Timeout, "shorter than the burst period")
		}
	}
	return nil
}

// Concurrency returns σ, the burst arrival rate in jobs per second.
func (a Arrival) Concurrency() float64 {
	if a.BurstPeriod <= 0 {
		return 0
	}
	return float64(a.BurstN) / a.BurstPeriod.Seconds()
}

// Scenario returns the LoadGen scenario that carries the mode: SingleStream
// for mode 0 (closed loop), Offline for mode 4, Server otherwise.
func (a Arrival) Scenario() loadgen.Scenario {
	switch a.Mode {
	case ModeContinuous:
		return loadgen.SingleStream
	case ModeOffline:
		return loadgen.Offline
	}
	return loadgen.Server
}

// MaxArrivals is the most job arrivals an open-loop schedule may hold: each
// costs about 70 bytes in the run (the offset, the query and its sample
// records), so this bounds a schedule near 5 GB.
const MaxArrivals = 1 << 26

// ScheduleLength returns the number of arrivals Schedule would return for
// modes 1 and 3 (the expected number for mode 3's Poisson part), computed
// without building them; 0 for the other modes.
func (a Arrival) ScheduleLength() float64 {
	switch a.Mode {
	case ModeFixedPeriod:
		if a.Period <= 0 {
			return math.Inf(1)
		}
		return math.Ceil(float64(a.Duration)/float64(a.Period)) * float64(a.N)
	case ModePeak:
		n := a.Lambda * a.Duration.Seconds()
		if a.BurstPeriod <= 0 {
			return math.Inf(1)
		}
		perBurst := math.Ceil(float64(a.BurstLength)/float64(a.BurstPeriod)) * float64(a.BurstN)
		return n + float64(a.Bursts)*perBurst
	}
	return 0
}

// Schedule returns the job arrival offsets (ns from the start, sorted) of the
// open-loop modes 1 and 3, for loadgen.Options.Arrivals. Mode 2 needs none:
// it is LoadGen's own Server schedule (target_qps = λ, seeded by the
// schedule seed), which already is a Poisson process. For mode 3 with no
// BurstStarts, the returned Arrival records the seeded burst placement.
func (a Arrival) Schedule() ([]int64, Arrival, error) {
	if err := a.Validate(); err != nil {
		return nil, a, err
	}
	end := int64(a.Duration)
	if n := a.ScheduleLength(); n > MaxArrivals {
		param, value := "period", any(a.Period)
		if a.Mode == ModePeak {
			param, value = "lambda", a.Lambda
		}
		return nil, a, &ParamError{Param: param, Value: value,
			Why: fmt.Sprintf("with duration %v the schedule would hold %.3g arrivals; at most %d are supported (a longer period, a lower rate or a shorter duration)", a.Duration, n, MaxArrivals)}
	}
	switch a.Mode {
	case ModeFixedPeriod:
		var out []int64
		for t := int64(0); t < end; t += int64(a.Period) {
			for k := 0; k < a.N; k++ {
				out = append(out, t)
			}
		}
		return out, a, nil
	case ModePeak:
		rng := stdrand.New(a.Seed)
		var out []int64
		// Background Poisson arrivals: exponential gaps, truncated to ns,
		// accumulated in integer ns like LoadGen's Server schedule.
		for t := int64(0); t < end; t += rng.ExponentialNanos(a.Lambda) {
			out = append(out, t)
		}
		if a.BurstStarts == nil {
			a.BurstStarts = placeBursts(rng, a.Bursts, a.BurstLength, a.Duration)
		}
		for _, start := range a.BurstStarts {
			for t := int64(start); t < int64(start+a.BurstLength); t += int64(a.BurstPeriod) {
				for k := 0; k < a.BurstN; k++ {
					out = append(out, t)
				}
			}
		}
		slices.Sort(out)
		return out, a, nil
	}
	return nil, a, nil
}

// placeBursts draws j non-overlapping burst starts uniformly: the free time
// (duration − j·T_G) is split at j sorted random points.
func placeBursts(rng *stdrand.MT19937, j int, length, duration time.Duration) []time.Duration {
	free := uint64(duration - time.Duration(j)*length)
	cuts := make([]uint64, j)
	for i := range cuts {
		cuts[i] = rng.UniformInt(0, free)
	}
	slices.Sort(cuts)
	starts := make([]time.Duration, j)
	for i, c := range cuts {
		starts[i] = time.Duration(c) + time.Duration(i)*length
	}
	return starts
}

// ScheduleHash is the SHA-256 of a schedule's offsets (little-endian int64),
// recorded with the results so that runs compared in one batch can be shown
// to have seen the same arrivals (IN-53).
func ScheduleHash(offsets []int64) string {
	h := sha256.New()
	var b [8]byte
	for _, o := range offsets {
		binary.LittleEndian.PutUint64(b[:], uint64(o))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
