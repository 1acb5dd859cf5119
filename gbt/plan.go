package gbt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"aimeter/loadgen"
)

// PlanInput is what a GB/T inference test asks for: the arrival of its jobs
// and the parameters of its evaluation.
type PlanInput struct {
	// Arrival is the arrival of the main jobs. Arrival.Mode is the test's
	// mode, 0 to 5; for a mixed test (5) UnderlyingMode gives the mode of
	// the main jobs. Parameters the mode does not use are left out of the
	// plan's Test. Zero rate fields are validated as given (call
	// WithDefaults first for the standard's defaults). Arrival.Timeout is
	// ignored: see Timeout.
	Arrival Arrival
	// UnderlyingMode is the mode of the main jobs of a mixed test, 0 to 4
	// (GB-7.4.2-T10-mode5).
	UnderlyingMode ArrivalMode
	// Mixed is the foreign workload of a mixed test (IN-50).
	Mixed Mixed
	// Scenario is a Tables 11–14 scenario ID, or "" for none; it chooses the
	// timeout class unless TimeoutClass is set.
	Scenario string
	// TimeoutClass is the Table 10 threshold column, 1 or 2; 0 takes the
	// scenario's, else 1.
	TimeoutClass TimeoutClass
	// Timeout overrides the Table 10 timeout threshold when > 0.
	Timeout time.Duration
	// LossThreshold is the permissible loss rate, a fraction in [0, 1]
	// (GB-7.7.1-c-2, IN-79).
	LossThreshold float64
	// SampleBytes is the input size of one sample (≥ 0).
	SampleBytes int64
}

// MainMode is the mode of the test's main jobs: UnderlyingMode for a
// mixed test (mode 5, GB-7.4.2-T10-mode5), else Arrival.Mode.
func (in PlanInput) MainMode() ArrivalMode {
	if in.Arrival.Mode == ModeMixed {
		return in.UnderlyingMode
	}
	return in.Arrival.Mode
}

// ForeignSeed is the seed of a mixed test's foreign jobs (Mixed.Seed)
// when one arrival seed (Arrival.Seed, IN-53) is to fix both schedules:
// the next seed, so that the two schedules differ.
func ForeignSeed(arrivalSeed uint64) uint64 { return arrivalSeed + 1 }

// UserSetting is one LoadGen setting that the user chose explicitly, named
// by its mlperf.conf key (e.g. "min_duration"), with the value as written
// and where it was written (e.g. "--set" or "user.conf"). Plan reports an
// error when the arrival mode must set the same key to another value.
type UserSetting struct {
	Key    string
	Value  string
	Source string
}

// RunPlan is a validated GB/T test: the LoadGen settings and options that
// carry it, and the test's description.
type RunPlan struct {
	// Test describes the test; the caller adds the test information,
	// lifecycle, start and end before storing it or evaluating a run.
	Test Test
	// Settings are the LoadGen settings of the main jobs.
	Settings loadgen.Settings
	// Arrivals are the scheduled job offsets in ns (modes 1 and 3, and 5
	// over them) for loadgen.Options.Arrivals; nil when LoadGen schedules
	// the jobs itself (modes 0, 2 and 4).
	Arrivals []int64
	// SampleTimeout is the job timeout threshold for
	// loadgen.Options.SampleTimeout; 0 for none (offline).
	SampleTimeout time.Duration
	// Foreign are the LoadGen settings of a mixed test's foreign jobs, run
	// beside the main jobs with their own QSL of Test.Mixed.QSLSize
	// samples (IN-50); nil for other modes.
	Foreign *loadgen.Settings
	// sizeJobs: an offline test that sends the loaded data set, whose
	// size SizeJobs gives.
	sizeJobs bool
}

// SizeJobs gives an offline test (mode 4, or 5 over it) that named no
// jobs count (Arrival.Jobs, or a user's min_query_count) its count: loaded,
// the samples of the loaded data set (min(performance_sample_count, QSL
// size)), each sent once (GB-7.4.2-T10-mode4: every job at once). The
// caller calls it once the data set is known, before the run; for other
// plans it does nothing.
func (p *RunPlan) SizeJobs(loaded uint64) {
	if !p.sizeJobs || loaded == 0 {
		return
	}
	p.Settings.MinQueryCount = loaded
	p.Test.Arrival.Jobs = loaded
	p.sizeJobs = false
}

// Options returns LoadGen options carrying the plan's arrivals and timeout,
// for the caller to complete. Mode 0 (and 5 over it) sends the next job
// until the duration has passed, however fast the SUT answers
// (GB-7.4.2-T10-mode0): ExtendToDuration keeps LoadGen's SingleStream
// issuing from running out of its pre-generated jobs first.
func (p *RunPlan) Options() loadgen.Options {
	return loadgen.Options{Arrivals: p.Arrivals, SampleTimeout: p.SampleTimeout,
		ExtendToDuration: p.Settings.Scenario == loadgen.SingleStream}
}

// ForeignOptions returns LoadGen options for a mixed test's foreign jobs.
func (p *RunPlan) ForeignOptions() loadgen.Options {
	return loadgen.Options{SampleTimeout: p.SampleTimeout}
}

// Conflict is a user setting that the arrival mode sets otherwise.
type Conflict struct {
	// User is the setting the user chose.
	User UserSetting
	// Param names the arrival parameter that decides the key, with its
	// value, e.g. "arrival duration 500ms".
	Param string
	// Why says how the mode sets the key.
	Why string
}

// String returns e.g. "--set min_duration=3000 conflicts with the GB/T
// arrival duration 500ms (mode 2 sets min_duration from the duration)".
func (c Conflict) String() string {
	return fmt.Sprintf("%s %s=%s conflicts with the GB/T %s (%s)", c.User.Source, c.User.Key, c.User.Value, c.Param, c.Why)
}

// ConflictError lists every user setting that a GB/T arrival mode overrules.
// It is a usage error: nothing has run.
type ConflictError struct {
	Conflicts []Conflict
}

// Error joins the conflicts, one per line.
func (e *ConflictError) Error() string {
	s := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		s[i] = c.String()
	}
	return strings.Join(s, "\n")
}

// PlanError is a test parameter that is out of range, named as in PlanInput.
type PlanError struct {
	Param string
	Value any
	Why   string
}

// Error names the parameter and says why its value is refused.
func (e *PlanError) Error() string {
	return fmt.Sprintf("invalid GB/T test parameter %s = %v: %s", e.Param, e.Value, e.Why)
}

// settingRule is one LoadGen setting that an arrival mode decides.
type settingRule struct {
	key   string                         // mlperf.conf key
	get   func(*loadgen.Settings) string // the value, as a comparable string
	param string                         // the arrival parameter, for the message
	why   string                         // how the mode derives it
}

func fmtU(v uint64) string  { return fmt.Sprint(v) }
func fmtF(v float64) string { return fmt.Sprint(v) }

// NewRunPlan turns a GB/T test into LoadGen settings and options. base are the
// settings LoadGen would otherwise run with (configuration files and user
// overrides applied); user lists the settings the user chose explicitly.
// Every user setting that the arrival mode sets to another value is
// reported in one *ConflictError; out-of-range parameters are a
// *PlanError or an arrival *ParamError. The scheduled offsets of modes 1
// and 3 are kept in the plan and their hash in Test.Schedule (IN-53).
func NewRunPlan(in PlanInput, base loadgen.Settings, user []UserSetting) (*RunPlan, error) {
	mode := in.Arrival.Mode
	if !mode.Valid() {
		return nil, &PlanError{"arrival.mode", int(mode), "Table 10 defines modes 0 to 5"}
	}
	underlying := in.MainMode()
	if mode == ModeMixed {
		if underlying < ModeContinuous || underlying >= ModeMixed {
			return nil, &PlanError{"underlying_mode", int(underlying), "want 0 to 4 (GB-7.4.2-T10-mode5)"}
		}
		if !(in.Mixed.Lambda > 0) {
			return nil, &PlanError{"mixed.lambda", in.Mixed.Lambda, "the foreign jobs' Poisson rate must be > 0 jobs/s"}
		}
		if in.Mixed.QSLSize == 0 {
			return nil, &PlanError{"mixed.qsl_size", in.Mixed.QSLSize, "the foreign jobs need at least one sample"}
		}
	}
	class := Threshold1
	t := Test{Arrival: in.Arrival}
	if in.Scenario != "" {
		spec, ok := Lookup(in.Scenario)
		if !ok {
			return nil, &PlanError{"scenario", in.Scenario, "not in Tables 11–14"}
		}
		t.Scenario = spec.ID
		class = spec.TimeoutClass
	}
	switch in.TimeoutClass {
	case 0:
	case Threshold1, Threshold2:
		class = in.TimeoutClass
	default:
		return nil, &PlanError{"timeout_class", int(in.TimeoutClass), "Table 10 has thresholds 1 and 2"}
	}
	if !(in.LossThreshold >= 0 && in.LossThreshold <= 1) {
		return nil, &PlanError{"loss_threshold", in.LossThreshold, "want a fraction in [0, 1] (IN-79)"}
	}
	if in.SampleBytes < 0 {
		return nil, &PlanError{"sample_bytes", in.SampleBytes, "want ≥ 0"}
	}
	t.TimeoutClass, t.LossThreshold, t.SampleBytes = class, in.LossThreshold, in.SampleBytes
	if in.Arrival.Jobs != 0 && underlying != ModeOffline {
		return nil, &PlanError{"arrival.jobs", in.Arrival.Jobs, "a jobs count is the offline mode's (4, or 5 over it); the other modes send jobs for their duration"}
	}

	a := in.Arrival
	a.Mode = underlying
	if a.Mode != ModePeak {
		a.Bursts, a.BurstLength, a.BurstPeriod, a.BurstN, a.BurstStarts = 0, 0, 0, 0, nil
	}
	a.Timeout = in.Timeout
	if a.Timeout == 0 {
		a.Timeout, _ = Timeout(underlying, class) // none for offline (IN-51)
	}
	arrivals, placed, err := a.Schedule() // validates
	if err != nil {
		return nil, err
	}
	p := &RunPlan{Arrivals: arrivals, SampleTimeout: a.Timeout}
	t.Arrival = placed
	t.Arrival.Mode = mode
	// The description keeps only the parameters the mode uses.
	if underlying != ModePoisson && underlying != ModePeak {
		t.Arrival.Lambda = 0
	}
	if underlying != ModeFixedPeriod {
		t.Arrival.Period, t.Arrival.N = 0, 0
	}
	if underlying == ModeOffline && mode != ModeMixed {
		// Every job arrives at once: no duration applies (the foreign
		// jobs of mode 5 over 4 still arrive for the duration).
		t.Arrival.Duration = 0
	}
	t.Schedule.Seed = a.Seed
	if arrivals != nil {
		t.Schedule.Hash = ScheduleHash(arrivals)
	}
	if mode == ModeMixed {
		u, m := underlying, in.Mixed
		t.UnderlyingMode, t.Mixed = &u, &m
	}

	s := base
	s.Scenario = a.Scenario()
	s.Mode = loadgen.PerformanceOnly
	dur := fmt.Sprintf("arrival duration %v", a.Duration)
	var rules []settingRule
	minDuration := func(v uint64, param, why string) {
		s.MinDurationMs = v
		rules = append(rules, settingRule{"min_duration", func(s *loadgen.Settings) string { return fmtU(s.MinDurationMs) }, param, why})
	}
	modeWhy := func(what string) string { return fmt.Sprintf("mode %d sets %s", int(mode), what) }
	switch underlying {
	case ModeContinuous:
		// One job outstanding at a time; the duration ends the run.
		minDuration(uint64(a.Duration.Milliseconds()), dur, modeWhy("min_duration from the duration"))
		s.MinQueryCount = 1
		rules = append(rules, settingRule{"min_query_count", func(s *loadgen.Settings) string { return fmtU(s.MinQueryCount) }, dur,
			modeWhy("min_query_count to 1: the duration ends the run")})
	case ModePoisson:
		minDuration(uint64(a.Duration.Milliseconds()), dur, modeWhy("min_duration from the duration"))
		s.ServerTargetQPS = a.Lambda
		rules = append(rules, settingRule{"target_qps", func(s *loadgen.Settings) string { return fmtF(s.ServerTargetQPS) },
			fmt.Sprintf("arrival rate λ = %v jobs/s", a.Lambda), modeWhy("target_qps from λ")})
		s.ScheduleRNGSeed = a.Seed
		rules = append(rules, settingRule{"schedule_rng_seed", func(s *loadgen.Settings) string { return fmtU(s.ScheduleRNGSeed) },
			fmt.Sprintf("arrival seed %d", a.Seed), modeWhy("schedule_rng_seed from the arrival seed (IN-53)")})
	case ModeFixedPeriod, ModePeak:
		minDuration(uint64(a.Duration.Milliseconds()), dur, modeWhy("min_duration from the duration"))
		s.ServerTargetQPS = float64(len(arrivals)) / a.Duration.Seconds()
		rules = append(rules, settingRule{"target_qps", func(s *loadgen.Settings) string { return fmtF(s.ServerTargetQPS) },
			"arrival schedule", modeWhy("target_qps from the scheduled jobs per second")})
	case ModeOffline:
		minDuration(0, "offline arrival", modeWhy("min_duration to 0: every job arrives at once"))
		// The jobs are the samples of LoadGen's one Offline query:
		// min_query_count of them, with min_duration 0. Arrival.Jobs
		// names the count, else a user's min_query_count does, else the
		// loaded data set is sent (SizeJobs); never LoadGen's default 100.
		jobs := a.Jobs
		if jobs == 0 && slices.ContainsFunc(user, func(u UserSetting) bool { return u.Key == "min_query_count" }) {
			jobs = base.MinQueryCount
		}
		if jobs > 0 {
			s.MinQueryCount = jobs
			rules = append(rules, settingRule{"min_query_count", func(s *loadgen.Settings) string { return fmtU(s.MinQueryCount) },
				fmt.Sprintf("offline jobs %d", jobs), modeWhy("min_query_count from the jobs count: the samples of its one query")})
		}
		t.Arrival.Jobs = jobs
		p.sizeJobs = jobs == 0
	}
	var conflicts []Conflict
	for _, u := range user {
		for _, r := range rules {
			if u.Key == r.key && r.get(&base) != r.get(&s) {
				conflicts = append(conflicts, Conflict{User: u, Param: r.param, Why: r.why})
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	p.Settings = s
	if mode == ModeMixed {
		fs := loadgen.DefaultSettings()
		fs.Scenario = loadgen.Server
		fs.Mode = loadgen.PerformanceOnly
		fs.ServerTargetQPS = in.Mixed.Lambda
		fs.MinDurationMs = uint64(a.Duration.Milliseconds())
		// The main jobs' duration ends the foreign jobs too: LoadGen's
		// default min_query_count of 100 would keep a slow foreign stream
		// (1 job/s) running 100 s after a 10 s test.
		fs.MinQueryCount = 1
		fs.ScheduleRNGSeed = in.Mixed.Seed
		p.Foreign = &fs
	}
	p.Test = t
	return p, nil
}

// IsUsage reports whether err is a parameter or conflict error of Plan: a
// mistake in what was asked for, found before anything ran.
func IsUsage(err error) bool {
	var pe *PlanError
	var ae *ParamError
	var ce *ConflictError
	return errors.As(err, &pe) || errors.As(err, &ae) || errors.As(err, &ce)
}
