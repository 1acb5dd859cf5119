package benchmark

import "errors"

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
// rate missed the goodput target, the error's text being the search's
// Outcome (the rate, its goodput fraction, and each bound of the SLO it
// missed and by how much). Nil when it found a rate, or ran no probe.
func (s *RateSearchSummary) Shortfall() error {
	if s.Best == nil && len(s.Probes) > 0 {
		return errors.New(s.Outcome())
	}
	return nil
}
