package sweep

import (
	"errors"
	"fmt"
)

// ErrInvalidPoint is the shortfall of a sweep with an INVALID point; the
// point's bundle says why.
var ErrInvalidPoint = errors.New("sweep: a point is INVALID")

// Shortfall says why a finished sweep falls short of what it ran for: its
// goodput search found no concurrency meeting the target (an error saying
// so, with the starting concurrency's goodput fraction), or one of its
// points was INVALID (ErrInvalidPoint). Nil when it does not.
func (s *Summary) Shortfall() error {
	if r := s.Search; r != nil && r.Stop == StopNone {
		return fmt.Errorf("no concurrency met the goodput target %v: even %d had a goodput fraction of %.4f (SLO %s)",
			r.Options.Target, r.Options.Start, r.Probes[0].Fraction, s.SLO)
	}
	for _, p := range s.Points {
		if p.Verdict == "INVALID" {
			return ErrInvalidPoint
		}
	}
	return nil
}
