package sweep

import "errors"

// ErrInvalidPoint is the shortfall of a sweep with an INVALID point; the
// point's bundle says why.
var ErrInvalidPoint = errors.New("sweep: a point is INVALID")

// Shortfall says why a finished sweep falls short of what it ran for: its
// goodput search found no concurrency meeting the target (an error whose
// text is SearchResult.Outcome: the bounds the first probe missed and by
// how much), or one of its points was INVALID (ErrInvalidPoint). Nil when
// it does not.
func (s *Summary) Shortfall() error {
	if r := s.Search; r != nil && r.Stop == StopNone {
		return errors.New(r.Outcome())
	}
	for _, p := range s.Points {
		if p.Verdict == "INVALID" {
			return ErrInvalidPoint
		}
	}
	return nil
}
