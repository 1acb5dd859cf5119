package console

import (
	"fmt"

	"aimeter/gbt"
)

// StreamsVerdict states in one line the result of a search for the
// maximum number of video streams (GB-7.6.7-T21-MVS) at fps frames per
// second; linear is the search's StreamsOptions.Linear. Whether the line
// answers the search is r.Answered(linear). It names the search's limit
// and resolution by their plan fields (StreamsPlan.Search.Limit and
// StreamsPlan.Search.Resolution), which a command line may name by its
// flags instead.
func StreamsVerdict(r gbt.StreamsResult, fps float64, linear bool) string {
	at := fmt.Sprintf("at %g fps", fps)
	took := fmt.Sprintf("%d probes in %.0f s", len(r.Probes), r.Seconds)
	switch {
	case r.Stop == gbt.StopLimit:
		return fmt.Sprintf("Maximum video streams: at least %d %s (every probe up to StreamsPlan.Search.Limit passed; %s)", r.MaxStreams, at, took)
	case r.MaxStreams == 0 && r.FirstFail > 0 && r.Stop == "":
		first := r.LatestProbe(r.FirstFail)
		return fmt.Sprintf("Maximum video streams: 0 %s: no stream count passed: %d stream lost %.1f %% of its frames (%s)",
			at, r.FirstFail, 100*first.LostFraction(), took)
	case linear && r.FirstFail > 0:
		return fmt.Sprintf("Maximum video streams: %d %s (linear procedure: %d passed, %d failed; %s)", r.MaxStreams, at, r.MaxStreams, r.FirstFail, took)
	case r.Confirmed:
		s := fmt.Sprintf("Maximum video streams: %d %s (confirmed by fresh probes: %d passed, %d failed", r.MaxStreams, at, r.MaxStreams, r.FirstFail)
		if !r.Exact() {
			s += fmt.Sprintf("; the exact maximum lies in %d–%d", r.MaxStreams, r.FirstFail-1)
			if r.Stop == gbt.StopBudget {
				s += ": refining stopped when the budget ran out"
			} else {
				s += fmt.Sprintf(", within StreamsPlan.Search.Resolution %g", r.Resolution)
			}
		}
		return s + "; " + took + ")"
	case r.Stop == gbt.StopUnstable:
		return fmt.Sprintf("No confirmed maximum %s: probes at the same count disagree; latest: %d passed, %d failed (%s)", at, r.MaxStreams, r.FirstFail, took)
	case r.FirstFail == 0:
		return fmt.Sprintf("No confirmed maximum %s: the budget ran out before any count failed; at least %d streams passed (%s)", at, r.MaxStreams, took)
	default:
		return fmt.Sprintf("No confirmed maximum %s: the budget ran out before the confirmation; best bracket: %d passed, %d failed (%s)", at, r.MaxStreams, r.FirstFail, took)
	}
}

// StreamsProbeVerdict states in one line the result of a single probe of
// n video streams at fps frames per second: PASS when no frame was lost.
func StreamsProbeVerdict(n int, fps float64, p gbt.StreamProbe) string {
	if !p.OK {
		return fmt.Sprintf("%d streams at %g fps: FAIL (%d of %d frames lost, %d failed)", n, fps, p.Lost, p.Frames, p.Failed)
	}
	return fmt.Sprintf("%d streams at %g fps: PASS (%d frames, none lost)", n, fps, p.Frames)
}
