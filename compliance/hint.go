package compliance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"aimeter/benchmark"
)

// SizingFile is the file in an audit's folder that records how its runs
// were sized for the SUT (benchmark.Sizing as JSON).
const SizingFile = "sizing.json"

// Size sizes the performance runs of a TEST01 or TEST04 audit for a
// network SUT (benchmark.SizeForSUT: a short probe of the SUT): it
// appends the sizing's overrides to p's Settings.Set (and its connection
// count to the SUT's), writes the sizing to SizingFile in p.OutputDir,
// and returns it. A SUT that is not a network server keeps its defaults:
// Size returns nil and changes nothing.
func Size(ctx context.Context, p *benchmark.Plan) (*benchmark.Sizing, error) {
	sz, err := benchmark.SizeForSUT(ctx, *p)
	if err != nil {
		return nil, err
	}
	if sz.Set == nil && sz.Probes == nil && (p.Custom != nil || !p.SUT.KindOrNull().IsNetwork()) {
		return nil, nil
	}
	p.Settings.Set = append(slices.Clip(p.Settings.Set), sz.Set...)
	if sz.MaxConns > 0 {
		p.SUT.Net.MaxConns = sz.MaxConns
	}
	b, err := json.MarshalIndent(sz, "", "  ")
	if err != nil {
		return sz, err
	}
	return sz, os.WriteFile(filepath.Join(p.OutputDir, SizingFile), append(b, '\n'), 0o644)
}

// shortAudit is the pass length under which a failed performance
// comparison gets Hint's advice to lengthen the pass.
const shortAudit = 10 * time.Second

// Hint explains a failed performance verification (TEST01, TEST04) with
// its real cause and tolerance. Where the reference or the audit run was
// INVALID, MLPerf's script fails without comparing: the hint names the run
// and its reasons (the run's verdict), and for a TEST04 audit run that
// ended before min_duration says what that points to (the repeated sample
// answered faster, as by a result cache). Where both were VALID and the
// scores differ by more than the tolerance (10 %, or 20 % for short
// SingleStream and MultiStream latencies), it says so, with the causes (a
// cache, the machine's other load), and for passes under 10 s that the
// machine's other load weighs as much as the SUT. It returns "" for any
// other outcome.
func (r *AuditResult) Hint() string {
	v := r.Verification
	if v == nil || v.Pass {
		return ""
	}
	tol := fmt.Sprintf("%.0f %%", v.Threshold*100)
	var invalid []string
	for _, run := range []struct {
		name string
		out  *benchmark.Outcome
	}{{"reference run", r.Reference}, {"audit run", r.Audit}} {
		if run.out == nil || run.out.Verdict.Pass {
			continue
		}
		line := fmt.Sprintf("the %s was %s: %s", run.name, run.out.Verdict.Word(), runReasons(run.out))
		if r.Test == TEST04 && run.name == "audit run" && len(invalid) == 0 && minDurationMissed(run.out) {
			line += " TEST04's audit run issues one sample again and again: a SUT that answers it much faster than the reference run's samples, as a result cache does, ends the pass before min_duration."
		}
		invalid = append(invalid, "\n  * "+line)
	}
	if len(invalid) > 0 {
		return fmt.Sprintf("hint: %s failed on an INVALID run, not on its score (the comparison within %s was not made):%s",
			r.Test, tol, strings.Join(invalid, ""))
	}
	if r.Reference == nil || r.Reference.Result == nil || r.Reference.Result.Summary == nil {
		return ""
	}
	pr := r.Reference.Result.Summary.Result
	d := time.Duration(pr.FinalQueryAllSamplesDoneTime * float64(time.Second))
	if d > 0 && d < shortAudit {
		return fmt.Sprintf("hint: the reference run's pass lasted %v; a comparison within %s of runs this short depends on the machine's other load as much as on the SUT: repeat with a longer pass (e.g. --set min_duration=60000)",
			d.Round(time.Millisecond), tol)
	}
	why := "the machine's other load, or a SUT whose speed changed"
	if r.Test == TEST04 {
		why = "a SUT that answers TEST04's repeated sample faster, as a result cache does, or the machine's other load"
	}
	return fmt.Sprintf("hint: the audit run's score %.6g is not within %s of the reference run's %.6g, both runs VALID: the SUT ran at another speed in the audit run (%s)",
		v.TestScore, tol, v.RefScore, why)
}

// hintReasons is the most reasons of a run Hint quotes, and hintReasonLen
// the most bytes of each.
const hintReasons, hintReasonLen = 3, 300

// runReasons are the reasons of a run's verdict for Hint: the first
// hintReasons, each cut at hintReasonLen, and a count of the others.
func runReasons(out *benchmark.Outcome) string {
	why := out.Verdict.Reasons
	if len(why) == 0 {
		return "see " + filepath.Join(out.Dir, "mlperf_log_summary.txt") + "."
	}
	var parts []string
	for _, r := range why[:min(len(why), hintReasons)] {
		if len(r) > hintReasonLen {
			r = strings.ToValidUTF8(r[:hintReasonLen], "") + "…"
		}
		parts = append(parts, r)
	}
	if more := len(why) - hintReasons; more > 0 {
		parts = append(parts, fmt.Sprintf("(%d more reasons in %s)", more, filepath.Join(out.Dir, "result.json")))
	}
	return strings.Join(parts, " ")
}

// minDurationMissed reports whether a run's pass ended before its
// min_duration.
func minDurationMissed(out *benchmark.Outcome) bool {
	return out.Result != nil && out.Result.Summary != nil && !out.Result.Summary.MinDurationMet
}
