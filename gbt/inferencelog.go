package gbt

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"time"

	"aimeter/loadgen"
)

// InferenceLogFileName is the inference log's file in a run directory.
const InferenceLogFileName = "gbt_inference.log"

// WriteInferenceLog writes the inference log of 7.3 f) (GB-7.3-f, IN-43)
// from the test description and the main jobs' records, in sequence order:
// one LogLine for each whole second k of the run, at t.Start + k s, and a
// final line at the end of the run (t.Start + t.EndNs), each with the jobs,
// samples and lost samples known by then, cumulative. A sample counts when
// its result returned (status ok or error); a lost sample counts at its
// deadline, issue + the timeout (at the end of the run when there is no
// timeout or the deadline is later); a job counts when the last of its
// samples returns, and not at all when one of them is lost (its result
// never returned). Timestamps are in t.Start's location. The accuracy field
// is the cumulative accuracy (GB-7.3-f-2): of the samples returned ok by
// then, the fraction whose index t.Correct marks '1' (an index it marks '0'
// or '-', or lies beyond, counts as wrong); it is "--" when t.Correct is
// empty (no scorer for the data set) or no sample has returned ok yet
// (IN-43). The log is a pure function of its inputs, so a stored run
// regenerates it byte for byte.
func WriteInferenceLog(w io.Writer, t *Test, records []loadgen.Record) error {
	end := t.EndNs
	timeout := int64(t.Arrival.Timeout)
	at := func(r *loadgen.Record) int64 {
		if r.Status != loadgen.StatusLost {
			return r.CompletedNs
		}
		if timeout > 0 && (end <= 0 || r.IssuedNs+timeout < end) {
			return r.IssuedNs + timeout
		}
		return end
	}
	samples := make([]int64, 0, len(records))
	// scored holds the ok samples' return times, each with its score in the
	// lowest bit (time×2 + 1 when correct), when a scorer ran.
	var scored []int64
	var lost, jobs []int64
	for i := 0; i < len(records); {
		q := records[i].QueryID
		done, jobLost := int64(0), false
		for ; i < len(records) && records[i].QueryID == q; i++ {
			r := &records[i]
			ti := at(r)
			done = max(done, ti)
			if r.Status == loadgen.StatusLost {
				lost = append(lost, ti)
				jobLost = true
			} else {
				samples = append(samples, ti)
				if t.Correct != "" && r.Status == loadgen.StatusOK {
					ok := int64(0)
					if r.SampleIndex < uint64(len(t.Correct)) && t.Correct[r.SampleIndex] == '1' {
						ok = 1
					}
					scored = append(scored, ti*2+ok)
				}
			}
		}
		if !jobLost {
			jobs = append(jobs, done)
		}
	}
	if end <= 0 {
		// A run of unknown length ends with its last event.
		for _, v := range [][]int64{samples, lost, jobs} {
			if len(v) > 0 {
				end = max(end, slices.Max(v))
			}
		}
	}
	slices.Sort(samples)
	slices.Sort(lost)
	slices.Sort(jobs)
	slices.Sort(scored)
	// upTo counts the sorted times ≤ limit, moving *i forward.
	upTo := func(v []int64, i *int, limit int64) int64 {
		for *i < len(v) && v[*i] <= limit {
			*i++
		}
		return int64(*i)
	}
	bw := bufio.NewWriter(w)
	// accuracyUpTo returns the cumulative accuracy of the scored samples
	// returned by limit (nil when none), moving *i and *right forward.
	var sci, right int
	accuracyUpTo := func(limit int64, all bool) *float64 {
		for sci < len(scored) && (all || scored[sci]>>1 <= limit) {
			right += int(scored[sci] & 1)
			sci++
		}
		if sci == 0 {
			return nil
		}
		a := float64(right) / float64(sci)
		return &a
	}
	write := func(ns int64, acc *float64, j, s, l int64) {
		bw.WriteString(LogLine(t.Start.Add(time.Duration(ns)), acc, j, s, l))
		bw.WriteByte('\n')
	}
	var si, li, ji int
	for k := int64(1); k*int64(time.Second) <= end; k++ {
		ns := k * int64(time.Second)
		write(ns, accuracyUpTo(ns, false), upTo(jobs, &ji, ns), upTo(samples, &si, ns), upTo(lost, &li, ns))
	}
	// The final line holds every sample, whatever its time.
	write(end, accuracyUpTo(end, true), int64(len(jobs)), int64(len(samples)), int64(len(lost)))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gbt: writing %s: %w", InferenceLogFileName, err)
	}
	return nil
}
