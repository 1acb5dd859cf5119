package benchmark

import (
	"fmt"

	"aimeter/sweep"
)

// LostJobs counts the samples of the run that never completed (a GB/T job
// over its timeout, a sample the SUT never answered), its foreign jobs'
// too: the network client saw no error for them.
func (o *Outcome) LostJobs() uint64 {
	n := o.Result.LostSamples
	if o.Foreign != nil {
		n += o.Foreign.LostSamples
	}
	return n
}

// Shortfall says why a finished rate search falls short: even its starting
// rate missed the goodput target (an error naming the rate and its
// goodput fraction). Nil when it found a rate, or ran no probe.
func (s *RateSearchSummary) Shortfall() error {
	if s.Stop == sweep.StopNone && len(s.Probes) > 0 {
		return fmt.Errorf("no request rate met the goodput target %v: even %g requests/s had a goodput fraction of %.4f (SLO %s)",
			s.Options.Target, s.Options.Start, s.Probes[0].Fraction, s.SLO)
	}
	return nil
}
