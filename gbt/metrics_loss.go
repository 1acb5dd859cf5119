package gbt

import (
	"fmt"
	"math"
	"time"

	"aimeter/loadgen"
)

// IsLost reports whether a sample is a lost job of GB/T 45087: no result
// by the deadline T_OUT (status lost, IN-63), or no result at all because
// the SUT failed it (status error: an HTTP 5xx, a reset, a malformed
// answer). A failed job is no completed inference, so it counts against
// the loss-rate verdict exactly as a timed-out one (GB-7.7.1-c-2).
func IsLost(r *loadgen.Record) bool {
	return r.Status == loadgen.StatusLost || r.Status == loadgen.StatusError
}

// LossRate returns the samples lost (IsLost: no result by the deadline
// T_OUT, IN-63, or failed by the SUT), the samples sent and lost/total, the
// loss rate that GB-7.7.1-c-2 checks against a threshold (IN-79: loss_rate
// = lost_samples / sent_samples). Every record is a sent sample. The rate
// is 0 when nothing was sent.
func LossRate(records []loadgen.Record) (lost, total int, rate float64) {
	for i := range records {
		if IsLost(&records[i]) {
			lost++
		}
	}
	total = len(records)
	if total > 0 {
		rate = float64(lost) / float64(total)
	}
	return lost, total, rate
}

// JobLossRate is LossRate per job (IN-79 "also per job"; a job is a query,
// IN-65): a job is lost when any of its samples is. Records must be in issue
// order, as loadgen.Result.Records yields them, so that a job's samples are
// adjacent.
func JobLossRate(records []loadgen.Record) (lost, total int, rate float64) {
	for i := 0; i < len(records); {
		q := records[i].QueryID
		jobLost := false
		for ; i < len(records) && records[i].QueryID == q; i++ {
			jobLost = jobLost || IsLost(&records[i])
		}
		total++
		if jobLost {
			lost++
		}
	}
	if total > 0 {
		rate = float64(lost) / float64(total)
	}
	return lost, total, rate
}

// LossPerSecond counts the lost samples in each second of the run (index s
// covers [s, s+1) seconds from the start of issuing), identifying timed-out
// jobs over time (GB-7.7.1-c-1, GB-7.3-f-5). A lost sample counts in the
// second its deadline T_OUT = issue + timeout falls (IN-63). With no timeout
// (timeout ≤ 0, offline mode) a sample is lost only for never returning
// (IN-51) and counts in the last second of the run. The slice covers every
// second up to the last issue, receipt or deadline; it is nil for no
// records.
func LossPerSecond(records []loadgen.Record, timeout time.Duration) []int {
	if len(records) == 0 {
		return nil
	}
	end := int64(0)
	for i := range records {
		r := &records[i]
		end = max(end, r.IssuedNs, r.CompletedNs)
		if r.Status == loadgen.StatusLost && timeout > 0 {
			end = max(end, r.IssuedNs+int64(timeout))
		}
	}
	out := make([]int, end/nsPerSecond+1)
	for i := range records {
		r := &records[i]
		if r.Status == loadgen.StatusError {
			// A failure counts in the second the SUT reported it.
			out[max(r.CompletedNs, 0)/nsPerSecond]++
			continue
		}
		if r.Status != loadgen.StatusLost {
			continue
		}
		t := end
		if timeout > 0 {
			t = max(r.IssuedNs+int64(timeout), 0)
		}
		out[t/nsPerSecond]++
	}
	return out
}

// LossCheck is the outcome of checking a run's loss rate against the
// permissible loss-rate threshold (GB-7.7.1-c-2).
type LossCheck struct {
	Rate      float64 `json:"rate"`      // lost / sent samples
	Threshold float64 `json:"threshold"` // the permissible rate (IN-79)
	// Valid is false when the rate exceeds the threshold: the run is then
	// invalid (IN-79).
	Valid bool `json:"valid"`
	// Reason says why the run is invalid.
	Reason string `json:"reason,omitempty"`
}

// LossVerdict checks a loss rate against the tester's threshold
// (GB-7.7.1-c-2). The standard gives no threshold value, so it is a
// mandatory parameter with no default (IN-79): both are fractions in [0, 1]
// (0.01 for 1 %), and the run is invalid when rate > threshold (a rate equal
// to the threshold passes). An out-of-range or NaN argument is an error.
func LossVerdict(rate, threshold float64) (LossCheck, error) {
	v := LossCheck{Rate: rate, Threshold: threshold}
	if !(threshold >= 0 && threshold <= 1) {
		return v, fmt.Errorf("gbt: loss-rate threshold %v, want a fraction in [0, 1]; the standard sets none, the tester must (IN-79)", threshold)
	}
	if !(rate >= 0 && rate <= 1) || math.IsNaN(rate) {
		return v, fmt.Errorf("gbt: loss rate %v, want a fraction in [0, 1]", rate)
	}
	v.Valid = rate <= threshold
	if !v.Valid {
		v.Reason = fmt.Sprintf("loss rate %.4g%% exceeds the permissible %.4g%% (GB-7.7.1-c-2, IN-79)", rate*100, threshold*100)
	}
	return v, nil
}
