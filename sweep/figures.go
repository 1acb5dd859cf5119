package sweep

import "aimeter/derived/metrics"

// The figures a sweep measures and searches on are computed in package
// metrics, the one home of per-run figures; a sweep's plan, summary and
// the rate search hold them under these names.
type (
	// Point is metrics.Point: what one run of a sweep measured.
	Point = metrics.Point
	// Goodput is metrics.Goodput: the requests that met an SLO.
	Goodput = metrics.Goodput
	// SLO is metrics.SLO: a per-request service-level objective.
	SLO = metrics.SLO
)
