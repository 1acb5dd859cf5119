package bundle

// SLO is a per-request service-level objective as a run recorded it
// (invocation.json's "slo"): bounds on the time to first token, the time
// per output token and the end-to-end latency, in ns; 0 is no bound.
// Package sweep (sweep.SLO) defines what meeting it means.
type SLO struct {
	TTFTNs int64 `json:"ttft_ns,omitempty"`
	TPOTNs int64 `json:"tpot_ns,omitempty"`
	E2ENs  int64 `json:"e2e_ns,omitempty"`
}
