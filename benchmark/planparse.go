package benchmark

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"aimeter/train"
)

// The text forms of plan values that a command line or a configuration
// file gives as one string. Each Parse function's error describes the
// value alone, so that a caller can put the name of the flag or key that
// gave it in front.

// ParseWarmup reads a warm-up (Plan.Warmup) as a count of requests ("100")
// or a duration ("10s"); either must be above zero.
func ParseWarmup(s string) (Warmup, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil && n > 0 {
		return Warmup{Requests: n}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return Warmup{Duration: d}, nil
	}
	return Warmup{}, fmt.Errorf("%q: want a number of requests (100) or a duration (10s)", s)
}

// ParseTrainWorkload reads one scenario of the effective computing power
// Th-bar (TrainPlan.Workloads) as NAME=BASELINE[:WEIGHT[:THROUGHPUT]],
// such as T1-1=1200:0.5: a finite baseline throughput > 0, a weight in
// [0, 1] (0: a single workload weighs 1) and a measured throughput ≥ 0
// (0: this run's).
func ParseTrainWorkload(s string) (train.Workload, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return train.Workload{}, errors.New("want NAME=BASELINE[:WEIGHT[:THROUGHPUT]], such as T1-1=1200:0.5")
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return train.Workload{}, errors.New("at most BASELINE:WEIGHT:THROUGHPUT after =")
	}
	var nums [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return train.Workload{}, fmt.Errorf("%q is not a finite number ≥ 0", p)
		}
		nums[i] = v
	}
	if nums[0] <= 0 {
		return train.Workload{}, errors.New("the baseline throughput must be > 0")
	}
	if nums[1] > 1 {
		return train.Workload{}, errors.New("the weight must be in [0, 1]")
	}
	return train.Workload{Name: name, Baseline: nums[0], Weight: nums[1], Throughput: nums[2]}, nil
}

// ParseTurns reads the turns of a generated session (Sessions.MinTurns and
// MaxTurns) as N or MIN:MAX, uniform between them, with 1 ≤ MIN ≤ MAX.
func ParseTurns(s string) (lo, hi int, err error) {
	first, last, ranged := strings.Cut(s, ":")
	lo, err1 := strconv.Atoi(first)
	hi = lo
	var err2 error
	if ranged {
		hi, err2 = strconv.Atoi(last)
	}
	if err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return 0, 0, fmt.Errorf("%q: want N or MIN:MAX with 1 ≤ MIN ≤ MAX", s)
	}
	return lo, hi, nil
}
