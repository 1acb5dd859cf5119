// Package metrics computes the per-run figures of a run from its records:
// the per-request figures and goodput against an SLO (Sample, SLO, Measure),
// the inter-token and end-to-end latency percentiles of a streamed run
// (Streaming), and the steady-state windows of a token-latency run
// (SteadyOf, SuperPassOf, Window).
//
// It is package derived's home for figures, put below the packages that
// show or search on them: derived writes them into result.json and the
// report, sweep and the rate search elect points by them, report lays
// them out and sweep/endpoints copies them into a submission tree. Each
// is a function of the records alone, so a stored bundle gives the same
// figures as the live run. The GB/T figures (gbt.Evaluate, ECP) need the
// bundle's test description and power, and stay in package derived.
//
// Latency percentiles are LoadGen's everywhere (stats.Percentile: the
// value at index trunc(n·p) of the sorted values), over successful samples.
package metrics
